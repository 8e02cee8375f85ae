#!/usr/bin/env python3
"""accelerate_train_mode evaluation on Fashion-MNIST (issue 7): for each model and seed,
the original precision vs fast1|step|0.9 vs fast|step|0.9 vs fast1|loss|1.05, trained with
`kiln train` from the same start. Reports total train time, steps/s per phase and test
accuracy (mean over seeds), as a Markdown table and a JSON file, and, per model, a
`kiln report` page overlaying the modes' runs of the first seed (OUT-MODEL.html; every
run's --metrics-out file is kept in OUT-runs/).

The loss split needs the loss the run is expected to end at: the original-precision run
of the same seed provides it (the mean loss of its last logged 100 steps), as a user
would take it from an earlier run.

    bench/accelerate_eval.py [--kiln build/kiln] [--models mlp,cnn] [--seeds 0,1,2]
                             [--steps 1200] [--out accelerate-eval]
Runs are interleaved (seed by seed, mode by mode) so that machine noise spreads evenly.
Compiled graphs come from a compile cache shared by the runs (the first run of each
graph compiles it); compile time is reported apart from train time.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

MODES = ["original", "fast1|step|0.9", "fast|step|0.9", "fast1|loss|1.05"]


def cpu_description():
    model, flags = "unknown", set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name") and model == "unknown":
                model = line.split(":", 1)[1].strip()
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
    isa = [f for f in ("avx2", "f16c", "avx512f", "avx512_bf16", "avx512_fp16", "amx_bf16", "amx_tile") if f in flags]
    return model, isa


def metrics_path(runs_dir, model, seed, mode):
    return os.path.join(runs_dir, "%s-seed%d-%s.jsonl" % (model, seed, mode.replace("|", "_")))


def run(kiln, model, seed, mode, steps, cache, runs_dir, final_loss=None):
    metrics = metrics_path(runs_dir, model, seed, mode)
    # Records every 20 steps: curves for the report; the last five make the last 100 steps.
    cmd = [kiln, "train", "--model", model, "--seed", str(seed), "--steps", str(steps), "--quiet",
           "--log-every", "20", "--metrics-out", metrics, "--graph-compiler-cache-dir", cache,
           "--threads", "0"]
    if mode != "original":
        cmd += ["--accelerate-train-mode", mode]
    if final_loss is not None:
        cmd += ["--final-loss", "%.6f" % final_loss]
    t0 = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.time() - t0
    if proc.returncode != 0:
        sys.exit("kiln failed (%d): %s\n%s%s" % (proc.returncode, " ".join(cmd), proc.stdout, proc.stderr))
    with open(metrics) as f:
        recs = [json.loads(line) for line in f]
    final = recs[-1]
    progress = [r for r in recs if r["event"] == "progress"]
    last_100 = [r["loss"] for r in progress[-5:]]
    out = {
        "model": model, "seed": seed, "mode": mode, "steps": final["steps"],
        "train_seconds": final["train_seconds"], "compile_seconds": final["compile_seconds"],
        "wall_seconds": wall, "test_accuracy": final["test_accuracy"], "final_loss": final["final_loss"],
        "last_logged_loss": statistics.mean(last_100) if last_100 else final["final_loss"],
        "steps_per_second": final["steps_per_second"],
    }
    a = final.get("accelerate")
    if a:
        out.update({"switch_step": a["switch_step"], "switch_reason": a["switch_reason"],
                    "low_steps": a["low_steps"], "low_steps_per_second": a["low_steps_per_second"],
                    "original_steps_per_second": a["original_steps_per_second"],
                    "seconds_saved": a["seconds_saved"], "final_loss_target": final_loss})
    return out


def mean(xs):
    xs = [x for x in xs if x is not None]
    return statistics.mean(xs) if xs else None


def fmt(x, spec):
    return "–" if x is None else format(x, spec)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kiln", default="build/kiln")
    ap.add_argument("--models", default="mlp,cnn")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--steps", type=int, default=1200)
    ap.add_argument("--out", default="accelerate-eval")
    args = ap.parse_args()
    models, seeds = args.models.split(","), [int(s) for s in args.seeds.split(",")]
    cpu, isa = cpu_description()
    results = []
    runs_dir = args.out + "-runs"
    os.makedirs(runs_dir, exist_ok=True)
    with tempfile.TemporaryDirectory() as cache:
        for model in models:
            for seed in seeds:
                original = run(args.kiln, model, seed, "original", args.steps, cache, runs_dir)
                results.append(original)
                print(json.dumps(original), flush=True)
                for mode in MODES[1:]:
                    target = original["last_logged_loss"] if "|loss|" in mode else None
                    r = run(args.kiln, model, seed, mode, args.steps, cache, runs_dir, target)
                    results.append(r)
                    print(json.dumps(r), flush=True)

    lines = ["# accelerate_train_mode on Fashion-MNIST", "",
             "%s; CPU %s, ISA %s; %s; %d steps, batch 256, seeds %s; `kiln train` defaults otherwise." %
             (time.strftime("%Y-%m-%d"), cpu, " ".join(isa), platform.machine(), args.steps, args.seeds), "",
             "| model | mode | train s | × original | low steps/s | original steps/s | switch step | test acc | Δ acc (points) |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for model in models:
        base = [r for r in results if r["model"] == model and r["mode"] == "original"]
        base_t, base_acc = mean([r["train_seconds"] for r in base]), mean([r["test_accuracy"] for r in base])
        for mode in MODES:
            rs = [r for r in results if r["model"] == model and r["mode"] == mode]
            t, acc = mean([r["train_seconds"] for r in rs]), mean([r["test_accuracy"] for r in rs])
            low = mean([r.get("low_steps_per_second") for r in rs]) if mode != "original" else None
            orig = mean([r.get("original_steps_per_second") for r in rs]) if mode != "original" else \
                mean([r["steps_per_second"] for r in rs])
            sw = ", ".join(str(r.get("switch_step")) for r in rs) if mode != "original" else "–"
            lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                model, mode.replace("|", "\\|"), fmt(t, ".1f"), fmt(t / base_t if t and base_t else None, ".2f"), fmt(low, ".1f"),
                fmt(orig, ".1f"), sw, fmt(acc, ".4f"), fmt((acc - base_acc) * 100 if mode != "original" else None, "+.2f")))
    table = "\n".join(lines) + "\n"
    print(table)
    with open(args.out + ".md", "w") as f:
        f.write(table)
    with open(args.out + ".json", "w") as f:
        json.dump({"cpu": cpu, "isa": isa, "steps": args.steps, "seeds": seeds, "runs": results}, f, indent=1)
    # The comparison as pictures: per model, the modes' runs of the first seed overlaid.
    for model in models:
        page = "%s-%s.html" % (args.out, model)
        cmd = [args.kiln, "report", "-o", page, "--title",
               "accelerate_train_mode: %s on Fashion-MNIST, seed %d, %d steps" % (model, seeds[0], args.steps)]
        for mode in MODES:
            cmd += [metrics_path(runs_dir, model, seeds[0], mode), "--label", mode]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit("kiln report failed (%d): %s\n%s%s" % (proc.returncode, " ".join(cmd), proc.stdout, proc.stderr))
        print(proc.stdout, end="")


if __name__ == "__main__":
    main()
