"""Wrong results with no error, hangs and crashes found by a hostile user (issue: the third
reliability round), each fixed with a test that fails without the fix."""
import threading

import numpy as np
import pytest
from conftest import CLASSES, FEATURES, dataset_input, make_estimator, model_fn

import kiln


def eval_input(x, y, batch=64):
    return lambda: kiln.data.Dataset.from_tensor_slices((x, y)).batch(batch)


def test_evaluate_and_predict_change_no_variable_and_no_step(data):
    """conftest's model_fn calls minimize() in EVAL mode too, as examples/own_data.py and
    many TensorFlow scripts do (TensorFlow ignores train_op outside TRAIN)."""
    x, y = data
    est = make_estimator()
    est.train(dataset_input(x, y), max_steps=5)
    before = {k: v.copy() for k, v in est._core.variables().items()}
    a = est.evaluate(eval_input(x, y))
    b = est.evaluate(eval_input(x, y))
    assert a == b
    assert a["global_step"] == 5 and est._core.global_step == 5
    first = [p["classes"] for p in est.predict(eval_input(x, None))]
    second = [p["classes"] for p in est.predict(eval_input(x, None))]
    assert first == second
    after = est._core.variables()
    assert sorted(after) == sorted(before)
    for k in before:
        np.testing.assert_array_equal(after[k], before[k], err_msg=k)
    est.train(dataset_input(x, y), max_steps=10)
    assert est.last_train_stats["start_step"] == 5 and est.last_train_stats["steps"] == 5


def kernel_of(shape, initializer, seed=0):
    """The initial value of a variable made by model_fn."""
    def fn(features, labels, mode):
        k = kiln.get_variable("k", shape, initializer=initializer)
        w = kiln.get_variable("w", [FEATURES, CLASSES])
        loss = kiln.reduce_mean(kiln.matmul(features, w)) + 0.0 * kiln.reduce_sum(k)
        return kiln.estimator.EstimatorSpec(mode, loss=loss, train_op=kiln.train.GradientDescentOptimizer(1e-9).minimize(loss))

    x, y = np.zeros((4, FEATURES), np.float32), np.zeros(4, np.int32)
    est = make_estimator(fn=fn, random_seed=seed)
    est.train(lambda: iter([(x, y)]), max_steps=1)
    return est.get_variable_value("k")


def tf_fans(shape):
    """TensorFlow's _compute_fans."""
    if len(shape) == 2:
        return shape[0], shape[1]
    rf = int(np.prod(shape[:-2]))
    return shape[-2] * rf, shape[-1] * rf


@pytest.mark.parametrize("shape", [[5, 5, 32, 64], [11, 11, 64, 96], [5, 5, 1, 32], [784, 128], [3, 16, 8]])
def test_initializers_follow_tensorflows_fans_for_every_kernel(shape):
    fan_in, fan_out = tf_fans(shape)
    g = kernel_of(shape, kiln.initializers.glorot_uniform())
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    assert np.abs(g).max() <= limit and np.abs(g).max() >= 0.97 * limit
    h = kernel_of(shape, kiln.initializers.he_uniform())
    assert np.abs(h).max() <= np.sqrt(6.0 / fan_in) and np.abs(h).max() >= 0.97 * np.sqrt(6.0 / fan_in)
    n = kernel_of(shape, kiln.initializers.he_normal())  # truncated, as TensorFlow's
    assert abs(n.std() / np.sqrt(2.0 / fan_in) - 1) < 0.1
    assert np.abs(n).max() <= 2 * np.sqrt(2.0 / fan_in) / 0.87962566103423978 + 1e-6
    v = kernel_of(shape, kiln.initializers.variance_scaling(1.0, "fan_out", "uniform"))
    assert np.abs(v).max() <= np.sqrt(3.0 / fan_out)


def test_a_conv_layer_kernel_is_initialised_at_tensorflows_scale():
    seen = {}

    def fn(features, labels, mode):
        img = kiln.reshape(kiln.concat([features] * 4, 1), [-1, 4, 8, 1])
        out = kiln.layers.conv2d(img, 32, 5, padding="same")
        loss = kiln.reduce_mean(out)
        return kiln.estimator.EstimatorSpec(mode, loss=loss, train_op=kiln.train.GradientDescentOptimizer(1e-9).minimize(loss))

    x, y = np.zeros((4, FEATURES), np.float32), np.zeros(4, np.int32)
    est = make_estimator(fn=fn)
    est.train(lambda: iter([(x, y)]), max_steps=1)
    k = est.get_variable_value("conv2d/kernel")
    assert k.shape == (5, 5, 1, 32)
    limit = np.sqrt(6.0 / (25 * 1 + 25 * 32))  # TensorFlow: fan_in 25, fan_out 800
    seen["max"] = np.abs(k).max()
    assert 0.95 * limit <= seen["max"] <= limit, seen


def test_loss_0_is_the_tensor_model_fn_named_loss(data):
    x, y = data

    def fn(features, labels, mode):
        logits = kiln.layers.dense(features, CLASSES)
        loss = kiln.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits, scope="loss")
        total_loss = loss + 0.25
        return kiln.estimator.EstimatorSpec(mode, loss=total_loss,
                                            train_op=kiln.train.GradientDescentOptimizer(0.1).minimize(total_loss))

    seen = []

    class Fetch(kiln.train.SessionRunHook):
        def before_run(self, run_context):
            return kiln.train.SessionRunArgs("loss:0")

        def after_run(self, run_context, run_values):
            seen.append(float(run_values.results))

    est = make_estimator(fn=fn)
    est.train(dataset_input(x, y), max_steps=3, hooks=[Fetch()])
    assert abs(est.last_train_stats["final_loss"] - seen[-1] - 0.25) < 1e-5


@pytest.mark.parametrize("bad", [100, -1, CLASSES])
def test_out_of_range_labels_are_a_data_error_naming_the_value(data, bad):
    x, y = data
    y = y.copy()
    y[70] = bad  # batch 2 of 32, example 6
    with pytest.raises(kiln.DataError, match=r"\[labels\] the batch of global step 2, example 6: index %d is outside 0..2"
                                             % bad):
        make_estimator().train(lambda: kiln.data.Dataset.from_tensor_slices((x, y)).batch(32), max_steps=5)

    def generator():
        for i in range(0, 512, 32):
            yield x[i:i + 32], y[i:i + 32]

    with pytest.raises(kiln.DataError, match="index %d is outside" % bad):
        make_estimator().train(generator, max_steps=5)


def test_a_metric_is_a_real_pair_of_tensors_and_reads_running_totals_in_training(data, tmp_path):
    """tensorflow/models' MNIST script: kiln.identity(accuracy[1], name='train_accuracy')."""
    x, y = data

    def fn(features, labels, mode):
        logits = kiln.layers.dense(features, CLASSES)
        classes = kiln.argmax(logits, axis=1)
        accuracy = kiln.metrics.accuracy(labels=labels, predictions=classes)
        assert len(accuracy) == 2 and all(isinstance(t, kiln.Tensor) for t in accuracy)
        kiln.identity(accuracy[1], name="train_accuracy")
        kiln.identity(kiln.metrics.accuracy(labels, classes)[1] * 0 + kiln.reduce_mean(
            kiln.cast(kiln.equal(kiln.cast(labels, kiln.int64), classes), kiln.float32)), name="batch_accuracy")
        loss = kiln.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
        return kiln.estimator.EstimatorSpec(mode, loss=loss, train_op=kiln.train.GradientDescentOptimizer(0.1).minimize(loss),
                                            eval_metric_ops={"accuracy": accuracy, "pair": (accuracy[0], accuracy[1])})

    seen = []

    class Fetch(kiln.train.SessionRunHook):
        def before_run(self, run_context):
            return kiln.train.SessionRunArgs(["train_accuracy:0", "batch_accuracy:0"])

        def after_run(self, run_context, run_values):
            seen.append([float(v) for v in run_values.results])

    est = make_estimator(str(tmp_path / "m"), fn=fn)
    est.train(dataset_input(x, y), max_steps=6, hooks=[Fetch()])
    running = np.cumsum([b for _, b in seen]) / np.arange(1, 7)
    np.testing.assert_allclose([a for a, _ in seen], running, rtol=1e-5)
    saved = kiln._core.read_checkpoint_variables(est.latest_checkpoint())[1]
    assert "dense/kernel" in saved and "accuracy/total" not in saved, "metric totals are not checkpointed"
    r = est.evaluate(eval_input(x, y))
    assert r["accuracy"] == r["pair"]
    # A second train() starts its totals at zero again, as a new TensorFlow session does.
    seen.clear()
    est.train(dataset_input(x, y), max_steps=8, hooks=[Fetch()])
    assert abs(seen[0][0] - seen[0][1]) < 1e-6


@pytest.mark.parametrize("thing", [object(), {"a": 1}, "text", [object()]])
def test_converting_a_non_tensor_fails_at_once(thing):
    def body(features, labels, mode):
        with pytest.raises((TypeError, NotImplementedError)):
            kiln.identity(thing)
        with pytest.raises(TypeError, match="no numpy array"):
            np.asarray(features)
        with pytest.raises(NotImplementedError, match="kiln.stack"):
            kiln.convert_to_tensor([features, features])
        return model_fn(features, labels, mode, {})

    x, y = np.zeros((4, FEATURES), np.float32), np.zeros(4, np.int32)
    make_estimator(fn=body).train(lambda: iter([(x, y)]), max_steps=1)


@pytest.mark.parametrize("make", [
    lambda f: kiln.get_variable("w", [2**62 + 1, 4]),
    lambda f: kiln.get_variable("w", [2**63 - 1]),
    lambda f: kiln.layers.dense(f, 2**62),
])
def test_sizes_that_overflow_are_errors_not_crashes(make):
    caught = []

    def body(features, labels, mode):
        try:
            make(features)
        except (ValueError, OverflowError, TypeError) as e:  # kiln.GraphError is a ValueError
            caught.append(e)
        return model_fn(features, labels, mode, {})

    x, y = np.zeros((4, FEATURES), np.float32), np.zeros(4, np.int32)
    make_estimator(fn=body).train(lambda: iter([(x, y)]), max_steps=1)
    assert caught and ("elements" in str(caught[0]) or "memory" in str(caught[0]) or "int" in str(caught[0])), caught


def test_thread_counts_have_a_range():
    with pytest.raises(kiln.ConfigError, match=r"\[num_threads\] value '100000' is invalid; valid: an integer from 0 to 1024"):
        make_estimator(num_threads=100000)


def test_two_estimators_of_one_process_never_share_a_model_dir(data, tmp_path):
    x, y = data
    d = str(tmp_path / "model")
    a, b = make_estimator(d), make_estimator(d)
    a.train(dataset_input(x, y), max_steps=5)
    b.train(dataset_input(x, y), max_steps=10)
    assert b.last_train_stats["start_step"] == 5
    a.train(dataset_input(x, y), max_steps=15)
    assert a.last_train_stats["start_step"] == 10
    errors = []

    class Meanwhile(kiln.train.SessionRunHook):
        def after_run(self, run_context, run_values):
            if errors:
                return
            t = threading.Thread(target=lambda: self.other())
            t.start()
            t.join()

        def other(self):
            try:
                b.train(dataset_input(x, y), max_steps=100)
                errors.append("trained")
            except kiln.CheckpointError as e:
                errors.append(str(e))

    a.train(dataset_input(x, y), max_steps=17, hooks=[Meanwhile()])
    assert "in use by another training run in this process" in errors[0], errors


def test_size_settings_have_ranges_and_empty_batches_are_data_errors(data):
    x, y = data
    with pytest.raises(ValueError, match=r"buffer_size 1099511627776 must be an integer from 1 to 1024"):
        kiln.data.Dataset.from_tensor_slices((x, y)).batch(8).prefetch(2**40)
    with pytest.raises(ValueError, match="batch_size"):
        kiln.data.Dataset.from_tensor_slices((x, y)).batch(2**40)
    with pytest.raises(kiln.DataError, match="batch 0 holds no examples"):
        make_estimator().train(lambda: iter([(x[:0], y[:0])]), max_steps=3)
