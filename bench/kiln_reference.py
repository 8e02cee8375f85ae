"""kiln's initial weights and batch order, reproduced in numpy for the peers' benchmark
scripts (bench/pytorch_train.py, bench/jax_train.py), so that every system starts from the
weights kiln starts from and sees the batches kiln sees; and Fashion-MNIST read from its IDX
files."""
import gzip
import os

import numpy as np

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


def uniforms(seed, n):
    """kiln's counter-based uniforms u(seed, i) in (0, 1), i = 0 .. n-1, as float64."""
    i = np.arange(n, dtype=np.uint64)
    return ((mix(np.uint64(mix_scalar(seed)) ^ i) >> np.uint64(11)).astype(np.float64) + 0.5) * (1.0 / 9007199254740992.0)


def he_uniform(shape, seed):
    """kiln's Init::he_uniform: element i = lo + (hi-lo)*u(seed, i), u in (0,1), hi =
    sqrt(6/fan_in); fan_in = shape[0] for [in,out] kernels, in*kh*kw for OIHW filters."""
    fan_in = shape[0] if len(shape) == 2 else shape[1] * int(np.prod(shape[2:]))
    hi = np.sqrt(6.0 / fan_in)
    u = uniforms(seed, int(np.prod(shape)))
    return (-hi + 2 * hi * u).astype(np.float32).reshape(shape)


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
    return images.reshape(len(images), -1).astype(np.float32) / np.float32(255.0), labels.astype(np.int64)


def add_training_arguments(p):
    """The options every peer's training script takes, as kiln_bench_train spells them."""
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


def score(logits_of, x_test, y_test, batch):
    """(mean cross-entropy, accuracy) on the test set; logits_of(x) -> numpy logits."""
    correct, loss_sum = 0, 0.0
    for i in range(0, len(x_test), batch):
        logits = np.asarray(logits_of(x_test[i:i + batch]), dtype=np.float64)
        y = y_test[i:i + batch]
        m = logits.max(axis=1, keepdims=True)
        logp = logits - m - np.log(np.exp(logits - m).sum(axis=1, keepdims=True))
        loss_sum += float(-logp[np.arange(len(y)), y].sum())
        correct += int((logits.argmax(1) == y).sum())
    return loss_sum / len(x_test), correct / len(x_test)
