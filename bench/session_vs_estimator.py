#!/usr/bin/env python3
"""sess.run mode against the Estimator on one model (issue 64): an MLP 784-1024-1024-10
(float32, SGD with momentum 0.9, batch 128 by default) trained
  - by a Session loop, `sess.run([train_op, loss], feed_dict={x: xb, y: yb})`, numpy
    batches sliced from the arrays each step (a script's usual loop),
  - by kiln's Estimator, input from a kiln.data.Dataset of the same arrays (C++, no
    Python per step),
interleaved, `--repeats` times, each from a shared compile cache after the first. steps/s
excludes the compile (the Session's first step; the Estimator's compile seconds). Prints
the medians, their ratio and the CPU's ISA.

    PYTHONPATH=build/python python3 bench/session_vs_estimator.py [--steps 300] [--batch 128] [--repeats 3]
"""
import argparse
import statistics
import tempfile
import time

import numpy as np
from python_vs_cli import isa  # the CPU's model and ISA flags, as every bench prints them

import kiln as tf


def data(n=60000):
    rng = np.random.RandomState(0)
    return rng.rand(n, 784).astype(np.float32), rng.randint(0, 10, n).astype(np.int32)


def model(x, y):
    h = tf.layers.dense(x, 1024, activation=tf.nn.relu)
    h = tf.layers.dense(h, 1024, activation=tf.nn.relu)
    logits = tf.layers.dense(h, 10)
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))


def session_run(X, Y, steps, batch, cache):
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [None, 784], name="x")
    y = tf.placeholder(tf.int32, [None], name="y")
    loss = model(x, y)
    train_op = tf.train.MomentumOptimizer(0.05, 0.9).minimize(loss, global_step=tf.train.get_or_create_global_step())
    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["graph_compiler_cache_dir"].s = tf.compat.as_bytes(cache)
    n = len(X) // batch
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        t0 = time.perf_counter()
        sess.run([train_op, loss], feed_dict={x: X[:batch], y: Y[:batch]})
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        for i in range(1, steps):
            j = (i % n) * batch
            _, last = sess.run([train_op, loss], feed_dict={x: X[j:j + batch], y: Y[j:j + batch]})
        return (steps - 1) / (time.perf_counter() - t0), first, float(last)


def estimator_run(X, Y, steps, batch, cache):
    def model_fn(features, labels, mode):
        loss = model(features, labels)
        op = tf.train.MomentumOptimizer(0.05, 0.9).minimize(loss, global_step=tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=op)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices((X, Y)).repeat().batch(batch, drop_remainder=True)

    with tempfile.TemporaryDirectory() as d:
        config = tf.estimator.RunConfig(model_dir=d, save_checkpoints_steps=10**9, log_step_count_steps=10**9,
                                        save_summary_steps=0,
                                        experimental_config=tf.ExperimentalConfig(graph_compiler_cache_dir=cache))
        tf.logging.set_verbosity(tf.logging.WARN)
        est = tf.estimator.Estimator(model_fn, config=config)
        est.train(input_fn, max_steps=steps)
        st = est.last_train_stats
        return st["steps_per_second"], st["compile_seconds"], st["final_loss"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--repeats", type=int, default=3)
    a = p.parse_args()
    X, Y = data()
    runs = {"session": [], "estimator": []}
    with tempfile.TemporaryDirectory() as cache:
        session_run(X, Y, 3, a.batch, cache)  # fill the cache
        estimator_run(X, Y, 3, a.batch, cache)
        for _ in range(a.repeats):
            runs["session"].append(session_run(X, Y, a.steps, a.batch, cache))
            runs["estimator"].append(estimator_run(X, Y, a.steps, a.batch, cache))
    model_name, flags = isa()
    print("CPU: %s (%s)" % (model_name, " ".join(flags)))
    print("| run | steps/s (median of %d) | first step / compile s | final loss |" % a.repeats)
    print("|---|---:|---:|---:|")
    med = {}
    for k, rs in runs.items():
        med[k] = statistics.median(r[0] for r in rs)
        print("| %s | %.1f | %.3f | %.4f |" % (k, med[k], statistics.median(r[1] for r in rs), rs[-1][2]))
    print("session / estimator: %.3f" % (med["session"] / med["estimator"]))


if __name__ == "__main__":
    main()
