#!/usr/bin/env python3
"""The JAX side of bench/peers.py: one training run, one JSON line, of the model
kiln_bench_train trains, the same way bench/pytorch_train.py does (kiln's initial weights
and batch order from kiln_reference.py, mean softmax cross-entropy, momentum 0.9 as
TensorFlow's MomentumOptimizer: accum = m*accum + g; var -= lr*accum, learning rate 0.05).
The whole train step is one jax.jit with the parameters and slots donated; bfloat16 runs
the forward and backward in bfloat16 on float32 master weights (cast at the start of the
step), the loss in float32. With --cache-dir, JAX's persistent compilation cache is on.

  .venv-peers/bin/python bench/jax_train.py --model mlp --steps 600 [--precision bf16] [--cache-dir DIR]
"""
import argparse
import json
import os
import resource
import sys
import time

STARTED = time.time()
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kiln_reference import add_training_arguments  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_training_arguments(p)
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--cache-dir", default="", help="jax_compilation_cache_dir (empty: no persistent cache)")
    a = p.parse_args()
    if a.steps <= a.warmup:
        p.error("--steps must exceed --warmup")
    # XLA's CPU client sizes its thread pool from the CPUs it may use.
    os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:a.threads])

    import jax
    import jax.numpy as jnp
    import numpy as np
    from kiln_reference import epoch_order, he_uniform, load, score

    if a.cache_dir:
        jax.config.update("jax_compilation_cache_dir", a.cache_dir)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)

    x_train, y_train = load(a.data, "train")
    x_test, y_test = load(a.data, "test")
    low = jnp.bfloat16 if a.precision == "bf16" else jnp.float32

    if a.model == "mlp":
        widths = [784] + [int(w) for w in a.hidden.split(",")] + [10]
        params = [(jnp.asarray(he_uniform([i, o], a.seed * 1000 + k)), jnp.zeros(o, jnp.float32))
                  for k, (i, o) in enumerate(zip(widths, widths[1:]))]

        def forward(params, x):
            for k, (w, b) in enumerate(params):
                x = x @ w.astype(low) + b.astype(low)
                if k + 1 < len(params):
                    x = jax.nn.relu(x)
            return x
    else:
        shapes = [[32, 1, 3, 3], [64, 32, 3, 3]]
        convs = [(jnp.asarray(he_uniform(s, a.seed * 1000 + k)), jnp.zeros(s[0], jnp.float32))
                 for k, s in enumerate(shapes)]
        dense = [(jnp.asarray(he_uniform([i, o], a.seed * 1000 + 2 + k)), jnp.zeros(o, jnp.float32))
                 for k, (i, o) in enumerate([(64 * 7 * 7, 128), (128, 10)])]
        params = convs + dense

        def forward(params, x):
            x = x.reshape(x.shape[0], 1, 28, 28)
            for w, b in params[:2]:
                x = jax.lax.conv_general_dilated(x, w.astype(low), (1, 1), "SAME",
                                                 dimension_numbers=("NCHW", "OIHW", "NCHW"))
                x = jax.nn.relu(x + b.astype(low)[None, :, None, None])
                x = jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
            x = x.reshape(x.shape[0], -1)
            (w0, b0), (w1, b1) = params[2:]
            x = jax.nn.relu(x @ w0.astype(low) + b0.astype(low))
            return x @ w1.astype(low) + b1.astype(low)

    def loss_fn(params, x, y):
        logits = forward(params, x.astype(low)).astype(jnp.float32)
        return jnp.mean(-jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], axis=1))

    def step(params, slots, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        slots = jax.tree_util.tree_map(lambda s, g: 0.9 * s + g, slots, grads)
        params = jax.tree_util.tree_map(lambda p, s: p - a.learning_rate * s, params, slots)
        return params, slots, loss

    train_step = jax.jit(step, donate_argnums=(0, 1))
    slots = jax.tree_util.tree_map(jnp.zeros_like, params)
    per_epoch = len(x_train) // a.batch
    epochs = (a.steps + per_epoch - 1) // per_epoch
    orders = [np.asarray(epoch_order(len(x_train), a.seed, e)) for e in range(epochs)]

    times = []
    start = time.perf_counter()
    for s in range(a.steps):
        e, b = divmod(s, per_epoch)
        idx = orders[e][b * a.batch:(b + 1) * a.batch]
        params, slots, loss = train_step(params, slots, x_train[idx], y_train[idx].astype(np.int32))
        final_loss = float(loss)  # waits for the step
        if s == 0:
            first_loss, first_step_at, first_step_seconds = final_loss, time.time(), time.perf_counter() - start
        times.append(time.perf_counter())
    steady = a.steps - a.warmup
    steady_s = times[-1] - times[a.warmup - 1]

    predict = jax.jit(lambda params, x: forward(params, x.astype(low)).astype(jnp.float32))
    test_loss, test_accuracy = score(lambda x: predict(params, x), x_test, y_test, a.eval_batch)
    print(json.dumps({
        "system": "jax", "mode": "train", "model": a.model, "hidden": a.hidden if a.model == "mlp" else "",
        "precision": a.precision, "batch": a.batch, "steps": a.steps, "warmup": a.warmup, "threads": a.threads,
        "seed": a.seed, "steps_per_second": steady / steady_s, "steady_seconds": steady_s,
        "first_step_seconds": first_step_seconds, "first_step_at": first_step_at, "started_at": STARTED,
        "first_loss": first_loss, "final_loss": final_loss, "test_loss": test_loss,
        "test_accuracy": test_accuracy, "jax": jax.__version__,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}), flush=True)


if __name__ == "__main__":
    main()
