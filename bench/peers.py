#!/usr/bin/env python3
"""kiln against today's peers on the same CPU, in one run (issue 31): the MLP
(784-1024-1024-10) and the CNN of kiln_bench_train at batch 256, float32 and bfloat16,
same initial weights and batches (bench/kiln_reference.py), momentum 0.05/0.9, 2 threads;
and the character GPT of `kiln train --model gpt` (workloads gpt-f32, gpt-bf16: 4 layers,
width 128, context 64, batch 32, AdamW with kiln's schedule and clipping; same weights,
batches and validation windows, bench/gpt_reference.py; its score is the validation loss
in nats per character over --eval-windows windows):

  kiln            build/kiln_bench_train, or `kiln train --model gpt` (its best of three
                  OpenMP settings)
  torch-2         PyTorch 2 from PyPI (.venv-peers, scripts/install-peers), eager
  torch.compile   the same with torch.compile, modes default and max-autotune-no-cudagraphs
  jax             JAX jit of the whole train step, buffers donated (bench/jax_train.py,
                  bench/jax_gpt.py)
  tf.function     TensorFlow 2.15 (.venv-tf, scripts/install-tf): the train step as one
                  tf.function; "tf.function jit_compile" the same through XLA; "tf Estimator"
                  tf.compat.v1.estimator on a model_fn with MomentumOptimizer, fed by
                  tf.data: the seed's own path (bench/tf_train.py, bench/tf_gpt.py)
  torch-1.13      Debian 12's PyTorch, eager (the peer of earlier figures, for continuity)

Each PyTorch row takes the faster of its thread settings (default, OMP_WAIT_POLICY=PASSIVE),
probed first with the eager model and kept for its compiled rows; TensorFlow's rows the
fastest of oneDNN on (its default) with 1 or 2 inter-op threads and oneDNN off
(TF_ENABLE_ONEDNN_OPTS=0), probed per row (the Estimator takes tf.function's); the runs are interleaved,
`--repeats` times; steps/s is over the steps after `--warmup` (compiling is in the warm-up).
Then the compile caches side by side: the time from process start to the end of the first
training step with an empty cache (cold) and again with the cache the first run filled
(warm), for kiln (--cache-dir), torch.compile (Inductor's FX-graph and AOT caches in a
directory of their own), JAX (jax_compilation_cache_dir) and TensorFlow/XLA
(--tf_xla_persistent_cache_directory); then, with that cache, a process whose learning
rate differs (0.1 for 0.05) and one whose batch differs (128 for 256): a time near the
warm one is a cache hit, one near the cold one a recompile. Prints Markdown tables, the
winning settings and the CPU's ISA.

    PYTHONPATH=build/python /usr/bin/python3 bench/peers.py [--steps 300,cnn=60] [--repeats 3] \
        [--workloads mlp-f32,mlp-bf16,cnn-f32,cnn-bf16,gpt-f32,gpt-bf16] [--systems kiln,torch-2,...] \
        [--write-benchmarks BENCHMARKS.md]

scripts/bench-vs-peers installs the peers, builds kiln and runs all six workloads.
"""
import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vs_pytorch import ROOT, config_env, cpu_info, run_json, thread_configs  # noqa: E402

PEERS_PY = os.path.join(ROOT, ".venv-peers", "bin", "python")
TF_PY = os.environ.get("KILN_TF_PYTHON", os.path.join(ROOT, ".venv-tf", "bin", "python"))
SYSTEMS = ["kiln", "torch-2", "torch.compile", "torch.compile max-autotune", "jax", "tf.function",
           "tf.function jit_compile", "tf Estimator", "torch-1.13"]
TF_MODES = {"tf.function": "function", "tf.function jit_compile": "xla", "tf Estimator": "estimator"}
BEGIN, END = "<!-- bench-vs-peers:begin -->", "<!-- bench-vs-peers:end -->"
CACHED = ("kiln", "torch.compile", "jax", "tf.function jit_compile")  # systems with a persistent compile cache


def command(system, model, precision, steps, warmup, cache_dir, opts, extra=()):
    if model == "gpt":
        return gpt_command(system, precision, steps, warmup, cache_dir, opts, extra)
    common = ["--model", model, "--precision", precision, "--steps", str(steps), "--warmup", str(warmup),
              "--seed", "0", "--threads", str(opts.threads), *extra]
    if system in TF_MODES:
        return [TF_PY, os.path.join(ROOT, "bench", "tf_train.py"), *common, "--mode", TF_MODES[system]] + (
            ["--cache-dir", cache_dir] if cache_dir and system == "tf.function jit_compile" else [])
    if system == "kiln":
        return [os.path.join(ROOT, "build", "kiln_bench_train"), *common, "--cache-dir", cache_dir]
    if system == "jax":
        return [PEERS_PY, os.path.join(ROOT, "bench", "jax_train.py"), *common] + (["--cache-dir", cache_dir]
                                                                                  if cache_dir else [])
    python = "/usr/bin/python3" if system == "torch-1.13" else PEERS_PY
    mode = {"torch.compile": "default", "torch.compile max-autotune": "max-autotune-no-cudagraphs"}.get(system, "none")
    return [python, os.path.join(ROOT, "bench", "pytorch_train.py"), *common, "--compile", mode]


def gpt_command(system, precision, steps, warmup, cache_dir, opts, extra):
    """The GPT run of one system. The schedule is spelled out (warm-up 100, cosine to step
    2000) so that kiln, which scales both to short runs, trains what the peers train."""
    if system == "kiln":
        extra = ["--batch-size" if e == "--batch" else e for e in extra]
        return ["/usr/bin/python3", os.path.join(ROOT, "bench", "kiln_gpt_run.py"), "--warmup", str(warmup),
                os.path.join(ROOT, "build", "kiln"), "train",
                "--model", "gpt", "--steps", str(steps), "--seed", "0", "--warmup-steps", "100",
                "--decay-steps", "2000", "--test-limit", str(opts.eval_windows), "--quiet",
                "--graph-compiler-cache-dir", cache_dir, *extra] + (
                    ["--precision-mode", "allow_mix_precision_bf16"] if precision == "bf16" else [])
    common = ["--precision", precision, "--steps", str(steps), "--warmup", str(warmup), "--seed", "0",
              "--threads", str(opts.threads), "--eval-windows", str(opts.eval_windows), *extra]
    if system in TF_MODES:
        return [TF_PY, os.path.join(ROOT, "bench", "tf_gpt.py"), *common, "--mode", TF_MODES[system]] + (
            ["--cache-dir", cache_dir] if cache_dir and system == "tf.function jit_compile" else [])
    if system == "jax":
        return [PEERS_PY, os.path.join(ROOT, "bench", "jax_gpt.py"), *common] + (["--cache-dir", cache_dir]
                                                                                if cache_dir else [])
    python = "/usr/bin/python3" if system == "torch-1.13" else PEERS_PY
    mode = {"torch.compile": "default", "torch.compile max-autotune": "max-autotune-no-cudagraphs"}.get(system, "none")
    return [python, os.path.join(ROOT, "bench", "pytorch_gpt.py"), *common] + (
        ["--compile", mode] if system != "torch-1.13" else [])


def environment(system, config, cache_dir):
    env = config_env(os.environ, config)
    if system.startswith("torch.compile"):
        env["TORCHINDUCTOR_CACHE_DIR"] = cache_dir  # FX-graph and AOT caches: on by default in PyTorch 2
        env["TORCHINDUCTOR_FX_GRAPH_CACHE"] = "1"
        env["TORCHINDUCTOR_AUTOGRAD_CACHE"] = "1"
    env.pop("PYTHONPATH", None)
    return env


def configs(system, threads):
    if system == "kiln":
        return thread_configs("kiln", threads)
    if system == "jax":
        return [("default (2 CPUs)", {}, threads)]
    if system in TF_MODES:
        return [("oneDNN on, 1 inter-op thread", {"KILN_BENCH_TF_INTER_OP": "1"}, threads),
                ("oneDNN on, 2 inter-op threads", {"KILN_BENCH_TF_INTER_OP": "2"}, threads),
                ("TF_ENABLE_ONEDNN_OPTS=0", {"KILN_BENCH_TF_INTER_OP": "1", "TF_ENABLE_ONEDNN_OPTS": "0"}, threads)]
    return thread_configs("pytorch", threads)[:2]  # the OpenBLAS split only matters to Debian's build


def run(system, model, precision, steps, warmup, config, cache_dir, opts, extra=()):
    t0 = time.time()
    r = run_json(command(system, model, precision, steps, warmup, cache_dir, opts, extra),
                 environment(system, config, cache_dir), timeout=3600)
    if "first_step_at" in r:
        r["to_first_step"] = r["first_step_at"] - t0
    return r


def score(r):
    """A run's quality: test accuracy (MLP, CNN) or validation loss in nats/char (gpt)."""
    return "%.4f" % r["test_accuracy"] if "test_accuracy" in r else "val loss %.4f" % r["validation_loss"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=steps_spec, default=steps_spec("300"),
                    help="steps per run: N for every model, or N,MODEL=N,... (e.g. 300,cnn=60)")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--workloads", default="mlp-f32,mlp-bf16")
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--eval-windows", type=int, default=256, help="gpt: validation windows scored")
    ap.add_argument("--no-cache-table", action="store_true", help="skip the compile-cache comparison")
    ap.add_argument("--write-benchmarks", metavar="FILE",
                    help="also write the tables between FILE's bench-vs-peers markers (BENCHMARKS.md)")
    opts = ap.parse_args()
    systems = opts.systems.split(",")
    unknown = set(systems) - set(SYSTEMS)
    if unknown:
        ap.error("unknown systems %s; known: %s" % (sorted(unknown), ", ".join(SYSTEMS)))
    if any(s not in ("kiln", "torch-1.13") and s not in TF_MODES for s in systems) and not os.path.exists(PEERS_PY):
        sys.exit("peers: %s is missing; run scripts/install-peers" % PEERS_PY)
    if any(s in TF_MODES for s in systems) and not os.path.exists(TF_PY):
        sys.exit("peers: %s is missing; run scripts/install-tf" % TF_PY)
    work = tempfile.mkdtemp(prefix="kiln-peers-")
    start = time.time()
    log = lambda text: print("[%6.0fs] %s" % (time.time() - start, text), file=sys.stderr, flush=True)  # noqa: E731
    rows = []
    try:
        for wl in opts.workloads.split(","):
            model, precision = wl.split("-")
            caches = {s: os.path.join(work, "%s-%s" % (s.replace(" ", "_"), wl)) for s in systems}
            # TensorFlow 2.15's persistent XLA cache fails on some CPUs (LLVM "no target for triple
            # unknown"); the speed rows run XLA without it, the cache table records what it does.
            speed_cache = lambda s: None if s in TF_MODES else caches[s]  # noqa: E731
            # Settings: each system's fastest (torch.compile rows take torch-2's).
            best = {}
            for s in systems:
                if s.startswith("torch.compile") or s == "tf Estimator":
                    continue
                rates = {}
                for c in configs(s, opts.threads):
                    r = run(s, model, precision, max(opts.steps[model] // 2, opts.warmup + 20), opts.warmup, c,
                            speed_cache(s), opts)
                    rates[c[0]] = r.get("steps_per_second", 0.0)
                    log("probe %s %s %s: %s" % (s, wl, c[0], "%.2f steps/s" % rates[c[0]] if "error" not in r
                                                else "FAILED " + r["error"][-300:]))
                best[s] = max(configs(s, opts.threads), key=lambda c: rates[c[0]])
            for s in systems:
                if s.startswith("torch.compile"):
                    best[s] = best.get("torch-2", configs(s, opts.threads)[0])
                if s == "tf Estimator":
                    best[s] = best.get("tf.function", configs(s, opts.threads)[0])
            runs = {s: [] for s in systems}
            for i in range(opts.repeats):
                for s in systems:
                    r = run(s, model, precision, opts.steps[model], opts.warmup, best[s], speed_cache(s), opts)
                    log("%s %s #%d: %s" % (s, wl, i + 1, "%.2f steps/s, %s" % (r["steps_per_second"], score(r))
                                           if "error" not in r else "FAILED " + r["error"][-500:]))
                    if "error" not in r:
                        runs[s].append(r)
            kiln_rate = statistics.median(r["steps_per_second"] for r in runs["kiln"]) if runs.get("kiln") else None
            for s in systems:
                if not runs[s]:
                    rows.append((wl, s, opts.steps[model], "failed", "", "", best[s][0]))
                    continue
                rates = [r["steps_per_second"] for r in runs[s]]
                med = statistics.median(rates)
                rows.append((wl, s, opts.steps[model], "%.1f (%.1f–%.1f)" % (med, min(rates), max(rates)),
                             "%.2f×" % (kiln_rate / med) if kiln_rate and s != "kiln" else "1.00×" if s == "kiln" else "",
                             score(runs[s][0]), best[s][0]))
        cache_rows = []
        if not opts.no_cache_table:
            model, precision = opts.workloads.split(",")[0].split("-")
            for s in [s for s in systems if s in CACHED]:
                d = os.path.join(work, "cache-" + s.replace(" ", "_"))
                os.makedirs(d)
                times = []
                other_rate = "0.002" if model == "gpt" else "0.1"
                for extra in ((), (), ("--learning-rate", other_rate), ("--batch", str(16 if model == "gpt" else 128))):
                    r = run(s, model, precision, opts.warmup + 2, opts.warmup, configs(s, opts.threads)[0], d, opts, extra)
                    times.append(r.get("to_first_step"))
                    log("cache %s %s: %s" % (s, " ".join(extra) or "(same run)", "%.2f s%s" % (
                        r["to_first_step"], ", kiln's cache: %s" % r["compile_cache"] if "compile_cache" in r else "")
                        if "error" not in r else "FAILED " + r["error"][-400:]))
                cache_rows.append((s, *times))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = report(rows, None if opts.no_cache_table else cache_rows, opts)
    print(text, end="")
    if opts.write_benchmarks:
        write_between_markers(opts.write_benchmarks, text)


def steps_spec(text):
    """--steps: "300" or "300,cnn=60" -> {model: steps} (a dict with a default)."""
    steps = {}
    try:
        for part in text.split(","):
            model, _, n = part.rpartition("=")
            if model and model not in ("mlp", "cnn", "gpt"):
                raise ValueError("unknown model %r (mlp, cnn, gpt)" % model)
            if int(n) < 1:
                raise ValueError("steps must be positive")
            steps[model or None] = int(n)
    except ValueError as e:
        raise argparse.ArgumentTypeError("%r: %s; expected N or N,MODEL=N,..." % (text, e))
    if None not in steps:
        raise argparse.ArgumentTypeError("%r: no steps for the other models; expected N or N,MODEL=N,..." % text)
    return {m: steps.get(m, steps[None]) for m in ("mlp", "cnn", "gpt")}


def report(rows, cache_rows, opts):
    """The Markdown this run prints (and writes with --write-benchmarks): the CPU line, the
    speed table, and the compile-cache table unless it was skipped."""
    model_name, flags = cpu_info()
    out = ["Measured by `bench/peers.py` (`scripts/bench-vs-peers`); CPU: %s; ISA: %s; %d threads; %s; %d "
           "interleaved runs per system." % (model_name, ", ".join("%s %s" % (f, "yes" if v else "no")
                                                                   for f, v in flags.items()), opts.threads,
                                             time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), opts.repeats), "",
           "| workload | system | steps | steps/s, median (min–max) | kiln / system | "
           "test accuracy (gpt: validation loss) | threads |", "|---|---|---:|---:|---:|---:|---|"]
    out += ["| %s | %s | %d | %s | %s | %s | %s |" % r for r in rows]
    if cache_rows is not None:
        gpt = opts.workloads.startswith("gpt")
        out += ["", "| system | process start → end of first step, empty cache (s) | the same, second process (s) | "
                "then learning rate %s (s) | then batch %s (s) |" % (("0.002", "16") if gpt else ("0.1", "128")),
                "|---|---:|---:|---:|---:|"]
        out += ["| %s | %s |" % (s, " | ".join("%.1f" % v if v is not None else "failed" for v in times))
                for s, *times in cache_rows]
    return "\n".join(out) + "\n"


def write_between_markers(path, body):
    """Replaces what lies between the bench-vs-peers markers of `path` with body (the markers
    are added at the end when missing, the file made when it does not exist, so an hour's run
    never ends in a crash); the text outside them stays."""
    text = open(path).read() if os.path.exists(path) else ""
    if BEGIN not in text or END not in text:
        text = (text.rstrip("\n") + "\n\n" if text.strip() else "") + BEGIN + "\n" + END + "\n"
    head, rest = text.split(BEGIN, 1)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(head + BEGIN + "\n" + body + END + rest.split(END, 1)[1])
    os.replace(tmp, path)

if __name__ == "__main__":
    main()
