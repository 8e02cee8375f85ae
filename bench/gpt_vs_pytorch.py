#!/usr/bin/python3
"""kiln's gpt against its PyTorch peer (bench/pytorch_gpt.py): the same model, initial
weights and batches; steps/s after the first steps, final training loss and validation
loss (nats per character) in float32 and bfloat16. Prints a Markdown table.

  /usr/bin/python3 bench/gpt_vs_pytorch.py --steps 200 --precisions f32
  /usr/bin/python3 bench/gpt_vs_pytorch.py --steps 150 --precisions f32,bf16 --eval-windows 256 --repeats 3

kiln runs `kiln train --model gpt` (compile excluded from its steps/s; the compile cache
in build/gpt-bench-cache serves repeated runs). PyTorch runs with the fastest of its three
thread settings (bench/vs_pytorch.py's list), probed over --probe-steps steps in
--probe-rounds interleaved rounds first and printed. The two run
interleaved --repeats times; the table gives medians, their ranges and the range of the
per-repeat ratios (this VM's speed drifts by 10-15% over minutes).
On CPUs without AVX-512 PyTorch's bfloat16 autocast is far slower than its float32.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def isa():
    flags = open("/proc/cpuinfo").read().split()
    return " ".join(sorted({f for f in flags if f == "avx2" or f.startswith("avx512") or f.startswith("amx")}))


def run_kiln(a, precision):
    with tempfile.TemporaryDirectory() as tmp:
        metrics = os.path.join(tmp, "m.jsonl")
        cmd = [os.path.join(a.build, "kiln"), "train", "--model", "gpt", "--steps", str(a.steps), "--seed", "0",
               "--log-every", "0", "--quiet", "--test-limit", str(a.eval_windows), "--metrics-out", metrics,
               "--graph-compiler-cache-dir", os.path.join(a.build, "gpt-bench-cache")]
        if precision == "bf16":
            cmd += ["--precision-mode", "allow_mix_precision_bf16"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        final = json.loads(open(metrics).read().strip().splitlines()[-1])
        return {"steps_per_second": final["steps_per_second"], "final_loss": final["final_loss"],
                "validation_loss": final["test_loss"], "compile_seconds": final["compile_seconds"]}


sys.path.insert(0, HERE)
from vs_pytorch import best_setting, thread_configs  # noqa: E402 (the peer's settings and how one wins)


def warmup_steps(steps):
    """gpt's recipe warm-up as kiln resolves it: 100 steps, a tenth of a run not longer than that."""
    return 100 if 100 < steps else steps // 10


def run_torch(a, precision, steps=None, extra_env=None):
    steps = steps or a.steps
    cmd = ["/usr/bin/python3", os.path.join(HERE, "pytorch_gpt.py"), "--steps", str(steps), "--precision", precision,
           "--eval-windows", str(a.eval_windows), "--warmup", str(min(10, steps - 1)),
           "--decay-steps", str(a.steps),  # kiln's cosine ends at --steps
           "--warmup-steps", str(warmup_steps(a.steps))]
    env = dict(os.environ, **(extra_env or {}))
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def best_torch_setting(a, precision):
    """The fastest of PyTorch's thread settings (bench/vs_pytorch.py: its OpenMP threads spin
    and can starve OpenBLAS's own) over --probe-steps runs in --probe-rounds rounds,
    printed, as (name, env)."""
    def probe(config):
        r = run_torch(a, precision, steps=a.probe_steps, extra_env=config[1])
        print(f"probe pytorch {precision} {config[0]}: {r['steps_per_second']:.2f} steps/s", flush=True)
        return r["steps_per_second"]

    name, env, _ = best_setting(thread_configs("pytorch", os.cpu_count()), a.probe_rounds, probe)  # every core, as kiln
    return name, env


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--precisions", default="f32")
    p.add_argument("--eval-windows", type=int, default=512)
    p.add_argument("--repeats", type=int, default=3, help="interleaved runs of each system; the table gives medians")
    p.add_argument("--build", default=os.environ.get("KILN_BUILD_DIR", os.path.join(ROOT, "build")))
    p.add_argument("--probe-steps", type=int, default=20, help="steps of each PyTorch thread-setting probe")
    p.add_argument("--probe-rounds", type=int, default=2, help="interleaved rounds over PyTorch's thread settings")
    a = p.parse_args()
    print(f"gpt defaults (4 layers, 4 heads, width 128, context 64, batch 32), AdamW 1e-3 warm-up {warmup_steps(a.steps)} + cosine to "
          f"1e-4 at step {a.steps}, clip 1, {a.steps} steps, {a.repeats} interleaved repeats; "
          f"ISA: {isa()}; {os.cpu_count()} CPUs")
    rows = []
    for precision in a.precisions.split(","):
        setting, env = best_torch_setting(a, precision)
        ks, ts = [], []
        for r in range(a.repeats):  # interleaved, so that a drift of the machine's speed hits both
            ks.append(run_kiln(a, precision))
            ts.append(run_torch(a, precision, extra_env=env))
            print(f"repeat {r + 1} {precision}: kiln {ks[-1]['steps_per_second']:.2f} steps/s, "
                  f"pytorch {ts[-1]['steps_per_second']:.2f} steps/s", flush=True)
        k_rate = statistics.median([k["steps_per_second"] for k in ks])
        t_rate = statistics.median([t["steps_per_second"] for t in ts])
        ratios = [k["steps_per_second"] / t["steps_per_second"] for k, t in zip(ks, ts)]
        rows.append(f"| {precision} | {k_rate:.2f} ({min(k['steps_per_second'] for k in ks):.2f}-"
                    f"{max(k['steps_per_second'] for k in ks):.2f}) | {t_rate:.2f} "
                    f"({min(t['steps_per_second'] for t in ts):.2f}-{max(t['steps_per_second'] for t in ts):.2f}; {setting}) | "
                    f"{k_rate / t_rate:.2f} ({min(ratios):.2f}-{max(ratios):.2f}) | {ks[0]['validation_loss']:.4f} | "
                    f"{ts[0]['validation_loss']:.4f} | {ks[0]['compile_seconds']:.1f} |")
    print("| precision | kiln steps/s median (min-max) | PyTorch steps/s median (min-max; its best setting) |"
          " kiln/PyTorch (per-repeat range) | kiln val loss | PyTorch val loss | kiln compile s (first run) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    print("\n".join(rows))


if __name__ == "__main__":
    sys.exit(main())
