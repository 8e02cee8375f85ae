"""Issue 32: TensorBoard reads kiln's summaries. With save_summary_steps, train() writes
events.out.tfevents.* in model_dir and evaluate() in model_dir/eval (eval_<name>); read
here with TensorBoard's own loader (EventAccumulator, purging orphaned data as the server
does), in the Python with TensorFlow scripts/install-tf makes, and compared with
summaries.jsonl: tags, steps and values, for a train + evaluate run, a resumed run whose
first run logged past its checkpoint, and an accelerate_train_mode run."""
import json
import os
import subprocess

import numpy as np
import pytest
from conftest import dataset_input, make_estimator

import kiln

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _tb_python():
    p = os.environ.get("KILN_TF_PYTHON") or os.path.join(ROOT, ".venv-tf", "bin", "python")
    return p if os.path.exists(p) else None


pytestmark = pytest.mark.skipif(_tb_python() is None,
                                reason="no Python with tensorboard (scripts/install-tf, or KILN_TF_PYTHON)")

LOAD = """
import base64, json, sys
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator, SCALARS, HISTOGRAMS, IMAGES
out = {}
for run in sys.argv[2:]:
    acc = EventAccumulator(run, size_guidance={SCALARS: 0, HISTOGRAMS: 0, IMAGES: 0})
    acc.Reload()
    if sys.argv[1] == "scalars":
        out[run] = {t: [[e.step, e.value] for e in acc.Scalars(t)] for t in acc.Tags()["scalars"]}
    else:
        hv = lambda h: {k: (list(getattr(h, k)) if k.startswith("bucket") else getattr(h, k))
                        for k in ("min", "max", "num", "sum", "sum_squares", "bucket_limit", "bucket")}
        out[run] = {"histograms": {t: [[e.step, hv(e.histogram_value)] for e in acc.Histograms(t)]
                                   for t in acc.Tags()["histograms"]},
                    "images": {t: [[e.step, e.width, e.height, base64.b64encode(e.encoded_image_string).decode()]
                                   for e in acc.Images(t)] for t in acc.Tags()["images"]}}
print(json.dumps(out))
"""


def tensorboard(kind, *runs):
    r = subprocess.run([_tb_python(), "-c", LOAD, kind] + list(runs), capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def tensorboard_scalars(*runs):
    return tensorboard("scalars", *runs)


def jsonl(model_dir):
    with open(os.path.join(model_dir, "summaries.jsonl")) as f:
        return [json.loads(line) for line in f]


def expected_train(records):
    """tag -> {step: value} as summaries.jsonl has them; a later record of a step replaces
    an earlier one (a resumed run redoes the steps after its checkpoint)."""
    want = {}
    for r in records:
        if r["event"] == "start":  # what TensorBoard drops at the START of a resumed run
            for tag in want:
                want[tag] = {s: v for s, v in want[tag].items() if s <= r["step"]}
        if r["event"] != "progress":
            continue
        for key, tag in (("loss", "loss"), ("steps_per_second", "global_step/sec"), ("learning_rate", "learning_rate")):
            if r.get(key) is not None:
                want.setdefault(tag, {})[r["step"]] = r[key]
    return want


def as_steps(series):
    return {s: v for s, v in series}


def close(got, want):
    assert sorted(got) == sorted(want), (got, want)
    for s in want:
        assert abs(got[s] - want[s]) <= 1e-6 * max(1.0, abs(want[s])), (s, got[s], want[s])


def test_train_and_evaluate_are_tensorboard_runs(data, tmp_path):
    x, y = data
    d = str(tmp_path / "m")
    est = make_estimator(d, save_summary_steps=2)
    est.train(dataset_input(x, y), max_steps=6)
    est.evaluate(dataset_input(x, y), steps=2)
    est.evaluate(dataset_input(x, y), steps=1, name="holdout")
    assert any(f.startswith("events.out.tfevents.") for f in os.listdir(d))
    got = tensorboard_scalars(d, os.path.join(d, "eval"), os.path.join(d, "eval_holdout"))
    want = expected_train(jsonl(d))
    assert set(want) <= set(got[d]) and sorted(want["loss"]) == [2, 4, 6]
    for tag in want:
        close(as_steps(got[d][tag]), want[tag])
    evals = [r for r in jsonl(d) if r["event"] == "eval"]
    assert len(evals) == 2
    for run, rec in ((os.path.join(d, "eval"), evals[0]), (os.path.join(d, "eval_holdout"), evals[1])):
        assert set(got[run]) == set(rec["metrics"]), (got[run], rec)
        for tag, v in rec["metrics"].items():
            close(as_steps(got[run][tag]), {6: v})
    with pytest.raises(kiln.ConfigError, match=r"\[name\] '\.\./x'"):
        est.evaluate(dataset_input(x, y), steps=1, name="../x")


def test_a_resumed_run_is_not_drawn_twice(data, tmp_path):
    x, y = data
    d = str(tmp_path / "m")
    make_estimator(d, save_summary_steps=2, save_checkpoints_steps=4).train(dataset_input(x, y), max_steps=8)
    # as if killed after logging step 8 but before its checkpoint: the run resumes at 4
    for f in os.listdir(d):
        if f.startswith("model.ckpt-8") or f == "checkpoint":
            os.remove(os.path.join(d, f))
    again = make_estimator(d, save_summary_steps=2, save_checkpoints_steps=4, random_seed=7)
    again.train(dataset_input(x, y, seed=3), max_steps=10)
    assert again.last_train_stats["start_step"] == 4
    got = tensorboard_scalars(d)[d]
    want = expected_train(jsonl(d))
    assert sorted(want["loss"]) == [2, 4, 6, 8, 10]
    close(as_steps(got["loss"]), want["loss"])  # steps 6 and 8 once, from the resumed run
    first_run_loss_at_6 = next(r["loss"] for r in jsonl(d) if r["event"] == "progress" and r["step"] == 6)
    assert first_run_loss_at_6 != want["loss"][6]
    assert len([f for f in os.listdir(d) if f.startswith("events.out.tfevents.")]) == 2


def test_accelerate_switch_is_visible(data, tmp_path):
    x, y = data
    d = str(tmp_path / "m")
    acc = kiln.ExperimentalConfig(accelerate_train_mode="fast1|step|0.5")
    est = make_estimator(d, save_summary_steps=2, experimental_config=acc)
    est.train(dataset_input(x, y), max_steps=8, hooks=[kiln.TellMeStepOrLossHook(step="global_step:0", total_step=8)])
    got = tensorboard_scalars(d)[d]
    switch = next(r for r in jsonl(d) if r["event"] == "precision_switch")
    assert as_steps(got["kiln/precision_switch_step"]) == {switch["step"]: float(switch["step"])}
    low = as_steps(got["kiln/low_precision"])
    progress = {r["step"]: r["phase"] for r in jsonl(d) if r["event"] == "progress"}
    assert low == {s: (0.0 if p == "original" else 1.0) for s, p in progress.items()}
    assert low[2] == 1.0 and low[8] == 0.0
    assert "kiln/skipped_updates" in got
    close(as_steps(got["loss"]), expected_train(jsonl(d))["loss"])


def test_summary_scalar_in_model_fn(data, tmp_path):
    x, y = data
    from conftest import model_fn

    def fn(features, labels, mode, params):
        spec = model_fn(features, labels, mode, params)
        if mode == kiln.estimator.ModeKeys.TRAIN:
            with kiln.name_scope("stats"):
                kiln.summary.scalar("feature_mean", kiln.reduce_mean(features))
            kiln.summary.scalar("loss_twice", spec.loss * 2.0)
            assert kiln.summary.merge_all() is not None
        return spec

    d = str(tmp_path / "m")
    est = make_estimator(d, fn=fn, save_summary_steps=3)
    est.train(dataset_input(x, y), max_steps=7)
    progress = [r for r in jsonl(d) if r["event"] == "progress"]
    assert [r["step"] for r in progress] == [3, 6, 7]
    for r in progress:
        assert set(r["scalars"]) == {"stats/feature_mean", "loss_twice"}, r
    got = tensorboard_scalars(d)[d]
    for tag in ("stats/feature_mean", "loss_twice"):
        close(as_steps(got[tag]), {r["step"]: r["scalars"][tag] for r in progress})


def test_file_writer(tmp_path):
    d = str(tmp_path / "own")
    w = kiln.summary.FileWriter(d)
    for step in (1, 2, 3):
        w.add_summary(kiln.summary.Summary(value=[kiln.summary.Summary.Value(tag="mine", simple_value=step / 4)]), step)
    w.flush()
    w.close()
    assert tensorboard_scalars(d)[d] == {"mine": [[1, 0.25], [2, 0.5], [3, 0.75]]}
    with pytest.raises(TypeError, match="simple_value"):
        kiln.summary.Summary.Value(tag="x", simple_value="high")


def test_histograms_and_images(data, tmp_path):
    x, y = data
    from conftest import model_fn

    def fn(features, labels, mode, params):
        spec = model_fn(features, labels, mode, params)
        if mode == kiln.estimator.ModeKeys.TRAIN:
            kiln.summary.histogram("fixed", kiln.constant([0, 1, 1.5, -2, 3.25]))
            kiln.summary.image("picture", kiln.reshape(features[:3], [3, 2, 4, 1]))
        return spec

    d = str(tmp_path / "m")
    make_estimator(d, fn=fn, save_summary_steps=2).train(dataset_input(x, y), max_steps=4)
    got = tensorboard("values", d)[d]
    records = {r["step"]: r for r in jsonl(d) if r["event"] == "progress"}
    assert sorted(records) == [2, 4]
    hist = got["histograms"]["fixed"]
    assert [s for s, _ in hist] == [2, 4]
    for step, h in hist:
        want = records[step]["histograms"]["fixed"]
        for k in ("min", "max", "num", "sum", "sum_squares"):
            assert h[k] == want[k], (k, h, want)
        np.testing.assert_allclose(h["bucket_limit"], want["bucket_limit"], rtol=1e-12)
        assert h["bucket"] == want["bucket"]
    assert sorted(got["images"]) == ["picture/image/0", "picture/image/1", "picture/image/2"]
    for tag, events in got["images"].items():
        assert [(s, w, h) for s, w, h, _ in events] == [(2, 4, 2), (4, 4, 2)]
        for step, _, _, png in events:
            assert png == records[step]["images"][tag]["png"]
