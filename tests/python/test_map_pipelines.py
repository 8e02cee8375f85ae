"""Input pipelines as TF 1.x scripts write them: TFRecordDataset -> map(parse_single_example,
decode_raw, ...) -> filter -> batch, held to what real TensorFlow 2.15 computed for the same
files (tests/formats/fixtures/make_fixtures.py wrote both); tf.train.Example; map and filter
on from_tensor_slices and from_generator; an Estimator trained from TFRecord files; and the
errors of records that do not fit their spec."""
import json
import os

import numpy as np
import pytest

import kiln
import kiln as tf

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "formats", "fixtures")
with open(os.path.join(FIXTURES, "expected.json")) as _f:
    EXPECTED = json.load(_f)
EXAMPLES = [bytes.fromhex(h) for h in EXPECTED["parsing_examples"]]
SPEC = {
    "image/encoded": tf.FixedLenFeature([], tf.string),
    "image/class/label": tf.FixedLenFeature([], tf.int64),
    "weight": tf.FixedLenFeature([1], tf.float32, default_value=[0.5]),
    "tokens": tf.VarLenFeature(tf.int64),
    "points": tf.FixedLenSequenceFeature([2], tf.float32, allow_missing=True),
}


def parse(record):
    """make_fixtures.py's parse function, with kiln for tf."""
    f = tf.parse_single_example(record, SPEC)
    image = tf.reshape(tf.decode_raw(f["image/encoded"], tf.uint8), [2, 2, 3])
    image = tf.cast(image, tf.float32) / 255.0 - 0.5
    tokens = tf.sparse_tensor_to_dense(f["tokens"], default_value=-1)
    return {"image": image, "points": tf.reduce_sum(f["points"], axis=0) * f["weight"],
            "tokens": tf.reduce_sum(tokens) + tf.cast(tf.size(tokens), tf.int64)}, tf.cast(
        f["image/class/label"], tf.int32)


def test_pipeline_gives_what_tensorflow_gave():
    files = [os.path.join(FIXTURES, "images-%d.tfrecord.gz" % p) for p in range(2)]
    ds = tf.data.TFRecordDataset(files, compression_type="GZIP", num_parallel_reads=2)
    ds = ds.map(parse).filter(lambda f, label: tf.not_equal(label, 3)).batch(4)
    got = list(ds.elements())
    want = EXPECTED["parsed_batches"]
    assert len(got) == len(want) == 3
    for (f, label), w in zip(got, want):
        assert list(f["image"].shape) == w["image_shape"]
        np.testing.assert_allclose(f["image"].reshape(-1), w["image"], rtol=0, atol=1e-7)
        np.testing.assert_allclose(f["points"].reshape(-1), w["points"], rtol=0, atol=1e-7)
        assert f["tokens"].tolist() == w["tokens"]
        assert label.tolist() == w["label"]
        assert label.dtype == np.int32 and f["tokens"].dtype == np.int64


def test_parse_single_example_on_bytes():
    f = kiln.io.parse_single_example(EXAMPLES[5], SPEC)
    assert f["image/encoded"] == ((np.arange(12) * 8) % 256).astype(np.uint8).tobytes()
    assert f["image/class/label"] == 1 and f["image/class/label"].dtype == np.int64
    assert f["weight"].tolist() == [0.5]  # the default: record 5 has no weight
    sp = f["tokens"]
    assert sp.indices.tolist() == [[0], [1]] and sp.values.tolist() == [5, 6] and sp.dense_shape.tolist() == [2]
    assert f["points"].tolist() == [[2.5, 2.5], [2.5, 2.5]]
    assert kiln.io.decode_raw(f["image/encoded"], kiln.uint8).tolist() == ((np.arange(12) * 8) % 256).tolist()
    assert kiln.io.decode_raw(b"\x01\x00\x02\x00", kiln.int16, little_endian=False).tolist() == [256, 512]


def test_parse_example_batches_and_pads():
    f = kiln.io.parse_example(EXAMPLES[:4], SPEC)
    assert f["image/class/label"].tolist() == [0, 1, 2, 3]
    assert f["weight"].shape == (4, 1)
    sp = f["tokens"]  # example i has i % 3 tokens from i
    assert sp.indices.tolist() == [[1, 0], [2, 0], [2, 1]] and sp.values.tolist() == [1, 2, 3]
    assert sp.dense_shape.tolist() == [4, 2]
    assert f["points"].shape == (4, 2, 2)  # 1 or 2 steps, padded with 0
    assert f["points"][0].tolist() == [[0.0, 0.0], [0.0, 0.0]] and f["points"][1].tolist() == [[0.5, 0.5], [0.5, 0.5]]
    assert kiln.sparse.to_dense(sp, default_value=-1).tolist() == [[-1, -1], [1, -1], [2, 3], [-1, -1]]


def test_example_proto_round_trip():
    ex = tf.train.Example(features=tf.train.Features(feature={
        "image/encoded": tf.train.Feature(bytes_list=tf.train.BytesList(value=[bytes(range(12))])),
        "image/class/label": tf.train.Feature(int64_list=tf.train.Int64List(value=[3])),
        "points": tf.train.Feature(float_list=tf.train.FloatList(value=[0.25, -1.0])),
    }))
    data = ex.SerializeToString()
    f = kiln.io.parse_single_example(data, SPEC)
    assert f["image/encoded"] == bytes(range(12)) and f["image/class/label"] == 3
    assert f["points"].tolist() == [[0.25, -1.0]] and f["tokens"].values.tolist() == []
    back = tf.train.Example.FromString(data)
    assert sorted(back.features.feature) == ["image/class/label", "image/encoded", "points"]
    assert back.features.feature["points"].float_list.value == [0.25, -1.0]
    # TensorFlow's own bytes parse to the same features
    tf_made = tf.train.Example.FromString(EXAMPLES[4])
    assert tf_made.features.feature["tokens"].int64_list.value == [4]
    assert kiln.io.parse_single_example(tf_made.SerializeToString(), SPEC)["tokens"].values.tolist() == [4]


def test_records_that_do_not_fit_their_spec():
    with pytest.raises(kiln.DataError, match=r"example 0: feature 'missing' \(int64, shape \[\]\) is required"):
        kiln.io.parse_single_example(EXAMPLES[0], {"missing": tf.FixedLenFeature([], tf.int64)})
    with pytest.raises(kiln.DataError, match=r"feature 'image/class/label': holds int64 values; the spec asks for float32"):
        kiln.io.parse_single_example(EXAMPLES[0], {"image/class/label": tf.FixedLenFeature([], tf.float32)})
    with pytest.raises(kiln.DataError, match=r"feature 'points': 2 values, but shape \[3\] needs 3"):
        kiln.io.parse_single_example(EXAMPLES[0], {"points": tf.FixedLenFeature([3], tf.float32)})
    with pytest.raises(kiln.DataError, match=r"example 1 \(5 bytes\) is not a serialized tf.train.Example"):
        kiln.io.parse_example([EXAMPLES[0], b"\xff\xff\xff\xff\xff"], SPEC)
    with pytest.raises(kiln.DataError, match=r"not whole steps of shape \[3\]"):
        kiln.io.parse_single_example(EXAMPLES[1], {"points": tf.FixedLenSequenceFeature([3], tf.float32, allow_missing=True)})
    with pytest.raises(ValueError, match="allow_missing=True"):
        tf.FixedLenSequenceFeature([2], tf.float32)
    with pytest.raises(ValueError, match="float32, int64 or string"):
        tf.FixedLenFeature([], tf.int32)
    with pytest.raises(kiln.ConfigError, match=r"default_value has 2 values; shape \[3\] needs 3"):
        kiln.io.parse_single_example(EXAMPLES[0], {"w": tf.FixedLenFeature([3], tf.float32, default_value=[1, 2])})
    with pytest.raises(ValueError, match=r"3 bytes are not a whole number of int16 values"):
        kiln.io.decode_raw(b"abc", tf.int16)


def test_map_function_errors(tmp_path):
    path = str(tmp_path / "r.tfrecord")
    with kiln.io.TFRecordWriter(path) as w:
        for r in EXAMPLES[:3]:
            w.write(r)

    def with_variable(record):
        v = tf.get_variable("v", shape=[], initializer=tf.zeros_initializer())
        return tf.cast(tf.parse_single_example(record, SPEC)["image/class/label"], tf.float32) + v

    with pytest.raises(ValueError, match=r"\[Dataset.map\] the function makes variable 'v'"):
        list(tf.data.TFRecordDataset(path).map(with_variable).elements())
    with pytest.raises(NotImplementedError, match="a host op of input pipelines"):
        list(tf.data.TFRecordDataset(path).map(
            lambda r: tf.decode_raw(tf.cast(tf.parse_single_example(r, SPEC)["image/class/label"], tf.float32),
                                    tf.uint8)).elements())
    with pytest.raises(TypeError, match=r"\[Dataset.filter\] the predicate returned a int64"):
        list(tf.data.TFRecordDataset(path).filter(
            lambda r: tf.parse_single_example(r, SPEC)["image/class/label"]).elements())
    with pytest.raises(FileNotFoundError, match="no such file"):
        tf.data.TFRecordDataset(str(tmp_path / "none.tfrecord"))
    damaged = tmp_path / "damaged.tfrecord"
    data = bytearray(open(path, "rb").read())
    data[20] ^= 0x40
    damaged.write_bytes(bytes(data))
    with pytest.raises(kiln.DataError, match="damaged.tfrecord"):
        list(tf.data.TFRecordDataset(str(damaged)).map(parse).elements())


def test_map_and_filter_on_tensor_slices():
    x = np.arange(24, dtype=np.float32).reshape(6, 4)
    y = np.arange(6, dtype=np.int64)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).map(lambda a, b: (tf.reduce_sum(a) * 0.5, b * 2))
    assert isinstance(ds, tf.data.Dataset)  # no random op: mapped once, still a C++ pipeline
    f, lab = ds.batch(3).take_batches(2)[1]
    assert f.tolist() == [x[i].sum() * 0.5 for i in (3, 4, 5)] and lab.tolist() == [6, 8, 10]
    kept = tf.data.Dataset.from_tensor_slices((x, y)).filter(lambda a, b: tf.greater(a[0], 7.0)).batch(2)
    assert kept.take_batches(1)[0][1].tolist() == [2, 3]
    with pytest.raises(NotImplementedError, match="map the examples, then batch"):
        tf.data.Dataset.from_tensor_slices((x, y)).batch(2).map(lambda a, b: (a, b))


def test_random_map_draws_per_seed_and_epoch():
    x = np.zeros((5, 3), np.float32)
    ds = tf.data.Dataset.from_tensor_slices(x).map(lambda a: a + tf.random_uniform([3]), seed=7).repeat(2)
    assert not isinstance(ds, tf.data.Dataset)  # random: an element pipeline
    first = np.stack(list(ds.elements()))
    again = np.stack(list(ds.elements()))
    assert first.shape == (10, 3)
    np.testing.assert_array_equal(first, again)  # reproducible from its seed
    assert not np.allclose(first[:5], first[5:])  # each epoch draws anew
    assert ((first >= 0) & (first < 1)).all() and len(np.unique(first)) == first.size
    other = tf.data.Dataset.from_tensor_slices(x).map(lambda a: a + tf.random_uniform([3]), seed=8)
    assert not np.allclose(np.stack(list(other.elements())), first[:5])


def test_map_on_generator_retraces_per_shape():
    def gen():
        for n in (2, 3, 2, 4):
            yield np.arange(n, dtype=np.float32)
    ds = tf.data.Dataset.from_generator(gen, tf.float32, [None]).map(lambda v: tf.reduce_sum(v * v))
    assert [float(v) for v in ds.elements()] == [1.0, 5.0, 1.0, 14.0]


def _write_images(path, n, seed):
    """n 8x8 one-channel images whose class (0..3) is where their bright quarter is."""
    rng = np.random.default_rng(seed)
    with kiln.io.TFRecordWriter(path, options="ZLIB") as w:
        for _ in range(n):
            label = int(rng.integers(4))
            img = rng.integers(0, 60, size=(8, 8), dtype=np.uint8)
            r, c = divmod(label, 2)
            img[r * 4:(r + 1) * 4, c * 4:(c + 1) * 4] += 150
            w.write(tf.train.Example(features=tf.train.Features(feature={
                "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[img.tobytes()])),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label]))})).SerializeToString())


def test_estimator_trains_from_tfrecords(tmp_path):
    train, test = str(tmp_path / "train.tfrecord"), str(tmp_path / "test.tfrecord")
    _write_images(train, 256, 0)
    _write_images(test, 64, 1)

    def parse_image(record):
        f = tf.parse_single_example(record, {"image": tf.FixedLenFeature([], tf.string),
                                             "label": tf.FixedLenFeature([], tf.int64)})
        image = tf.cast(tf.reshape(tf.decode_raw(f["image"], tf.uint8), [64]), tf.float32) / 255.0
        image = image + tf.random_uniform([64], maxval=0.05)  # augmentation: a random op in the map function
        return {"x": image}, tf.cast(f["label"], tf.int32)

    def input_fn(path, training):
        def make():
            ds = tf.data.TFRecordDataset(path, compression_type="ZLIB").map(parse_image, num_parallel_calls=4)
            if training:
                ds = ds.shuffle(128).repeat()
            return ds.batch(32, drop_remainder=True).prefetch(tf.data.experimental.AUTOTUNE)
        return make

    def model_fn(features, labels, mode):
        logits = tf.layers.dense(features["x"], 4)
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        train_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss, global_step=tf.train.get_global_step())
        acc = tf.metrics.accuracy(labels, tf.cast(tf.argmax(logits, axis=1), tf.int32))
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops={"accuracy": acc})

    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path / "model"),
                                 config=tf.estimator.RunConfig(random_seed=3))
    from kiln._src import map_loops as _map_loops
    before = _map_loops.loop_counts["cpp"]
    est.train(input_fn(train, True), steps=60)
    result = est.evaluate(input_fn(test, False))
    assert result["global_step"] == 60
    assert result["accuracy"] > 0.9, result
    assert _map_loops.loop_counts["cpp"] - before >= 60 * 32  # parse/decode_raw ran in the C++ element loop


def test_files_interleave_in_tensorflows_order(tmp_path):
    for name, n in (("a", 3), ("b", 1), ("c", 2), ("d", 4)):
        with kiln.io.TFRecordWriter(str(tmp_path / (name + ".tfrecord"))) as w:
            for i in range(n):
                w.write(("%s%d" % (name, i)).encode())
    files = [str(tmp_path / (f + ".tfrecord")) for f in "abcd"]

    def order(ds):
        return [r.decode() for r in ds.elements()]
    # What TensorFlow 2.15 gives for the same files (an ended file's place is refilled
    # when the cycle comes back to it).
    assert order(tf.data.TFRecordDataset(files, num_parallel_reads=2)) == \
        ["a0", "b0", "a1", "a2", "c0", "c1", "d0", "d1", "d2", "d3"]
    assert order(tf.data.TFRecordDataset(files, num_parallel_reads=3)) == \
        ["a0", "b0", "c0", "a1", "c1", "a2", "d0", "d1", "d2", "d3"]
    assert order(tf.data.Dataset.from_tensor_slices(files).interleave(
        tf.data.TFRecordDataset, cycle_length=2, block_length=2)) == \
        ["a0", "a1", "b0", "a2", "c0", "c1", "d0", "d1", "d2", "d3"]
    listed = tf.data.Dataset.list_files(str(tmp_path / "*.tfrecord"), shuffle=False)
    assert [f.decode() for f in listed.elements()] == files
    shuffled = tf.data.Dataset.list_files(str(tmp_path / "*.tfrecord"), seed=3).repeat(2)
    names = [f.decode() for f in shuffled.elements()]
    assert sorted(names[:4]) == files and sorted(names[4:]) == files  # each epoch lists every file once
    assert names != files * 2  # shuffled (tf.data's default)
    assert names == [f.decode() for f in shuffled.elements()]  # from the seed
    with pytest.raises(kiln.DataError, match="no files match"):
        tf.data.Dataset.list_files(str(tmp_path / "*.nope"))


def test_parallel_and_compiled_maps_give_the_sequential_interpreters_elements():
    from kiln._src import map_function as _map_function
    files = [os.path.join(FIXTURES, "images-%d.tfrecord.gz" % p) for p in range(2)]

    def noisy(record):
        f, label = parse(record)
        return {"image": f["image"] + tf.random_uniform([2, 2, 3]), "tokens": f["tokens"]}, label

    def run(backend, parallel):
        _map_function.backend = backend
        try:
            ds = tf.data.TFRecordDataset(files, compression_type="GZIP").map(noisy, num_parallel_calls=parallel,
                                                                             seed=5)
            return list(ds.repeat(3).elements())
        finally:
            _map_function.backend = "tiered"
    want = run("interp", None)
    assert len(want) == 36
    for backend, parallel in (("interp", 2), ("cpu", None), ("cpu", 3), ("tiered", tf.data.experimental.AUTOTUNE)):
        got = run(backend, parallel)
        for (f, label), (wf, wlabel) in zip(got, want):
            np.testing.assert_array_equal(f["image"], wf["image"])  # the same bits, compiled or not
            assert f["tokens"] == wf["tokens"] and label == wlabel
    with pytest.raises(ValueError, match="num_parallel_calls 0 must be an integer >= 1 or AUTOTUNE"):
        tf.data.TFRecordDataset(files).map(parse, num_parallel_calls=0)


def test_map_graphs_run_compiled_at_once_or_after_tiering_up():
    import time

    from kiln._src import map_function as _map_function
    x = np.arange(6, dtype=np.float32)
    _map_function.backend = "cpu"
    try:
        fn = _map_function.MapFunction(lambda v: tf.reduce_sum(v * v), "test")
        assert float(fn(x, 0, 0)) == 55.0
        assert next(iter(fn.traces.values()))[0].graph.running == "cpu"  # compiled, not the fallback
    finally:
        _map_function.backend = "tiered"
    fn = _map_function.MapFunction(lambda v: tf.reduce_sum(v * v), "test")
    for i in range(256):
        assert float(fn(x, i, 0)) == 55.0
    graph = next(iter(fn.traces.values()))[0].graph
    deadline = time.time() + 120
    while graph.running != "cpu" and time.time() < deadline:  # the compile runs on a thread of its own
        assert float(fn(x, 0, 0)) == 55.0
        time.sleep(0.05)
    assert graph.running == "cpu"
    assert float(fn(x, 0, 0)) == 55.0


def test_pipeline_arguments_are_checked():
    path = os.path.join(FIXTURES, "images-0.tfrecord.gz")
    with pytest.raises(ValueError, match=r"buffer_size -1 must be None or an integer >= 0"):
        tf.data.TFRecordDataset(path, compression_type="GZIP", buffer_size=-1)
    ok = tf.data.TFRecordDataset(path, compression_type="GZIP", buffer_size=1 << 20)
    assert len(list(ok.elements())) == 6
    with pytest.raises(ValueError, match=r"\[Dataset.interleave\] num_parallel_calls 0 must be"):
        tf.data.Dataset.from_tensor_slices([path]).interleave(tf.data.TFRecordDataset, num_parallel_calls=0)
    with pytest.raises(NotImplementedError, match="acceptable_fraction"):
        tf.image.decode_jpeg(b"\xff\xd8\xff", acceptable_fraction=0.5)


def test_sequence_features_pad_with_their_default_value():
    padded = kiln.io.parse_example(EXAMPLES[:2], {"points": tf.FixedLenSequenceFeature(
        [2], tf.float32, allow_missing=True, default_value=-1.0)})["points"]
    assert padded.tolist() == [[[0.0, 0.0], [-1.0, -1.0]], [[0.5, 0.5], [0.5, 0.5]]]
    with pytest.raises(ValueError, match="default_value is the padding, one value"):
        kiln.io.parse_example(EXAMPLES[:1], {"points": tf.FixedLenSequenceFeature(
            [2], tf.float32, allow_missing=True, default_value=[1.0, 2.0])})
