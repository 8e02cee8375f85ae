"""Dataset.map's C++ element loop (src/data/element_plan.h): a map function whose host ops
all have a C++ form (parse_single_example of fixed features, decode_jpeg/png,
convert_image_dtype to float32, random_crop, random_flip_*) runs its elements on C++
threads, and a batch() after it is stacked there. Held to the Python element loop
(_map_loops.element_loop = "python"), which runs the same trace through numpy and the
same decoders: every batch bit for bit, with random draws, on any number of threads, over
repetitions; elements the plan cannot take fall back to Python in their place; errors
come where the Python loop raises them."""
import numpy as np
import pytest
from test_images import FILES

import kiln
import kiln as tf
from kiln._src import map_function as _map_function
from kiln._src import map_loops as _map_loops

SPEC = {"image/encoded": tf.io.FixedLenFeature([], tf.string),
        "image/class/label": tf.io.FixedLenFeature([], tf.int64),
        "weight": tf.io.FixedLenFeature([2], tf.float32, default_value=[0.5, 0.25])}


def jpeg(i, size):
    yy, xx = np.mgrid[0:size[0], 0:size[1]]
    img = np.stack([(xx * (i % 7 + 1)) % 256, (yy * 3 + i) % 256, (xx + yy * i) % 256], axis=-1).astype(np.uint8)
    return kiln.image.encode_jpeg(img, quality=90)


def write_records(path, n, sizes=((40, 48),), bad=None):
    with tf.io.TFRecordWriter(str(path)) as w:
        for i in range(n):
            feature = {"image/encoded": tf.train.Feature(bytes_list=tf.train.BytesList(
                value=[b"not a jpeg" if i == bad else jpeg(i, sizes[i % len(sizes)])])),
                "image/class/label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 10]))}
            if i % 2:
                feature["weight"] = tf.train.Feature(float_list=tf.train.FloatList(value=[i, -i]))
            w.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
    return str(path)


def augment(record):
    f = tf.io.parse_single_example(record, SPEC)
    image = tf.image.decode_jpeg(f["image/encoded"], channels=3)
    image = tf.image.convert_image_dtype(image, tf.float32)
    image = tf.image.random_crop(image, [32, 32, 3])
    image = tf.image.random_flip_left_right(image)
    image = tf.image.random_flip_up_down(image)
    return {"image": image, "weight": f["weight"] * 2.0}, tf.cast(f["image/class/label"], tf.int32)


def run(loop, make, default_seed=0):
    previous, _map_loops.element_loop = _map_loops.element_loop, loop
    counts = dict(_map_loops.loop_counts)
    try:
        out = list(make().elements(default_seed))
    finally:
        _map_loops.element_loop = previous
    return out, {k: _map_loops.loop_counts[k] - counts.get(k, 0) for k in _map_loops.loop_counts}


def assert_same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        fx, fy = kiln.nest.flatten(x), kiln.nest.flatten(y)
        assert len(fx) == len(fy)
        for u, v in zip(fx, fy):
            u, v = np.asarray(u), np.asarray(v)
            assert u.dtype == v.dtype and u.shape == v.shape
            assert u.tobytes() == v.tobytes()


@pytest.mark.parametrize("threads", [None, 1, 2, tf.data.AUTOTUNE])
def test_batches_are_the_python_loops_bit_for_bit(tmp_path, threads):
    path = write_records(tmp_path / "a.tfrecord", 45)

    def make():
        ds = tf.data.TFRecordDataset([path]).map(augment, num_parallel_calls=threads, seed=5)
        return ds.batch(8).repeat(2)
    native, counts = run("auto", make)
    python, python_counts = run("python", make)
    assert_same(native, python)
    assert len(native) == 12 and native[5][0]["image"].shape == (5, 32, 32, 3)  # 45 = 5 * 8 + 5, twice
    assert counts.get("cpp", 0) == 2 * 44 and counts.get("python", 0) == 2  # all but each pass's first element
    assert python_counts.get("cpp", 0) == 0
    # the draws differ between elements and between the two passes
    assert not np.array_equal(native[0][0]["image"], native[6][0]["image"])
    assert native[0][0]["weight"][0].tolist() == [1.0, 0.5] and native[0][0]["weight"][1].tolist() == [2.0, -2.0]


def test_unbatched_shuffled_and_dropped_remainders_agree(tmp_path):
    path = write_records(tmp_path / "a.tfrecord", 21)
    for make in (lambda: tf.data.TFRecordDataset([path]).map(augment, num_parallel_calls=2).shuffle(7, seed=1),
                 lambda: tf.data.TFRecordDataset([path]).map(augment, num_parallel_calls=2).batch(4, drop_remainder=True),
                 lambda: tf.data.TFRecordDataset([path]).map(augment).take(3)):
        native, counts = run("auto", make)
        assert_same(native, run("python", make)[0])
        assert counts.get("cpp", 0) > 0
    assert len(run("auto", lambda: tf.data.TFRecordDataset([path]).map(augment).batch(4, drop_remainder=True))[0]) == 5


def test_the_seed_keys_the_draws(tmp_path):
    path = write_records(tmp_path / "a.tfrecord", 12)
    a = run("auto", lambda: tf.data.TFRecordDataset([path]).map(augment, num_parallel_calls=2).batch(12), 1)[0]
    b = run("auto", lambda: tf.data.TFRecordDataset([path]).map(augment, num_parallel_calls=1).batch(12), 1)[0]
    c = run("auto", lambda: tf.data.TFRecordDataset([path]).map(augment).batch(12), 2)[0]
    assert_same(a, b)
    assert not np.array_equal(a[0][0]["image"], c[0][0]["image"])


def test_images_of_other_sizes_fall_back_where_the_graph_needs_a_shape(tmp_path):
    # The crop makes every size fit the host ops; the mean over the uncropped image is a
    # graph op traced for the first size, so elements of another size map in Python.
    path = write_records(tmp_path / "a.tfrecord", 10, sizes=((40, 48), (36, 50)))

    def fn(record):
        f = tf.io.parse_single_example(record, SPEC)
        image = tf.image.convert_image_dtype(tf.image.decode_jpeg(f["image/encoded"]), tf.float32)
        return tf.image.random_crop(image, [30, 30, 3]), tf.reduce_mean(image)
    make = lambda: tf.data.TFRecordDataset([path]).map(fn, num_parallel_calls=2).batch(4)
    native, counts = run("auto", make)
    assert_same(native, run("python", make)[0])
    assert counts.get("cpp", 0) == 4 and counts.get("python", 0) == 6  # the first, and the five of 36 x 50


def test_png_and_numeric_elements(tmp_path):
    def fn(data, scale):
        image = tf.image.convert_image_dtype(tf.image.decode_png(data, dtype=tf.uint16), tf.float32)
        return tf.image.random_flip_left_right(image) * scale
    make = lambda: tf.data.Dataset.from_generator(
        lambda: ((FILES["png16"], np.float32(i)) for i in range(9)), output_types=(tf.string, tf.float32)
    ).map(fn, num_parallel_calls=2).batch(3)
    native, counts = run("auto", make)
    assert_same(native, run("python", make)[0])
    assert counts.get("cpp", 0) == 8 and native[0].dtype == np.float32


def test_functions_without_a_cpp_form_keep_the_python_loop(tmp_path):
    path = write_records(tmp_path / "a.tfrecord", 6)

    def fn(record):  # a VarLenFeature of strings and a bicubic resize have no C++ form
        f = tf.io.parse_single_example(record, {"image/encoded": tf.io.FixedLenFeature([], tf.string),
                                                "tokens": tf.io.VarLenFeature(tf.string)})
        return tf.image.resize_bicubic(tf.image.decode_jpeg(f["image/encoded"]), [8, 8])
    native, counts = run("auto", lambda: tf.data.TFRecordDataset([path]).map(fn).batch(3))
    assert counts.get("cpp", 0) == 0 and counts.get("python", 0) == 6 and native[0].shape == (3, 8, 8, 3)


def test_a_bad_element_raises_where_the_python_loop_raises(tmp_path):
    path = write_records(tmp_path / "a.tfrecord", 40, bad=5)
    make = lambda: tf.data.TFRecordDataset([path]).map(augment, num_parallel_calls=2)
    assert len(run("auto", lambda: make().take(5))[0]) == 5  # stops before the bad JPEG: no error
    for loop in ("auto", "python"):
        previous, _map_loops.element_loop = _map_loops.element_loop, loop
        seen = []
        try:
            with pytest.raises(kiln.data.DataError, match="decode_jpeg|JPEG") as e:
                for element in make().elements():
                    seen.append(element)
        finally:
            _map_loops.element_loop = previous
        assert len(seen) == 5, loop
        message = str(e.value)
    with pytest.raises(kiln.data.DataError) as e:
        list(make().batch(4).elements())
    assert str(e.value) == message


def test_a_damaged_file_raises_after_the_records_before_it(tmp_path):
    path = write_records(tmp_path / "a.tfrecord", 40)
    data = bytearray(open(path, "rb").read())
    data[len(data) // 2] ^= 0xFF  # inside a record near the middle: its CRC fails
    open(path, "wb").write(bytes(data))
    seen = []
    with pytest.raises(kiln.data.DataError, match="a.tfrecord"):
        for element in tf.data.TFRecordDataset([path]).map(augment, num_parallel_calls=2).elements():
            seen.append(element)
    assert 5 < len(seen) < 40


def test_host_draws_are_uniform_and_reproducible():
    g = _map_function.HostGenerator(7, 3, 0, 1, None)
    u = g.random(200000)
    assert u.dtype == np.float64 and 0 <= u.min() and u.max() < 1
    assert abs(u.mean() - 0.5) < 4 * (1 / 12 / 200000) ** 0.5
    ints = [g.integers(3, 9) for _ in range(60000)]
    counts = np.bincount(ints, minlength=9)[3:]
    assert min(ints) == 3 and max(ints) == 8 and counts.min() > 9500
    assert isinstance(g.random(), float) and isinstance(g.random(dtype=np.float32), float)
    again = _map_function.HostGenerator(7, 3, 0, 1, None)
    assert again.random(5).tolist() == u[:5].tolist()
    for other in [(8, 3, 0, 1, None), (7, 4, 0, 1, None), (7, 3, 1, 1, None), (7, 3, 0, 2, None), (7, 3, 0, 1, 0)]:
        assert _map_function.HostGenerator(*other).random(5).tolist() != u[:5].tolist()
    with pytest.raises(ValueError, match="high must exceed low"):
        g.integers(4, 4)


def raw_records(path, n):
    """CIFAR-10's TFRecords as tensorflow/models' generate_cifar10_tfrecords.py writes them:
    the image as raw bytes, depth-major [3, 32, 32], and an int64 label."""
    rng = np.random.default_rng(4)
    with tf.io.TFRecordWriter(str(path)) as w:
        for i in range(n):
            image = rng.integers(0, 256, (3, 32, 32), dtype=np.uint8).tobytes()
            w.write(tf.train.Example(features=tf.train.Features(feature={
                "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[image])),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 10]))})).SerializeToString())
    return str(path)


def cifar_parse(record):
    features = tf.parse_single_example(record, {"image": tf.FixedLenFeature([], tf.string),
                                                "label": tf.FixedLenFeature([], tf.int64)})
    image = tf.decode_raw(features["image"], tf.uint8)
    image.set_shape([3 * 32 * 32])
    image = tf.cast(tf.transpose(tf.reshape(image, [3, 32, 32]), [1, 2, 0]), tf.float32)
    image = tf.image.resize_image_with_crop_or_pad(image, 40, 40)
    image = tf.random_crop(image, [32, 32, 3])
    return tf.image.random_flip_left_right(image), tf.cast(features["label"], tf.int32)


def test_raw_bytes_decode_in_cpp_and_the_graph_does_the_rest(tmp_path):
    path = raw_records(tmp_path / "data_batch_1.tfrecords", 30)
    make = lambda: tf.data.TFRecordDataset([path]).map(cifar_parse, num_parallel_calls=2).batch(8)
    native, counts = run("auto", make)
    assert_same(native, run("python", make)[0])
    assert counts.get("cpp", 0) == 29 and native[0][0].shape == (8, 32, 32, 3)


@pytest.mark.parametrize("out_type,little_endian,fixed_length", [
    (tf.float32, False, None), (tf.int16, True, 10), (tf.uint16, False, None), (tf.uint8, True, 3)])
def test_decode_raw_orders_and_lengths(out_type, little_endian, fixed_length):
    blobs = [np.arange(i, i + 4, dtype=">f4" if not little_endian else "<f4").tobytes() for i in range(6)]
    fn = lambda b: tf.decode_raw(b, out_type, little_endian=little_endian, fixed_length=fixed_length)
    make = lambda: tf.data.Dataset.from_generator(lambda: iter(blobs), output_types=tf.string).map(fn).batch(3)
    native, counts = run("auto", make)
    assert_same(native, run("python", make)[0])
    assert counts.get("cpp", 0) == 5
    if out_type == tf.float32:
        assert native[0][1].tolist() == [1.0, 2.0, 3.0, 4.0]


def test_a_length_that_is_no_whole_number_of_values_is_the_same_error():
    make = lambda: tf.data.Dataset.from_generator(
        lambda: iter([b"\0" * 8, b"\0" * 8, b"\0" * 7]), output_types=tf.string).map(
        lambda b: tf.decode_raw(b, tf.float32))
    messages = []
    for loop in ("auto", "python"):
        with pytest.raises(ValueError) as e:
            run(loop, make)
        messages.append(str(e.value))
    assert messages[0] == messages[1] and "7 bytes are not a whole number of float32 values" in messages[0]


def test_a_resumed_run_sees_the_batches_an_uninterrupted_one_sees(tmp_path):
    """Random crops and flips in the C++ loop, a shuffle after the map: a run stopped at
    step 6 and resumed to 12 ends with the weights of a run of 12 steps."""
    path = write_records(tmp_path / "a.tfrecord", 48)

    def input_fn():
        ds = tf.data.TFRecordDataset([path]).map(augment, num_parallel_calls=2).shuffle(16, seed=2)
        return ds.repeat().batch(8)

    def model_fn(features, labels, mode):
        x = tf.reshape(features["image"], [-1, 32 * 32 * 3])
        logits = tf.layers.dense(tf.concat([x, features["weight"]], axis=1), 10)
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        step = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=step)

    def weights(model_dir, *stops):
        est = tf.estimator.Estimator(model_fn, model_dir=str(model_dir),
                                     config=tf.estimator.RunConfig(random_seed=7, save_checkpoints_steps=6))
        before = _map_loops.loop_counts["cpp"]
        for stop in stops:
            est.train(input_fn, max_steps=stop)
        assert _map_loops.loop_counts["cpp"] > before
        return tf.train.load_variable(str(model_dir), "dense/kernel")

    whole = weights(tmp_path / "whole", 12)
    resumed = weights(tmp_path / "resumed", 6, 12)
    assert whole.tobytes() == resumed.tobytes()


def test_num_parallel_calls_sets_the_loops_threads(tmp_path, monkeypatch):
    import os
    path = write_records(tmp_path / "a.tfrecord", 8)
    made = []
    real = _map_loops._core.ElementRunner

    def runner(plan, threads):
        made.append(threads)
        return real(plan, threads)
    monkeypatch.setattr(_map_loops._core, "ElementRunner", runner)
    cores = len(os.sched_getaffinity(0))
    for calls in (None, 1, tf.data.AUTOTUNE, 64):
        list(tf.data.TFRecordDataset([path]).map(augment, num_parallel_calls=calls).batch(4).elements())
    assert made == [1, 1, cores, cores]  # None: one; AUTOTUNE and more than the cores: one per core


def mnist_records(path, n):
    """TFRecords as the MNIST-from-TFRecords tutorials write them: a PNG of a 28x28 uint8
    digit and its label. Returns the path and the images."""
    rng = np.random.default_rng(3)
    images = rng.integers(0, 256, (n, 28, 28, 1), dtype=np.uint8)
    with tf.io.TFRecordWriter(str(path)) as w:
        for i, img in enumerate(images):
            w.write(tf.train.Example(features=tf.train.Features(feature={
                "image_raw": tf.train.Feature(bytes_list=tf.train.BytesList(value=[tf.image.encode_png(img)])),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 10]))})).SerializeToString())
    return str(path), images


# Ops that only move elements keep a decoded uint8 image uint8 (as TensorFlow does), on
# the host or in the graph, with the values numpy gives.
MOVES = {
    "reshape": (lambda im: tf.reshape(im, [784]), lambda a: a.reshape(784)),
    "reshape -1": (lambda im: tf.reshape(im, [-1, 28]), lambda a: a.reshape(-1, 28)),
    "transpose": (lambda im: tf.transpose(im, [1, 0, 2]), lambda a: a.transpose(1, 0, 2)),
    "squeeze": (lambda im: tf.squeeze(im, [2]), lambda a: a[:, :, 0]),
    "expand_dims": (lambda im: tf.expand_dims(im, 0), lambda a: a[None]),
    "concat": (lambda im: tf.concat([im, im], 2), lambda a: np.concatenate([a, a], 2)),
    "stack": (lambda im: tf.stack([im, im]), lambda a: np.stack([a, a])),
    "pad": (lambda im: tf.pad(im, [[2, 2], [1, 3], [0, 0]]), lambda a: np.pad(a, [[2, 2], [1, 3], [0, 0]])),
    "index": (lambda im: im[2:10, :, 0], lambda a: a[2:10, :, 0]),
    "tile": (lambda im: tf.tile(im, [1, 1, 3]), lambda a: np.tile(a, [1, 1, 3])),
    "flip": (lambda im: tf.image.flip_left_right(im), lambda a: a[:, ::-1]),
    "reverse": (lambda im: tf.reverse(im, [0, 1]), lambda a: a[::-1, ::-1]),
    "identity": (lambda im: tf.identity(im), lambda a: a),
    "ensure_shape": (lambda im: tf.ensure_shape(im, [28, None, 1]), lambda a: a),
    "graph then reshape": (lambda im: tf.reshape(tf.image.flip_up_down(im), [784]), lambda a: a[::-1].reshape(784)),
}


@pytest.mark.parametrize("name", sorted(MOVES))
def test_a_decoded_uint8_image_moves_as_in_tensorflow(tmp_path, name):
    op, expect = MOVES[name]
    path, images = mnist_records(tmp_path / "mnist.tfrecord", 6)

    def parse(record):
        f = tf.parse_single_example(record, {"image_raw": tf.FixedLenFeature([], tf.string),
                                             "label": tf.FixedLenFeature([], tf.int64)})
        return op(tf.image.decode_png(f["image_raw"], channels=1)), tf.cast(f["label"], tf.int32)
    make = lambda: tf.data.TFRecordDataset(path).map(parse, num_parallel_calls=2).batch(3)
    native, counts = run("auto", make)
    assert_same(native, run("python", make)[0])
    assert counts.get("cpp", 0) == 5, counts  # every element but the traced first one in C++
    got = np.concatenate([b[0] for b in native])
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, np.stack([expect(a) for a in images]))


def test_the_mnist_tfrecords_pattern_trains_its_features(tmp_path):
    """parse_single_example -> decode_png -> reshape [784] -> cast / 255: the tutorials' input."""
    path, images = mnist_records(tmp_path / "mnist.tfrecord", 8)

    def parse(record):
        f = tf.parse_single_example(record, {"image_raw": tf.FixedLenFeature([], tf.string),
                                             "label": tf.FixedLenFeature([], tf.int64)})
        image = tf.reshape(tf.image.decode_png(f["image_raw"], channels=1), [784])
        return tf.cast(image, tf.float32) / 255.0, tf.cast(f["label"], tf.int32)
    (x, y), = run("auto", lambda: tf.data.TFRecordDataset(path).map(parse).batch(8))[0]
    assert x.dtype == np.float32 and x.shape == (8, 784) and y.tolist() == [i % 10 for i in range(8)]
    np.testing.assert_allclose(x, images.reshape(8, 784) / np.float32(255.0), rtol=1e-6)


def test_reverse_and_ensure_shape_name_what_is_wrong():
    def first(fn):
        return tf.data.Dataset.from_tensor_slices(np.zeros((4, 2, 3), np.float32)).map(fn)  # traced here
    with pytest.raises(ValueError, match=r"\[reverse\] axis 2 is out of range for a tensor of rank 2; valid: -2 to 1"):
        first(lambda x: tf.reverse(x, [2]))
    with pytest.raises(ValueError, match=r"\[reverse\] axis 1 is given twice"):
        first(lambda x: tf.reverse(x, [1, -1]))
    with pytest.raises(ValueError, match=r"\[ensure_shape\] the shape is \[2, 3\]; expected \[2, 4\]"):
        first(lambda x: tf.ensure_shape(x, [2, 4]))
