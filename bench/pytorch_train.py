#!/usr/bin/python3
"""The PyTorch side of scripts/bench-vs-pytorch: one training run, one JSON line.

Trains the model kiln_bench_train trains, the same way: the same layer shapes, the same
initial weights (kiln's counter-based He-uniform generator, reproduced below), the same
batches in the same order (kiln's SplitMix64 Fisher-Yates shuffle per epoch, reproduced
below), mean softmax cross-entropy, SGD with momentum 0.9 and dampening 0 (what
TensorFlow's MomentumOptimizer does: accum = m*accum + g; var -= lr*accum), learning
rate 0.05. bfloat16 is torch.autocast("cpu", dtype=torch.bfloat16) around the forward
pass and the loss, as a PyTorch user would write it.

  /usr/bin/python3 bench/pytorch_train.py --model mlp --hidden 1024,1024 --steps 600
  /usr/bin/python3 bench/pytorch_train.py --mode matmul --shapes 256x1024x1024 --precisions f32,bf16

Run it with Debian's interpreter (/usr/bin/python3), which has python3-torch.
"""
import argparse
import contextlib
import json
import os
import sys
import resource
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from kiln_reference import add_training_arguments, epoch_order, load as load_arrays, he_uniform as he_uniform_array


def he_uniform(shape, seed):
    return torch.from_numpy(he_uniform_array(shape, seed))


def load(data_dir, split):
    x, y = load_arrays(data_dir, split)
    return torch.from_numpy(x), torch.from_numpy(y)


class Mlp(torch.nn.Module):
    def __init__(self, hidden, seed):
        super().__init__()
        widths = [784] + hidden + [10]
        self.layers = torch.nn.ModuleList(torch.nn.Linear(a, b) for a, b in zip(widths, widths[1:]))
        with torch.no_grad():
            for i, layer in enumerate(self.layers):
                layer.weight.copy_(he_uniform([layer.in_features, layer.out_features], seed * 1000 + i).t())
                layer.bias.zero_()

    def forward(self, x):
        for layer in self.layers[:-1]:
            x = F.relu(layer(x))
        return self.layers[-1](x)


class Cnn(torch.nn.Module):
    def __init__(self, seed):
        super().__init__()
        self.conv0 = torch.nn.Conv2d(1, 32, 3, padding=1)
        self.conv1 = torch.nn.Conv2d(32, 64, 3, padding=1)
        self.dense0 = torch.nn.Linear(64 * 7 * 7, 128)
        self.logits = torch.nn.Linear(128, 10)
        with torch.no_grad():
            for i, conv in enumerate([self.conv0, self.conv1]):
                conv.weight.copy_(he_uniform(list(conv.weight.shape), seed * 1000 + i))
            for i, dense in enumerate([self.dense0, self.logits]):
                dense.weight.copy_(he_uniform([dense.in_features, dense.out_features], seed * 1000 + 2 + i).t())
            for m in [self.conv0, self.conv1, self.dense0, self.logits]:
                m.bias.zero_()

    def forward(self, x):
        x = x.view(x.shape[0], 1, 28, 28)
        x = F.max_pool2d(F.relu(self.conv0(x)), 2)
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.relu(self.dense0(x.flatten(1)))
        return self.logits(x)


def low_precision(precision):
    if precision == "bf16":
        return torch.autocast("cpu", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: kilobytes


def train(a):
    torch.manual_seed(a.seed)
    x_train, y_train = load(a.data, "train")
    x_test, y_test = load(a.data, "test")
    hidden = [int(w) for w in a.hidden.split(",")]
    model = Mlp(hidden, a.seed) if a.model == "mlp" else Cnn(a.seed)
    opt = torch.optim.SGD(model.parameters(), lr=a.learning_rate, momentum=0.9, dampening=0.0)
    if a.compile != "none":  # PyTorch 2: Inductor generates C++ for the forward and backward
        model = torch.compile(model, mode=None if a.compile == "default" else a.compile)
    per_epoch = len(x_train) // a.batch  # drop_remainder, like kiln's training batcher
    epochs = (a.steps + per_epoch - 1) // per_epoch
    orders = [torch.tensor(epoch_order(len(x_train), a.seed, e), dtype=torch.int64) for e in range(epochs)]

    times = []
    model.train()
    start = time.perf_counter()
    for step in range(a.steps):
        e, b = divmod(step, per_epoch)
        idx = orders[e][b * a.batch:(b + 1) * a.batch]
        x, y = x_train.index_select(0, idx), y_train.index_select(0, idx)
        opt.zero_grad(set_to_none=True)
        with low_precision(a.precision):
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        final_loss = loss.item()
        if step == 0:
            first_loss, first_step_at = final_loss, time.time()
        times.append(time.perf_counter())
    train_seconds = times[-1] - start
    steady = a.steps - a.warmup
    steady_s = times[-1] - times[a.warmup - 1]

    model.eval()
    correct, loss_sum = 0, 0.0
    with torch.no_grad(), low_precision(a.precision):
        for i in range(0, len(x_test), a.eval_batch):
            logits = model(x_test[i:i + a.eval_batch])
            y = y_test[i:i + a.eval_batch]
            loss_sum += F.cross_entropy(logits.float(), y, reduction="sum").item()
            correct += (logits.argmax(1) == y).sum().item()
    return {"system": "pytorch", "mode": "train", "model": a.model,
            "hidden": a.hidden if a.model == "mlp" else "", "precision": a.precision,
            "batch": a.batch, "steps": a.steps, "warmup": a.warmup, "threads": torch.get_num_threads(),
            "seed": a.seed, "steps_per_second": steady / steady_s, "steady_seconds": steady_s,
            "train_seconds": train_seconds, "compile_seconds": 0.0, "compile": a.compile,
            "first_step_at": first_step_at, "torch": torch.__version__, "first_loss": first_loss, "final_loss": final_loss,
            "test_loss": loss_sum / len(x_test), "test_accuracy": correct / len(x_test),
            "peak_rss_mb": peak_rss_mb()}


def matmul_case(m, n, k, precision, reps):
    x = he_uniform([m, k], 1)
    w = he_uniform([k, n], 2)

    def run():
        with low_precision(precision):
            return torch.matmul(x, w)

    for _ in range(5):
        run()
    t0 = time.perf_counter()
    for _ in range(reps):
        run()
    seconds = time.perf_counter() - t0
    return {"m": m, "n": n, "k": k, "precision": precision, "pytorch_gflops": 2.0 * m * n * k * reps / seconds / 1e9}


def matmul(a):
    cases = [matmul_case(*map(int, shape.split("x")), precision, a.reps)
             for shape in a.shapes.split(",") for precision in a.precisions.split(",")]
    return {"system": "pytorch", "mode": "matmul", "threads": torch.get_num_threads(), "cases": cases}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mode", choices=["train", "matmul"], default="train")
    add_training_arguments(p)
    p.add_argument("--compile", choices=["none", "default", "max-autotune-no-cudagraphs"], default="none",
                   help="torch.compile the model (PyTorch 2) in this mode")
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--shapes", default="256x1024x1024,1024x1024x1024", help="matmul shapes MxNxK")
    p.add_argument("--precisions", default="f32,bf16", help="matmul precisions")
    p.add_argument("--reps", type=int, default=100)
    a = p.parse_args()
    if a.mode == "train" and a.steps <= a.warmup:
        p.error("--steps must exceed --warmup")
    torch.set_num_threads(a.threads)
    print(json.dumps(train(a) if a.mode == "train" else matmul(a)), flush=True)


if __name__ == "__main__":
    main()
