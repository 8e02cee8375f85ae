"""tf.data's pipeline names beyond from_tensor_slices: Dataset.from_generator with
shuffle/batch/padded_batch/repeat/take/skip/cache, Dataset.zip, take/skip on arrays,
make_one_shot_iterator/make_initializable_iterator as an Estimator's input_fn returns
them; element for element against real TensorFlow where it is installed."""
import json
import os
import subprocess

import numpy as np
import pytest
from conftest import make_estimator

import kiln

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _tf_python():
    p = os.environ.get("KILN_TF_PYTHON") or os.path.join(ROOT, ".venv-tf", "bin", "python")
    return p if os.path.exists(p) else None


def ragged():
    """Elements (sequence of length 1 + i % 4, label i)."""
    for i in range(10):
        yield np.arange(1 + i % 4, dtype=np.int32) + 10 * i, i


def gen_dataset():
    return kiln.data.Dataset.from_generator(ragged, output_types=(kiln.int32, kiln.int64),
                                            output_shapes=([None], []))


def as_lists(stream):
    return [[np.asarray(c).tolist() for c in e] for e in stream]


# Each pipeline as kiln and TensorFlow spell it (the same text for both).
PIPELINES = {
    "padded": "d.padded_batch(4)",
    "padded_shapes_values": "d.padded_batch(3, padded_shapes=([5], []), padding_values=(-1, np.int64(0)), "
                            "drop_remainder=True)",
    "take_skip_repeat": "d.skip(3).take(4).repeat(2)",
    "repeat_then_padded": "d.repeat(2).padded_batch(6)",
    "padded_then_take": "d.padded_batch(4).take(2)",
    # interleave / flat_map over datasets of uneven lengths (1 to 4 elements each)
    "interleave": "d.interleave(lambda x, y: tf.data.Dataset.from_tensor_slices((x, x * 2)), cycle_length=3, "
                  "block_length=2)",
    "interleave_blocks_of_one": "d.interleave(lambda x, y: tf.data.Dataset.from_tensor_slices((x, x)).repeat(2), "
                                "cycle_length=2)",
    "flat_map": "d.flat_map(lambda x, y: tf.data.Dataset.from_tensor_slices((x, x)).batch(3))",
}


def run_kiln(text):
    return as_lists(eval(text, {"d": gen_dataset(), "tf": kiln, "np": np}))  # the pipelines' text names kiln tf


def test_generator_pipelines_give_tensorflows_elements_by_hand():
    assert run_kiln("d.padded_batch(4)")[0] == [[[0, 0, 0, 0], [10, 11, 0, 0], [20, 21, 22, 0], [30, 31, 32, 33]],
                                                 [0, 1, 2, 3]]
    assert run_kiln("d.padded_batch(4)")[2] == [[[80, 0], [90, 91]], [8, 9]]  # the last, partial batch
    assert run_kiln(PIPELINES["take_skip_repeat"]) == [[[30 + k for k in range(4)], 3], [[40], 4], [[50, 51], 5],
                                                       [[60, 61, 62], 6]] * 2
    first = run_kiln(PIPELINES["padded_shapes_values"])
    assert len(first) == 3 and first[0][0] == [[0, -1, -1, -1, -1], [10, 11, -1, -1, -1], [20, 21, 22, -1, -1]]
    # cycle 3, blocks of 2: [0] [10 11] [20 21 22] [30..33] ...; an ended one is refilled when its turn comes
    assert [e[0] for e in run_kiln(PIPELINES["interleave"])][:10] == [0, 10, 11, 20, 21, 30, 31, 22, 32, 33]
    assert [e[0] for e in run_kiln(PIPELINES["flat_map"])][:3] == [[0], [10, 11], [20, 21, 22]]


@pytest.mark.skipif(_tf_python() is None, reason="no Python with TensorFlow (scripts/install-tf, or KILN_TF_PYTHON)")
def test_generator_pipelines_match_real_tensorflow():
    script = """
import json, sys
import numpy as np
import tensorflow as tf
def ragged():
    for i in range(10):
        yield np.arange(1 + i % 4, dtype=np.int32) + 10 * i, i
out = {}
for name, text in json.loads(sys.argv[1]).items():
    d = tf.data.Dataset.from_generator(ragged, output_types=(tf.int32, tf.int64), output_shapes=([None], []))
    out[name] = [[np.asarray(c).tolist() for c in e] for e in eval(text).as_numpy_iterator()]
print(json.dumps(out))
"""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("PYTHONPATH", None)
    r = subprocess.run([_tf_python(), "-c", script, json.dumps(PIPELINES)], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    want = json.loads(r.stdout.strip().splitlines()[-1])
    for name, text in PIPELINES.items():
        assert run_kiln(text) == want[name], name


def test_generator_shuffle_is_seeded_reshuffles_each_repetition_and_keeps_every_element():
    def order(seed, buffer=6):
        d = kiln.data.Dataset.from_generator(lambda: iter(range(20)), output_types=kiln.int64)
        return [int(e) for e in d.shuffle(buffer, seed=seed).repeat(3)]
    a = order(1)
    assert a == order(1) and a != order(2)
    epochs = [a[0:20], a[20:40], a[40:60]]
    assert all(sorted(e) == list(range(20)) for e in epochs)
    assert epochs[0] != epochs[1] and epochs[1] != epochs[2]
    assert order(1, buffer=1)[:20] == list(range(20))  # a buffer of one shuffles nothing
    assert max(v - i for i, v in enumerate(order(1, buffer=3)[:20])) <= 2  # never earlier than the buffer allows


def test_generator_elements_are_converted_and_checked():
    d = kiln.data.Dataset.from_generator(lambda: iter([([1, 2], 0), ([3, 4, 5], 1)]),
                                         output_types=(kiln.float32, kiln.int32), output_shapes=([2], []))
    with pytest.raises(kiln.DataError, match=r"element 1\[0\] has shape \(3,\); output_shapes says \(2,\)"):
        list(d)
    first = next(iter(d))
    assert first[0].dtype == np.float32 and first[1].dtype == np.int32
    wrong_form = kiln.data.Dataset.from_generator(lambda: iter([np.zeros(2)]), output_types=(kiln.float32, kiln.int32))
    with pytest.raises(kiln.DataError, match=r"element 0 is a ndarray; output_types expects a tuple of 2"):
        list(wrong_form)
    with pytest.raises(TypeError, match="needs output_types"):
        kiln.data.Dataset.from_generator(ragged)
    with pytest.raises(TypeError, match="not callable"):
        kiln.data.Dataset.from_generator(ragged(), output_types=kiln.int32)
    with pytest.raises(kiln.DataError, match=r"elements\[0\] of shapes .* differ; use padded_batch"):
        list(gen_dataset().batch(4))
    sig = kiln.data.Dataset.from_generator(lambda: iter([(np.ones(3), 2)]), output_signature=(
        kiln.TensorSpec([3], kiln.float32), kiln.TensorSpec([], kiln.int64)))
    assert as_lists(sig.batch(1)) == [[[[1.0, 1.0, 1.0]], [2]]]


def test_cache_replays_the_first_pass():
    calls = []

    def counted():
        calls.append(1)
        yield from range(3)
    d = kiln.data.Dataset.from_generator(counted, output_types=kiln.int32).cache().repeat(3)
    assert [int(v) for v in d] == [0, 1, 2] * 3 and len(calls) == 1


def test_take_skip_and_zip_on_arrays():
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    y = np.arange(10, dtype=np.int32)
    d = kiln.data.Dataset.from_tensor_slices((x, y))
    f, lab = d.skip(2).take(5).batch(2).take_batches(10)[0]
    assert f[:, 0].tolist() == [4.0, 6.0] and lab.tolist() == [2, 3]
    batches = d.batch(3).skip(1).take(2).take_batches(10)
    assert [b[1].tolist() for b in batches] == [[3, 4, 5], [6, 7, 8]]
    zipped = kiln.data.Dataset.zip((kiln.data.Dataset.from_tensor_slices(x),
                                    kiln.data.Dataset.from_tensor_slices(y[:7]))).batch(4)
    assert [b[1].tolist() for b in zipped.take_batches(10)] == [[0, 1, 2, 3], [4, 5, 6]]  # ends with the shorter
    with pytest.raises(NotImplementedError, match="Dataset.take after shuffle or repeat"):
        d.shuffle(10).take(3)
    with pytest.raises(ValueError, match=r"Dataset.skip\(10\)\] leaves no examples of the 10"):
        d.skip(10)
    nested = kiln.data.Dataset.zip((d.take(3), kiln.data.Dataset.range(100, 200)))  # an element pipeline
    assert [(e[0][1].tolist(), int(e[1])) for e in nested.elements()] == [(0, 100), (1, 101), (2, 102)]
    counted = kiln.data.Dataset.zip({"n": kiln.data.Dataset.range(3), "x": kiln.data.Dataset.from_tensors(x[0])})
    assert [(int(e["n"]), e["x"].tolist()) for e in counted.elements()] == [(0, [0.0, 1.0])]
    sharded = d.shard(3, 1).batch(10)
    assert sharded.take_batches(1)[0][1].tolist() == [1, 4, 7]
    assert [int(v) for v in kiln.data.Dataset.range(10).shard(4, 3).elements()] == [3, 7]
    with pytest.raises(ValueError, match=r"index 3 must be from 0 to num_shards - 1"):
        d.shard(3, 3)
    with pytest.raises(NotImplementedError, match="shard after shuffle"):
        d.shuffle(10).shard(2, 0)
    again = d.apply(kiln.data.experimental.shuffle_and_repeat(10, count=2, seed=1)).batch(20)
    assert sorted(again.take_batches(1)[0][1].tolist()) == sorted(list(range(10)) * 2)


def test_padded_batch_on_arrays_pads_their_rows():
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    y = np.arange(6, dtype=np.int64)
    d = kiln.data.Dataset.from_tensor_slices((x, y))
    plain = list(d.padded_batch(4).elements())
    assert [b[1].tolist() for b in plain] == [[0, 1, 2, 3], [4, 5]] and plain[0][0].tolist() == x[:4].tolist()
    padded = list(d.padded_batch(4, padded_shapes=([3], []), padding_values=(-1.0, np.int64(0)),
                                 drop_remainder=True).elements())
    assert len(padded) == 1 and padded[0][0].shape == (4, 3)
    assert padded[0][0][:, 2].tolist() == [-1.0] * 4 and padded[0][0][:, :2].tolist() == x[:4].tolist()
    with pytest.raises(NotImplementedError, match="padded_batch after batch"):
        d.batch(2).padded_batch(2)


def test_estimator_trains_on_a_generator_and_on_iterators(data):
    x, y = data

    def examples():
        for i in range(len(x)):
            yield x[i], y[i]

    def gen_input():
        d = kiln.data.Dataset.from_generator(examples, (kiln.float32, kiln.int32), ([8], []))
        return d.shuffle(128, seed=0).repeat().batch(32, drop_remainder=True).prefetch(kiln.data.experimental.AUTOTUNE)

    est = make_estimator()
    est.train(gen_input, max_steps=60)
    assert est.last_train_stats["global_step"] == 60 and est.last_train_stats["final_loss"] < 0.3

    def one_shot():
        it = kiln.data.Dataset.from_tensor_slices((x, y)).batch(128).make_one_shot_iterator()
        features, labels = it.get_next()
        return features, labels
    assert est.evaluate(one_shot)["accuracy"] > 0.95

    def initializable():
        it = kiln.data.make_initializable_iterator(gen_input())
        assert it.initializer is not None
        return it.get_next()
    est.train(initializable, steps=5)
    assert est.last_train_stats["global_step"] == 65
    preds = list(est.predict(lambda: kiln.compat.v1.data.make_one_shot_iterator(
        kiln.data.Dataset.from_tensor_slices(x[:5]).batch(2)).get_next()))
    assert len(preds) == 5


def test_iterator_values_cannot_be_computed_with_in_input_fn(data):
    x, y = data
    est = make_estimator()

    def next_of(ds):
        return ds.batch(8).make_one_shot_iterator().get_next()

    def computes():
        features, labels = next_of(kiln.data.Dataset.from_tensor_slices((x, y)))
        return kiln.convert_to_tensor(features) * 2.0, labels

    def shape():
        features, labels = next_of(kiln.data.Dataset.from_tensor_slices((x, y)))
        return features.shape

    with pytest.raises(NotImplementedError, match="computing with iterator.get_next\\(\\)'s features inside input_fn"):
        est.train(computes, steps=1)
    with pytest.raises(NotImplementedError, match="features inside input_fn"):
        est.train(shape, steps=1)
    with pytest.raises(ValueError, match="a one-shot iterator has no initializer"):
        kiln.data.Dataset.from_tensor_slices((x, y)).make_one_shot_iterator().initializer
    with pytest.raises(TypeError, match="different iterators"):
        est.train(lambda: (next_of(kiln.data.Dataset.from_tensor_slices((x, y)))[0],
                           next_of(kiln.data.Dataset.from_tensor_slices(y))), steps=1)
    with pytest.raises(NotImplementedError, match="a Dataset without batch"):
        est.train(lambda: gen_dataset().make_one_shot_iterator().get_next(), steps=1)


def test_get_next_values_repacked_by_input_fn_reach_model_fn_in_that_form(data):
    """tf-estimator-tutorials' input_fn: images, labels = iterator.get_next(); return
    {'images': images}, labels. model_fn gets the dict, from a generator and from arrays."""
    x, y = data
    seen = []

    def model_fn(features, labels, mode):
        seen.append((sorted(features) if isinstance(features, dict) else type(features).__name__,
                     sorted(labels) if isinstance(labels, dict) else type(labels).__name__))
        images = features["images"] if isinstance(features, dict) else features
        label = labels["y"] if isinstance(labels, dict) else labels
        logits = kiln.layers.dense(images, 3)
        loss = kiln.losses.sparse_softmax_cross_entropy(label, logits)
        train_op = kiln.train.GradientDescentOptimizer(0.5).minimize(loss, global_step=kiln.train.get_global_step())
        acc = kiln.metrics.accuracy(label, kiln.argmax(logits, axis=1))
        return kiln.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops={"accuracy": acc})

    def generator_input():
        d = kiln.data.Dataset.from_generator(lambda: iter(zip(x, y)), (kiln.float32, kiln.int32), ([8], []))
        images, labels = d.repeat().batch(32).make_one_shot_iterator().get_next()
        return {"images": images}, labels

    def arrays_input():
        images, labels = kiln.data.Dataset.from_tensor_slices((x, y)).batch(64).make_one_shot_iterator().get_next()
        return {"images": images}, {"y": labels}

    est = kiln.estimator.Estimator(model_fn, config=kiln.estimator.RunConfig(random_seed=1))
    est.train(generator_input, max_steps=40)
    assert est.evaluate(arrays_input)["accuracy"] > 0.9
    assert seen == [(["images"], "Tensor"), (["images"], ["y"])]

