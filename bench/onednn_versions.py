#!/usr/bin/python3
"""kiln on two oneDNN builds side by side: the MLP and CNN step, float32 and bfloat16.

    ./scripts/build-onednn3   # build-dnnl3/ against PyPI's oneDNN 3.2 for GNU OpenMP
    /usr/bin/python3 bench/onednn_versions.py build/kiln_bench_train build-dnnl3/kiln_bench_train

Runs are interleaved and alternate which build goes first; each workload gets a fresh
compile cache per build, warmed by a first run that is not timed.
"""
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vs_pytorch import cpu_info, run_json  # noqa: E402

WORKLOADS = [("mlp", "f32", 300), ("mlp", "bf16", 300), ("cnn", "f32", 60), ("cnn", "bf16", 60)]


def dnnl_of(binary):
    out = subprocess.run(["ldd", binary], capture_output=True, text=True).stdout
    return next((line.split("=>")[1].split()[0] for line in out.splitlines() if "libdnnl" in line), "?")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    builds = sys.argv[1:3]
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    env = dict(os.environ, OMP_WAIT_POLICY="PASSIVE")  # kiln's fastest setting in bench/peers.py's probes
    work = tempfile.mkdtemp(prefix="kiln-onednn-")
    rates = {(b, w[:2]): [] for b in builds for w in WORKLOADS}
    acc = {}
    for i in range(repeats + 1):
        for model, prec, steps in WORKLOADS:
            for b in (builds if i % 2 == 0 else builds[::-1]):
                cache = os.path.join(work, "%d-%s-%s" % (builds.index(b), model, prec))
                r = run_json([b, "--model", model, "--precision", prec, "--steps", str(steps), "--warmup", "10",
                              "--seed", "0", "--threads", "2", "--cache-dir", cache], env, timeout=1800)
                if "error" in r:
                    sys.exit("%s %s-%s failed: %s" % (b, model, prec, r["error"][-2000:]))
                if i > 0:  # the first round fills the caches
                    rates[(b, (model, prec))].append(r["steps_per_second"])
                    acc[(b, (model, prec))] = r["test_accuracy"]
                    print("%s %s-%s: %.1f steps/s" % (b, model, prec, r["steps_per_second"]), file=sys.stderr)
    model_name, flags = cpu_info()
    print("CPU: %s; ISA: %s; 2 threads" % (model_name, ", ".join("%s %s" % (f, "yes" if v else "no")
                                                               for f, v in flags.items())))
    print("A: %s (%s); B: %s (%s)" % (builds[0], dnnl_of(builds[0]), builds[1], dnnl_of(builds[1])))
    print()
    print("| workload | A steps/s, median (min–max) | B steps/s, median (min–max) | B / A | accuracy A, B |")
    print("|---|---:|---:|---:|---:|")
    for model, prec, steps in WORKLOADS:
        a, b = rates[(builds[0], (model, prec))], rates[(builds[1], (model, prec))]
        print("| %s-%s | %.1f (%.1f–%.1f) | %.1f (%.1f–%.1f) | %.2f× | %.4f, %.4f |" % (
            model, prec, statistics.median(a), min(a), max(a), statistics.median(b), min(b), max(b),
            statistics.median(b) / statistics.median(a), acc[(builds[0], (model, prec))],
            acc[(builds[1], (model, prec))]))


if __name__ == "__main__":
    main()
