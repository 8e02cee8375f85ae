"""Features as a dict of several arrays, as TF 1.x input_fns give them ({'image': ...,
'ids': ...}): every kind of input (from_tensor_slices, a Python iterable, from_generator,
map, an iterator's get_next) feeds model_fn the same dict, each entry its own placeholder
("features/<key>" after the first), in training, evaluation and prediction, on the
interpreter and compiled. Split features train exactly as the same features in one array.
A tuple of three arrays mapped to (features, labels) gives the same batches too."""
import numpy as np
import pytest
from conftest import CLASSES, blobs

import kiln

IDS = 5


def problem(n=256):
    x, y = blobs(n)
    ids = (np.arange(n) % IDS).astype(np.int32)
    return x, ids, y


def split_model_fn(features, labels, mode, params):
    """The conftest model on the features as one array, rebuilt from a dict of parts:
    'a' (columns 0-2), 'b' (3-7) and, when present, 'ids' (a learned row added to the logits)."""
    seen = params["seen"]
    if isinstance(features, dict):
        seen.append({k: (v.shape.as_list(), v.dtype.name) for k, v in features.items()})
        x = kiln.concat([features["a"], features["b"]], axis=1)
    else:
        x = features
    h = kiln.layers.dense(x, 16, activation=kiln.nn.relu)
    logits = kiln.layers.dense(h, CLASSES, name="logits")
    if isinstance(features, dict) and "ids" in features:
        bias = kiln.get_variable("id_bias", [IDS, CLASSES], initializer=kiln.zeros_initializer())
        logits = logits + kiln.gather(bias, features["ids"])
    classes = kiln.argmax(logits, axis=1)
    if mode == kiln.estimator.ModeKeys.PREDICT:
        return kiln.estimator.EstimatorSpec(mode, predictions={"classes": classes})
    loss = kiln.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    train_op = kiln.train.MomentumOptimizer(0.1, 0.9).minimize(loss, global_step=kiln.train.get_or_create_global_step())
    return kiln.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                        eval_metric_ops={"accuracy": kiln.metrics.accuracy(labels, classes)})


class Losses(kiln.train.SessionRunHook):
    def __init__(self):
        self.losses = []

    def before_run(self, run_context):
        return kiln.train.SessionRunArgs("loss:0")

    def after_run(self, run_context, run_values):
        self.losses.append(float(run_values.results))


def estimator(backend="interp"):
    seen = []
    est = kiln.Estimator(split_model_fn, config=kiln.RunConfig(random_seed=0, log_step_count_steps=0),
                         params={"seen": seen}, backend=backend)
    return est, seen


def train_losses(input_fn, backend="interp", steps=20):
    est, seen = estimator(backend)
    hook = Losses()
    est.train(input_fn, max_steps=steps, hooks=[hook])
    return est, seen, hook.losses


def parts(x, ids=None):
    d = {"a": x[:, :3], "b": x[:, 3:]}
    if ids is not None:
        d["ids"] = ids
    return d


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_a_dict_of_features_trains_as_the_same_features_in_one_array(backend):
    x, _, y = problem()

    def make(features):
        return lambda: kiln.data.Dataset.from_tensor_slices((features, y)).shuffle(len(x), seed=4).repeat().batch(32)
    _, _, whole = train_losses(make(x), backend)
    est, seen, split = train_losses(make(parts(x)), backend)
    assert seen[0] == {"a": ([32, 3], "float32"), "b": ([32, 5], "float32")}
    np.testing.assert_allclose(split, whole, rtol=1e-6)
    assert split[-1] < split[0] / 2
    result = est.evaluate(lambda: kiln.data.Dataset.from_tensor_slices((parts(x), y)).batch(100))
    assert result["accuracy"] > 0.9
    predicted = list(est.predict(lambda: kiln.data.Dataset.from_tensor_slices(parts(x[:7])).batch(7)))
    assert len(predicted) == 7 and seen[-1] == {"a": ([7, 3], "float32"), "b": ([7, 5], "float32")}


def test_features_of_other_dtypes_feed_their_own_placeholders():
    x, ids, y = problem()
    est, seen, losses = train_losses(
        lambda: kiln.data.Dataset.from_tensor_slices((parts(x, ids), y)).shuffle(len(x), seed=1).repeat().batch(32),
        "cpu", steps=60)
    assert seen[0] == {"a": ([32, 3], "float32"), "b": ([32, 5], "float32"), "ids": ([32], "int32")}
    assert losses[-1] < losses[0] / 2
    bias = est.get_variable_value("id_bias")
    assert bias.shape == (IDS, CLASSES) and np.abs(bias).sum() > 0  # the ids reached the graph


def test_every_kind_of_input_gives_the_same_batches():
    x, ids, y = problem(128)
    features = parts(x, ids)

    def batches():
        for i in range(0, 128, 32):
            yield {k: v[i:i + 32] for k, v in features.items()}, y[i:i + 32]

    def generated():
        for i in range(128):
            yield {k: v[i] for k, v in features.items()}, y[i]

    def slices():
        return kiln.data.Dataset.from_tensor_slices((features, y))

    def via_iterator():
        return slices().batch(32).make_one_shot_iterator().get_next()

    types = ({"a": kiln.float32, "b": kiln.float32, "ids": kiln.int32}, kiln.int32)
    shapes = ({"a": [3], "b": [5], "ids": []}, [])
    inputs = {
        "slices": lambda: slices().batch(32),
        "iterable": batches,
        "from_generator": lambda: kiln.data.Dataset.from_generator(generated, types, shapes).batch(32),
        "map": lambda: kiln.data.Dataset.from_tensor_slices(({"x": x, "ids": ids}, y)).map(
            lambda f, label: ({"a": f["x"][:3], "b": f["x"][3:], "ids": f["ids"]}, label)).batch(32),
        "iterator": via_iterator,
        "three_components": lambda: kiln.data.Dataset.from_tensor_slices((x, ids, y)).map(
            lambda f, i, label: ({"a": f[:3], "b": f[3:], "ids": i}, label)).batch(32),
    }
    reference = None
    for name, input_fn in inputs.items():
        _, seen, losses = train_losses(input_fn, steps=4)
        assert seen[0]["ids"] == ([32], "int32"), name
        if reference is None:
            reference = losses
        np.testing.assert_allclose(losses, reference, rtol=1e-6, err_msg=name)


def test_row_selections_keep_every_feature_aligned():
    x, ids, y = problem(64)
    d = kiln.data.Dataset.from_tensor_slices((parts(x, ids), y))
    picked = [
        d.shuffle(64, seed=3).batch(8),
        d.take(20).batch(5),
        d.skip(10).batch(6),
        d.shard(3, 1).batch(4),
        d.filter(lambda f, label: kiln.equal(f["ids"], 2)).batch(3),
    ]
    for ds in picked:
        for features, labels in ds.take_batches(4):
            assert list(features) == ["a", "b", "ids"]
            rows = [int(np.flatnonzero((x == np.concatenate([a, b])).all(axis=1))[0])
                    for a, b in zip(features["a"], features["b"])]
            np.testing.assert_array_equal(features["ids"], ids[rows])
            np.testing.assert_array_equal(labels, y[rows])


def test_an_id_out_of_range_names_its_feature():
    x, ids, y = problem(64)
    bad = ids.copy()
    bad[37] = IDS + 3
    est, _ = estimator("cpu")
    with pytest.raises(kiln.DataError, match=r"features/ids.*%d" % (IDS + 3)):
        est.train(lambda: kiln.data.Dataset.from_tensor_slices((parts(x, bad), y)).batch(64), max_steps=1)


def test_bad_feature_dicts_are_clear_errors():
    x, ids, y = problem(64)
    with pytest.raises(ValueError, match=r"features\['ids'\] has 10 rows .* first feature 64"):
        kiln.data.Dataset.from_tensor_slices(({"a": x, "ids": ids[:10]}, y))
    with pytest.raises(TypeError, match="key 3; a feature's key must be a non-empty string"):
        kiln.data.Dataset.from_tensor_slices(({"a": x, 3: ids}, y))
    with pytest.raises(ValueError, match="empty dict"):
        kiln.data.Dataset.from_tensor_slices(({}, y))
    with pytest.raises(NotImplementedError, match="labels as a dict of 2 entries"):
        kiln.data.Dataset.from_tensor_slices((x, {"y": y, "z": y}))
    with pytest.raises(ValueError, match=r"component 2 has 5 rows .* component 0 has 64"):
        kiln.data.Dataset.from_tensor_slices((x, ids, y[:5]))

    def changing():
        yield parts(x[:32], ids[:32]), y[:32]
        yield parts(x[32:]), y[32:]  # the ids are gone
    est, _ = estimator()
    with pytest.raises(kiln.DataError, match=r"batch 1 has further features \{'b'.*\}; the first batch had "
                                             r"\{'b': float32 \(5,\), 'ids': int32 \(\)\}"):
        est.train(changing, max_steps=5)

    def ragged():
        yield {"a": x[:32, :3], "b": x[:31, 3:]}, y[:32]
    with pytest.raises(kiln.DataError, match=r"features\['b'\] has 31 rows"):
        estimator()[0].train(ragged, max_steps=1)


def test_compile_summary_counts_a_tail_run_on_the_interpreter():
    """compile_summary()['interpreted']: the last, smaller batch of an evaluation of a small
    model runs on the interpreter instead of compiling a graph for it."""
    x, ids, y = problem(100)
    est, _ = estimator("cpu")
    est.train(lambda: kiln.data.Dataset.from_tensor_slices((parts(x, ids), y)).repeat().batch(32), max_steps=2)
    before = est._core.compile_summary()
    est.evaluate(lambda: kiln.data.Dataset.from_tensor_slices((parts(x, ids), y)).batch(32))  # 32, 32, 32, 4
    after = est._core.compile_summary()
    assert after["interpreted"] == before["interpreted"] + 1
    assert after["graphs"] == before["graphs"] + 1
