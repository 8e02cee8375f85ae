#!/usr/bin/env python3
"""Data-parallel training on one host (issue 15): `mpirun -np 2 kiln train --threads 1`
against `kiln train --threads 2`, on the MLP and the CNN, same global batch and steps.
The 2-rank runs go once per gradient bucket size (`--all-reduce-bucket-size`, default
0 = one MPI call per gradient, and 25M = kiln's default, every gradient in one call).
Reports steps/s of each, the share of the 2-rank step spent in collectives (MPI
all_reduce of the gradients and the loss, timed by kiln::World), the MPI_Allreduce calls
and the bytes reduced per step, as a Markdown table and a JSON file.

    bench/data_parallel.py [--kiln build/kiln] [--models mlp,cnn] [--steps 200,40]
                           [--batch-size 256] [--bucket-sizes 0,25M] [--repeats 3]
                           [--out data-parallel.json]
All configurations load the compiled graphs from one shared compile cache (warmed by a
first short run), so compile time stays out of the comparison. With --repeats R each
configuration runs R times, interleaved, and the table shows the median steps/s.
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


def train(kiln, model, steps, batch, ranks, threads, cache, out, bucket=None):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = (["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(ranks)] if ranks > 1 else []) + [
        kiln, "train", "--model", model, "--steps", str(steps), "--batch-size", str(batch), "--threads",
        str(threads), "--test-limit", "1000", "--graph-compiler-cache-dir", cache, "--quiet", "--metrics-out", out]
    if bucket is not None:
        cmd += ["--all-reduce-bucket-size", bucket]
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        return [json.loads(line) for line in f if '"final"' in line][0]


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kiln", default="build/kiln")
    ap.add_argument("--models", default="mlp,cnn")
    ap.add_argument("--steps", default="200,40", help="steps per model, in the order of --models")
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--bucket-sizes", default="0,25M", help="--all-reduce-bucket-size of the 2-rank runs")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default="data-parallel.json")
    a = ap.parse_args()
    models, steps = a.models.split(","), [int(s) for s in a.steps.split(",")]
    buckets = a.bucket_sizes.split(",")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        cache = os.path.join(tmp, "cache")
        for model, n in zip(models, steps):
            configs = [("1 rank x 2 threads", 1, 2, None)] + [
                ("2 ranks x 1 thread, buckets %s" % b, 2, 1, b) for b in buckets]
            for _, ranks, threads, bucket in configs:  # warm the cache for every graph's key
                train(a.kiln, model, 2, a.batch_size, ranks, threads, cache, os.path.join(tmp, "warm.jsonl"), bucket)
            runs = {c[0]: [] for c in configs}
            for _ in range(a.repeats):
                for name, ranks, threads, bucket in configs:
                    runs[name].append(train(a.kiln, model, n, a.batch_size, ranks, threads, cache,
                                            os.path.join(tmp, "run.jsonl"), bucket))
            for name, ranks, threads, bucket in configs:
                finals = runs[name]
                rate = median([f["steps_per_second"] for f in finals])
                dp = [f.get("data_parallel") for f in finals]
                rows.append({"model": model, "config": name, "ranks": ranks, "threads": threads,
                             "bucket_size": bucket, "steps": n, "batch_size": a.batch_size,
                             "steps_per_second": rate, "steps_per_second_runs": [f["steps_per_second"] for f in finals],
                             "step_ms": 1000 / rate if rate > 0 else None,
                             "collective_share": median([d["collective_share_of_train"] for d in dp]) if dp[0] else None,
                             "all_reduce_calls_per_step": dp[0]["all_reduce_calls_per_step"] if dp[0] else None,
                             "bytes_reduced_per_step": dp[0]["bytes_reduced_per_step"] if dp[0] else None,
                             "cpu": finals[0]["cpu"], "isa": isa()})
    print(f"CPU: {rows[0]['cpu']} ({rows[0]['isa']}), batch {a.batch_size}, median of {a.repeats} runs\n")
    print("| model | configuration | steps/s | step ms | share in collectives | MPI_Allreduce calls per step "
          "| bytes reduced per step |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for r in rows:
        if r["collective_share"] is None:
            share = calls = nbytes = "-"
        else:
            share = "%.1f%%" % (100 * r["collective_share"])
            calls = "%g" % r["all_reduce_calls_per_step"]
            nbytes = format(r["bytes_reduced_per_step"], ",")
        print(f"| {r['model']} | {r['config']} | {r['steps_per_second']:.1f} | {r['step_ms']:.1f} | {share} | {calls} "
              f"| {nbytes} |")
    with open(a.out, "w") as f:
        json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
