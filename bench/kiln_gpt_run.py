#!/usr/bin/python3
"""Runs `kiln train --model gpt ...` for bench/peers.py and prints one JSON line in the
peers' form: steps/s over the steps after --warmup (as the peers count it: wall clock
between progress records, compiling excluded), the first and final loss, the validation
loss, when the first step ended (for the compile-cache table) and the cache's outcome.

  bench/kiln_gpt_run.py [--warmup 10] build/kiln train --model gpt --steps 300 ...
"""
import json
import os
import subprocess
import sys
import tempfile
import time

STARTED = time.time()


def main():
    args = sys.argv[1:]
    warmup = 10
    if args[:1] == ["--warmup"]:
        warmup, args = int(args[1]), args[2:]
    with tempfile.TemporaryDirectory(prefix="kiln-gpt-run-") as tmp:
        metrics = os.path.join(tmp, "metrics.jsonl")
        r = subprocess.run(args + ["--log-every", "1", "--metrics-out", metrics, "--model-dir",
                                   os.path.join(tmp, "model")], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit((r.stderr or r.stdout)[-2000:])
        records = [json.loads(line) for line in open(metrics)]
    progress = {rec["step"]: rec for rec in records if rec.get("event") == "progress"}
    final = next(rec for rec in records if rec.get("event") == "final")
    last = max(progress)
    if last <= warmup:
        sys.exit("kiln_gpt_run: --steps must exceed --warmup (%d)" % warmup)
    print(json.dumps({
        "system": "kiln", "model": "gpt", "steps": final["steps"], "threads": final["threads"],
        "steps_per_second": (last - warmup) / (progress[last]["wall_time"] - progress[warmup]["wall_time"]),
        "kiln_steps_per_second": final["steps_per_second"], "first_step_at": progress[1]["wall_time"],
        "started_at": STARTED, "first_loss": progress[1]["loss"], "final_loss": final["final_loss"],
        "validation_loss": final["test_loss"], "compile_cache": final["compile_cache"],
        "compile_seconds": final["compile_seconds"], "isa": final["isa"]}))


if __name__ == "__main__":
    main()
