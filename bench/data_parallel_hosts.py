#!/usr/bin/env python3
"""Data parallelism across hosts: 2 test hosts x 1 thread against 1 host x 2 threads, on
this machine (tests/dist/hosts.py: network namespaces, Open MPI over TCP on veth links,
shaped to 25 Gbit/s with tc's token bucket), and a projection to 8 and 64 hosts.

For each model: steps/s of `kiln train --threads 2` (one process) and of a 2-rank job,
one rank per test host with `--threads 1` (the same global batch, so each rank computes
half), interleaved `--repeats` times; the scaling efficiency is their ratio. From the
2-host job: the compute time of a step (training time without collectives) and the bytes
all-reduced per step. The projection takes a ring all-reduce on links of 25 Gbit/s and
50 us per message (the delay is modelled: this kernel has no netem), one rank per host at
the 2-host job's per-rank batch (weak scaling, as Horovod reports), and no overlap of the
reduction with the backward pass (kiln reduces after it):
    t_comm(N) = 2 (N-1) x 50 us + 2 (N-1)/N x bytes / 25 Gbit/s
    efficiency(N) = t_compute / (t_compute + t_comm(N))
The kernel CPU column is the machine's system + irq + softirq time (/proc/stat) per step
of the 2-host job less that of the 1-process run, each from the difference between a run
and one three times as long (so start-up and evaluation cancel): the TCP stack's copies,
taken from the same two cores that compute (test hosts share them; real hosts bring their
own).
Needs root (namespaces). Prints a Markdown table.

    bench/data_parallel_hosts.py [--kiln build/kiln] [--models mlp,cnn,gpt] [--steps 200,40,100]
                                 [--batch-size 256,256,32] [--repeats 3]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "dist"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import hosts  # noqa: E402
from data_parallel import isa  # noqa: E402

LINK_BITS_PER_SECOND = 25e9
LINK_LATENCY = 50e-6


def kernel_seconds():
    """The machine's CPU time in the kernel so far (system + irq + softirq of /proc/stat's
    "cpu" line): where a TCP transfer between the test hosts spends its copies."""
    with open("/proc/stat") as f:
        fields = f.readline().split()
    return (int(fields[3]) + int(fields[6]) + int(fields[7])) / os.sysconf("SC_CLK_TCK")


def run(cmd, out):
    if os.path.exists(out):
        os.remove(out)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    k0 = kernel_seconds()
    p = subprocess.run(cmd + ["--metrics-out", out], capture_output=True, text=True, env=env, timeout=3600)
    kernel = kernel_seconds() - k0
    if p.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), (p.stdout + p.stderr)[-3000:]))
    final = [json.loads(line) for line in open(out) if '"final"' in line][0]
    final["kernel_seconds"] = kernel  # of the whole run, start-up and evaluation included
    return final


def shape_links(h):
    for ns in h.names:
        subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", "eth0", "root", "tbf", "rate", "25gbit",
                        "burst", "4mb", "latency", "10ms"], check=True)


def project(t_compute, bytes_per_step, n):
    t_comm = 2 * (n - 1) * LINK_LATENCY + 2 * (n - 1) / n * bytes_per_step * 8 / LINK_BITS_PER_SECOND
    return t_compute / (t_compute + t_comm)


def model_runs(models, steps, batch_size):
    """(model, steps, batch size) per model of --models: --steps gives one value per model,
    --batch-size one per model or one for all."""
    models, steps, batches = models.split(","), steps.split(","), batch_size.split(",")
    batches = batches * len(models) if len(batches) == 1 else batches
    if len(steps) != len(models) or len(batches) != len(models):
        sys.exit("data_parallel_hosts: --steps and --batch-size need one value per model (%s)" % ",".join(models))
    return list(zip(models, steps, batches))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kiln", default=os.path.join(ROOT, "build", "kiln"))
    ap.add_argument("--models", default="mlp,cnn,gpt")
    ap.add_argument("--steps", default="200,40,100")
    ap.add_argument("--batch-size", default="256,256,32", help="one per model, or one for all")
    ap.add_argument("--repeats", type=int, default=3)
    o = ap.parse_args()
    why = hosts.available()
    if why:
        sys.exit("data_parallel_hosts: " + why)
    work = tempfile.mkdtemp(prefix="kiln-dp-hosts-")
    cache = os.path.join(work, "cache")
    out = os.path.join(work, "m.jsonl")
    rows = []
    with hosts.Hosts(2, work) as h:
        shape_links(h)
        for model, steps, batch in model_runs(o.models, o.steps, o.batch_size):
            base = [o.kiln, "train", "--model", model, "--steps", steps, "--batch-size", batch,
                    "--test-limit", "1000", "--graph-compiler-cache-dir", cache, "--quiet"]
            run(base + ["--threads", "2"], out)  # warms the cache: compiling stays out of the figures
            one, two, serial, kernel = [], [], [], []
            longer = base[:base.index("--steps") + 1] + [str(3 * int(steps))] + base[base.index("--steps") + 2:]
            for _ in range(o.repeats):
                one.append(run(base + ["--threads", "2"], out))
                two.append(run(h.mpirun(2) + base + ["--threads", "1"], out))
                serial.append(run(h.mpirun(2) + base + ["--threads", "1", "--all-reduce-overlap", "off"], out))
                # Kernel CPU per step, start-up and evaluation cancelled by a run 3x as long:
                # the 2-host job's less the 1-process run's.
                one_long = run(longer + ["--threads", "2"], out)
                two_long = run(h.mpirun(2) + longer + ["--threads", "1"], out)
                kernel.append(((two_long["kernel_seconds"] - two[-1]["kernel_seconds"]) -
                               (one_long["kernel_seconds"] - one[-1]["kernel_seconds"])) / (2 * int(steps)))
            rate1 = statistics.median(f["steps_per_second"] for f in one)
            rate2 = statistics.median(f["steps_per_second"] for f in two)
            rate_serial = statistics.median(f["steps_per_second"] for f in serial)
            share = statistics.median(f["data_parallel"]["collective_share_of_train"] for f in two)
            share_serial = statistics.median(f["data_parallel"]["collective_share_of_train"] for f in serial)
            # The projection takes the compute of the run without overlap, where the
            # collectives' time is all waiting.
            t_compute = (1 - share_serial) / rate_serial
            bytes_per_step = two[0]["data_parallel"]["bytes_reduced_per_step"]
            kernel = statistics.median(kernel)
            rows.append((model + " (batch %s)" % batch, rate1, rate2, rate2 / rate1, share, rate_serial / rate1,
                         share_serial, bytes_per_step, t_compute, kernel,
                         [project(t_compute, bytes_per_step, n) for n in (2, 8, 64)]))
    print("CPU ISA: %s; 2 test hosts (network namespaces, veth at 25 Gbit/s, Open MPI TCP), 1 thread each, "
          "against 1 process x 2 threads" % isa())
    print()
    print("| model | 1 host x 2 threads, steps/s | 2 hosts x 1 thread, steps/s | efficiency | waiting for "
          "collectives, share of the step | without overlap: efficiency | without overlap: waiting | bytes reduced "
          "per step | compute per step | kernel CPU per step for the transfer | projected 2 / 8 / 64 hosts, no overlap |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for model, r1, r2, eff, share, eff_serial, share_serial, nbytes, tc, kernel, proj in rows:
        print("| %s | %.1f | %.1f | **%.2f** | %.0f%% | %.2f | %.0f%% | %.1f MB | %.1f ms | %.1f ms | %s |"
              % (model, r1, r2, eff, 100 * share, eff_serial, 100 * share_serial, nbytes / 1e6, 1e3 * tc, 1e3 * kernel,
                 " / ".join("%.2f" % p for p in proj)))

if __name__ == "__main__":
    main()
