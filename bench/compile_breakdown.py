#!/usr/bin/env python3
"""Where the cold compile of a generated step goes: the host compiler's own phases.

For each model's training graph this dumps the generated code (KILN_DUMP_CODE) and the
compiler and flags kiln used (the cache entry's key ingredients), then compiles that code
again with -ftime-report, repeated, and prints per phase the best CPU time (user + sys,
less disturbed by other work on a shared machine than wall time): parsing (of which
preprocessing), template instantiation, optimisation and code generation. It also times
what the prelude alone costs to parse and, for reference, the standard headers the
prelude no longer includes.

    bench/compile_breakdown.py [--build build] [--models mlp,cnn] [--repeat 3]

Not a test: read the shares, not the absolute times.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

PHASE = re.compile(r"^\s*(phase [a-z. ]+?|TOTAL|preprocessing|template instantiation|parser \(global\)|"
                   r"parser function body|parser inl\. func\. body|callgraph functions expansion|"
                   r"callgraph ipa passes)\s*:\s*([\d.]+)\s*(?:\(\s*\d+%\))?\s*([\d.]+)\s*(?:\(\s*\d+%\))?\s*([\d.]+)")


def time_report(cxx, flags, source, out):
    """{phase: cpu seconds} of one compile of `source` with -ftime-report."""
    r = subprocess.run([cxx, *flags, "-ftime-report", "-o", out, source], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"compile_breakdown: {cxx} failed on {source}:\n{r.stderr[:2000]}")
    phases = {}
    for line in r.stderr.splitlines():
        m = PHASE.match(line)
        if m:
            phases[m.group(1)] = float(m.group(2)) + float(m.group(3))
    if "TOTAL" not in phases:
        sys.exit(f"compile_breakdown: no -ftime-report table from {cxx} (GCC prints one; is it GCC?)")
    return phases


def best_of(runs):
    return {k: min(r.get(k, 0.0) for r in runs) for k in runs[0]}


def dump(build, model, workdir):
    """(source file, compiler, compile flags, link flags) of the model's training step."""
    code, cache = os.path.join(workdir, f"{model}-code"), os.path.join(workdir, f"{model}-cache")
    env = dict(os.environ, KILN_DUMP_CODE=code)
    cmd = [os.path.join(build, "kiln"), "train", "--model", model, "--steps", "1", "--train-limit", "256",
           "--test-limit", "64", "--quiet", "--graph-compiler-cache-dir", cache]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"compile_breakdown: {' '.join(cmd)} failed:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    sources = glob.glob(os.path.join(code, "train-*.cpp"))
    metas = [json.load(open(m)) for m in glob.glob(os.path.join(cache, "??", "*", "meta.json"))]
    if len(sources) != 1 or not metas:
        sys.exit(f"compile_breakdown: expected one dumped training step and a cache entry, found {sources}, {len(metas)}")
    ing = metas[0]["ingredients"]
    compile_flags, _, link_flags = ing["compiler_flags"].partition(" | link:")
    return sources[0], ing["compiler"], compile_flags.split(), link_flags.split()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build", help="kiln's build directory (holds ./kiln)")
    ap.add_argument("--models", default="mlp,cnn")
    ap.add_argument("--repeat", type=int, default=3, help="compiles per measurement; the best is shown")
    a = ap.parse_args()
    if a.repeat < 1:
        sys.exit("compile_breakdown: --repeat must be at least 1")
    cols = ["phase parsing", "preprocessing", "template instantiation", "phase opt and generate", "TOTAL"]
    print("CPU seconds (user + sys, best of %d) per phase of the host compiler\n" % a.repeat)
    print("| graph | " + " | ".join(cols) + " | parsing share |")
    print("|---|" + "---:|" * len(cols) + "---:|")
    with tempfile.TemporaryDirectory(prefix="kiln-compile-breakdown-") as work:
        for model in a.models.split(","):
            source, cxx, flags, _ = dump(a.build, model, work)
            runs = [time_report(cxx, flags + ["-c"], source, os.path.join(work, "step.o")) for _ in range(a.repeat)]
            b = best_of(runs)
            print(f"| {model} train | " + " | ".join(f"{b.get(c, 0):.3f}" for c in cols) +
                  f" | {100 * b.get('phase parsing', 0) / b['TOTAL']:.0f}% |")
            sys.stdout.flush()
        # The prelude alone (the lines before the first kernel) and the headers it replaced.
        prelude = open(source).read().split("KILN_KERNEL void k", 1)[0]
        probes = {"prelude (as generated)": prelude}
        for h in ["cmath", "algorithm", "cstring", "immintrin.h"]:
            probes[f"#include <{h}> (not included)"] = f"#include <{h}>\n"
        print("\n| parsed alone (-fsyntax-only) | CPU s, best of %d |\n|---|---:|" % a.repeat)
        for name, text in probes.items():
            path = os.path.join(work, "probe.cpp")
            open(path, "w").write(text)
            best = min(time_report(cxx, flags + ["-fsyntax-only"], path, os.devnull)["TOTAL"] for _ in range(a.repeat))
            print(f"| {name} | {best:.3f} |")


if __name__ == "__main__":
    main()
