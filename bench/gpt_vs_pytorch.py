#!/usr/bin/python3
"""kiln's gpt against its PyTorch peer (bench/pytorch_gpt.py): the same model, initial
weights and batches; steps/s after the first steps, final training loss and validation
loss (nats per character) in float32 and bfloat16. Prints a Markdown table.

  /usr/bin/python3 bench/gpt_vs_pytorch.py --steps 200 --precisions f32
  /usr/bin/python3 bench/gpt_vs_pytorch.py --steps 100 --precisions f32,bf16 --eval-windows 512

kiln runs `kiln train --model gpt` (compile excluded from its steps/s; the compile cache
in build/gpt-bench-cache serves repeated runs), PyTorch runs with its default threads.
On CPUs without AVX-512 PyTorch's bfloat16 autocast is far slower than its float32.
"""
import argparse
import json
import os
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


def run_torch(a, precision):
    cmd = ["/usr/bin/python3", os.path.join(HERE, "pytorch_gpt.py"), "--steps", str(a.steps), "--precision", precision,
           "--eval-windows", str(a.eval_windows), "--warmup", str(min(10, a.steps - 1)),
           "--decay-steps", str(a.steps)]  # kiln's cosine ends at --steps
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--precisions", default="f32")
    p.add_argument("--eval-windows", type=int, default=512)
    p.add_argument("--build", default=os.environ.get("KILN_BUILD_DIR", os.path.join(ROOT, "build")))
    a = p.parse_args()
    print(f"gpt defaults (4 layers, 4 heads, width 128, context 64, batch 32), AdamW 1e-3 warm-up 100 + cosine to "
          f"1e-4 at step {a.steps}, clip 1, {a.steps} steps; "
          f"ISA: {isa()}; {os.cpu_count()} CPUs")
    print("| precision | kiln steps/s | PyTorch steps/s | kiln/PyTorch | kiln val loss | PyTorch val loss | kiln compile s |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for precision in a.precisions.split(","):
        k, t = run_kiln(a, precision), run_torch(a, precision)
        print(f"| {precision} | {k['steps_per_second']:.2f} | {t['steps_per_second']:.2f} | "
              f"{k['steps_per_second'] / t['steps_per_second']:.2f} | {k['validation_loss']:.4f} | "
              f"{t['validation_loss']:.4f} | {k['compile_seconds']:.1f} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
