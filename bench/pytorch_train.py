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
import gzip
import json
import os
import resource
import time

import numpy as np
import torch
import torch.nn.functional as F

MASK = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15


def mix(x):
    """SplitMix64's finaliser after adding the golden gamma (src/runtime/initialize.cpp),
    on a uint64 numpy array (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        x = x + np.uint64(GAMMA)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def mix_scalar(x):
    return int(mix(np.array([x & MASK], dtype=np.uint64))[0])


def he_uniform(shape, seed):
    """kiln's Init::he_uniform: element i = lo + (hi-lo)*u(seed, i), u in (0,1), hi =
    sqrt(6/fan_in); fan_in = shape[0] for [in,out] kernels, in*kh*kw for OIHW filters."""
    fan_in = shape[0] if len(shape) == 2 else shape[1] * int(np.prod(shape[2:]))
    hi = np.sqrt(6.0 / fan_in)
    i = np.arange(int(np.prod(shape)), dtype=np.uint64)
    u = ((mix(np.uint64(mix_scalar(seed)) ^ i) >> np.uint64(11)).astype(np.float64) + 0.5) * (1.0 / 9007199254740992.0)
    return torch.from_numpy((-hi + 2 * hi * u).astype(np.float32).reshape(shape))


def epoch_order(n, seed, epoch):
    """kiln's shuffle_indices(iota(n), seed, epoch) (src/data/shuffle.cpp)."""
    state = (mix_scalar(seed) + epoch) & MASK
    draws = n - 1  # one draw per i = n .. 2
    with np.errstate(over="ignore"):
        xs = np.uint64(state) + np.arange(draws, dtype=np.uint64) * np.uint64(GAMMA)
    r = mix(xs)
    bounds = np.arange(n, 1, -1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        thresholds = (np.uint64(0) - bounds) % bounds
    if np.any(r < thresholds):  # a rejected draw (p ~ 1e-15): fall back to one at a time
        return epoch_order_slow(n, state)
    picks = (r % bounds).tolist()
    order = list(range(n))
    for k, i in enumerate(range(n, 1, -1)):
        j = picks[k]
        order[i - 1], order[j] = order[j], order[i - 1]
    return order


def epoch_order_slow(n, state):
    order = list(range(n))
    for i in range(n, 1, -1):
        while True:
            state = (state + GAMMA) & MASK
            r = mix_scalar(state - GAMMA)
            if r >= (-i) % i:
                break
        j = r % i
        order[i - 1], order[j] = order[j], order[i - 1]
    return order


def read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    rank = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * d: 8 + 4 * d], "big") for d in range(rank)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * rank).reshape(dims)


def load(data_dir, split):
    prefix = "train" if split == "train" else "t10k"

    def path(kind):
        p = os.path.join(data_dir, f"{prefix}-{kind}-idx{3 if kind == 'images' else 1}-ubyte")
        return p + ".gz" if os.path.exists(p + ".gz") else p

    images = read_idx(path("images"))
    labels = read_idx(path("labels"))
    x = torch.from_numpy(images.reshape(len(images), -1).astype(np.float32) / np.float32(255.0))
    return x, torch.from_numpy(labels.astype(np.int64))


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
            first_loss = final_loss
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
            "train_seconds": train_seconds, "compile_seconds": 0.0, "first_loss": first_loss, "final_loss": final_loss,
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
    p.add_argument("--model", choices=["mlp", "cnn"], default="mlp")
    p.add_argument("--hidden", default="1024,1024")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--precision", choices=["f32", "bf16"], default="f32")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--learning-rate", type=float, default=0.05)
    p.add_argument("--eval-batch", type=int, default=1000)
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
