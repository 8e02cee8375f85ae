#!/usr/bin/python3
"""Runs kiln (build/kiln_bench_train) and PyTorch (bench/pytorch_train.py) side by side.

Every workload runs `--repeats` times for each system; repeats are interleaved (all
workloads, then all again) and alternate which system goes first, so that a drift in the
machine's speed hits both. Both are pinned to the same thread count. Writes a JSON file
with every run and a Markdown report, printed and put between the markers in BENCHMARKS.md.
scripts/bench-vs-pytorch installs, builds and calls this; see `--help` for running it alone.
"""
import argparse
import datetime
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN, END = "<!-- bench-vs-pytorch:begin -->", "<!-- bench-vs-pytorch:end -->"
ISA_FLAGS = ["avx512f", "avx512_bf16", "amx_tile", "amx_bf16", "avx512_fp16"]
# Issue 17's targets for kiln/PyTorch steps/s at batch 256, against PyTorch at its best.
TARGETS = {("mlp", "f32"): 1.6, ("cnn", "f32"): 3.0, ("mlp", "bf16"): 1.6, ("cnn", "bf16"): 2.5}


def workloads(quick):
    """(group, model, hidden, batch, precision, (steps of the first repeat, of the others)).
    The main four train longer in the first repeat, which gives the test accuracy; the
    other repeats and the sweeps only time the steady state (a few seconds on 2 cores for
    the slower system), which keeps the whole harness under 15 minutes. --quick shrinks
    everything to check the harness itself."""
    main = [("main", m, "1024,1024", 256, p, s) for m, s in (("mlp", (600, 200)), ("cnn", (150, 60)))
            for p in ("f32", "bf16")]
    sweep = []
    for p in ("f32", "bf16"):
        for width, steps in ((256, 300), (4096, 20)):
            sweep.append(("width", "mlp", f"{width},{width}", 256, p, (steps, steps)))
        for batch, steps in ((64, 300), (1024, 40)):
            sweep.append(("batch", "mlp", "1024,1024", batch, p, (steps, steps)))
    loads = main + sweep
    if quick:
        loads = [(g, m, h, b, p, (12, 10)) for g, m, h, b, p, _ in loads]
    return loads


MATMULS = [(256, 1024, 1024), (1024, 1024, 1024)]  # m, n, k: the MLP's hidden layer at batch 256, and square


def busy_cpu_seconds():
    """CPU time every process of the machine has used (user+nice+system+irq+softirq+steal)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    return (sum(fields[:3]) + sum(fields[5:8])) / os.sysconf("SC_CLK_TCK")


def children_cpu_seconds():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run_json(cmd, env, timeout):
    """Runs one benchmark process; adds its wall time and how busy the rest of the machine
    was meanwhile (others_cpu: CPUs' worth of time other processes used, 0 = quiet)."""
    t0, busy0, mine0 = time.time(), busy_cpu_seconds(), children_cpu_seconds()
    try:
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s", "cmd": " ".join(cmd)}
    if r.returncode != 0:
        return {"error": (r.stderr.strip() or r.stdout.strip())[-2000:], "cmd": " ".join(cmd)}
    out = json.loads(r.stdout.strip().splitlines()[-1])
    out["wall_seconds"] = time.time() - t0
    others = (busy_cpu_seconds() - busy0) - (children_cpu_seconds() - mine0)
    out["others_cpu"] = max(0.0, others / out["wall_seconds"])
    return out


def thread_configs(system, threads):
    """Each system's thread settings worth trying on a CPU: (label, environment, --threads).
    PyTorch's OpenMP threads spin by default and can starve OpenBLAS's own threads in
    float32 (issue 17: 17 against 50 steps/s), so the passive wait policy and one OpenMP
    thread beside a threaded OpenBLAS are tried too; kiln's own short spin (the default,
    10000 or 1000 spins chosen by kiln at start), libgomp's default spin and the passive policy
    for kiln. The harness probes them all per workload and times only the fastest, so no
    ratio is measured against a mis-set peer."""
    t = str(threads)
    if system == "pytorch":
        return [("default", {"OMP_NUM_THREADS": t, "OPENBLAS_NUM_THREADS": t}, threads),
                ("OMP_WAIT_POLICY=PASSIVE", {"OMP_NUM_THREADS": t, "OPENBLAS_NUM_THREADS": t,
                                             "OMP_WAIT_POLICY": "PASSIVE"}, threads),
                (f"OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS={t}", {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": t}, 1)]
    return [("default (kiln's spin count)", {"OMP_NUM_THREADS": t}, threads),
            ("libgomp's default spin", {"OMP_NUM_THREADS": t, "KILN_KEEP_OPENMP_WAIT": "1"}, threads),
            ("OMP_WAIT_POLICY=PASSIVE", {"OMP_NUM_THREADS": t, "OMP_WAIT_POLICY": "PASSIVE"}, threads)]


def best_setting(configs, rounds, run):
    """The fastest of `configs` (thread_configs entries) by run(config) -> steps/s, over
    `rounds` interleaved rounds; each setting scores its best round, so a single disturbed
    run does not decide (two settings are often within 10%)."""
    rates = {c[0]: 0.0 for c in configs}
    for _ in range(rounds):
        for config in configs:
            rates[config[0]] = max(rates[config[0]], run(config))
    return max(configs, key=lambda c: rates[c[0]])


def command(system, args, opts, threads):
    if system == "kiln":
        return [opts.kiln_bin, *args, "--threads", str(threads), "--cache-dir", opts.cache_dir]
    return [opts.python, os.path.join(ROOT, "bench", "pytorch_train.py"), *args, "--threads", str(threads)]


def config_env(base, config):
    """The environment for one configuration: the caller's, minus every thread setting, plus the config's."""
    env = {k: v for k, v in base.items()
           if k not in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT",
                        "KILN_KEEP_OPENMP_WAIT")}
    env.update(config[1])
    return env


def cpu_info():
    model, flags = platform.processor(), set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                model = value.strip()
            elif key.strip() == "flags":
                flags = set(value.split())
    return model, {flag: flag in flags for flag in ISA_FLAGS}


def first_line(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.strip().splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError):
        return "unknown"


def versions(python):
    deb = lambda pkg: first_line(["dpkg-query", "-W", "-f=${Version}\n", pkg])
    torch = first_line([python, "-c", "import torch, re; print(torch.__version__, "
                        "re.search(r'MKL-DNN v([0-9.]+)', torch.__config__.show()).group(1))"]).split()
    head = os.environ.get("KILN_REVISION") or first_line(["git", "-C", ROOT, "describe", "--always", "--dirty"])
    return {"kiln": head, "torch": torch[0] if torch else "unknown",
            "torch_onednn": torch[1] if len(torch) > 1 else "unknown",
            "kiln_onednn": deb("libdnnl-dev"), "openblas": deb("libopenblas0-pthread"),
            "python3_torch_deb": deb("python3-torch"), "compiler": first_line(["c++", "--version"])}


def spread(values):
    return statistics.median(values), min(values), max(values)


def summarise(runs, key):
    """Median/min/max of `key` over successful runs, plus the runs' other fields."""
    ok = [r for r in runs if "error" not in r and r.get(key) is not None]  # None: not measurable here
    if not ok:
        return None
    return {"median": statistics.median(r[key] for r in ok), "min": min(r[key] for r in ok),
            "max": max(r[key] for r in ok), "n": len(ok), "runs": ok}


def fmt_rate(s):
    if s is None:
        return "failed"
    if s["n"] == 1:
        return f"{s['median']:.1f}"
    return f"{s['median']:.1f} ({s['min']:.1f}–{s['max']:.1f})"


def ratio(a, b):
    return a["median"] / b["median"] if a and b else float("nan")


def best_ratio(a, b):
    return a["max"] / b["max"] if a and b else float("nan")


def config_of(s):
    """The thread setting the timed runs used."""
    return s["runs"][0].get("thread_config", "–") if s else "–"


def acc(s, steps):
    """The test accuracy after the first repeat's longer run (the same for either system)."""
    runs = [r for r in s["runs"] if r["steps"] == steps[0]] if s else []
    return f"{100 * statistics.median(r['test_accuracy'] for r in runs):.2f}" if runs else "–"


def fmt_steps(steps):
    return str(steps[0]) if steps[0] == steps[1] else f"{steps[0]} / {steps[1]}"


def rss(s):
    return "–" if s is None else f"{max(r['peak_rss_mb'] for r in s['runs']):.0f}"


def report(meta, results, matmuls):
    cpu = meta["cpu"]
    isa = ", ".join(f"{flag} {'yes' if present else 'no'}" for flag, present in meta["isa"].items())
    v = meta["versions"]
    lines = [
        f"Measured {meta['date']} by `scripts/bench-vs-pytorch` in {meta['runtime_seconds'] / 60:.1f} min; "
        f"{meta['repeats']} interleaved repeat(s) per system; both limited to {meta['threads']} cores, each with "
        "the fastest of its thread settings (probed first; table at the end)."
        + (" **--quick: a few steps per run, a check of the harness, not a measurement.**" if meta["quick"] else ""),
        "",
        f"- CPU: {cpu}, {meta['logical_cpus']} logical CPUs; ISA: {isa}",
        f"- kiln {v['kiln']} (git describe; -dirty = uncommitted changes in the tree); "
        f"PyTorch {v['torch']} (Debian python3-torch {v['python3_torch_deb']}, its oneDNN {v['torch_onednn']}, "
        f"OpenBLAS {v['openblas']}); kiln's oneDNN: libdnnl {v['kiln_onednn']}; compiler: {v['compiler']}",
        f"- Other processes on the machine during the runs: {meta['others_cpu_mean']:.2f} CPUs on average "
        f"(worst run {meta['others_cpu_max']:.2f}; {meta['busy_runs']} of {meta['runs']} runs shared the machine "
        f"with more than 0.25 CPU of other work); load average before / after: {meta['load_before']:.2f} / "
        f"{meta['load_after']:.2f}. On a loaded machine the spread widens; best-of-repeats is the less disturbed "
        "ratio.",
        "",
        "Training on Fashion-MNIST (same model, initial weights, batches, optimiser: momentum 0.9, lr 0.05; "
        "steps/s over the steps after the warm-up steps (10 for these four, 5 in the sweeps), median (min–max) over the repeats; kiln compile time "
        "excluded and shown apart, cold = the first run of the graph (the first thread-setting probe); steps = first repeat / the others; test accuracy on the "
        "10 000 test images after the first repeat's run; peak RSS = ru_maxrss, max over repeats):",
        "",
        "| workload | precision | batch | steps | kiln steps/s | PyTorch steps/s | kiln/PyTorch | best-of | target | "
        "kiln acc % | PyTorch acc % | kiln RSS MB | PyTorch RSS MB | kiln compile s (cold) | kiln threads | PyTorch threads |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for (group, model, hidden, batch, prec, steps), (k, p) in results.items():
        if group != "main":
            continue
        name = "MLP 784-1024-1024-10" if model == "mlp" else "CNN conv32-conv64-fc128"
        target = TARGETS.get((model, prec))
        # The first kiln probe of this model and precision compiled into the empty cache; the
        # timed runs after it load the step from there.
        cold = next((pr["compile_seconds"] for pr in meta.get("probes", []) if pr["system"] == "kiln" and
                     pr["model"] == model and pr["precision"] == prec and pr.get("compile_seconds") is not None),
                    k["runs"][0]["compile_seconds"] if k else float("nan"))
        lines.append(f"| {name} | {prec} | {batch} | {fmt_steps(steps)} | {fmt_rate(k)} | {fmt_rate(p)} | "
                     f"{ratio(k, p):.2f}× | {best_ratio(k, p):.2f}× | ≥ {target}× | {acc(k, steps)} | {acc(p, steps)} | {rss(k)} | {rss(p)} | {cold:.1f} | "
                     f"{config_of(k)} | {config_of(p)} |")
    lines += [] if not matmuls else ["", "Matmul micro-benchmark, GFLOP/s (median of the repeats): kiln = the matmul compiled as a kiln graph "
              "(variables in, product fetched; bf16 = mixed_bfloat16, so casts included); oneDNN alone = "
              "kiln's oneDNN called directly on operands already in the type; PyTorch = torch.matmul "
              "(bf16 under autocast, casts included):", "",
              "| m×k×n | precision | kiln | oneDNN alone | kiln/oneDNN | PyTorch | kiln/PyTorch |",
              "|---|---|---:|---:|---:|---:|---:|"]
    for (m, n, k_, prec), runs in matmuls.items():
        kr, pr = runs["kiln"], runs["pytorch"]
        kg = summarise(kr, "kiln_gflops")
        og = summarise(kr, "onednn_gflops")
        pg = summarise(pr, "pytorch_gflops")
        g = lambda s: "n/a" if s is None else f"{s['median']:.0f}"  # n/a: not measurable on this CPU (see Failed runs for errors)
        lines.append(f"| {m}×{k_}×{n} | {prec} | {g(kg)} | {g(og)} | {ratio(kg, og):.2f} | {g(pg)} | "
                     f"{ratio(kg, pg):.2f}× |")
    lines += ["", "Scaling (MLP with two hidden layers; fewer steps, accuracy not meaningful): steps/s median "
              "(min–max) and examples/s = steps/s × batch:", "",
              "| sweep | hidden | batch | precision | steps | kiln steps/s | PyTorch steps/s | kiln/PyTorch | "
              "kiln examples/s | PyTorch examples/s |",
              "|---|---|---:|---|---:|---:|---:|---:|---:|---:|"]
    sweep_rows = []
    for (group, model, hidden, batch, prec, steps), (k, p) in results.items():
        if model != "mlp" or not (group != "main" or hidden == "1024,1024"):
            continue
        width = int(hidden.split(",")[0])
        rows = [("width", width)] if group == "width" else [("batch", batch)] if group == "batch" else \
            [("width", width), ("batch", batch)]
        for sweep, order in rows:
            sweep_rows.append(((sweep, prec != "f32", order), f"| {sweep} | {hidden.replace(',', '-')} | {batch} | {prec} | "
                               f"{fmt_steps(steps)} | {fmt_rate(k)} | {fmt_rate(p)} | {ratio(k, p):.2f}× | "
                               f"{k['median'] * batch if k else float('nan'):.0f} | "
                               f"{p['median'] * batch if p else float('nan'):.0f} |"))
    lines += [row for _, row in sorted(sweep_rows)]
    if meta.get("probes"):
        lines += ["", f"Thread settings tried before the timed runs ({meta.get('probe_rounds', 1)} interleaved round(s), "
                  "steps/s of each run; the setting with the best run of each system was timed above, and the sweeps "
                  "and the matmuls use their precision's MLP winner):", "",
                  "| model | precision | system | setting | steps/s |", "|---|---|---|---|---:|"]
        for pr in meta["probes"]:
            rate = f"{pr['steps_per_second']:.1f}" if not pr["error"] else "failed"
            lines.append(f"| {pr['model']} | {pr['precision']} | {pr['system']} | {pr['config']} | {rate} |")
    if meta["errors"]:
        lines += ["", "Failed runs:", ""] + [f"- `{e['cmd']}`: {e['error'][:300]}" for e in meta["errors"]]
    return "\n".join(lines) + "\n"


def write_benchmarks_md(path, body):
    intro = ("# Benchmarks\n\nkiln against PyTorch on the same CPU, in the same run. Regenerate with "
             "`./scripts/bench-vs-pytorch` (it rewrites the part between the markers; text outside them stays).\n\n")
    text = open(path).read() if os.path.exists(path) else intro + BEGIN + "\n" + END + "\n"
    if BEGIN not in text or END not in text:
        text = text.rstrip("\n") + "\n\n" + BEGIN + "\n" + END + "\n"
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    with open(path, "w") as f:
        f.write(head + BEGIN + "\n" + body + END + tail)


def probe_thread_configs(loads, opts, start):
    """Times every thread configuration of each system once per (model, precision) of the
    workloads, on the first workload of that pair (the main one when it runs), and returns
    the fastest per (system, model, precision) with every probe's result for the report.
    The sweeps use their model and precision's winner."""
    firsts = {}
    for w in loads:
        firsts.setdefault((w[1], w[4]), w)
    best, probes = {}, []
    for (model_name, prec), w in firsts.items():
        group, _, hidden, batch, _, steps = w
        n = max(steps[1] // 2, 25) if not opts.quick else steps[1]
        args = ["--model", model_name, "--hidden", hidden, "--batch", str(batch), "--precision", prec,
                "--steps", str(n), "--warmup", "3" if opts.quick else "5", "--seed", "0"]
        for system in ("kiln", "pytorch"):

            def probe(config, system=system, args=args, model_name=model_name, prec=prec, n=n):
                r = run_json(command(system, args, opts, config[2]), config_env(os.environ, config), timeout=600)
                rate = r.get("steps_per_second", 0.0)
                probes.append({"system": system, "model": model_name, "precision": prec, "config": config[0],
                               "steps": n, "steps_per_second": rate, "error": r.get("error", "")[-300:],
                               "compile_seconds": r.get("compile_seconds")})
                print(f"[{time.time() - start:6.0f}s] probe {system:7} {model_name} {prec} {config[0]}: "
                      + (f"{rate:.2f} steps/s" if "error" not in r else "FAILED " + r["error"][-300:]),
                      file=sys.stderr, flush=True)
                return rate

            best[(system, model_name, prec)] = best_setting(thread_configs(system, opts.threads), opts.probe_rounds,
                                                            probe)
    return best, probes


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kiln-bin", default=os.path.join(ROOT, "build", "kiln_bench_train"))
    ap.add_argument("--python", default="/usr/bin/python3", help="an interpreter with Debian's python3-torch")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json", default=os.path.join(ROOT, "build", "bench-vs-pytorch.json"))
    ap.add_argument("--markdown", default=os.path.join(ROOT, "BENCHMARKS.md"),
                    help="file whose marked section receives the report ('' = none)")
    ap.add_argument("--probe-rounds", type=int, default=2,
                    help="rounds over the thread settings before timing; each setting scores its best round")
    ap.add_argument("--quick", action="store_true", help="a few steps per run: checks the harness, not speed")
    ap.add_argument("--only", default="", help="comma-separated groups to run: main, width, batch, matmul")
    opts = ap.parse_args()

    start = time.time()
    groups = set(opts.only.split(",")) if opts.only else {"main", "width", "batch", "matmul"}
    loads = [w for w in workloads(opts.quick) if w[0] in groups]
    model, isa = cpu_info()
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "cpu": model, "isa": isa, "logical_cpus": os.cpu_count(), "threads": opts.threads,
            "repeats": opts.repeats, "versions": versions(opts.python), "load_before": os.getloadavg()[0],
            "quick": opts.quick, "errors": [], "probe_rounds": opts.probe_rounds}
    raw = {w: {"kiln": [], "pytorch": []} for w in loads}
    mm_raw = {(m, n, k, p): {"kiln": [], "pytorch": []} for m, n, k in MATMULS for p in ("f32", "bf16")}
    if "matmul" not in groups:
        mm_raw = {}
    with tempfile.TemporaryDirectory(prefix="kiln-bench-cache-") as cache:
        opts.cache_dir = cache  # repeats after the first load the compiled step from it
        best, meta["probes"] = probe_thread_configs(loads, opts, start)
        for rep in range(opts.repeats):
            systems = ("kiln", "pytorch") if rep % 2 == 0 else ("pytorch", "kiln")
            for w in loads:
                group, model_name, hidden, batch, prec, steps = w
                args = ["--model", model_name, "--hidden", hidden, "--batch", str(batch), "--precision", prec,
                        "--steps", str(steps[0] if rep == 0 else steps[1]), "--warmup", "3" if opts.quick else ("10" if group == "main" else "5"), "--seed", "0"]
                for system in systems:
                    config = best[(system, model_name, prec)]
                    r = run_json(command(system, args, opts, config[2]), config_env(os.environ, config), timeout=600)
                    r["thread_config"] = config[0]
                    raw[w][system].append(r)
                    if "error" in r:
                        meta["errors"].append(r)
                    print(f"[{time.time() - start:6.0f}s] rep {rep + 1} {system:7} {model_name} {hidden} b{batch} "
                          f"{prec}: " + (f"{r['steps_per_second']:.2f} steps/s, acc {r['test_accuracy']:.4f}, "
                                         f"rss {r['peak_rss_mb']:.0f} MB" if "error" not in r else
                                         "FAILED " + r["error"][-300:]), file=sys.stderr, flush=True)
            for prec in ("f32", "bf16") if mm_raw else ():  # per precision, with the MLP's best threads
                args = ["--mode", "matmul", "--shapes", ",".join(f"{m}x{n}x{k}" for m, n, k in MATMULS),
                        "--precisions", prec, "--reps", "10" if opts.quick else "100"]
                for system in systems:
                    config = best.get((system, "mlp", prec), thread_configs(system, opts.threads)[0])
                    r = run_json(command(system, args, opts, config[2]), config_env(os.environ, config), timeout=300)
                    if "error" in r:
                        meta["errors"].append(r)
                    for case in r.get("cases", []):
                        mm_raw[(case["m"], case["n"], case["k"], case["precision"])][system].append(case)
    meta["load_after"] = os.getloadavg()[0]
    every = [r for runs in raw.values() for system in runs.values() for r in system if "others_cpu" in r]
    wall = sum(r["wall_seconds"] for r in every) or 1.0
    meta["runs"] = len(every)
    meta["others_cpu_mean"] = sum(r["others_cpu"] * r["wall_seconds"] for r in every) / wall
    meta["others_cpu_max"] = max((r["others_cpu"] for r in every), default=0.0)
    meta["busy_runs"] = sum(r["others_cpu"] > 0.25 for r in every)
    meta["runtime_seconds"] = time.time() - start
    results = {w: (summarise(r["kiln"], "steps_per_second"), summarise(r["pytorch"], "steps_per_second"))
               for w, r in raw.items()}
    os.makedirs(os.path.dirname(os.path.abspath(opts.json)), exist_ok=True)
    with open(opts.json, "w") as f:
        json.dump({"meta": meta,
                   "training": [{"group": w[0], "model": w[1], "hidden": w[2], "batch": w[3], "precision": w[4],
                                 "steps": w[5], "kiln": r["kiln"], "pytorch": r["pytorch"]} for w, r in raw.items()],
                   "matmul": [{"m": m, "n": n, "k": k, "precision": p, "kiln": r["kiln"], "pytorch": r["pytorch"]}
                              for (m, n, k, p), r in mm_raw.items()]}, f, indent=1)
    print(f"wrote {opts.json}", file=sys.stderr)  # before the report: a report bug never loses a run
    body = report(meta, results, mm_raw)
    print(body)
    if opts.markdown:
        write_benchmarks_md(opts.markdown, body)
        print(f"wrote {opts.markdown}", file=sys.stderr)
    return 1 if meta["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
