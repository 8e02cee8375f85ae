#!/usr/bin/env python3
"""Data-parallel training on one host (issue 15): `mpirun -np 2 kiln train --threads 1`
against `kiln train --threads 2`, on the MLP and the CNN, same global batch and steps.
Reports steps/s of each, the share of the 2-rank step spent in collectives (MPI
all_reduce of the gradients and the loss, timed by kiln::World) and the bytes reduced
per step, as a Markdown table and a JSON file.

    bench/data_parallel.py [--kiln build/kiln] [--models mlp,cnn] [--steps 200,40]
                           [--batch-size 256] [--out data-parallel.json]
Both configurations load the compiled graphs from one shared compile cache (warmed by a
first short run), so compile time stays out of the comparison.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def isa():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                return ",".join(x for x in ("avx2", "avx512f", "avx512_bf16", "amx_bf16") if x in flags)
    return "?"


def train(kiln, model, steps, batch, ranks, threads, cache, out):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = (["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(ranks)] if ranks > 1 else []) + [
        kiln, "train", "--model", model, "--steps", str(steps), "--batch-size", str(batch), "--threads",
        str(threads), "--test-limit", "1000", "--graph-compiler-cache-dir", cache, "--quiet", "--metrics-out", out]
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        return [json.loads(line) for line in f if '"final"' in line][0]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kiln", default="build/kiln")
    ap.add_argument("--models", default="mlp,cnn")
    ap.add_argument("--steps", default="200,40", help="steps per model, in the order of --models")
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--out", default="data-parallel.json")
    a = ap.parse_args()
    models, steps = a.models.split(","), [int(s) for s in a.steps.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        cache = os.path.join(tmp, "cache")
        for model, n in zip(models, steps):
            for ranks, threads in ((1, 2), (2, 1)):  # warm the cache for both graphs' keys
                train(a.kiln, model, 2, a.batch_size, ranks, threads, cache, os.path.join(tmp, "warm.jsonl"))
            one = train(a.kiln, model, n, a.batch_size, 1, 2, cache, os.path.join(tmp, "one.jsonl"))
            two = train(a.kiln, model, n, a.batch_size, 2, 1, cache, os.path.join(tmp, "two.jsonl"))
            dp = two["data_parallel"]
            rows.append({"model": model, "steps": n, "batch_size": a.batch_size,
                         "one_rank_2_threads_steps_per_second": one["steps_per_second"],
                         "two_ranks_1_thread_steps_per_second": two["steps_per_second"],
                         "collective_share": dp["collective_share_of_train"],
                         "collective_seconds": dp["collective_seconds"],
                         "bytes_reduced_per_step": dp["bytes_reduced_per_step"],
                         "train_seconds_two_ranks": two["train_seconds"],
                         "cpu": one["cpu"], "isa": isa()})
    print(f"CPU: {rows[0]['cpu']} ({rows[0]['isa']}), batch {a.batch_size}\n")
    print("| model | 1 rank x 2 threads (steps/s) | 2 ranks x 1 thread (steps/s) | step share in collectives "
          "| bytes reduced per step |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['one_rank_2_threads_steps_per_second']:.1f} | "
              f"{r['two_ranks_1_thread_steps_per_second']:.1f} | {100 * r['collective_share']:.1f}% | "
              f"{r['bytes_reduced_per_step']:,} |")
    with open(a.out, "w") as f:
        json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
