#!/usr/bin/env python3
"""The Python front end against `kiln train`, in one run (issue 14): the MLP of the seed
example (784-1024-1024-10, batch 256, momentum 0.05/0.9, float32) trained
  - by `kiln train --model mlp` (C++ all the way),
  - from Python with a kiln.data.Dataset input (runs in C++, no Python per step),
  - from Python with a Python generator input (numpy gathers one batch per step),
interleaved, `--repeats` times; steps/s is the C++ Estimator's train-loop rate (compile
excluded; every graph comes from a shared compile cache after the first run). Prints a
Markdown table with the medians and the ratios to `kiln train`, and the CPU's ISA.

    PYTHONPATH=build/python python3 bench/python_vs_cli.py [--kiln build/kiln] [--steps 400] [--repeats 3]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

import kiln


def isa():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    return model, [f for f in ("avx2", "avx512f", "avx512_bf16", "avx512_fp16", "amx_bf16") if f in flags]


def cli_run(kiln_bin, steps, cache):
    with tempfile.TemporaryDirectory() as tmp:
        metrics = os.path.join(tmp, "m.jsonl")
        cmd = [kiln_bin, "train", "--model", "mlp", "--steps", str(steps), "--batch-size", "256", "--optimizer", "momentum",
               "--learning-rate", "0.05", "--seed", "0", "--quiet", "--metrics-out", metrics,
               "--graph-compiler-cache-dir", cache, "--test-limit", "1000"]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit("kiln train failed: %s\n%s%s" % (" ".join(cmd), p.stdout, p.stderr))
        with open(metrics) as f:
            final = [json.loads(line) for line in f][-1]
    return final["steps_per_second"]


def mlp_model_fn(features, labels, mode, params):
    h = features
    for i in range(2):
        h = kiln.layers.dense(h, 1024, activation=kiln.nn.relu, name="dense%d" % i)
    logits = kiln.layers.dense(h, 10, name="logits")
    loss = kiln.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    train_op = kiln.train.MomentumOptimizer(0.05, 0.9).minimize(loss, global_step=kiln.train.get_or_create_global_step())
    return kiln.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def tiny_model_fn(features, labels, mode, params):
    logits = kiln.layers.dense(features, 10)
    loss = kiln.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    return kiln.estimator.EstimatorSpec(mode, loss=loss, train_op=kiln.train.GradientDescentOptimizer(0.1).minimize(loss))


def python_run(x, y, steps, cache, generator, model_fn=None):
    config = kiln.RunConfig(experimental_config=kiln.ExperimentalConfig(graph_compiler_cache_dir=cache),
                            random_seed=0, log_step_count_steps=0)
    est = kiln.Estimator(model_fn or mlp_model_fn, config=config)
    if generator:
        def input_fn():
            rng = np.random.default_rng(0)
            while True:
                order = rng.permutation(len(x))
                for i in range(0, len(x) - 255, 256):
                    idx = order[i:i + 256]
                    yield x[idx], y[idx]
    else:
        def input_fn():
            return kiln.data.Dataset.from_tensor_slices((x, y)).shuffle(len(x), seed=0).repeat().batch(
                256, drop_remainder=True).prefetch(2)
    est.train(input_fn, max_steps=steps)
    return est.last_train_stats["steps_per_second"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kiln", default=os.path.join(os.path.dirname(__file__), "..", "build", "kiln"))
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    kiln.set_log_function(None)
    x, y = kiln.data.load_fashion_mnist("train")
    runs = {"kiln train": [], "Python, Dataset": [], "Python, generator": []}
    with tempfile.TemporaryDirectory() as cache:
        python_run(x, y, 5, cache, False)  # fill the compile cache
        cli_run(args.kiln, 5, cache)
        for r in range(args.repeats):
            runs["kiln train"].append(cli_run(args.kiln, args.steps, cache))
            runs["Python, Dataset"].append(python_run(x, y, args.steps, cache, False))
            runs["Python, generator"].append(python_run(x, y, args.steps, cache, True))
            print("repeat %d: %s" % (r + 1, ", ".join("%s %.1f" % (k, v[-1]) for k, v in runs.items())), file=sys.stderr)
    # The floor: a model whose step costs next to nothing, so steps/s is the loop's own
    # cost per step (C++ loop, hook bridge, input): an upper bound on what Python adds.
    with tempfile.TemporaryDirectory() as cache:
        small_x, small_y = x[:, :8].copy(), y
        python_run(small_x, small_y, 5, cache, False, tiny_model_fn)
        floor = {"Dataset": python_run(small_x, small_y, 20 * args.steps, cache, False, tiny_model_fn),
                 "generator": python_run(small_x, small_y, 20 * args.steps, cache, True, tiny_model_fn)}
    model, flags = isa()
    base = statistics.median(runs["kiln train"])
    print("MLP 784-1024-1024-10, batch 256, float32, %d steps, %d repeats; %s (%s)\n"
          % (args.steps, args.repeats, model, " ".join(flags)))
    print("| input | steps/s (median) | runs | vs kiln train |")
    print("|---|---:|---|---:|")
    for k, v in runs.items():
        print("| %s | %.1f | %s | %.3f |" % (k, statistics.median(v), ", ".join("%.1f" % s for s in v),
                                            statistics.median(v) / base))
    print("\nLoop cost per step with an 8->10 model (upper bound on Python's share): Dataset %.0f us, "
          "generator %.0f us; the MLP step takes %.0f us in kiln train."
          % (1e6 / floor["Dataset"], 1e6 / floor["generator"], 1e6 / base))


if __name__ == "__main__":
    main()
