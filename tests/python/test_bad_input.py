"""Bad input from Python is a clear exception, never a crash."""
import numpy as np
import pytest
from conftest import dataset_input, make_estimator

import kiln


def test_dataset_rejects_non_arrays_and_bad_dtypes(data):
    x, y = data
    with pytest.raises(TypeError, match="features is a list, expected a numpy array"):
        kiln.data.Dataset.from_tensor_slices((x.tolist(), y))
    with pytest.raises(TypeError, match="dtype complex64"):
        kiln.data.Dataset.from_tensor_slices((x.astype(np.complex64), y))
    with pytest.raises(TypeError, match="dtype <U1"):
        kiln.data.Dataset.from_tensor_slices((x, np.array(["a"] * len(y))))
    with pytest.raises(ValueError, match="512 examples .* labels 100"):
        kiln.data.Dataset.from_tensor_slices((x, y[:100]))
    with pytest.raises(ValueError, match="batch_size 1000 is larger than the 512 examples"):
        kiln.data.Dataset.from_tensor_slices((x, y)).batch(1000, drop_remainder=True)
    with pytest.raises(ValueError, match="batch_size"):
        kiln.data.Dataset.from_tensor_slices((x, y)).batch(0)
    with pytest.raises(NotImplementedError, match="Dataset.map after batch"):
        kiln.data.Dataset.from_tensor_slices((x, y)).batch(8).map(lambda a, b: (a, b))


def test_generator_that_raises_gives_its_exception(data):
    x, y = data

    def input_fn():
        yield x[:32], y[:32]
        yield x[32:64], y[32:64]
        raise OSError("disk went away")

    with pytest.raises(OSError, match="disk went away") as e:
        make_estimator().train(input_fn, max_steps=10)
    assert any("batch 2" in n for n in getattr(e.value, "__notes__", []))


@pytest.mark.parametrize("batch,pattern,kind", [
    (lambda x, y: (x[:32].tolist(), y[:32]), "features is a list", TypeError),
    (lambda x, y: (x[:32].astype(np.complex64), y[:32]), "complex64", TypeError),
    (lambda x, y: (x[:32], y[:16]), "32 examples .* labels 16", kiln.DataError),
    (lambda x, y: (x[:32, :4], y[:32]), "same dtypes and per-example shapes", kiln.DataError),
    (lambda x, y: (x[:32], y[:32], y[:32]), "tuple of 3", TypeError),
    (lambda x, y: 42, "is a int, expected a numpy array", TypeError),
])
def test_generator_bad_second_batch(data, batch, pattern, kind):
    x, y = data

    def input_fn():
        yield x[:32], y[:32]
        yield batch(x, y)

    with pytest.raises(kind, match=pattern):
        make_estimator().train(input_fn, max_steps=10)


def test_input_fn_returning_nonsense(data):
    with pytest.raises(TypeError, match="input_fn.*returned a int"):
        make_estimator().train(lambda: 5, max_steps=3)
    with pytest.raises(TypeError, match="not callable"):
        make_estimator().train([1, 2], max_steps=3)


def test_empty_generator(data):
    with pytest.raises(kiln.DataError, match="yields no batches"):
        make_estimator().train(lambda: iter([]), max_steps=3)


def test_train_arguments(data):
    x, y = data
    est = make_estimator()
    with pytest.raises(ValueError, match="steps or max_steps"):
        est.train(dataset_input(x, y), steps=3, max_steps=3)
    with pytest.raises(ValueError, match=r"\[max_steps\]"):
        est.train(dataset_input(x, y), max_steps=0)
    with pytest.raises(TypeError, match="SessionRunHook"):
        est.train(dataset_input(x, y), max_steps=3, hooks=[object()])


def test_model_fn_mistakes(data):
    x, y = data
    with pytest.raises(TypeError, match="must return a kiln.estimator.EstimatorSpec"):
        make_estimator(fn=lambda features, labels, mode: None).train(dataset_input(x, y), max_steps=2)

    def float_labels(features, labels, mode):
        logits = kiln.layers.dense(features, 3)
        return kiln.estimator.EstimatorSpec(mode, loss=kiln.losses.sparse_softmax_cross_entropy(
            kiln.cast(labels, kiln.float32), logits), train_op=None)

    with pytest.raises(TypeError, match="integer class ids"):
        make_estimator(fn=float_labels).train(dataset_input(x, y), max_steps=2)

    def shape_error(features, labels, mode):
        return kiln.estimator.EstimatorSpec(mode, loss=kiln.reduce_mean(kiln.matmul(features, features)),
                                            train_op=None)

    with pytest.raises(kiln.GraphError, match="matmul"):
        make_estimator(fn=shape_error).train(dataset_input(x, y), max_steps=2)


def test_tensors_outside_model_fn(data):
    x, y = data
    kept = []

    def fn(features, labels, mode):
        kept.append(features)
        logits = kiln.layers.dense(features, 3)
        loss = kiln.losses.sparse_softmax_cross_entropy(labels, logits)
        return kiln.estimator.EstimatorSpec(mode, loss=loss, train_op=kiln.train.GradientDescentOptimizer(0.1).minimize(loss))

    make_estimator(fn=fn).train(dataset_input(x, y), max_steps=2)
    with pytest.raises(ValueError, match="model_fn call that has returned"):
        kiln.nn.relu(kept[0])
    # outside model_fn an op goes into the default tf.Graph, as in TensorFlow (a Session runs it)
    assert kiln.zeros([2, 2]).graph is kiln.get_default_graph()._scope


def test_nan_loss_is_reported_with_its_step(data):
    x, y = data

    def fn(features, labels, mode):
        logits = kiln.layers.dense(features, 3)
        loss = kiln.losses.sparse_softmax_cross_entropy(labels, logits) * 1e30 * 1e30
        return kiln.estimator.EstimatorSpec(mode, loss=loss, train_op=kiln.train.GradientDescentOptimizer(0.1).minimize(loss))

    with pytest.raises(kiln.NanLossError, match="step"):
        make_estimator(fn=fn).train(dataset_input(x, y), max_steps=3)


def test_corrupt_checkpoint_is_a_checkpoint_error(data, tmp_path):
    x, y = data
    d = tmp_path / "m"
    make_estimator(str(d)).train(dataset_input(x, y), max_steps=2)
    ckpt = next(p for p in d.iterdir() if p.name.endswith(".data-00000-of-00001"))
    ckpt.write_bytes(ckpt.read_bytes()[:50])
    with pytest.raises(kiln.CheckpointError, match="checkpoint"):
        make_estimator(str(d)).train(dataset_input(x, y), max_steps=4)


def test_evaluate_without_training(data):
    x, y = data
    with pytest.raises(kiln.CheckpointError, match="train first"):
        make_estimator().evaluate(lambda: iter([(x, y)]))


def test_unknown_backend_is_refused_when_the_estimator_is_made():
    with pytest.raises(kiln.ConfigError) as e:
        kiln.Estimator(lambda features, labels, mode: None, backend="gpu")
    assert "[backend] unknown backend 'gpu'; valid: cpu, interp" in str(e.value)


def test_dense_with_no_units_names_the_layer_and_what_is_valid(data):
    x, y = data

    def fn(features, labels, mode):
        logits = kiln.layers.dense(features, 0)
        return kiln.estimator.EstimatorSpec(mode, loss=kiln.losses.sparse_softmax_cross_entropy(labels, logits))
    with pytest.raises(ValueError, match=r"\[dense\] units=0 for layer 'dense': expected a positive integer"):
        make_estimator(fn=fn).train(dataset_input(x, y), max_steps=1)
    with pytest.raises(ValueError, match=r"\[dense\] units='ten' for layer 'out'"):
        kiln.layers.Dense("ten", name="out")
    assert kiln.layers.Dense(10.0).units == 10  # TensorFlow takes int(units)


@pytest.mark.parametrize("fn, message", [
    (lambda x: None, r"\[Dataset.map\] the function returned None; .* is a `return` missing\?"),
    (lambda x: (x, None), r"\[Dataset.map\] the function returned None inside 'tuple'"),
])
def test_a_map_function_returning_none_says_so(fn, message):
    with pytest.raises(TypeError, match=message):
        kiln.data.Dataset.from_tensor_slices(np.zeros((4, 2), np.float32)).map(fn)
