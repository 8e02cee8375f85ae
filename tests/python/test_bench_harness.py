"""The benchmark harnesses' own logic (bench/vs_pytorch.py, bench/gpt_vs_pytorch.py,
bench/compat_vs_tensorflow.py),
with the runs replaced by scripted rates: PyTorch needs python3-torch, which the tests do
not install, and what matters here is which runs the flags ask for and which setting wins.
Each thread setting is probed once per --probe-rounds round and scores its best round
(one disturbed run does not decide); the gpt bench times --repeats interleaved pairs."""
import math
import os
import sys
import types

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import compat_vs_tensorflow
import gpt_vs_pytorch
import vs_pytorch

# Per round, the rate of each PyTorch setting: "default" wins on its best round (10)
# though "PASSIVE" has the better mean (9.25 against 7).
ROUNDS = [{"default": 10.0, "PASSIVE": 9.0, "1 OMP": 1.0}, {"default": 4.0, "PASSIVE": 9.5, "1 OMP": 1.0}]


def short(env):
    if env.get("OMP_WAIT_POLICY") == "PASSIVE":
        return "PASSIVE"
    return "1 OMP" if env.get("OMP_NUM_THREADS") == "1" else "default"


def test_gpt_bench_probes_every_setting_per_round_and_times_the_repeats(monkeypatch, capsys):
    probes, torch_runs, kiln_runs = [], [], []

    def run_torch(a, precision, steps=None, extra_env=None):
        name = short(extra_env or {})
        if steps == a.probe_steps:
            probes.append(name)
            return {"steps_per_second": ROUNDS[(len(probes) - 1) // 3][name]}
        torch_runs.append(name)
        return {"steps_per_second": 5.0, "validation_loss": 2.0}

    def run_kiln(a, precision):
        kiln_runs.append(precision)
        return {"steps_per_second": 10.0 + len(kiln_runs), "validation_loss": 2.0, "compile_seconds": 1.0}

    monkeypatch.setattr(gpt_vs_pytorch, "run_torch", run_torch)
    monkeypatch.setattr(gpt_vs_pytorch, "run_kiln", run_kiln)
    monkeypatch.setattr(sys, "argv", ["gpt_vs_pytorch.py", "--repeats", "3", "--probe-rounds", "2", "--probe-steps", "7"])
    gpt_vs_pytorch.main()
    assert sorted(probes) == sorted(["default", "PASSIVE", "1 OMP"] * 2)
    assert torch_runs == ["default"] * 3, "the best single round wins, not the best mean"
    assert kiln_runs == ["f32"] * 3
    out = capsys.readouterr().out
    assert out.count("\nrepeat ") == 3
    assert "| f32 | 12.00 (11.00-13.00) | 5.00 (5.00-5.00; default) | 2.40 (2.20-2.60) |" in out


@pytest.mark.parametrize("rounds", [1, 2])
def test_vs_pytorch_probes_each_system_per_round_and_keeps_the_best_round(monkeypatch, rounds):
    calls = []

    def run_json(cmd, env, timeout):
        system = "kiln" if cmd[0] == "kiln-bin" else "pytorch"
        calls.append(system)
        n = sum(1 for c in calls if c == system)
        if system == "kiln":
            return {"steps_per_second": 1.0}
        return {"steps_per_second": ROUNDS[(n - 1) // 3][short(env)]}

    monkeypatch.setattr(vs_pytorch, "run_json", run_json)
    opts = types.SimpleNamespace(quick=False, threads=2, probe_rounds=rounds, kiln_bin="kiln-bin", python="py",
                                 cache_dir="/nonexistent")
    load = ("main", "cnn", "1024,1024", 256, "f32", (150, 60))
    best, probes = vs_pytorch.probe_thread_configs([load], opts, 0.0)
    assert calls.count("pytorch") == 3 * rounds and calls.count("kiln") == 3 * rounds
    assert len(probes) == 6 * rounds
    # One round: PASSIVE's 9 loses to default's 10 as well; two rounds: default keeps its 10.
    assert best[("pytorch", "cnn", "f32")][0] == "default"


def test_compat_bench_runs_kiln_with_seeds_one_to_n_and_leaves_failed_runs_out(monkeypatch, capsys):
    runs = []
    tf_results = iter([(math.nan, 5.0), (0.80, 9.0), (0.70, 8.0), (math.nan, 7.0)])  # 2 probes, then 2 runs

    def run_once(entry, system, tf_python, env, seed=1):
        runs.append((system, dict(env, seed=seed)))
        if system == "kiln":
            return 0.5 + 0.1 * int(env["KILN_RANDOM_SEED"]), 4.0
        return next(tf_results)

    monkeypatch.setattr(compat_vs_tensorflow, "run_once", run_once)
    monkeypatch.setattr(compat_vs_tensorflow, "isa", lambda: ("a CPU", ["avx2"]))
    monkeypatch.setattr(sys, "argv", ["compat_vs_tensorflow.py", "--seeds", "3", "--only", "gcp_mnist_bn"])
    compat_vs_tensorflow.main()
    kiln = [env for system, env in runs if system == "kiln"]
    assert [env["KILN_RANDOM_SEED"] for env in kiln] == ["1", "1", "2", "3"], "cold with seed 1, then seeds 1..3 warm"
    assert len({env["KILN_CACHE_DIR"] for env in kiln}) == 1
    assert [env["seed"] for env in kiln] == [1, 1, 2, 3]  # the seed a script's seed_flag would get
    tf = [env for system, env in runs if system == "tensorflow"]
    assert [env.pop("seed") for env in tf] == [1, 1, 2, 3], "probes with seed 1, then the runs with seeds 2..N"
    assert len(tf) == 4 and tf[2] == tf[3] == tf[1], "the failed faster probe does not pick the setting"
    out = capsys.readouterr().out
    # kiln: seeds 1..3 give 0.6, 0.7, 0.8; TensorFlow: 0.80, 0.70 and one NaN left out.
    assert "| gcp_mnist_bn | 300 | accuracy | 0.7000 ± 0.1000 | 0.7500 ± 0.0707 (1 of 3 failed) |" in out


def test_a_script_that_seeds_itself_gets_the_seed_through_its_flag(monkeypatch):
    import subprocess
    entry = compat_vs_tensorflow.corpus.BY_NAME["gcp_cnn_cifar_tfrecords"]
    cmds = []

    def fake_run(cmd, **kw):
        if cmd[0] == "rm":
            return types.SimpleNamespace(returncode=0)
        cmds.append(cmd)
        return types.SimpleNamespace(returncode=0, stdout="accuracy = 0.5\n", stderr="")
    monkeypatch.setattr(subprocess, "run", fake_run)
    for system in ("kiln", "tensorflow"):
        assert compat_vs_tensorflow.run_once(entry, system, "python", {}, seed=2)[0] == 0.5
    assert all(c[-2:] == ["--tf_random_seed", "2"] for c in cmds) and len(cmds) == 2
    other = compat_vs_tensorflow.corpus.BY_NAME["gcp_mnist_bn"]  # no seed flag: its arguments as they are
    compat_vs_tensorflow.run_once(other, "kiln", "python", {}, seed=2)
    tail = cmds[-1][-len(other.args):]
    scratch = tail[other.args.index("{scratch}/out")][:-len("/out")]  # a fresh directory of the run's own
    assert scratch.startswith("/tmp/") and "{scratch}" not in scratch
    assert tail == other.runs(scratch)[0]
