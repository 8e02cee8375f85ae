#!/usr/bin/env python3
"""sess.run mode against the Estimator on one model (issue 64): an MLP 784-1024-1024-10
(float32, SGD with momentum 0.9, batch 128 by default) trained
  - by a Session loop, `sess.run([train_op, loss], feed_dict={x: xb, y: yb})`, numpy
    batches sliced from the arrays each step (a script's usual loop),
  - by kiln's Estimator, input from a kiln.data.Dataset of the same arrays (C++, no
    Python per step),
  - by TensorFlow 2.15's tf.compat.v1 Session on the same loop and data (--tf PYTHON, a
    Python with tensorflow-cpu; default .venv-tf/bin/python when it exists), with the
    fastest of its thread settings (intra-op 0 = TF's default or the cores; inter-op 1 or
    2), each tried first,
  - with --accelerate MODE (e.g. fast1|step|0.9), also by the Session loop under the
    adapter's parameter_map["experimental_accelerate_train_mode"], the script telling
    STEP_NOW / TOTAL_STEP as the adapter's sess.run mode does,
interleaved, `--repeats` times, each from a shared compile cache after the first. steps/s
excludes the compile (the Session's first step; the Estimator's compile seconds). Each
class is a random binary centre under heavy Gaussian noise (std 4 per pixel; about 91%
held-out accuracy after 1000 steps, with room to lose), so accuracy on 10,000 held-out
examples says whether a precision mode trains as well. Prints the medians,
their ratios and the CPU's ISA.

    PYTHONPATH=build/python python3 bench/session_vs_estimator.py [--steps 1000] [--batch 128] [--repeats 3]
        [--accelerate 'fast1|step|0.9']
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

PEER = "--peer" in sys.argv  # this file run again in TensorFlow's Python: the same loop in TF 2.15
if PEER:
    import tensorflow.compat.v1 as tf
    tf.disable_v2_behavior()
else:
    from python_vs_cli import isa  # the CPU's model and ISA flags, as every bench prints them

    import kiln as tf


def data(n=70000):
    rng = np.random.RandomState(0)
    y = rng.randint(0, 10, n).astype(np.int32)
    centers = (rng.rand(10, 784) < 0.5).astype(np.float32)
    return (centers[y] + 4.0 * rng.randn(n, 784)).astype(np.float32), y


TRAIN = 60000  # the rest is held out


def logits_of(x):
    h = tf.layers.dense(x, 1024, activation=tf.nn.relu)
    h = tf.layers.dense(h, 1024, activation=tf.nn.relu)
    return tf.layers.dense(h, 10)


def model(x, y):
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits_of(x)))


def session_run(X, Y, steps, batch, cache, accelerate=None, threads=(0, 1)):
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [None, 784], name="x")
    y = tf.placeholder(tf.int32, [None], name="y")
    logits = logits_of(x)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1, output_type=tf.int32), y), tf.float32))
    step = tf.train.get_or_create_global_step()
    train_op = tf.train.MomentumOptimizer(0.05, 0.9).minimize(loss, global_step=step)
    config = tf.ConfigProto(intra_op_parallelism_threads=threads[0], inter_op_parallelism_threads=threads[1])
    if not PEER:
        config = tf.ConfigProto()
        custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
        custom_op.name = "NpuOptimizer"
        custom_op.parameter_map["graph_compiler_cache_dir"].s = tf.compat.as_bytes(cache)
    if accelerate:
        custom_op.parameter_map["experimental_accelerate_train_mode"].s = tf.compat.as_bytes(accelerate)
        os.environ["STEP_NOW"], os.environ["TOTAL_STEP"] = "0", str(steps)
    n = TRAIN // batch
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        t0 = time.perf_counter()
        sess.run([train_op, loss], feed_dict={x: X[:batch], y: Y[:batch]})
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        for i in range(1, steps):
            j = (i % n) * batch
            _, last, s = sess.run([train_op, loss, step], feed_dict={x: X[j:j + batch], y: Y[j:j + batch]})
            if accelerate:
                os.environ["STEP_NOW"] = str(s)
        rate = (steps - 1) / (time.perf_counter() - t0)
        acc = sess.run(accuracy, feed_dict={x: X[TRAIN:], y: Y[TRAIN:]})
        return rate, first, float(last), float(acc)


def estimator_run(X, Y, steps, batch, cache):
    def model_fn(features, labels, mode):
        loss = model(features, labels)
        op = tf.train.MomentumOptimizer(0.05, 0.9).minimize(loss, global_step=tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=op)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices((X[:TRAIN], Y[:TRAIN])).repeat().batch(batch, drop_remainder=True)

    with tempfile.TemporaryDirectory() as d:
        config = tf.estimator.RunConfig(model_dir=d, save_checkpoints_steps=10**9, log_step_count_steps=10**9,
                                        save_summary_steps=0,
                                        experimental_config=tf.ExperimentalConfig(graph_compiler_cache_dir=cache))
        tf.logging.set_verbosity(tf.logging.WARN)
        est = tf.estimator.Estimator(model_fn, config=config)
        est.train(input_fn, max_steps=steps)
        st = est.last_train_stats
        return st["steps_per_second"], st["compile_seconds"], st["final_loss"], float("nan")


def peer_main():
    p = argparse.ArgumentParser()
    p.add_argument("--peer", action="store_true")
    p.add_argument("--steps", type=int)
    p.add_argument("--batch", type=int)
    p.add_argument("--intra", type=int)
    p.add_argument("--inter", type=int)
    a = p.parse_args()
    X, Y = data()
    print(json.dumps(session_run(X, Y, a.steps, a.batch, "", threads=(a.intra, a.inter))))


def tensorflow_run(python, steps, batch, threads):
    out = subprocess.run([python, os.path.abspath(__file__), "--peer", "--steps", str(steps), "--batch", str(batch),
                          "--intra", str(threads[0]), "--inter", str(threads[1])],
                         capture_output=True, text=True, check=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    return tuple(json.loads(out.stdout.strip().splitlines()[-1]))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--accelerate", default="", help="also a Session run with this experimental_accelerate_train_mode")
    default_tf = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), ".venv-tf", "bin", "python")
    p.add_argument("--tf", default=default_tf if os.path.exists(default_tf) else "",
                   help="a Python with tensorflow-cpu 2.15 for the peer row ('' = none)")
    a = p.parse_args()
    X, Y = data()
    runs = {"session": [], "estimator": []}
    if a.accelerate:
        runs["session " + a.accelerate] = []
    best = None
    if a.tf:
        cores = len(os.sched_getaffinity(0))
        tried = {t: tensorflow_run(a.tf, min(a.steps, 300), a.batch, t)[0]
                 for t in [(0, 1), (0, 2), (cores, 1), (cores, 2)]}
        best = max(tried, key=tried.get)
        print("TensorFlow threads (intra, inter) -> steps/s: %s; kept %s"
              % (", ".join("%s %.1f" % (t, r) for t, r in tried.items()), best))
        runs["tensorflow 2.15 session"] = []
    with tempfile.TemporaryDirectory() as cache:
        session_run(X, Y, 3, a.batch, cache)  # fill the cache
        estimator_run(X, Y, 3, a.batch, cache)
        if a.accelerate:
            session_run(X, Y, 3, a.batch, cache, a.accelerate)
        for _ in range(a.repeats):
            runs["session"].append(session_run(X, Y, a.steps, a.batch, cache))
            runs["estimator"].append(estimator_run(X, Y, a.steps, a.batch, cache))
            if a.accelerate:
                runs["session " + a.accelerate].append(session_run(X, Y, a.steps, a.batch, cache, a.accelerate))
            if best is not None:
                runs["tensorflow 2.15 session"].append(tensorflow_run(a.tf, a.steps, a.batch, best))
    model_name, flags = isa()
    print("CPU: %s (%s)" % (model_name, " ".join(flags)))
    print("| run | steps/s (median of %d) | first step / compile s | final loss | held-out accuracy |" % a.repeats)
    print("|---|---:|---:|---:|---:|")
    med = {}
    for k, rs in runs.items():
        med[k] = statistics.median(r[0] for r in rs)
        acc = statistics.median(r[3] for r in rs)
        print("| %s | %.1f | %.3f | %.4f | %s |" % (k, med[k], statistics.median(r[1] for r in rs), rs[-1][2],
                                                   "-" if acc != acc else "%.4f" % acc))
    print("session / estimator: %.3f" % (med["session"] / med["estimator"]))
    if best is not None:
        print("session / tensorflow session: %.3f" % (med["session"] / med["tensorflow 2.15 session"]))
    if a.accelerate:
        k = "session " + a.accelerate
        print("accelerated / session: %.3f steps/s, accuracy %+.2f points"
              % (med[k] / med["session"], 100 * (statistics.median(r[3] for r in runs[k])
                                                  - statistics.median(r[3] for r in runs["session"]))))


if __name__ == "__main__":
    peer_main() if PEER else main()
