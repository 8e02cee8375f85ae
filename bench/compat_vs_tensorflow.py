#!/usr/bin/env python3
"""The compatibility corpus (tests/compat) on kiln and on real TensorFlow, in one run (issue
29): each port runs unchanged on both — on kiln as CI runs it, on tensorflow-cpu 2.15 with
tensorflow-estimator (tf.compat.v1) through bench/tf_shim, which maps `import kiln as tf`
to TensorFlow — with the same data (offline.py), arguments and step caps. For each script:
the metric it prints (test accuracy) and the wall time of the whole script (graph
building, training, evaluation), kiln and TensorFlow interleaved, over `--seeds` seeds: the
scripts seed neither system, so TensorFlow draws a new seed each run and kiln runs with
KILN_RANDOM_SEED=1..N (a script that sets no seed takes it from there); a script whose
seed is a flag (corpus.Entry.seed_flag) gets seeds 1..N on both. TensorFlow runs
with the fastest of its thread settings (probed: its defaults, and intra-op = the cores
with inter-op 1), kiln with its defaults and a compile cache of its own (KILN_CACHE_DIR,
fresh per script): kiln's first run compiles ("cold"), the later ones load the compiled
steps ("warm", what a user's second run of a script sees). A run that fails (TensorFlow's
NaN loss on the AlexNet script) is counted and left out of the means. Prints a Markdown
table and the CPU.

    PYTHONPATH=build/python /usr/bin/python3 bench/compat_vs_tensorflow.py [--tf-python .venv-tf/bin/python] \
        [--seeds 3] [--only NAME,...]
"""
import argparse
import math
import os
import shutil
import tempfile
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "compat"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import corpus  # noqa: E402
from python_vs_cli import isa  # noqa: E402


def run_once(entry, system, tf_python, threads_env, seed=1):
    if system == "kiln":
        python, first = "/usr/bin/python3", os.path.join(ROOT, "build", "python")
    else:
        python, first = tf_python, os.path.join(ROOT, "bench", "tf_shim")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([first, entry.port, corpus.HERE]), **entry.env, **threads_env)
    t0 = time.time()
    out = ""
    with entry.scratch() as (scratch, wrap):
        for args in entry.runs(scratch):  # a training run, and an evaluation run for scripts that split them
            if entry.seed_flag:  # a script that seeds itself from a flag: the same seeds on both systems
                args = args + [entry.seed_flag, str(seed)]
            cmd = [python] + (["-m", entry.module] if entry.module else [os.path.join(entry.port, entry.script)]) + args
            p = subprocess.run(wrap(cmd), env=env, cwd=entry.run_directory(scratch), capture_output=True, text=True,
                               timeout=3600)
            out += p.stdout + p.stderr
            if p.returncode != 0:
                break
    seconds = time.time() - t0
    m = entry.metric
    values = entry.metric_values(out)
    if p.returncode != 0 or not values:
        print("%s on %s failed (exit %d, %s):\n%s" % (entry.name, system, p.returncode,
                                                      "no %s printed" % m if not values else "", out[-1500:]), flush=True)
        return math.nan, seconds
    return float(values[-1]), seconds


def spread(values):
    """'mean ± sd' of the runs that finished, and how many failed."""
    ok = [v for v in values if not math.isnan(v)]
    text = "%.4f ± %.4f" % (statistics.mean(ok), statistics.stdev(ok)) if len(ok) > 1 else (
        "%.4f" % ok[0] if ok else "-")
    if len(ok) < len(values):
        text += " (%d of %d failed)" % (len(values) - len(ok), len(values))
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tf-python", default=os.path.join(ROOT, ".venv-tf", "bin", "python"))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    cores = str(os.cpu_count())
    tf_configs = [("TensorFlow's defaults", {}),
                  ("intra-op %s, inter-op 1" % cores, {"TF_NUM_INTRAOP_THREADS": cores, "TF_NUM_INTEROP_THREADS": "1"})]
    entries = [e for e in corpus.ENTRIES if not a.only or e.name in a.only.split(",")]
    rows = []
    for e in entries:
        # TensorFlow's best thread setting for this script, by one probe run each
        probes = [(run_once(e, "tensorflow", a.tf_python, env), label, env) for label, env in tf_configs]
        (_, _), best_label, best_env = min(probes, key=lambda p: (math.isnan(p[0][0]), p[0][1]))  # a failed run never wins
        tf_runs = [next(p[0] for p in probes if p[1] == best_label)]
        cache = tempfile.mkdtemp(prefix="kiln-compat-cache-")
        cold = run_once(e, "kiln", a.tf_python, {"KILN_CACHE_DIR": cache, "KILN_RANDOM_SEED": "1"})
        warm = []
        for seed in range(1, a.seeds + 1):
            warm.append(run_once(e, "kiln", a.tf_python, {"KILN_CACHE_DIR": cache, "KILN_RANDOM_SEED": str(seed)},
                                 seed))
            if len(tf_runs) < a.seeds:
                tf_runs.append(run_once(e, "tensorflow", a.tf_python, best_env, len(tf_runs) + 1))
        shutil.rmtree(cache, ignore_errors=True)
        rows.append((e, cold, warm, tf_runs, best_label))
        print("%s: kiln cold %s, warm %s; TensorFlow %s (%s)" % (e.name, cold, warm, tf_runs, best_label), flush=True)
    model, flags = isa()
    print()
    print("CPU: %s (%s), %s cores; %s" % (model, " ".join(flags), cores, time.strftime("%Y-%m-%d")))
    print()
    print("| script | steps | metric | kiln, %d seeds | TensorFlow 2.15, %d runs | kiln s, cold / warm "
          "| TensorFlow s (setting) | TF time / kiln time, cold / warm |" % (a.seeds, a.seeds))
    print("|---|---|---|---|---|---|---|---|")
    for e, cold, warm, t, label in rows:
        steps = e.env.get("KILN_MAX_STEPS") or next((e.args[i + 1] for i, x in enumerate(e.args)
                                                     if x in ("--train_steps", "--num_steps", "--max_train_steps", "--max_steps")), "")
        if not steps and "--train_dataset_size" in e.args:  # one epoch of the dataset size
            arg = lambda flag: int(e.args[e.args.index(flag) + 1])  # noqa: E731
            steps = str(arg("--train_dataset_size") // arg("--train_batch_size"))
        ws = statistics.median(s for _, s in warm)
        ts = statistics.median(s for v, s in t if not math.isnan(v)) if any(not math.isnan(v) for v, _ in t) else math.nan
        timing = "%.1f (%s) | %.2f / %.2f" % (ts, label, ts / cold[1], ts / ws) if not math.isnan(ts) else "- | -"
        print("| %s | %s | %s | %s | %s | %.1f / %.1f | %s |" % (
            e.name, steps, e.metric, spread([v for v, _ in warm]), spread([v for v, _ in t]), cold[1], ws, timing))


if __name__ == "__main__":
    main()
