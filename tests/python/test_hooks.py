"""Python hooks: TensorFlow's call order, fetches by name, stop requests, the built-ins."""
import os

import numpy as np
import pytest
from conftest import dataset_input, make_estimator

import kiln


class Recorder(kiln.train.SessionRunHook):
    def __init__(self, fetches=None, stop_at=None):
        self.calls, self.results, self.fetches, self.stop_at = [], [], fetches, stop_at

    def begin(self):
        self.calls.append("begin")

    def after_create_session(self, session, coord):
        self.calls.append("after_create_session")
        self.start_step = int(session.run("global_step:0"))

    def before_run(self, run_context):
        self.calls.append("before_run")
        return kiln.train.SessionRunArgs(self.fetches) if self.fetches is not None else None

    def after_run(self, run_context, run_values):
        self.calls.append("after_run")
        self.results.append(run_values.results)
        if self.stop_at is not None and run_context.global_step >= self.stop_at:
            run_context.request_stop()

    def end(self, session):
        self.calls.append("end")
        self.end_step = int(session.run("global_step:0"))


def test_call_order_and_fetches(data):
    x, y = data
    rec = Recorder({"loss": "loss:0", "step": "global_step:0", "kernel": "logits/kernel:0", "mean": "mean_logit:0"})
    est = make_estimator()
    est.train(dataset_input(x, y), max_steps=4, hooks=[rec])
    assert rec.calls == ["begin", "after_create_session"] + ["before_run", "after_run"] * 4 + ["end"]
    assert [int(r["step"]) for r in rec.results] == [1, 2, 3, 4]
    assert rec.results[0]["kernel"].shape == (16, 3)
    assert np.isfinite(rec.results[-1]["loss"]) and rec.results[-1]["mean"].shape == ()
    assert abs(float(rec.results[-1]["loss"]) - est.last_train_stats["final_loss"]) < 1e-6
    assert rec.start_step == 0 and rec.end_step == 4


def test_fetch_structures_come_back_in_shape(data):
    x, y = data
    rec = Recorder(["loss:0", ("global_step", "loss")])
    make_estimator().train(dataset_input(x, y), max_steps=2, hooks=[rec])
    r = rec.results[0]
    assert isinstance(r, list) and isinstance(r[1], tuple) and int(r[1][0]) == 1


def test_hooks_run_per_loop(data):
    x, y = data
    rec = Recorder("global_step:0")
    make_estimator(iterations_per_loop=5).train(dataset_input(x, y), max_steps=12, hooks=[rec])
    assert [int(v) for v in rec.results] == [5, 10, 12]


def test_request_stop(data):
    x, y = data
    rec = Recorder(stop_at=7)
    est = make_estimator()
    est.train(dataset_input(x, y), max_steps=100, hooks=[rec])
    assert est.last_train_stats["global_step"] == 7 and est.last_train_stats["stopped_by_hook"]
    assert rec.calls[-1] == "end"


def test_missing_fetch_name_fails_before_a_step(data):
    x, y = data
    est = make_estimator()
    with pytest.raises(kiln.ConfigError) as e:
        est.train(dataset_input(x, y), max_steps=5, hooks=[Recorder("no_such_value:0")])
    assert "no_such_value" in str(e.value) and "mean_logit" in str(e.value)
    assert est.last_train_stats is None


def test_stop_at_step_hook(data, tmp_path):
    x, y = data
    est = make_estimator(str(tmp_path / "m"))
    est.train(dataset_input(x, y), hooks=[kiln.train.StopAtStepHook(last_step=6)])
    assert est.last_train_stats["global_step"] == 6
    est.train(dataset_input(x, y), hooks=[kiln.train.StopAtStepHook(num_steps=3)])
    assert est.last_train_stats["global_step"] == 9
    with pytest.raises(ValueError):
        kiln.train.StopAtStepHook(num_steps=3, last_step=4)


def test_logging_tensor_hook(data, quiet):
    x, y = data
    hook = kiln.train.LoggingTensorHook({"loss": "loss:0", "step": "global_step:0"}, every_n_iter=3)
    make_estimator().train(dataset_input(x, y), max_steps=7, hooks=[hook])
    logged = [line for line in quiet if line.startswith("loss = ")]
    assert len(logged) == 3 and "step = 1" in logged[0] and "step = 4" in logged[1] and "step = 7" in logged[2]


def test_training_hooks_from_model_fn_with_tensors(data, quiet):
    x, y = data

    def fn(features, labels, mode, params):
        logits = kiln.layers.dense(features, 3)
        loss = kiln.losses.sparse_softmax_cross_entropy(labels, logits)
        acc = kiln.reduce_mean(kiln.cast(kiln.equal(kiln.argmax(logits, 1), kiln.cast(labels, kiln.int64)), kiln.float32))
        hook = kiln.train.LoggingTensorHook({"train_accuracy": acc}, every_n_iter=2)
        op = kiln.train.GradientDescentOptimizer(0.5).minimize(loss, global_step=kiln.train.get_or_create_global_step())
        return kiln.estimator.EstimatorSpec(mode, loss=loss, train_op=op, training_hooks=[hook])

    est = make_estimator(fn=fn)
    est.train(dataset_input(x, y), max_steps=4)
    logged = [line for line in quiet if line.startswith("train_accuracy = ")]
    assert len(logged) == 2
    est.train(dataset_input(x, y), max_steps=6)  # the graph is built already: the same hooks run
    assert len([line for line in quiet if line.startswith("train_accuracy = ")]) == 3


def test_checkpoint_saver_hook(data, tmp_path):
    x, y = data
    other = str(tmp_path / "other")
    hook = kiln.train.CheckpointSaverHook(other, save_steps=4)
    est = make_estimator(str(tmp_path / "m"))
    est.train(dataset_input(x, y), max_steps=10, hooks=[hook])
    assert hook.saved_steps == [4, 8, 10]
    assert sorted((f for f in os.listdir(other) if f.endswith(".index")), key=lambda f: int(f.split("-")[1][:-6])) == [
        "model.ckpt-4.index", "model.ckpt-8.index", "model.ckpt-10.index"]
    assert kiln.train.latest_checkpoint(other) == os.path.join(other, "model.ckpt-10")
    resumed = make_estimator(other)
    resumed.train(dataset_input(x, y), max_steps=12)
    assert resumed.last_train_stats["start_step"] == 10


def test_nan_tensor_hook_stop_only(data):
    x, y = data
    est = make_estimator()
    est.train(dataset_input(x, y), max_steps=3, hooks=[kiln.train.NanTensorHook("loss:0", fail_on_nan_loss=False)])
    assert est.last_train_stats["global_step"] == 3


def test_hook_that_raises_propagates(data):
    x, y = data

    class Boom(kiln.train.SessionRunHook):
        def after_run(self, run_context, run_values):
            raise RuntimeError("boom from a hook")

    with pytest.raises(RuntimeError, match="boom from a hook"):
        make_estimator().train(dataset_input(x, y), max_steps=5, hooks=[Boom()])


def test_tell_me_hook_reports(data):
    x, y = data
    hook = kiln.TellMeStepOrLossHook(loss="loss:0", final_loss=0.1)
    make_estimator().train(dataset_input(x, y), max_steps=3, hooks=[hook])
    assert hook.last_value is not None and hook.name == "loss"
    with pytest.raises(kiln.ConfigError, match="final_loss"):
        kiln.TellMeStepOrLossHook(loss="loss:0", final_loss=-1.0)
    with pytest.raises(kiln.ConfigError, match="total_step"):
        kiln.TellMeStepOrLossHook(step="global_step:0", total_step=0)


def test_evaluate_from_a_hook(data):
    x, y = data
    seen = []

    class EvalEvery(kiln.train.SessionRunHook):
        def after_run(self, run_context, run_values):
            if run_context.global_step % 5 == 0:
                seen.append(est.evaluate(lambda: iter([(x, y)]))["global_step"])

    est = make_estimator()
    est.train(dataset_input(x, y), max_steps=10, hooks=[EvalEvery()])
    assert seen == [5, 10] and est.last_train_stats["global_step"] == 10


def test_an_estimator_is_freed(data):
    import gc
    import weakref
    x, y = data
    est = make_estimator()
    est.train(dataset_input(x, y), max_steps=2)
    ref = weakref.ref(est)
    del est
    gc.collect()
    assert ref() is None


class FetchOnEvenSteps(kiln.train.SessionRunHook):
    def __init__(self):
        self.results = []

    def before_run(self, run_context):
        return kiln.train.SessionRunArgs("mean_logit:0") if run_context.global_step % 2 == 0 else None

    def after_run(self, run_context, run_values):
        self.results.append(run_values.results)


def test_a_value_fetched_on_some_loops_is_computed_on_those_loops_only(data):
    # Compiled: the plain training graph does not output what no hook fetches; the loops
    # that fetch mean_logit end on a second executable that does.
    x, y = data
    est = make_estimator(backend="cpu")
    est.train(dataset_input(x, y), max_steps=2)
    assert est.compile_summary()["graphs"] == 1
    hook = FetchOnEvenSteps()
    est.train(dataset_input(x, y), max_steps=6, hooks=[hook])
    assert est.compile_summary()["graphs"] == 2
    assert [r is None for r in hook.results] == [False, True, False, True]
    assert all(np.shape(r) == () and np.isfinite(r) for r in hook.results[::2])


def test_profiler_hook_writes_chrome_traces_on_tensorflows_schedule(data, tmp_path):
    import json
    x, y = data
    out = str(tmp_path / "traces")
    hook = kiln.train.ProfilerHook(save_steps=4, output_dir=out, show_dataflow=False, show_memory=True)
    est = make_estimator(str(tmp_path / "m"))
    est.train(dataset_input(x, y), max_steps=11, hooks=[hook])
    # not the first step; the second, then every 4 (TensorFlow's SecondOrStepTimer)
    assert sorted(os.listdir(out)) == ["timeline-10.json", "timeline-2.json", "timeline-6.json"]
    trace = json.load(open(os.path.join(out, "timeline-6.json")))["traceEvents"]
    step = [e for e in trace if e["name"] == "step"][0]
    assert step["ph"] == "X" and step["dur"] > 0 and step["args"] == {"global_step": 6, "steps": 1}
    memory = [e for e in trace if e["name"] == "Memory"]
    assert len(memory) == 2 and all(e["ph"] == "C" and e["args"]["resident bytes"] > 1e6 for e in memory)
    quiet = kiln.train.ProfilerHook(save_secs=3600, output_dir=str(tmp_path / "q"))
    lines = []
    kiln.set_log_function(lines.append)
    try:
        est.train(dataset_input(x, y), max_steps=14, hooks=[quiet])
    finally:
        kiln.set_log_function(kiln._src.log._print)
    assert any("show_dataflow has no arrows to draw" in line for line in lines)  # the default: said once
    assert [os.path.basename(p) for p in quiet.written] == ["timeline-13.json"]  # then not again within the hour
    assert not [e for e in json.load(open(quiet.written[0]))["traceEvents"] if e["name"] == "Memory"]


@pytest.mark.parametrize("kwargs,message", [
    ({}, "exactly one of save_steps and save_secs"), ({"save_steps": 1, "save_secs": 1}, "exactly one"),
    ({"save_steps": 0}, "save_steps 0 must be an integer >= 1"), ({"save_secs": -1}, "save_secs -1 must be")])
def test_profiler_hook_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        kiln.train.ProfilerHook(**kwargs)
