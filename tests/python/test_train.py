"""Real training runs on small data: Dataset and generator input, evaluate, predict,
checkpoints and resume, and the Dataset pipeline's batches."""
import os
import re

import numpy as np
import pytest
from conftest import blobs, dataset_input, make_estimator

import kiln


def test_train_evaluate_predict_with_dataset(data, tmp_path):
    x, y = data
    est = make_estimator(str(tmp_path / "m"))
    assert est.train(dataset_input(x, y), max_steps=60) is est
    st = est.last_train_stats
    assert st["steps"] == 60 and st["global_step"] == 60 and not st["resumed"]
    assert st["final_loss"] < 0.3
    ev = est.evaluate(lambda: kiln.data.Dataset.from_tensor_slices((x, y)).batch(100))
    assert ev["global_step"] == 60 and ev["accuracy"] > 0.95 and ev["loss"] < 0.3
    preds = list(est.predict(lambda: kiln.data.Dataset.from_tensor_slices(x[:10]).batch(4)))
    assert len(preds) == 10
    assert preds[0]["probabilities"].shape == (3,) and preds[0]["classes"].dtype == np.int64
    assert [int(p["classes"]) for p in preds] == list(y[:10])
    assert os.path.exists(est.latest_checkpoint() + ".index")  # a TensorFlow prefix
    assert est.get_variable_value("logits/kernel:0").shape == (16, 3)
    assert "dense/kernel" in est.get_variable_names()


def test_train_with_a_generator(data):
    x, y = data

    def input_fn():
        def gen():
            while True:
                for i in range(0, len(x) - 31, 32):
                    yield x[i:i + 32], y[i:i + 32].astype(np.int64)
        return gen()

    est = make_estimator()
    est.train(input_fn, steps=40)
    assert est.last_train_stats["global_step"] == 40
    assert est.evaluate(lambda: iter([(x, y)]))["accuracy"] > 0.9


def test_input_that_ends_stops_training(data):
    x, y = data
    est = make_estimator()
    est.train(lambda: kiln.data.Dataset.from_tensor_slices((x, y)).batch(64, drop_remainder=True))  # one epoch
    assert est.last_train_stats["global_step"] == len(x) // 64


@pytest.mark.parametrize("pipeline, steps", [(lambda d: d.batch(16), 3), (lambda d: d.batch(16).repeat(2), 6),
                                             (lambda d: d.repeat(2).batch(16), 5)])
def test_a_short_last_batch_trains_as_in_tensorflow(data, pipeline, steps):
    """40 examples in batches of 16: TensorFlow 2.15's Estimator trains 3 steps for
    .batch(16), 6 for .batch(16).repeat(2) and 5 for .repeat(2).batch(16) (measured with
    tensorflow-estimator), a short batch wherever the data ends."""
    x, y = data[0][:40], data[1][:40]
    est = make_estimator()
    est.train(lambda: pipeline(kiln.data.Dataset.from_tensor_slices((x, y))))
    assert est.last_train_stats["global_step"] == steps
    batches = lambda: iter([(x[:16], y[:16]), (x[16:32], y[16:32]), (x[32:], y[32:])])
    est = make_estimator()
    est.train(batches)  # the same from a Python iterable
    assert est.last_train_stats["global_step"] == 3


def test_a_short_last_batch_trains_in_accelerate_train_mode(data):
    x, y = data[0][:40], data[1][:40]
    est = make_estimator(experimental_config=kiln.ExperimentalConfig(accelerate_train_mode="fast1|step|0.5"))
    est.train(lambda: kiln.data.Dataset.from_tensor_slices((x, y)).batch(16).repeat(2),
              hooks=[kiln.TellMeStepOrLossHook(step="global_step:0", total_step=6)])
    a = est.last_train_stats["accelerate"]
    assert est.last_train_stats["global_step"] == 6 and a["low_steps"] == 3 and a["original_steps"] == 3


def test_a_second_train_after_the_input_ended_starts_it_anew(data, tmp_path):
    """tensorflow/models' loop: train(one epoch), evaluate, train(one epoch) ... TensorFlow
    2.15 trains 3 steps in each call on 40 examples in batches of 16 (global step 3, then 6)."""
    x, y = data[0][:40], data[1][:40]
    one_epoch = lambda: kiln.data.Dataset.from_tensor_slices((x, y)).batch(16)
    est = make_estimator(str(tmp_path / "m"))
    est.train(input_fn=one_epoch)
    assert est.last_train_stats["global_step"] == 3
    est.evaluate(one_epoch)
    est.train(input_fn=one_epoch)
    assert est.last_train_stats["global_step"] == 6 and est.last_train_stats["steps"] == 3
    again = make_estimator(str(tmp_path / "m"))  # a new process resuming: the same
    again.train(input_fn=one_epoch)
    assert again.last_train_stats["global_step"] == 9


def test_resume_from_checkpoint(data, tmp_path):
    x, y = data
    d = str(tmp_path / "m")
    make_estimator(d).train(dataset_input(x, y), max_steps=10)
    again = make_estimator(d)
    again.train(dataset_input(x, y), max_steps=25)
    st = again.last_train_stats
    assert st["resumed"] and st["start_step"] == 10 and st["steps"] == 15 and st["global_step"] == 25
    # An uninterrupted run reaches the same weights.
    whole = make_estimator(str(tmp_path / "whole"))
    whole.train(dataset_input(x, y), max_steps=25)
    np.testing.assert_array_equal(whole.get_variable_value("logits/kernel"), again.get_variable_value("logits/kernel"))
    # steps= counts from the checkpoint's step.
    third = make_estimator(d)
    third.train(dataset_input(x, y), steps=5)
    assert third.last_train_stats["global_step"] == 30
    # evaluate and predict in a fresh Estimator read the latest checkpoint
    assert make_estimator(d).evaluate(lambda: iter([(x, y)]))["global_step"] == 30


def test_compiled_backend_trains(data):
    x, y = data
    est = make_estimator(backend="cpu")
    est.train(dataset_input(x, y), max_steps=30)
    assert est.last_train_stats["final_loss"] < 0.5
    assert est.compile_summary()["graphs"] >= 1


def test_single_tensor_predictions_and_feature_dicts(data):
    x, y = data

    def fn(features, labels, mode):
        logits = kiln.layers.dense(features["x"], 3)
        if mode == kiln.estimator.ModeKeys.PREDICT:
            return kiln.estimator.EstimatorSpec(mode, predictions=kiln.argmax(logits, 1))
        loss = kiln.losses.sparse_softmax_cross_entropy(labels, logits)
        return kiln.estimator.EstimatorSpec(mode, loss=loss, train_op=kiln.train.GradientDescentOptimizer(0.5).minimize(loss))

    est = make_estimator(fn=fn)
    est.train(kiln.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=64, num_epochs=None, shuffle=True),
              max_steps=30)
    out = list(est.predict(kiln.estimator.inputs.numpy_input_fn({"x": x[:5]}, batch_size=5, shuffle=False)))
    assert len(out) == 5 and out[0].dtype == np.int64


def test_dataset_batches_are_seeded_and_resume_exactly():
    x = np.arange(10, dtype=np.float32).reshape(10, 1)
    y = np.arange(10, dtype=np.int32)
    plain = kiln.data.Dataset.from_tensor_slices((x, y)).batch(4)
    assert [list(b[1]) for b in plain.take_batches(10)] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    across = kiln.data.Dataset.from_tensor_slices((x, y)).repeat(2).batch(4)
    assert [list(b[1]) for b in across.take_batches(10)] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 0, 1],
                                                            [2, 3, 4, 5], [6, 7, 8, 9]]
    per_epoch = kiln.data.Dataset.from_tensor_slices((x, y)).batch(4, drop_remainder=True).repeat(2)
    assert [list(b[1]) for b in per_epoch.take_batches(10)] == [[0, 1, 2, 3], [4, 5, 6, 7]] * 2
    shuffled = kiln.data.Dataset.from_tensor_slices((x, y)).shuffle(10, seed=3).repeat().batch(3, drop_remainder=True)
    first = [list(b[1]) for b in shuffled.take_batches(8)]
    assert first == [list(b[1]) for b in shuffled.take_batches(8)]  # seeded
    assert first[:3] != [[0, 1, 2], [3, 4, 5], [6, 7, 8]]  # shuffled
    assert sorted(first[0] + first[1] + first[2]) == sorted(set(first[0] + first[1] + first[2]))  # no repeats in an epoch
    assert [list(b[1]) for b in shuffled.take_batches(5, skip=3)] == first[3:8]  # skip lands where a run was
    other_seed = kiln.data.Dataset.from_tensor_slices((x, y)).shuffle(10, seed=4).repeat().batch(3, drop_remainder=True)
    assert [list(b[1]) for b in other_seed.take_batches(8)] != first
    features, labels = shuffled.take_batches(1)[0]
    np.testing.assert_array_equal(features[:, 0], labels.astype(np.float32))  # rows stay paired


def test_dataset_reads_arrays_in_place():
    x = np.ones((6, 2), dtype=np.float32)
    y = np.zeros(6, dtype=np.int32)
    d = kiln.data.Dataset.from_tensor_slices((x, y))
    assert d._features is x and d._labels is y  # no copy for float32/int32 in C order
    converted = kiln.data.Dataset.from_tensor_slices((x.astype(np.float64), y.astype(np.uint8)))
    assert converted._features.dtype == np.float32 and converted._labels.dtype == np.int32


def test_partial_batches_in_evaluation(data):
    x, y = data
    est = make_estimator()
    est.train(dataset_input(x, y), max_steps=20)
    ev = est.evaluate(lambda: kiln.data.Dataset.from_tensor_slices((x[:130], y[:130])).batch(50))
    assert 0 <= ev["accuracy"] <= 1
    preds = list(est.predict(lambda: kiln.data.Dataset.from_tensor_slices(x[:7]).batch(3)))
    assert len(preds) == 7


def test_accelerate_train_mode_needs_the_hook_and_switches(data):
    x, y = data
    acc = kiln.ExperimentalConfig(accelerate_train_mode="fast1|step|0.5")
    est = make_estimator(experimental_config=acc)
    with pytest.raises(kiln.ConfigError) as missing:
        est.train(dataset_input(x, y), max_steps=10)
    # the advice is the Python call, not the C++ one
    assert "add `kiln.TellMeStepOrLossHook(step='global_step:0', total_step=N)` to train(hooks=[...])" in str(missing.value)
    assert "std::" not in str(missing.value)
    loss_split = make_estimator(experimental_config=kiln.ExperimentalConfig(accelerate_train_mode="fast1|loss|1.05"))
    with pytest.raises(kiln.ConfigError, match=re.escape("`kiln.TellMeStepOrLossHook(loss='loss:0', final_loss=L)`")):
        loss_split.train(dataset_input(x, y), max_steps=10)
    est.train(dataset_input(x, y), max_steps=10,
              hooks=[kiln.TellMeStepOrLossHook(step="global_step:0", total_step=10)])
    a = est.last_train_stats["accelerate"]
    assert a["switch_step"] == 5 and a["low_steps"] == 5 and a["original_steps"] == 5


def test_blobs_are_learnable():
    x, y = blobs(64, seed=5)
    assert x.shape == (64, 8) and set(np.unique(y)) <= {0, 1, 2}


def test_small_cnn_trains_nhwc():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, size=128).astype(np.int32)
    x = rng.normal(0, 0.3, size=(128, 8, 8, 1)).astype(np.float32)
    x[y == 1, 2:6, 2:6, 0] += 1.0  # class 1: a bright square

    def fn(features, labels, mode):
        net = kiln.layers.conv2d(features, 4, 3, padding="same", activation=kiln.nn.relu)
        net = kiln.layers.max_pooling2d(net, 2, 2)
        net = kiln.layers.conv2d(net, 4, [3, 3], strides=(1, 1), padding="valid", activation=kiln.nn.relu)
        logits = kiln.layers.dense(kiln.layers.flatten(net), 2)
        loss = kiln.losses.sparse_softmax_cross_entropy(labels, logits)
        op = kiln.train.AdamOptimizer(0.01).minimize(loss, global_step=kiln.train.get_or_create_global_step())
        return kiln.estimator.EstimatorSpec(mode, loss=loss, train_op=op, eval_metric_ops={
            "accuracy": kiln.metrics.accuracy(labels, kiln.argmax(logits, 1))})

    est = make_estimator(fn=fn)
    est.train(dataset_input(x, y, batch=32), max_steps=40)
    assert est.get_variable_value("conv2d/kernel").shape == (3, 3, 1, 4)
    assert est.get_variable_value("conv2d_1/kernel").shape == (3, 3, 4, 4)
    assert est.evaluate(lambda: iter([(x, y)]))["accuracy"] > 0.9
