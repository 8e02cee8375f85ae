"""Issue 30: checkpoints TensorFlow users can use. kiln writes TensorFlow's names and
format in model_dir; tf.train's checkpoint functions read them and TensorFlow's own
checkpoints (tests/formats/fixtures, written by real TensorFlow); warm_start_from and
tf.train.init_from_checkpoint start a fresh run from another checkpoint; and, where a
Python with TensorFlow is at hand (KILN_TF_PYTHON, or the .venv-tf scripts/install-tf
makes), real TensorFlow reads a kiln checkpoint and gets the same values."""
import json
import os
import subprocess

import numpy as np
import pytest
from conftest import dataset_input, make_estimator, model_fn

import kiln

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "tests", "formats", "fixtures")
TF_CKPT = os.path.join(FIXTURES, "tf_checkpoint")


def expected():
    with open(os.path.join(FIXTURES, "expected.json")) as f:
        return json.load(f)


def test_model_dir_has_tensorflows_names(data, tmp_path):
    x, y = data
    d = str(tmp_path / "m")
    est = make_estimator(d, save_checkpoints_steps=3, keep_checkpoint_max=2)
    est.train(dataset_input(x, y), max_steps=7)
    files = sorted(os.listdir(d))
    assert "checkpoint" in files
    assert [f for f in files if f.endswith(".index")] == ["model.ckpt-6.index", "model.ckpt-7.index"]
    assert "model.ckpt-7.data-00000-of-00001" in files and "model.ckpt-3.data-00000-of-00001" not in files
    assert not any(f.endswith(".kiln") for f in files)
    with open(os.path.join(d, "checkpoint")) as f:
        assert f.read() == ('model_checkpoint_path: "model.ckpt-7"\n'
                            'all_model_checkpoint_paths: "model.ckpt-6"\n'
                            'all_model_checkpoint_paths: "model.ckpt-7"\n')
    assert kiln.train.latest_checkpoint(d) == os.path.join(d, "model.ckpt-7")
    assert est.latest_checkpoint() == os.path.join(d, "model.ckpt-7")
    names = dict(kiln.train.list_variables(d))
    assert names["dense/kernel"] == [8, 16] and names["global_step"] == []
    assert "dense/kernel/Momentum" in names
    np.testing.assert_array_equal(kiln.train.load_variable(d, "dense/kernel"), est.get_variable_value("dense/kernel"))
    assert int(kiln.train.load_variable(d, "global_step")) == 7
    # evaluate(checkpoint_path=) takes what latest_checkpoint gives, also an older one
    older = make_estimator(d).evaluate(dataset_input(x, y), steps=2, checkpoint_path=os.path.join(d, "model.ckpt-6"))
    assert older["global_step"] == 6


def test_reads_a_checkpoint_tensorflow_wrote():
    want = expected()
    assert kiln.train.latest_checkpoint(TF_CKPT) == os.path.join(TF_CKPT, "model.ckpt-7")
    reader = kiln.train.load_checkpoint(TF_CKPT)
    shapes = reader.get_variable_to_shape_map()
    for name, w in want.items():
        if not isinstance(w, dict) or "dtype" not in w:  # records, pipelines, images: not tensors
            continue
        assert shapes[name] == w["shape"], name
        v = reader.get_tensor(name)
        assert str(v.dtype) == w["dtype"], name
        np.testing.assert_array_equal(np.asarray(v).reshape(-1), np.array(w["values"], dtype=w["dtype"]), name)
    assert reader.get_variable_to_dtype_map()["half"] == kiln.float16
    assert reader.has_tensor("dense/bias") and not reader.has_tensor("nope")
    with pytest.raises(ValueError, match="has no tensor 'nope'"):
        reader.get_tensor("nope")


def test_warm_start_from_a_tensorflow_checkpoint(data, tmp_path):
    """init_from_checkpoint with a scope map: the model's 'net/dense' from TF's 'dense'."""
    x, y = data
    want = expected()

    def fn(features, labels, mode, params):
        with kiln.variable_scope("net"):
            k = kiln.get_variable("dense/kernel", shape=[3, 4], trainable=False)  # so they keep the values
            b = kiln.get_variable("dense/bias", shape=[4], trainable=False)
        h = kiln.layers.dense(features, 3, name="proj")
        logits = kiln.matmul(h, k) + b
        kiln.train.init_from_checkpoint(TF_CKPT, {"dense/": "net/dense/"})
        loss = kiln.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits[:, :3])
        step = kiln.train.get_or_create_global_step()
        return kiln.estimator.EstimatorSpec(mode, loss=loss, train_op=kiln.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=step))

    est = make_estimator(str(tmp_path / "w"), fn=fn)
    est.train(dataset_input(x, y), max_steps=2)
    for n in ("kernel", "bias"):
        np.testing.assert_array_equal(est.get_variable_value("net/dense/" + n).reshape(-1),
                                      np.array(want["dense/" + n]["values"], dtype=np.float32))
    # a resumed run takes its own checkpoint, not the warm start again
    est2 = make_estimator(str(tmp_path / "w"), fn=fn)
    est2.train(dataset_input(x, y), max_steps=3)
    assert est2.last_train_stats["start_step"] == 2


def test_warm_start_from_settings(data, tmp_path):
    """Estimator(warm_start_from=): trainable variables from another run's model_dir; the
    step and the optimizer's slots start afresh, as in TensorFlow. (A learning rate of 1e-30
    leaves the weights as they started, to the bit.)"""
    x, y = data
    first = make_estimator(str(tmp_path / "a"))
    first.train(dataset_input(x, y), max_steps=5)
    for ws in (str(tmp_path / "a"), kiln.estimator.WarmStartSettings(str(tmp_path / "a"), vars_to_warm_start=".*")):
        b_dir = str(tmp_path / ("b%d" % id(ws)))
        second = kiln.Estimator(model_fn, config=kiln.RunConfig(model_dir=b_dir, random_seed=1, log_step_count_steps=0),
                                params={"learning_rate": 1e-30}, warm_start_from=ws, backend="interp")
        second.train(dataset_input(x, y), max_steps=1)
        assert second.last_train_stats["start_step"] == 0
        for n in ("dense/kernel", "dense/bias", "logits/kernel", "logits/bias"):
            np.testing.assert_array_equal(second.get_variable_value(n), first.get_variable_value(n))
        assert not np.array_equal(second.get_variable_value("dense/kernel/Momentum"),
                                  first.get_variable_value("dense/kernel/Momentum"))
    renamed = kiln.estimator.WarmStartSettings(str(tmp_path / "a"), vars_to_warm_start=["logits/kernel"])
    third = kiln.Estimator(model_fn, config=kiln.RunConfig(model_dir=str(tmp_path / "c"), random_seed=1),
                           params={"learning_rate": 1e-30}, warm_start_from=renamed, backend="interp")
    third.train(dataset_input(x, y), max_steps=1)
    np.testing.assert_array_equal(third.get_variable_value("logits/kernel"), first.get_variable_value("logits/kernel"))
    assert not np.array_equal(third.get_variable_value("dense/kernel"), first.get_variable_value("dense/kernel"))


def test_warm_start_errors_name_what_is_wrong(data, tmp_path):
    x, y = data

    def wrong(amap):
        def fn(features, labels, mode, params):
            kiln.get_variable("dense/kernel", shape=[4, 4])
            kiln.train.init_from_checkpoint(TF_CKPT, amap)
            return model_fn(features, labels, mode, params)
        return fn

    for amap, says in (({"dense/kernel": "dense/kernel"}, "has shape \\[4, 4\\] but 'dense/kernel'"),
                       ({"nothing/here": "dense/kernel"}, "tensor 'nothing/here'.*is not in checkpoint"),
                       ({"dense/": "nowhere/"}, "no variable of the model is under scope 'nowhere/'")):
        with pytest.raises(ValueError, match=says):
            make_estimator(str(tmp_path / "e"), fn=wrong(amap)).train(dataset_input(x, y), max_steps=1)
    with pytest.raises(ValueError, match="no checkpoint in directory"):
        kiln.train.load_checkpoint(str(tmp_path))
    with pytest.raises(TypeError, match="warm_start_from"):
        kiln.Estimator(model_fn, warm_start_from=3)
    with pytest.raises(kiln.CheckpointError, match="no checkpoint at"):
        kiln.train.load_checkpoint(str(tmp_path / "missing" / "model.ckpt-1"))


def _tf_python():
    p = os.environ.get("KILN_TF_PYTHON") or os.path.join(ROOT, ".venv-tf", "bin", "python")
    return p if os.path.exists(p) else None


@pytest.mark.skipif(_tf_python() is None, reason="no Python with TensorFlow (scripts/install-tf, or KILN_TF_PYTHON)")
def test_tensorflow_reads_a_kiln_checkpoint(data, tmp_path):
    x, y = data
    d = str(tmp_path / "m")
    est = make_estimator(d)
    est.train(dataset_input(x, y), max_steps=4)
    script = """
import json, sys
import tensorflow as tf
d = sys.argv[1]
path = tf.train.latest_checkpoint(d)
r = tf.train.load_checkpoint(path)
out = {"path": path, "vars": {n: r.get_tensor(n).tolist() for n, _ in tf.train.list_variables(d)}}
g = tf.Graph()
with g.as_default():
    k = tf.compat.v1.get_variable("dense/kernel", shape=[8, 16])
    s = tf.compat.v1.train.get_or_create_global_step()
    with tf.compat.v1.Session() as sess:
        tf.compat.v1.train.Saver([k, s]).restore(sess, path)
        out["restored_step"] = int(sess.run(s))
        out["restored_kernel"] = sess.run(k).tolist()
print(json.dumps(out))
"""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    r = subprocess.run([_tf_python(), "-c", script, d], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["path"] == os.path.join(d, "model.ckpt-4")
    assert got["restored_step"] == 4
    np.testing.assert_array_equal(np.array(got["restored_kernel"], dtype=np.float32), est.get_variable_value("dense/kernel"))
    for name, v in got["vars"].items():
        np.testing.assert_array_equal(np.array(v), kiln.train.load_variable(d, name), name)
    assert set(got["vars"]) == {n for n, _ in kiln.train.list_variables(d)}


@pytest.mark.skipif(_tf_python() is None, reason="no Python with TensorFlow (scripts/install-tf, or KILN_TF_PYTHON)")
def test_evaluate_loss_is_tensorflows_with_a_short_last_batch(data, tmp_path):
    """TensorFlow's Estimator reports metrics.mean(loss) over the batches: on 40 examples in
    batches of 16 the short batch of 8 weighs as much as a full one. Real TensorFlow
    evaluates kiln's checkpoint (the same weights) on the same data."""
    x, y = data[0][:40], data[1][:40]
    d = str(tmp_path / "m")
    est = make_estimator(d)
    est.train(dataset_input(x, y), max_steps=4)
    np.save(str(tmp_path / "x.npy"), x)
    np.save(str(tmp_path / "y.npy"), y)
    ours = est.evaluate(lambda: kiln.data.Dataset.from_tensor_slices((x, y)).batch(16))
    script = """
import json, sys
import numpy as np
import tensorflow as tf
v1 = tf.compat.v1
d, x, y = sys.argv[1], np.load(sys.argv[2]), np.load(sys.argv[3])
def model_fn(features, labels, mode):
    h = v1.layers.dense(features, 16, activation=tf.nn.relu, name="dense")
    logits = v1.layers.dense(h, 3, name="logits")
    loss = v1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    return tf.estimator.EstimatorSpec(mode, loss=loss)
est = tf.estimator.Estimator(model_fn, model_dir=d)
ev = est.evaluate(lambda: tf.data.Dataset.from_tensor_slices((x, y)).batch(16))
print(json.dumps({"loss": float(ev["loss"]), "global_step": int(ev["global_step"])}))
"""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    r = subprocess.run([_tf_python(), "-c", script, d, str(tmp_path / "x.npy"), str(tmp_path / "y.npy")],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    tf_ev = json.loads(r.stdout.strip().splitlines()[-1])
    assert tf_ev["global_step"] == ours["global_step"] == 4
    # The two definitions differ here by far more than float32 rounding.
    by_example = est.evaluate(lambda: kiln.data.Dataset.from_tensor_slices((x, y)).batch(40))["loss"]
    assert abs(by_example - tf_ev["loss"]) > 1e-4, (by_example, tf_ev["loss"])
    assert ours["loss"] == pytest.approx(tf_ev["loss"], rel=1e-5)
