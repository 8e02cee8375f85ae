"""kiln's OpenMP spin count on import (python/kiln/_src/openmp_wait.py): the rule of
src/process/openmp_wait.h, checked on the C++ test's /proc/stat fixtures, with the same
constants, and in a fresh interpreter beside work on every allowed CPU."""
import os
import re
import subprocess
import sys

from kiln._src import openmp_wait as ow

SOURCE = os.environ.get("KILN_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))


def fixture(name):
    with open(os.path.join(SOURCE, "tests", "process", "fixtures", name)) as f:
        return f.read()


def test_same_constants_as_the_cpp_rule():
    header = open(os.path.join(SOURCE, "src", "process", "openmp_wait.h")).read()
    values = dict(re.findall(r"constexpr \w+ (k\w+) = ([0-9.]+);", header))
    assert int(values["kQuietSpins"]) == ow.QUIET_SPINS
    assert int(values["kBusySpins"]) == ow.BUSY_SPINS
    assert float(values["kBusyCpus"]) == ow.BUSY_CPUS


def test_reads_the_asked_for_cpus_on_the_fixtures():
    before, after = fixture("proc_stat_before.txt"), fixture("proc_stat_after.txt")
    assert ow.parse_proc_stat(before, {0, 1}) == (1230, 1230 + 5050, 2)
    assert ow.parse_proc_stat(before, {1})[2] == 1
    assert ow.parse_proc_stat(before, {7}) == (0, 0, 0)
    assert ow.busy_cpus(ow.parse_proc_stat(before, {0, 1}), ow.parse_proc_stat(after, {0, 1})) == 6 / 7.5
    assert ow.busy_cpus(ow.parse_proc_stat(before, {0}), ow.parse_proc_stat(after, {0})) == 0.0
    assert ow.busy_cpus(ow.parse_proc_stat(before, {0, 1}), ow.parse_proc_stat(after, {0})) == 0.0
    assert ow.spins_for(0.8) == ow.BUSY_SPINS and ow.spins_for(0.0) == ow.QUIET_SPINS
    assert ow.spins_for(ow.BUSY_CPUS) == ow.BUSY_SPINS and ow.spins_for(ow.BUSY_CPUS - 0.01) == ow.QUIET_SPINS


def spin_count_on_import(env_extra=None):
    env = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY",
                                                              "KILN_KEEP_OPENMP_WAIT")}
    env.update(env_extra or {})
    out = subprocess.run([sys.executable, "-c", "import os, kiln; print(os.environ.get('GOMP_SPINCOUNT'))"],
                         env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_import_sets_a_spin_count_and_leaves_the_users_alone():
    assert spin_count_on_import() in ("1000", "10000")  # quiet or busy: ctest runs tests side by side
    assert spin_count_on_import({"GOMP_SPINCOUNT": "7"}) == "7"
    assert spin_count_on_import({"OMP_WAIT_POLICY": "passive"}) == "None"


def test_short_spins_beside_work_on_every_allowed_cpu():
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in os.sched_getaffinity(0)]
    try:
        assert spin_count_on_import() == str(ow.BUSY_SPINS)
    finally:
        for p in busy:
            p.kill()
            p.wait()
