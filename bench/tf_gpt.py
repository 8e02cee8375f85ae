#!/usr/bin/env python3
"""The TensorFlow peer of `kiln train --model gpt` for bench/peers.py: the same model,
weights, batches and optimizer as bench/pytorch_gpt.py (bench/gpt_reference.py): forward,
backward, global-norm clipping and AdamW with torch's formulas.

  --mode function    the train step as one tf.function (learning rate and Adam step passed
                     in as values, so they never retrace)
  --mode xla         the same with jit_compile=True (XLA)
  --mode estimator   tf.compat.v1.estimator.Estimator on a model_fn that builds the same
                     step in a graph (the schedule from the global step), fed by tf.data

bfloat16 runs the matrix products in bfloat16 on float32 master weights (LayerNorm, softmax
and the loss in float32). Threads: --threads intra-op threads; inter-op threads from
KILN_BENCH_TF_INTER_OP (default 1); TF_ENABLE_ONEDNN_OPTS is TensorFlow's own switch.

  .venv-tf/bin/python bench/tf_gpt.py --mode function --steps 200 [--precision bf16]
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
from tf_train import start_tensorflow, train_timed  # noqa: E402


def make_forward(tf, np, a, low):
    c, heads = a.width, a.heads
    future = np.triu(np.ones((a.context, a.context), bool), 1)  # a constant of each graph that uses it

    def mm(x, w):
        return tf.cast(tf.matmul(tf.cast(x, low), tf.cast(w, low)), tf.float32)

    def layer_norm(x, g, b):
        mean, var = tf.nn.moments(x, axes=[-1], keepdims=True)
        return (x - mean) * tf.math.rsqrt(var + 1e-5) * g + b

    def forward(w, tokens):
        bsz, t = tf.shape(tokens)[0], tokens.shape[1]
        h = tf.gather(w["wte"], tokens) + w["wpe"][:t]
        for k in range(a.layers):
            b = lambda name: w["h%d.%s" % (k, name)]  # noqa: E731
            qkv = mm(layer_norm(h, b("ln1_g"), b("ln1_b")), b("qkv_w")) + b("qkv_b")
            q, kk, v = (tf.transpose(tf.reshape(x, [bsz, t, heads, c // heads]), [0, 2, 1, 3])
                        for x in tf.split(qkv, 3, axis=-1))
            att = mm(q, tf.transpose(kk, [0, 1, 3, 2])) * (1.0 / math.sqrt(c // heads))
            att = tf.nn.softmax(tf.where(future[:t, :t], -math.inf, att), axis=-1)
            o = tf.reshape(tf.transpose(mm(att, v), [0, 2, 1, 3]), [bsz, t, c])
            h = h + mm(o, b("proj_w")) + b("proj_b")
            m = layer_norm(h, b("ln2_g"), b("ln2_b"))
            h = h + mm(tf.nn.gelu(mm(m, b("fc_w")) + b("fc_b"), approximate=False), b("mlp_w")) + b("mlp_b")
        return mm(layer_norm(h, w["lnf_g"], w["lnf_b"]), tf.transpose(w["wte"]))
    return forward


def loss_of(tf, logits, y):
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))


def update(tf, a, names, decay, w, m, v, grads, t, lr):
    """torch's clip_grad_norm_ then torch.optim.AdamW; returns the ops assigning w, m, v."""
    if a.clip_norm > 0:
        norm = tf.sqrt(tf.add_n([tf.reduce_sum(g * g) for g in grads]))
        grads = [g * tf.minimum(a.clip_norm / (norm + 1e-6), 1.0) for g in grads]
    step_size = lr / (1 - tf.pow(0.9, t))
    root = tf.sqrt(1 - tf.pow(0.99, t))
    ops = []
    for n, g in zip(names, grads):
        mn = m[n].assign(0.9 * m[n] + 0.1 * g)
        vn = v[n].assign(0.99 * v[n] + 0.01 * g * g)
        p = w[n] * (1 - lr * a.weight_decay) if decay[n] else w[n]
        ops.append(w[n].assign(p - step_size * mn / (tf.sqrt(vn) / root + 1e-8)))
    return ops


def train_function(a, tf, np, start_weights, train, low, jit):
    names = [n for n, _ in start_weights]
    decay = {n: decayed(n, x) for n, x in start_weights}
    w = {n: tf.Variable(x, name=n.replace(".", "_")) for n, x in start_weights}
    m = {n: tf.Variable(tf.zeros_like(x)) for n, x in start_weights}
    v = {n: tf.Variable(tf.zeros_like(x)) for n, x in start_weights}
    forward = make_forward(tf, np, a, low)

    @tf.function(jit_compile=jit)
    def step(x, y, t, lr):
        with tf.GradientTape() as tape:
            loss = loss_of(tf, forward(w, x), y)
        grads = tape.gradient(loss, [w[n] for n in names])
        update(tf, a, names, decay, w, m, v, grads, t, lr)
        return loss

    times, losses = [], []
    start = time.perf_counter()
    first_step_at = None
    for s in range(a.steps):
        x, y = training_batch(train, a, s)
        losses.append(float(step(tf.constant(x, tf.int32), tf.constant(y, tf.int32), tf.constant(s + 1.0),
                                 tf.constant(rate(a, s), tf.float32))))  # waits for the step
        if s == 0:
            first_step_at = time.time()
        times.append(time.perf_counter())
    return {n: w[n].numpy() for n in names}, times, losses, first_step_at, start


def train_estimator(a, tf, np, start_weights, train, low):
    v1 = tf.compat.v1
    names = [n for n, _ in start_weights]
    decay = {n: decayed(n, x) for n, x in start_weights}
    forward = make_forward(tf, np, a, low)

    def model_fn(features, labels, mode):
        def var(prefix, n, x):
            return v1.get_variable(prefix + n.replace(".", "_"), initializer=tf.constant(x))
        w = {n: var("", n, x) for n, x in start_weights}
        m = {n: var("adam_m/", n, np.zeros_like(x)) for n, x in start_weights}
        v = {n: var("adam_v/", n, np.zeros_like(x)) for n, x in start_weights}
        loss = loss_of(tf, forward(w, features), labels)
        step = v1.train.get_global_step()
        s = tf.cast(step, tf.float32)
        progress = tf.clip_by_value((s - a.warmup_steps) / (a.decay_steps - a.warmup_steps), 0.0, 1.0)
        lr = tf.where(s < a.warmup_steps, a.learning_rate * (s + 1) / a.warmup_steps,
                      a.final_learning_rate + (a.learning_rate - a.final_learning_rate) * 0.5
                      * (1 + tf.cos(math.pi * progress)))
        ops = update(tf, a, names, decay, w, m, v, tf.gradients(loss, [w[n] for n in names]), s + 1, lr)
        with tf.control_dependencies(ops):
            train_op = v1.assign_add(step, 1)
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    batches = [training_batch(train, a, s) for s in range(a.steps)]
    xs = np.concatenate([b[0] for b in batches]).astype(np.int32)
    ys = np.concatenate([b[1] for b in batches]).astype(np.int32)

    values, times, losses, first, start = train_timed(tf, a, model_fn, xs, ys, [n.replace(".", "_") for n in names],
                                                      "kiln-bench-tf-gpt-")
    return dict(zip(names, values)), times, losses, first, start


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_gpt_arguments(p)
    p.add_argument("--mode", choices=["function", "xla", "estimator"], default="function")
    p.add_argument("--cache-dir", default="", help="XLA's persistent caches (xla mode)")
    a = p.parse_args()
    if a.steps <= a.warmup:
        p.error("--steps must exceed --warmup")
    tf = start_tensorflow(a)
    import numpy as np

    vocab, train, val = load_tokens(a.data)
    low = tf.bfloat16 if a.precision == "bf16" else tf.float32
    start_weights = initial_weights(vocab, a)
    if a.mode == "estimator":
        weights, times, losses, first_step_at, start = train_estimator(a, tf, np, start_weights, train, low)
    else:
        weights, times, losses, first_step_at, start = train_function(a, tf, np, start_weights, train, low,
                                                                      a.mode == "xla")
    steady = a.steps - a.warmup
    steady_s = times[-1] - times[a.warmup - 1]

    forward = make_forward(tf, np, a, low)
    consts = {n: tf.constant(x) for n, x in weights.items()}
    predict = tf.function(lambda x: forward(consts, x), jit_compile=a.mode == "xla")
    total, count = 0.0, 0
    for x, y in validation_batches(val, a):
        logits = predict(tf.constant(x, tf.int32))
        total += float(tf.reduce_sum(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=tf.constant(y, tf.int32), logits=logits)))
        count += y.size
    print(json.dumps({
        "system": "tensorflow", "mode": a.mode, "model": "gpt", "precision": a.precision, "layers": a.layers,
        "heads": a.heads, "width": a.width, "context": a.context, "batch": a.batch, "steps": a.steps,
        "threads": a.threads, "steps_per_second": steady / steady_s, "train_seconds": times[-1] - start,
        "first_step_at": first_step_at, "started_at": STARTED, "first_loss": losses[0], "final_loss": losses[-1],
        "validation_loss": total / count, "tensorflow": tf.__version__,
        "onednn_opts": os.environ.get("TF_ENABLE_ONEDNN_OPTS", "default"),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}), flush=True)


if __name__ == "__main__":
    main()
