"""How long kiln's OpenMP threads spin before they sleep: the rule of
src/process/openmp_wait.h, applied here because libgomp reads GOMP_SPINCOUNT when it
loads, which importing kiln._core does. Same constants, same sampling."""
import os
import time

QUIET_SPINS = 10000  # quiet CPUs: threads stay awake between a step's many small kernels
BUSY_SPINS = 1000  # other work on them: threads sleep soon and leave it the cores
BUSY_CPUS = 0.5  # other processes' use of the allowed CPUs, in CPUs, that counts as busy


def parse_proc_stat(text, cpus):
    """(busy, total, count) jiffies of the CPUs numbered in `cpus`, as openmp_wait.cpp."""
    busy = total = count = 0
    for line in text.splitlines():
        name, _, rest = line.partition(" ")
        if not name.startswith("cpu") or not name[3:].isdigit() or int(name[3:]) not in cpus:
            continue
        f = rest.split()
        if len(f) < 7 or not all(x.isdigit() for x in f[:7]):
            continue
        user, nice, system, idle, iowait, irq, softirq = (int(x) for x in f[:7])
        b = user + nice + system + irq + softirq
        busy, total, count = busy + b, total + b + idle + iowait, count + 1
    return busy, total, count


def busy_cpus(before, after):
    """CPUs' worth of work between two snapshots of the same CPUs; 0 if incomparable."""
    (b0, t0, n0), (b1, t1, n1) = before, after
    if n0 == 0 or n0 != n1 or t1 <= t0 or b1 < b0:
        return 0.0
    return (b1 - b0) / ((t1 - t0) / n0)


def spins_for(busy):
    return BUSY_SPINS if busy >= BUSY_CPUS else QUIET_SPINS


def choose_spins(window_s=0.05):
    """BUSY_SPINS when two windows running find other work on the allowed CPUs (a process
    starting beside this one, e.g. the other end of a pipe, is not), else QUIET_SPINS."""
    try:
        cpus = os.sched_getaffinity(0)
        for _ in range(2):
            with open("/proc/stat") as f:
                before = parse_proc_stat(f.read(), cpus)
            time.sleep(window_s)
            with open("/proc/stat") as f:
                after = parse_proc_stat(f.read(), cpus)
            if spins_for(busy_cpus(before, after)) == QUIET_SPINS:
                return QUIET_SPINS
    except OSError:
        return QUIET_SPINS
    return BUSY_SPINS
