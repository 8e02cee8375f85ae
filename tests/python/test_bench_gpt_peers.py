"""The GPT rows of bench/peers.py compare like with like: bench/gpt_reference.py, which
every GPT peer (PyTorch, JAX, TensorFlow) trains from, reproduces kiln's model, initial
weights and batches — a numpy forward pass of its weights on its first batch gives the
loss of kiln's first step — and the kiln side (bench/kiln_gpt_run.py) reports what the
table needs, with the schedule spelled out as the peers run it."""
import json
import math
import os
import subprocess
import sys
import types

import numpy as np

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench")
sys.path.insert(0, BENCH)
import gpt_reference  # noqa: E402
import peers  # noqa: E402

KILN = os.path.join(peers.ROOT, "build", "kiln")
TEXT = ("The quick brown fox jumps over the lazy dog. A stitch in time saves nine. "
        "Fortune favours the bold; the early bird catches the worm.\n") * 40


def layer_norm(x, g, b):
    mean = x.mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + 1e-5) * g + b


def first_loss(w, x, y, a):
    """The reference model's loss (mean cross-entropy, nats) in float64."""
    w = {n: v.astype(np.float64) for n, v in w.items()}
    c, heads = a.width, a.heads
    bsz, t = x.shape
    h = w["wte"][x] + w["wpe"][:t]
    erf = np.vectorize(math.erf)
    for k in range(a.layers):
        b = lambda name: w["h%d.%s" % (k, name)]
        qkv = layer_norm(h, b("ln1_g"), b("ln1_b")) @ b("qkv_w") + b("qkv_b")
        q, kk, v = (m.reshape(bsz, t, heads, c // heads).transpose(0, 2, 1, 3) for m in np.split(qkv, 3, -1))
        att = q @ kk.transpose(0, 1, 3, 2) / math.sqrt(c // heads)
        att = np.where(np.triu(np.ones((t, t), bool), 1), -np.inf, att)
        att = np.exp(att - att.max(-1, keepdims=True))
        att /= att.sum(-1, keepdims=True)
        h = h + (att @ v).transpose(0, 2, 1, 3).reshape(bsz, t, c) @ b("proj_w") + b("proj_b")
        f = layer_norm(h, b("ln2_g"), b("ln2_b")) @ b("fc_w") + b("fc_b")
        h = h + (0.5 * f * (1 + erf(f / math.sqrt(2)))) @ b("mlp_w") + b("mlp_b")
    logits = layer_norm(h, w["lnf_g"], w["lnf_b"]) @ w["wte"].T
    m = logits.max(-1, keepdims=True)
    logp = logits - m - np.log(np.exp(logits - m).sum(-1, keepdims=True))
    return float(-np.take_along_axis(logp, y[..., None], -1).mean())


def test_the_reference_trains_what_kiln_trains_and_the_kiln_side_reports_the_table(tmp_path):
    text = tmp_path / "text.txt"
    text.write_text(TEXT)
    a = types.SimpleNamespace(data=str(text), layers=2, heads=2, width=16, context=8, batch=4, seed=3,
                              eval_windows=8)
    cmd = peers.gpt_command("kiln", "f32", 12, 2, str(tmp_path / "cache"),
                            types.SimpleNamespace(eval_windows=8, threads=2), ("--batch", "4"))
    assert cmd[cmd.index("--warmup-steps") + 1] == "100" and cmd[cmd.index("--decay-steps") + 1] == "2000"
    assert "--batch" not in cmd and cmd[cmd.index("--batch-size") + 1] == "4"
    assert cmd[cmd.index("--test-limit") + 1] == "8"  # --eval-windows, as kiln spells it
    peer = peers.gpt_command("jax", "bf16", 12, 2, "", types.SimpleNamespace(eval_windows=8, threads=2), ())
    assert peer[1].endswith("jax_gpt.py") and peer[peer.index("--eval-windows") + 1] == "8"
    assert peer[peer.index("--precision") + 1] == "bf16" and "--cache-dir" not in peer
    cmd = [sys.executable if c == "/usr/bin/python3" else c for c in cmd]
    cmd[cmd.index("--seed") + 1] = "3"  # not peers' 0, so that the seed is seen to matter
    cmd += ["--data", str(text), "--layers", "2", "--heads", "2", "--width", "16", "--context", "8"]
    assert cmd[cmd.index("--steps") + 1] == "12"
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr + r.stdout
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["steps"] == 12 and out["steps_per_second"] > 0 and out["compile_cache"] == "miss"
    assert out["started_at"] < out["first_step_at"] and out["validation_loss"] < out["first_loss"]

    vocab, train, val = gpt_reference.load_tokens(str(text))
    assert vocab == len(set(TEXT.encode()))
    weights = dict(gpt_reference.initial_weights(vocab, a))
    x, y = gpt_reference.training_batch(train, a, 0)
    assert x.shape == (4, 8) and (x[:, 1:] == y[:, :-1]).all()
    assert abs(first_loss(weights, x, y, a) - out["first_loss"]) < 2e-4, out
    # a different seed is a different start: the comparison above can fail
    other = dict(gpt_reference.initial_weights(vocab, types.SimpleNamespace(**{**vars(a), "seed": 4})))
    assert abs(first_loss(other, x, y, a) - out["first_loss"]) > 2e-4
    assert sum(len(yv) for _, yv in gpt_reference.validation_batches(val, a)) == min(8, (len(val) - 1) // 8)
