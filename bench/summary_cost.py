#!/usr/bin/env python3
"""What tf.summary ops in a model_fn cost on the steps they are not written (issue 32): the
MLP of the seed example (784-1024-1024-10, batch 256, momentum, float32, compiled) trained
from Python without summary ops and with a scalar, two histograms (a weight and the first
layer's activations) and an image summary, save_summary_steps larger than the run (so every
measured step is one that writes nothing; the last step writes them once), interleaved,
`--repeats` times. steps/s is the C++ Estimator's train-loop rate (compile excluded; every
graph from a shared compile cache after the first run). Prints a Markdown table with the
medians, the ratio, and the CPU's ISA.

    PYTHONPATH=build/python python3 bench/summary_cost.py [--steps 300] [--repeats 5]
"""
import argparse
import os
import statistics
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from python_vs_cli import isa  # noqa: E402

import kiln  # noqa: E402


def model_fn(with_summaries):
    def fn(features, labels, mode, params):
        h = features
        for i in range(2):
            h = kiln.layers.dense(h, 1024, activation=kiln.nn.relu, name="dense%d" % i)
            if i == 0 and with_summaries:
                kiln.summary.histogram("dense0/activations", h)
        logits = kiln.layers.dense(h, 10, name="logits")
        loss = kiln.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
        if with_summaries:
            kiln.summary.scalar("mean_logit", kiln.reduce_mean(logits))
            kiln.summary.histogram("logits/kernel", kiln.trainable_variables()[-2])
            kiln.summary.image("inputs", kiln.reshape(features[:3], [3, 28, 28, 1]))
        train_op = kiln.train.MomentumOptimizer(0.05, 0.9).minimize(loss, global_step=kiln.train.get_or_create_global_step())
        return kiln.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
    return fn


def run(with_summaries, steps, cache, x, y):
    with tempfile.TemporaryDirectory() as d:
        cfg = kiln.RunConfig(model_dir=d, save_summary_steps=10 * steps, save_checkpoints_steps=10 * steps,
                             log_step_count_steps=0, random_seed=0,
                             experimental_config=kiln.ExperimentalConfig(graph_compiler_cache_dir=cache))
        est = kiln.Estimator(model_fn(with_summaries), config=cfg)
        est.train(lambda: kiln.data.Dataset.from_tensor_slices((x, y)).repeat().batch(256, drop_remainder=True),
                  max_steps=steps)
        return est.last_train_stats["steps_per_second"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    kiln.set_log_function(lambda line: None)
    rng = np.random.default_rng(0)
    x = rng.random((4096, 784), dtype=np.float32)
    y = rng.integers(0, 10, 4096).astype(np.int32)
    with tempfile.TemporaryDirectory() as cache:
        run(False, 5, cache, x, y), run(True, 5, cache, x, y)  # compile both once
        plain, summarised = [], []
        for _ in range(a.repeats):
            plain.append(run(False, a.steps, cache, x, y))
            summarised.append(run(True, a.steps, cache, x, y))
    model, flags = isa()
    p, s = statistics.median(plain), statistics.median(summarised)
    print("CPU: %s (%s), %d threads" % (model, " ".join(flags), os.cpu_count()))
    print("| model_fn | steps/s (median of %d, %d steps) | vs none |" % (a.repeats, a.steps))
    print("|---|---|---|")
    print("| no summary ops | %.1f | 1.00 |" % p)
    print("| scalar + 2 histograms + image | %.1f | %.3f |" % (s, s / p))
    print("runs: none %s; with %s" % (["%.1f" % v for v in plain], ["%.1f" % v for v in summarised]))


if __name__ == "__main__":
    main()
