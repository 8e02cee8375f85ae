#!/usr/bin/env python3
"""The compatibility corpus (tests/compat) on kiln and on real TensorFlow, in one run (issue
29): each port runs unchanged on both — on kiln as CI runs it, on tensorflow-cpu 2.15 with
tensorflow-estimator (tf.compat.v1) through bench/tf_shim, which maps `import kiln as tf`
to TensorFlow — with the same data (offline.py), arguments and step caps. For each script:
the metric it prints (test accuracy) and the wall time of the whole script (graph
building, training, evaluation), kiln and TensorFlow interleaved, `--repeats` times;
TensorFlow with the fastest of its thread settings (probed: its defaults, and intra-op =
the cores with inter-op 1), kiln with its defaults and a compile cache of its own
(KILN_CACHE_DIR, fresh per script): kiln's first run compiles ("cold"), the later ones load
the compiled steps ("warm", what a user's second run of a script sees). Prints a Markdown
table and the CPU.

    PYTHONPATH=build/python /usr/bin/python3 bench/compat_vs_tensorflow.py [--tf-python .venv-tf/bin/python] \
        [--repeats 1] [--only NAME,...]
"""
import argparse
import os
import shutil
import tempfile
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "compat"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import corpus  # noqa: E402
from python_vs_cli import isa  # noqa: E402


def run_once(entry, system, tf_python, threads_env):
    for d in entry.dirs:
        subprocess.run(["rm", "-rf", d])
    if system == "kiln":
        python, first = "/usr/bin/python3", os.path.join(ROOT, "build", "python")
    else:
        python, first = tf_python, os.path.join(ROOT, "bench", "tf_shim")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([first, entry.port, corpus.HERE]), **entry.env, **threads_env)
    t0 = time.time()
    out = ""
    for args in entry.runs():  # a training run, and an evaluation run for scripts that split them
        cmd = [python] + (["-m", entry.module] if entry.module else [os.path.join(entry.port, entry.script)]) + args
        p = subprocess.run(cmd, env=env, cwd=entry.cwd or entry.port, capture_output=True, text=True, timeout=3600)
        out += p.stdout + p.stderr
        if p.returncode != 0:
            break
    seconds = time.time() - t0
    if p.returncode != 0:
        sys.exit("%s on %s failed (exit %d):\n%s" % (entry.name, system, p.returncode, out[-3000:]))
    m = entry.metric
    values = re.findall(r"(?:'%s': |\b%s = |\b%s \(tensorflow\): )([0-9.eE+-]+)"
                        % (re.escape(m), re.escape(m), re.escape(m.capitalize())), out)
    if not values:
        sys.exit("%s on %s printed no %s:\n%s" % (entry.name, system, m, out[-3000:]))
    return float(values[-1]), seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tf-python", default=os.path.join(ROOT, ".venv-tf", "bin", "python"))
    ap.add_argument("--repeats", type=int, default=1)
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
        (_, _), best_label, best_env = min(probes, key=lambda p: p[0][1])
        tf_runs = [next(p[0] for p in probes if p[1] == best_label)]
        cache = tempfile.mkdtemp(prefix="kiln-compat-cache-")
        cold = run_once(e, "kiln", a.tf_python, {"KILN_CACHE_DIR": cache})
        warm = []
        for r in range(a.repeats):
            warm.append(run_once(e, "kiln", a.tf_python, {"KILN_CACHE_DIR": cache}))
            if r > 0:
                tf_runs.append(run_once(e, "tensorflow", a.tf_python, best_env))
        shutil.rmtree(cache, ignore_errors=True)
        rows.append((e, cold, warm, tf_runs, best_label))
        print("%s: kiln cold %s, warm %s; TensorFlow %s (%s)" % (e.name, cold, warm, tf_runs, best_label), flush=True)
    model, flags = isa()
    print()
    print("CPU: %s (%s), %s cores; %s" % (model, " ".join(flags), cores, time.strftime("%Y-%m-%d")))
    print()
    print("| script | steps | metric: kiln | TensorFlow 2.15 | kiln s, cold / warm | TensorFlow s (setting) "
          "| TF time / kiln time, cold / warm |")
    print("|---|---|---|---|---|---|---|")
    for e, cold, warm, t, label in rows:
        steps = e.env.get("KILN_MAX_STEPS") or next((e.args[i + 1] for i, x in enumerate(e.args) if x == "--train_steps"), "")
        km = statistics.median(v for v, _ in [cold] + warm)
        ws = statistics.median(s for _, s in warm)
        tm, ts = statistics.median(v for v, _ in t), statistics.median(s for _, s in t)
        print("| %s | %s | %s %.4f | %.4f | %.1f / %.1f | %.1f (%s) | %.2f / %.2f |" % (
            e.name, steps, e.metric, km, tm, cold[1], ws, ts, label, ts / cold[1], ts / ws))


if __name__ == "__main__":
    main()
