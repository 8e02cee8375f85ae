"""Ctrl-C during train(): the step in progress finishes, the checkpoint is written, and
Python gets KeyboardInterrupt; the Python SIGINT handler is back afterwards."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from conftest import dataset_input, make_estimator

import kiln


class CtrlCAt(kiln.train.SessionRunHook):
    def __init__(self, step):
        self.step = step

    def after_run(self, run_context, run_values):
        if run_context.global_step == self.step:
            os.kill(os.getpid(), signal.SIGINT)
            # The signal is taken on a thread that runs no kernels, not on this one (see
            # kiln/process/interrupts.h): give it a moment, as a real Ctrl-C has while a step runs.
            time.sleep(0.3)


def test_ctrl_c_stops_after_the_step_with_a_checkpoint(data, tmp_path):
    x, y = data
    d = str(tmp_path / "m")
    est = make_estimator(d)
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt, match="stopped at step 4 after Ctrl-C"):
        est.train(dataset_input(x, y), max_steps=100, hooks=[CtrlCAt(3)])
    assert signal.getsignal(signal.SIGINT) is before
    assert est.last_train_stats["interrupted"] and est.last_train_stats["global_step"] == 4
    assert est.latest_checkpoint() == os.path.join(d, "model.ckpt-4")
    again = make_estimator(d)
    again.train(dataset_input(x, y), max_steps=6)
    assert again.last_train_stats["start_step"] == 4


def test_ctrl_c_from_outside(tmp_path):
    script = textwrap.dedent("""
        import sys, time
        sys.path.insert(0, %r)
        import kiln
        from conftest import blobs, make_estimator
        x, y = blobs(256)
        def input_fn():
            i = 0
            while True:
                i += 1
                if i == 5:
                    print("ready", flush=True)
                if i > 5:
                    time.sleep(0.01)
                yield x[:32], y[:32]
        est = make_estimator(%r)
        est.train(input_fn, max_steps=100000)
    """) % (os.path.dirname(__file__), str(tmp_path / "m"))
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode != 0 and "KeyboardInterrupt: kiln: training stopped at step" in err, err
    assert any(f.endswith(".index") for f in os.listdir(tmp_path / "m"))


def _sigint_blocked_here():
    import threading
    with open("/proc/self/task/%d/status" % threading.get_native_id()) as f:
        mask = int(next(l for l in f if l.startswith("SigBlk:")).split()[1], 16)
    return bool(mask & (1 << (signal.SIGINT - 1)))


class RecordMask(kiln.train.SessionRunHook):
    def __init__(self):
        self.blocked = []

    def after_run(self, run_context, run_values):
        self.blocked.append(_sigint_blocked_here())


def test_the_training_thread_never_runs_a_sigint_handler(data, tmp_path):
    # A handler landing on a thread inside a oneDNN kernel corrupts the heap: during
    # train() the thread that runs the steps has SIGINT blocked; afterwards it is as before.
    x, y = data
    est = make_estimator(str(tmp_path / "m"))
    before = _sigint_blocked_here()
    rec = RecordMask()
    est.train(dataset_input(x, y), max_steps=3, hooks=[rec])
    assert rec.blocked == [True, True, True]
    assert _sigint_blocked_here() == before
