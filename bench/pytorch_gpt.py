#!/usr/bin/python3
"""The PyTorch peer of `kiln train --model gpt`: the same model, weights, batches and
optimizer (bench/gpt_reference.py says which), written with raw tensors in kiln's layouts.
The optimizer is torch.optim.AdamW with weight decay on the matrices only, kiln's schedule
through LambdaLR, and clip_grad_norm_ to --clip-norm. --compile wraps the model in
torch.compile (the forward and, through AOT autograd, the backward); bfloat16 is
torch.autocast("cpu", dtype=torch.bfloat16) around the forward pass.

  /usr/bin/python3 bench/pytorch_gpt.py --steps 200 --precision f32            # Debian's PyTorch 1.13
  .venv-peers/bin/python bench/pytorch_gpt.py --steps 200 --compile default     # PyTorch 2

Prints one JSON line: steps/s (after --warmup steps), losses, validation loss (nats/char).
"""
import argparse
import json
import math
import os
import sys
import time

STARTED = time.time()
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from gpt_reference import add_gpt_arguments, decayed, initial_weights, load_tokens, rate, training_batch, \
    validation_batches  # noqa: E402


class Gpt(torch.nn.Module):
    def __init__(self, vocab, a):
        super().__init__()
        self.heads = a.heads
        self.weights = torch.nn.ParameterDict({n.replace(".", "_"): torch.nn.Parameter(torch.from_numpy(w))
                                               for n, w in initial_weights(vocab, a)})
        self.layers = a.layers
        self.register_buffer("future", torch.triu(torch.ones(a.context, a.context, dtype=torch.bool), diagonal=1))

    def forward(self, tokens):
        w = self.weights
        bsz, t = tokens.shape
        c = w["wte"].shape[1]
        h = w["wte"][tokens] + w["wpe"][:t]
        for k in range(self.layers):
            b = lambda name: w["h%d_%s" % (k, name)]  # noqa: E731
            a = F.layer_norm(h, (c,), b("ln1_g"), b("ln1_b"), 1e-5)
            q, kk, v = (a @ b("qkv_w") + b("qkv_b")).split(c, dim=2)
            q, kk, v = (x.view(bsz, t, self.heads, c // self.heads).transpose(1, 2) for x in (q, kk, v))
            att = (q @ kk.transpose(-2, -1)) * (1.0 / math.sqrt(c // self.heads))
            att = F.softmax(att.masked_fill(self.future[:t, :t], float("-inf")), dim=-1)
            o = att @ v  # (torch 1.13, Debian 12's, has no scaled_dot_product_attention)
            h = h + o.transpose(1, 2).reshape(bsz, t, c) @ b("proj_w") + b("proj_b")
            m = F.layer_norm(h, (c,), b("ln2_g"), b("ln2_b"), 1e-5)
            h = h + F.gelu(m @ b("fc_w") + b("fc_b")) @ b("mlp_w") + b("mlp_b")
        return F.layer_norm(h, (c,), w["lnf_g"], w["lnf_b"], 1e-5) @ w["wte"].t()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_gpt_arguments(p)
    p.add_argument("--compile", choices=["none", "default", "max-autotune-no-cudagraphs"], default="none")
    a = p.parse_args()
    if a.steps <= a.warmup:
        p.error("--steps must exceed --warmup")
    if a.threads:
        torch.set_num_threads(a.threads)

    vocab, train, val = load_tokens(a.data)
    model = Gpt(vocab, a)
    groups = {True: [], False: []}
    for n, w in model.weights.items():
        groups[decayed(n, w)].append(w)
    opt = torch.optim.AdamW([{"params": groups[True], "weight_decay": a.weight_decay},
                             {"params": groups[False], "weight_decay": 0.0}],
                            lr=a.learning_rate, betas=(0.9, 0.99), eps=1e-8)
    schedule = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: rate(a, step) / a.learning_rate)
    forward = model if a.compile == "none" else torch.compile(model, mode=a.compile)
    autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.precision == "bf16")

    losses, times = [], []
    start = time.perf_counter()
    for step in range(a.steps):
        x, y = (torch.from_numpy(v) for v in training_batch(train, a, step))
        opt.zero_grad(set_to_none=True)
        with autocast:
            logits = forward(x)
        loss = F.cross_entropy(logits.float().reshape(-1, vocab), y.reshape(-1))
        loss.backward()
        if a.clip_norm > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), a.clip_norm)
        opt.step()
        schedule.step()
        losses.append(loss.item())
        times.append(time.perf_counter())
        if step == 0:
            first_step_at = time.time()
        if a.log_every and (step + 1) % a.log_every == 0:
            print(f"step {step + 1}: loss {losses[-1]:.4f}", flush=True)
    steady = a.steps - a.warmup
    steady_s = times[-1] - times[a.warmup - 1]

    model.eval()
    total, count = 0.0, 0
    with torch.no_grad(), autocast:
        for x, y in validation_batches(val, a):
            logits = model(torch.from_numpy(x)).float()
            total += F.cross_entropy(logits.reshape(-1, vocab), torch.from_numpy(y).reshape(-1), reduction="sum").item()
            count += y.size
    print(json.dumps({"system": "pytorch", "model": "gpt", "precision": a.precision, "compile": a.compile,
                      "layers": a.layers, "heads": a.heads, "width": a.width, "context": a.context, "batch": a.batch,
                      "steps": a.steps, "threads": torch.get_num_threads(), "steps_per_second": steady / steady_s,
                      "train_seconds": times[-1] - start, "first_step_at": first_step_at, "started_at": STARTED,
                      "first_loss": losses[0], "final_loss": losses[-1], "validation_loss": total / count,
                      "torch": torch.__version__}))


if __name__ == "__main__":
    main()
