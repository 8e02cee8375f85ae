#!/usr/bin/env python3
"""The JAX peer of `kiln train --model gpt` for bench/peers.py: the same model, weights,
batches and optimizer as bench/pytorch_gpt.py (bench/gpt_reference.py), the whole train
step (forward, backward, global-norm clipping, AdamW with torch's formulas, kiln's
learning rate passed in as a value so it never recompiles) one jax.jit with the
parameters and Adam moments donated. bfloat16 runs the matrix products in bfloat16 on
float32 master weights (LayerNorm, softmax and the loss in float32, as torch's autocast
does). With --cache-dir, JAX's persistent compilation cache is on.

  .venv-peers/bin/python bench/jax_gpt.py --steps 200 [--precision bf16] [--cache-dir DIR]
"""
import argparse
import json
import math
import os
import resource
import sys
import time

STARTED = time.time()
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt_reference import add_gpt_arguments, decayed, initial_weights, load_tokens, rate, training_batch, \
    validation_batches  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_gpt_arguments(p)
    p.add_argument("--cache-dir", default="", help="jax_compilation_cache_dir (empty: no persistent cache)")
    a = p.parse_args()
    if a.steps <= a.warmup:
        p.error("--steps must exceed --warmup")
    if a.threads:
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:a.threads])  # XLA sizes its pool from these

    import jax
    import jax.numpy as jnp
    import numpy as np

    if a.cache_dir:
        jax.config.update("jax_compilation_cache_dir", a.cache_dir)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)

    vocab, train, val = load_tokens(a.data)
    start_weights = initial_weights(vocab, a)
    params = {n: jnp.asarray(w) for n, w in start_weights}
    decay = {n: decayed(n, w) for n, w in start_weights}
    low = jnp.bfloat16 if a.precision == "bf16" else jnp.float32
    c, heads = a.width, a.heads
    future = np.triu(np.ones((a.context, a.context), bool), 1)

    def mm(x, w):
        return (x.astype(low) @ w.astype(low)).astype(jnp.float32)

    def layer_norm(x, g, b):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) * jax.lax.rsqrt(var + 1e-5) * g + b

    def forward(w, tokens):
        bsz, t = tokens.shape
        h = w["wte"][tokens] + w["wpe"][:t]
        for k in range(a.layers):
            b = lambda name: w["h%d.%s" % (k, name)]  # noqa: E731
            qkv = mm(layer_norm(h, b("ln1_g"), b("ln1_b")), b("qkv_w")) + b("qkv_b")
            q, kk, v = (x.reshape(bsz, t, heads, c // heads).transpose(0, 2, 1, 3) for x in jnp.split(qkv, 3, -1))
            att = mm(q, kk.transpose(0, 1, 3, 2)) * (1.0 / math.sqrt(c // heads))
            att = jax.nn.softmax(jnp.where(future[:t, :t], -jnp.inf, att), axis=-1)
            o = mm(att, v).transpose(0, 2, 1, 3).reshape(bsz, t, c)
            h = h + mm(o, b("proj_w")) + b("proj_b")
            m = layer_norm(h, b("ln2_g"), b("ln2_b"))
            h = h + mm(jax.nn.gelu(mm(m, b("fc_w")) + b("fc_b"), approximate=False), b("mlp_w")) + b("mlp_b")
        return mm(layer_norm(h, w["lnf_g"], w["lnf_b"]), w["wte"].T)

    def loss_fn(w, x, y):
        logp = jax.nn.log_softmax(forward(w, x))
        return -jnp.mean(jnp.take_along_axis(logp, y[..., None], axis=-1))

    def step(w, m, v, t, lr, x, y):
        loss, g = jax.value_and_grad(loss_fn)(w, x, y)
        if a.clip_norm > 0:  # torch's clip_grad_norm_
            norm = jnp.sqrt(sum(jnp.sum(gi * gi) for gi in jax.tree_util.tree_leaves(g)))
            scale = jnp.minimum(a.clip_norm / (norm + 1e-6), 1.0)
            g = {n: gi * scale for n, gi in g.items()}
        m = {n: 0.9 * m[n] + 0.1 * g[n] for n in w}
        v = {n: 0.99 * v[n] + 0.01 * g[n] * g[n] for n in w}
        step_size = lr / (1 - 0.9 ** t)
        root = jnp.sqrt(1 - 0.99 ** t)
        out = {}
        for n in w:  # torch.optim.AdamW: decoupled decay first, then the Adam step
            p = w[n] * (1 - lr * a.weight_decay) if decay[n] else w[n]
            out[n] = p - step_size * m[n] / (jnp.sqrt(v[n]) / root + 1e-8)
        return out, m, v, loss

    train_step = jax.jit(step, donate_argnums=(0, 1, 2))
    m = {n: jnp.zeros_like(x) for n, x in params.items()}
    v = {n: jnp.zeros_like(x) for n, x in params.items()}
    losses, times = [], []
    start = time.perf_counter()
    for s in range(a.steps):
        x, y = training_batch(train, a, s)
        params, m, v, loss = train_step(params, m, v, np.float32(s + 1), np.float32(rate(a, s)),
                                        x.astype(np.int32), y.astype(np.int32))
        losses.append(float(loss))  # waits for the step
        times.append(time.perf_counter())
        if s == 0:
            first_step_at = time.time()
        if a.log_every and (s + 1) % a.log_every == 0:
            print("step %d: loss %.4f" % (s + 1, losses[-1]), file=sys.stderr, flush=True)
    steady = a.steps - a.warmup
    steady_s = times[-1] - times[a.warmup - 1]

    logits_of = jax.jit(forward)
    total, count = 0.0, 0
    for x, y in validation_batches(val, a):
        logits = np.asarray(logits_of(params, x.astype(np.int32)), dtype=np.float64)
        mx = logits.max(-1, keepdims=True)
        logp = logits - mx - np.log(np.exp(logits - mx).sum(-1, keepdims=True))
        total += float(-np.take_along_axis(logp, y[..., None], -1).sum())
        count += y.size
    print(json.dumps({"system": "jax", "model": "gpt", "precision": a.precision, "layers": a.layers,
                      "heads": a.heads, "width": a.width, "context": a.context, "batch": a.batch, "steps": a.steps,
                      "threads": len(os.sched_getaffinity(0)), "steps_per_second": steady / steady_s,
                      "train_seconds": times[-1] - start,
                      "first_step_at": first_step_at, "started_at": STARTED, "first_loss": losses[0],
                      "final_loss": losses[-1], "validation_loss": total / count, "jax": jax.__version__,
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}), flush=True)


if __name__ == "__main__":
    main()
