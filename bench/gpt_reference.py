"""kiln's character GPT reproduced in numpy for the peers' benchmark scripts
(bench/pytorch_gpt.py, bench/jax_gpt.py, bench/tf_gpt.py): the text and its byte
vocabulary, kiln's initial weights in kiln's creation order, kiln's training batches and
validation windows, and kiln's learning-rate schedule, so that every system trains the same
model from the same start on the same data.

The model (models/gpt.cpp): token and position embeddings, pre-LayerNorm blocks of causal
multi-head attention (one fused qkv projection) and a 4x GELU (exact, erf) MLP, a final
LayerNorm, the head tied to the token embedding. The optimizer is kiln's gpt recipe
(models.h gpt_optimizer): AdamW lr 1e-3, betas 0.9/0.99, eps 1e-8, decoupled weight decay
0.1 on the matrices only (not biases, LayerNorms or the embeddings), gradients clipped to a
global norm of 1, linear warm-up over 100 steps, then cosine to 1e-4 at step 2000."""
import math
import os

import numpy as np

from kiln_reference import GAMMA, MASK, mix_scalar, uniforms


def add_gpt_arguments(p):
    """The options every GPT peer takes, spelled as `kiln train --model gpt` spells them."""
    p.add_argument("--data", default="/usr/share/games/fortunes")
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--width", type=int, default=128)
    p.add_argument("--context", type=int, default=64)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--warmup", type=int, default=10, help="steps excluded from steps/s (compiling is in them)")
    p.add_argument("--learning-rate", type=float, default=1e-3)
    p.add_argument("--final-learning-rate", type=float, default=1e-4)
    p.add_argument("--warmup-steps", type=int, default=100)
    p.add_argument("--decay-steps", type=int, default=2000)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--clip-norm", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--precision", choices=["f32", "bf16"], default="f32")
    p.add_argument("--threads", type=int, default=0, help="threads (0: the framework's own default)")
    p.add_argument("--eval-windows", type=int, default=0, help="validation windows (0: all)")
    p.add_argument("--log-every", type=int, default=0)


def kiln_normal(shape, std, seed):
    """kiln's Init::normal(0, std, seed): Box-Muller on uniforms (seed, 2i) and (seed, 2i+1)."""
    u = uniforms(seed, 2 * int(np.prod(shape)))
    z = np.sqrt(-2.0 * np.log(u[0::2])) * np.cos(6.283185307179586 * u[1::2])
    return (std * z).astype(np.float32).reshape(shape)


def read_text(path):
    if os.path.isfile(path):
        return open(path, "rb").read()
    names = sorted(n for n in os.listdir(path)
                   if os.path.isfile(os.path.join(path, n)) and not os.path.islink(os.path.join(path, n))
                   and not n.endswith(".dat") and not n.endswith(".u8"))
    return b"".join(open(os.path.join(path, n), "rb").read() for n in names)


def load_tokens(path):
    """(vocabulary size, training tokens, validation tokens): bytes numbered in sorted order,
    the last 10% of the text for validation, as kiln splits it."""
    text = read_text(path)
    vocab = sorted(set(text))
    index = np.zeros(256, dtype=np.int64)
    index[vocab] = np.arange(len(vocab))
    tokens = index[np.frombuffer(text, dtype=np.uint8)]
    cut = int(len(tokens) * 0.9)
    return len(vocab), tokens[:cut], tokens[cut:]


def window_starts(n_tokens, context, batch, seed, k):
    """kiln's random_windows (src/data/text_windows.cpp): batch k's window starts."""
    state = (mix_scalar(seed) + k) & MASK
    bound = n_tokens - context
    threshold = (-bound) % bound
    out = []
    while len(out) < batch:
        r = mix_scalar(state)
        state = (state + GAMMA) & MASK
        if r >= threshold:
            out.append(r % bound)
    return out


def training_batch(train, a, step):
    """(inputs, targets), int arrays [batch, context]: kiln's batch for this step."""
    w = train[np.asarray(window_starts(len(train), a.context, a.batch, a.seed, step))[:, None]
              + np.arange(a.context + 1)]
    return w[:, :-1], w[:, 1:]


def validation_batches(val, a):
    """kiln's consecutive_windows over the validation split, --batch windows at a time."""
    windows = (len(val) - 1) // a.context
    if a.eval_windows:
        windows = min(windows, a.eval_windows)
    offsets = np.arange(a.context + 1)
    for i in range(0, windows, a.batch):
        w = val[np.arange(i, min(i + a.batch, windows))[:, None] * a.context + offsets]
        yield w[:, :-1], w[:, 1:]


def initial_weights(vocab, a):
    """[(name, float32 array)] in kiln's creation order, with kiln's seeds. Block k's names
    are "h{k}.ln1_g" ... "h{k}.mlp_b"; the matrices (rank 2, not wte/wpe) are the ones AdamW
    decays."""
    counter = [0]

    def normal(shape, std):
        t = kiln_normal(shape, std, a.seed * 1000 + counter[0])
        counter[0] += 1
        return t

    c = a.width
    out_std = 0.02 / math.sqrt(2.0 * a.layers)
    out = [("wte", normal([vocab, c], 0.02)), ("wpe", normal([a.context, c], 0.02))]
    for k in range(a.layers):
        p = "h%d." % k
        out += [(p + "ln1_g", np.ones(c, np.float32)), (p + "ln1_b", np.zeros(c, np.float32)),
                (p + "qkv_w", normal([c, 3 * c], 0.02)), (p + "qkv_b", np.zeros(3 * c, np.float32)),
                (p + "proj_w", normal([c, c], out_std)), (p + "proj_b", np.zeros(c, np.float32)),
                (p + "ln2_g", np.ones(c, np.float32)), (p + "ln2_b", np.zeros(c, np.float32)),
                (p + "fc_w", normal([c, 4 * c], 0.02)), (p + "fc_b", np.zeros(4 * c, np.float32)),
                (p + "mlp_w", normal([4 * c, c], out_std)), (p + "mlp_b", np.zeros(c, np.float32))]
    return out + [("lnf_g", np.ones(c, np.float32)), ("lnf_b", np.zeros(c, np.float32))]


def decayed(name, array):
    return array.ndim >= 2 and name not in ("wte", "wpe")


def rate(a, step):
    """kiln's learning_rate_at (learning_rate.h) for 0-based step `step`."""
    if step < a.warmup_steps:
        return a.learning_rate * (step + 1) / a.warmup_steps
    p = min(max((step - a.warmup_steps) / (a.decay_steps - a.warmup_steps), 0.0), 1.0)
    return a.final_learning_rate + (a.learning_rate - a.final_learning_rate) * 0.5 * (1 + math.cos(math.pi * p))
