#!/usr/bin/python3
"""The PyTorch peer of `kiln train --model gpt`: the same model, weights and batches.

The model is kiln's (models/gpt.cpp) written with raw tensors in kiln's layouts: token
and position embeddings, pre-LayerNorm blocks of causal multi-head attention (one fused
qkv projection) and a 4x GELU (exact, erf) MLP, final LayerNorm, the head tied to the
token embedding. Initial weights are kiln's: its counter-based normal generator
(src/backend/initialize_variables.cpp) with kiln's seeds, in kiln's creation order.
Batches are kiln's random_windows (src/data/text_windows.cpp: batch k's starts drawn by
SplitMix64 seeded with mix(seed) + k); validation is kiln's consecutive_windows over the
last 10% of the text. The optimizer is kiln's gpt recipe (models.h gpt_optimizer):
torch.optim.AdamW lr 1e-3, betas 0.9/0.99, eps 1e-8, weight decay 0.1 on the matrices only
(not biases, LayerNorms or the embeddings), kiln's schedule (learning_rate.h: linear
warm-up over 100 steps, then cosine to 1e-4 at step 2000) and clip_grad_norm_ to 1.

  /usr/bin/python3 bench/pytorch_gpt.py --steps 200 --precision f32
  /usr/bin/python3 bench/pytorch_gpt.py --steps 50 --precision bf16   # autocast; slow without AVX-512

Prints one JSON line: steps/s (after --warmup steps), losses, validation loss (nats/char).
"""
import argparse
import json
import math
import os
import time

import numpy as np
import torch
import torch.nn.functional as F

from pytorch_train import GAMMA, MASK, mix, mix_scalar  # kiln's SplitMix64, beside this file


def kiln_normal(shape, std, seed):
    """kiln's Init::normal(0, std, seed): Box-Muller on uniforms (seed, 2i) and (seed, 2i+1)."""
    n = int(np.prod(shape))
    i = np.arange(2 * n, dtype=np.uint64)
    u = ((mix(np.uint64(mix_scalar(seed)) ^ i) >> np.uint64(11)).astype(np.float64) + 0.5) / 9007199254740992.0
    z = np.sqrt(-2.0 * np.log(u[0::2])) * np.cos(6.283185307179586 * u[1::2])
    return torch.from_numpy((std * z).astype(np.float32).reshape(shape))


def read_text(path):
    if os.path.isfile(path):
        return open(path, "rb").read()
    names = sorted(n for n in os.listdir(path)
                   if os.path.isfile(os.path.join(path, n)) and not os.path.islink(os.path.join(path, n))
                   and not n.endswith(".dat") and not n.endswith(".u8"))
    return b"".join(open(os.path.join(path, n), "rb").read() for n in names)


def window_starts(n_tokens, context, batch, seed, k):
    """kiln's random_windows: batch k's window starts."""
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


class Gpt(torch.nn.Module):
    def __init__(self, vocab, layers, heads, width, context, seed):
        super().__init__()
        self.heads = heads
        counter = [0]

        def normal(shape, std):
            t = kiln_normal(shape, std, seed * 1000 + counter[0])
            counter[0] += 1
            return torch.nn.Parameter(t)

        def zeros(n):
            return torch.nn.Parameter(torch.zeros(n))

        def ones(n):
            return torch.nn.Parameter(torch.ones(n))

        out_std = 0.02 / math.sqrt(2.0 * layers)
        self.wte = normal([vocab, width], 0.02)
        self.wpe = normal([context, width], 0.02)
        self.blocks = torch.nn.ModuleList()
        for _ in range(layers):
            b = torch.nn.ParameterDict()
            b["ln1_g"], b["ln1_b"] = ones(width), zeros(width)
            b["qkv_w"], b["qkv_b"] = normal([width, 3 * width], 0.02), zeros(3 * width)
            b["proj_w"], b["proj_b"] = normal([width, width], out_std), zeros(width)
            b["ln2_g"], b["ln2_b"] = ones(width), zeros(width)
            b["fc_w"], b["fc_b"] = normal([width, 4 * width], 0.02), zeros(4 * width)
            b["mlp_w"], b["mlp_b"] = normal([4 * width, width], out_std), zeros(width)
            self.blocks.append(b)
        self.lnf_g, self.lnf_b = ones(width), zeros(width)
        self.register_buffer("future", torch.triu(torch.ones(context, context, dtype=torch.bool), diagonal=1))

    def forward(self, tokens):
        bsz, t = tokens.shape
        c = self.wte.shape[1]
        h = self.wte[tokens] + self.wpe[:t]
        for b in self.blocks:
            a = F.layer_norm(h, (c,), b["ln1_g"], b["ln1_b"], 1e-5)
            q, k, v = (a @ b["qkv_w"] + b["qkv_b"]).split(c, dim=2)
            q, k, v = (x.view(bsz, t, self.heads, c // self.heads).transpose(1, 2) for x in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(c // self.heads))
            att = F.softmax(att.masked_fill(self.future[:t, :t], float("-inf")), dim=-1)
            o = att @ v  # (torch 1.13, Debian 12's, has no scaled_dot_product_attention)
            h = h + o.transpose(1, 2).reshape(bsz, t, c) @ b["proj_w"] + b["proj_b"]
            m = F.layer_norm(h, (c,), b["ln2_g"], b["ln2_b"], 1e-5)
            h = h + F.gelu(m @ b["fc_w"] + b["fc_b"]) @ b["mlp_w"] + b["mlp_b"]
        return F.layer_norm(h, (c,), self.lnf_g, self.lnf_b, 1e-5) @ self.wte.t()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", default="/usr/share/games/fortunes")
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--width", type=int, default=128)
    p.add_argument("--context", type=int, default=64)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--learning-rate", type=float, default=1e-3)
    p.add_argument("--final-learning-rate", type=float, default=1e-4)
    p.add_argument("--warmup-steps", type=int, default=100)
    p.add_argument("--decay-steps", type=int, default=2000)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--clip-norm", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--precision", choices=["f32", "bf16"], default="f32")
    p.add_argument("--eval-windows", type=int, default=0, help="validation windows (0: all)")
    p.add_argument("--log-every", type=int, default=0)
    a = p.parse_args()

    text = read_text(a.data)
    vocab = sorted(set(text))
    index = np.zeros(256, dtype=np.int64)
    index[vocab] = np.arange(len(vocab))
    tokens = torch.from_numpy(index[np.frombuffer(text, dtype=np.uint8)])
    cut = int(len(tokens) * 0.9)
    train, val = tokens[:cut], tokens[cut:]
    model = Gpt(len(vocab), a.layers, a.heads, a.width, a.context, a.seed)
    decayed = [w for n, w in model.named_parameters() if w.dim() >= 2 and n not in ("wte", "wpe")]
    kept = [w for n, w in model.named_parameters() if not (w.dim() >= 2 and n not in ("wte", "wpe"))]
    opt = torch.optim.AdamW([{"params": decayed, "weight_decay": a.weight_decay}, {"params": kept, "weight_decay": 0.0}],
                            lr=a.learning_rate, betas=(0.9, 0.99), eps=1e-8)

    def rate(step):  # kiln's learning_rate_at, as a multiple of the base rate
        if step < a.warmup_steps:
            return (step + 1) / a.warmup_steps
        p = min(max((step - a.warmup_steps) / (a.decay_steps - a.warmup_steps), 0.0), 1.0)
        final = a.final_learning_rate / a.learning_rate
        return final + (1 - final) * 0.5 * (1 + math.cos(math.pi * p))
    schedule = torch.optim.lr_scheduler.LambdaLR(opt, rate)
    offsets = torch.arange(a.context + 1)
    autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.precision == "bf16")

    losses, times = [], []
    start = time.perf_counter()
    for step in range(a.steps):
        starts = torch.tensor(window_starts(len(train), a.context, a.batch, a.seed, step))
        w = train[starts[:, None] + offsets]
        x, y = w[:, :-1], w[:, 1:]
        opt.zero_grad(set_to_none=True)
        with autocast:
            logits = model(x)
        loss = F.cross_entropy(logits.float().reshape(-1, len(vocab)), y.reshape(-1))
        loss.backward()
        if a.clip_norm > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), a.clip_norm)
        opt.step()
        schedule.step()
        losses.append(loss.item())
        times.append(time.perf_counter())
        if a.log_every and (step + 1) % a.log_every == 0:
            print(f"step {step + 1}: loss {losses[-1]:.4f}", flush=True)
    steady = a.steps - a.warmup
    steady_s = times[-1] - times[a.warmup - 1]

    model.eval()
    windows = (len(val) - 1) // a.context
    if a.eval_windows:
        windows = min(windows, a.eval_windows)
    total, count = 0.0, 0
    with torch.no_grad(), autocast:
        for i in range(0, windows, a.batch):
            starts = torch.arange(i, min(i + a.batch, windows)) * a.context
            w = val[starts[:, None] + offsets]
            logits = model(w[:, :-1]).float()
            total += F.cross_entropy(logits.reshape(-1, len(vocab)), w[:, 1:].reshape(-1), reduction="sum").item()
            count += w[:, 1:].numel()
    print(json.dumps({"system": "pytorch", "model": "gpt", "precision": a.precision, "layers": a.layers,
                      "heads": a.heads, "width": a.width, "context": a.context, "batch": a.batch, "steps": a.steps,
                      "threads": torch.get_num_threads(), "steps_per_second": steady / steady_s,
                      "train_seconds": times[-1] - start, "first_loss": losses[0], "final_loss": losses[-1],
                      "validation_loss": total / count, "torch": torch.__version__}))


if __name__ == "__main__":
    main()
