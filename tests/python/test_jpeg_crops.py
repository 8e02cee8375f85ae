"""Inception-style training crops as TF 1.x ImageNet scripts write them (the Ascend
ModelZoo's AlexNet and VGG, tensorflow/models' ResNet): extract_jpeg_shape,
sample_distorted_bounding_box, decode_and_crop_jpeg and a resize, in a Dataset.map
function, with the image's size changing from one element to the next. decode_and_crop
and the resize of a decoded image are held to what real TensorFlow 2.15 gave
(tests/formats/fixtures/make_fixtures.py); the random window to TensorFlow's rules."""
import numpy as np
import pytest
from test_images import FILES, want

import kiln
import kiln as tf
from kiln._src import map_function as _map_function

BIG = FILES["jpeg_big"]


def mapped(fn, element=BIG):
    ds = tf.data.Dataset.from_tensors(element).map(fn)
    (out,) = list(ds.elements())
    return out


@pytest.mark.parametrize("name,window,channels", [
    ("big_crop", [5, 7, 20, 30], 0),
    ("big_crop_unaligned", [13, 19, 16, 21], 0),
    ("big_crop_grey", [0, 33, 29, 8], 1),
    ("big_crop_whole", [0, 0, 29, 41], 0),
])
def test_decode_and_crop_gives_what_tensorflow_gives(name, window, channels):
    expected = want(name)
    eager = tf.image.decode_and_crop_jpeg(BIG, window, channels=channels)
    in_map = mapped(lambda b: tf.image.decode_and_crop_jpeg(b, tf.stack(window), channels=channels))
    for got in (eager, in_map):
        assert got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)


def test_jpeg_shape_is_read_from_the_header():
    np.testing.assert_array_equal(tf.image.extract_jpeg_shape(BIG), want("big_shape"))
    got = mapped(lambda b: tf.io.extract_jpeg_shape(b, output_type=tf.int64))
    assert got.dtype == np.int64 and got.tolist() == [29, 41, 3]


@pytest.mark.parametrize("name,size,method", [
    ("big_resized", [12, 17], tf.image.ResizeMethod.BILINEAR),
    ("big_resized_nearest", [31, 9], tf.image.ResizeMethod.NEAREST_NEIGHBOR),
    ("big_resized_bicubic", [12, 17], tf.image.ResizeMethod.BICUBIC),
    ("big_resized_area", [12, 17], tf.image.ResizeMethod.AREA),
])
def test_a_decoded_image_is_resized_on_the_host_as_tensorflow_resizes(name, size, method):
    got = mapped(lambda b: tf.image.resize_images(tf.image.decode_jpeg(b), size, method=method))
    expected = want(name)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=2e-5)


def test_bad_windows_and_boxes_are_clear_errors():
    with pytest.raises(kiln.ConfigError, match=r"\[decode_and_crop_jpeg\] crop window \[y 20, x 0, height 10, "
                                               r"width 5\] is not inside the 29x41 image"):
        tf.image.decode_and_crop_jpeg(BIG, [20, 0, 10, 5])
    with pytest.raises(kiln.ConfigError, match=r"crop_window has 3 entries"):
        tf.image.decode_and_crop_jpeg(BIG, [0, 0, 5])
    with pytest.raises(kiln.DataError, match=r"\[extract_jpeg_shape\] 5 bytes that are not a JPEG"):
        tf.image.extract_jpeg_shape(b"hello")
    size = np.array([29, 41, 3], np.int32)
    with pytest.raises(ValueError, match=r"no bounding boxes were given; pass use_image_if_no_bounding_boxes"):
        tf.image.sample_distorted_bounding_box(size, np.zeros([1, 0, 4], np.float32))
    with pytest.raises(ValueError, match=r"coordinate must be in \[0, 1\]"):
        tf.image.sample_distorted_bounding_box(size, [[[0.0, 0.0, 1.5, 1.0]]])
    with pytest.raises(ValueError, match=r"area_range \[0.5, 0.2\] must be \[low, high\]"):
        tf.image.sample_distorted_bounding_box(size, [[[0.0, 0.0, 1.0, 1.0]]], area_range=[0.5, 0.2])
    with pytest.raises(ValueError, match=r"min_object_covered 1.5 must be in \[0, 1\]"):
        tf.image.sample_distorted_bounding_box(size, [[[0.0, 0.0, 1.0, 1.0]]], min_object_covered=1.5)
    with pytest.raises(NotImplementedError, match="host op of input pipelines"):  # a graph tensor
        mapped(lambda s: tf.image.sample_distorted_bounding_box(s, [[[0.0, 0.0, 1.0, 1.0]]]), size)


def windows(n, box, seed=3, **kw):
    """n windows drawn for a 200 x 300 image in a map function (element i, position i)."""
    def fn(i):
        begin, size, bbox = tf.image.sample_distorted_bounding_box(
            tf.constant([200, 300, 3]), box, **kw)
        return begin, size, bbox, i
    ds = tf.data.Dataset.range(n).map(fn, seed=seed)
    return list(ds.elements())


def test_sampled_windows_follow_tensorflows_rules():
    box = np.array([[[0.1, 0.2, 0.6, 0.5]]], np.float32)  # ymin, xmin, ymax, xmax
    out = windows(300, box, min_object_covered=0.5, aspect_ratio_range=(0.75, 1.33), area_range=(0.08, 1.0),
                  max_attempts=100)
    areas = []
    for begin, size, bbox, _ in out:
        (y, x, zero), (h, w, minus) = begin.tolist(), size.tolist()
        assert zero == 0 and minus == -1
        assert 0 <= y and y + h <= 200 and 0 <= x and x + w <= 300
        if (h, w) == (200, 300):
            continue  # no window fitted in 100 attempts: the whole image, as TensorFlow gives
        assert 0.08 * 200 * 300 <= h * w <= 200 * 300
        assert 0.75 - 0.05 <= w / h <= 1.33 + 0.05  # the ratio before rounding to whole pixels
        by0, bx0, by1, bx1 = 20, 60, 120, 150  # the box in pixels
        covered = max(0, min(y + h, by1) - max(y, by0)) * max(0, min(x + w, bx1) - max(x, bx0))
        assert covered / ((by1 - by0) * (bx1 - bx0)) >= 0.5
        np.testing.assert_allclose(bbox[0, 0], [y / 200, x / 300, (y + h) / 200, (x + w) / 300], rtol=1e-6)
        areas.append(h * w)
    assert len(areas) > 250 and len(set(areas)) > 100  # drawn, not fixed


def test_windows_are_reproducible_from_the_seed_and_differ_per_element():
    box = [[[0.0, 0.0, 1.0, 1.0]]]
    a, b, c = windows(20, box), windows(20, box), windows(20, box, seed=4)
    key = [(w[0].tolist(), w[1].tolist()) for w in a]
    assert key == [(w[0].tolist(), w[1].tolist()) for w in b]
    assert key != [(w[0].tolist(), w[1].tolist()) for w in c]
    assert len(set(str(k) for k in key)) > 15
    op_seeded = windows(20, box, seed=3, seed2=9)
    assert key != [(w[0].tolist(), w[1].tolist()) for w in op_seeded]
    size = np.array([200, 300, 3], np.int32)  # outside a pipeline, an op seed makes a call repeat
    once, twice = (tf.image.sample_distorted_bounding_box(size, box, seed=7) for _ in range(2))
    assert [x.tolist() for x in once] == [x.tolist() for x in twice]


def test_no_window_that_fits_gives_the_whole_image():
    # a window of at most 1% of the image cannot cover 90% of a box of half of it
    out = windows(10, [[[0.0, 0.0, 0.5, 1.0]]], min_object_covered=0.9, area_range=(0.005, 0.01))
    assert all(w[0].tolist() == [0, 0, 0] and w[1].tolist() == [200, 300, -1] for w in out)
    out = windows(5, np.zeros([1, 0, 4], np.float32), use_image_if_no_bounding_boxes=True,
                  min_object_covered=0.0)
    assert all(w[1][0] * w[1][1] >= 0.05 * 200 * 300 for w in out)


def imagenet_records(path, n):
    """TFRecords as ImageNet's build_imagenet_data.py writes them: JPEGs of several sizes,
    a label, and the boxes as four VarLen float features (some images have none)."""
    with tf.io.TFRecordWriter(path) as writer:
        for i in range(n):
            n_boxes = i % 3
            feature = {
                "image/encoded": tf.train.Feature(bytes_list=tf.train.BytesList(
                    value=[[BIG, FILES["jpeg"]][i % 2]])),
                "image/class/label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 5 + 1])),
            }
            for k, (lo, hi) in {"ymin": (0.0, 0.3), "xmin": (0.1, 0.2), "ymax": (0.7, 1.0),
                                "xmax": (0.8, 0.9)}.items():
                feature["image/object/bbox/" + k] = tf.train.Feature(float_list=tf.train.FloatList(
                    value=[lo + (hi - lo) * j / 3 for j in range(n_boxes)]))
            writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())


def alexnet_parse(record):
    """The Ascend ModelZoo AlexNet's _parse_example_proto and decode_crop_and_resize, as
    written (its image size made small for the test)."""
    feature_map = {"image/encoded": tf.FixedLenFeature([], dtype=tf.string, default_value=""),
                   "image/class/label": tf.FixedLenFeature([], dtype=tf.int64, default_value=-1)}
    sparse_float32 = tf.VarLenFeature(dtype=tf.float32)
    feature_map.update({k: sparse_float32 for k in ["image/object/bbox/xmin", "image/object/bbox/ymin",
                                                    "image/object/bbox/xmax", "image/object/bbox/ymax"]})
    features = tf.parse_single_example(record, feature_map)
    label = tf.cast(features["image/class/label"], dtype=tf.int32)
    xmin = tf.expand_dims(features["image/object/bbox/xmin"].values, 0)
    ymin = tf.expand_dims(features["image/object/bbox/ymin"].values, 0)
    xmax = tf.expand_dims(features["image/object/bbox/xmax"].values, 0)
    ymax = tf.expand_dims(features["image/object/bbox/ymax"].values, 0)
    bbox = tf.concat([ymin, xmin, ymax, xmax], 0)
    bbox = tf.expand_dims(bbox, 0)
    bbox = tf.transpose(bbox, [0, 2, 1])
    image_buffer = features["image/encoded"]
    bbox_begin, bbox_size, _ = tf.image.sample_distorted_bounding_box(
        tf.image.extract_jpeg_shape(image_buffer), bounding_boxes=bbox, min_object_covered=0.1,
        aspect_ratio_range=(0.75, 1.333), area_range=(0.08, 1.0), max_attempts=10,
        use_image_if_no_bounding_boxes=True)
    offset_y, offset_x, _ = tf.unstack(bbox_begin)
    target_height, target_width, _ = tf.unstack(bbox_size)
    crop_window = tf.stack([offset_y, offset_x, target_height, target_width])
    image = tf.image.decode_and_crop_jpeg(image_buffer, crop_window, channels=3)
    image = tf.image.random_flip_left_right(image)
    image = tf.image.resize_images(image, [16, 16])
    mean = tf.expand_dims(tf.expand_dims([0.485 * 255, 0.456 * 255, 0.406 * 255], 0), 0)
    return (image - mean) * (1.0 / 58.0), label - 1, crop_window


def test_the_alexnet_input_pipeline_runs_on_images_of_any_size(tmp_path):
    path = str(tmp_path / "train-00000-of-00001")
    imagenet_records(path, 12)
    ds = tf.data.TFRecordDataset(path).map(alexnet_parse, num_parallel_calls=2, seed=5).batch(4)
    batches = list(ds.elements())
    assert [b[0].shape for b in batches] == [(4, 16, 16, 3)] * 3
    assert batches[0][1].tolist() == [0, 1, 2, 3]
    again = list(ds.elements())
    for x, y in zip(batches, again):
        np.testing.assert_array_equal(x[0], y[0])  # the pipeline is reproducible from its seed
        np.testing.assert_array_equal(x[2], y[2])
    windows_seen = np.concatenate([b[2] for b in batches])
    assert len({tuple(w) for w in windows_seen.tolist()}) > 6  # windows drawn per element
    # each image is its window decoded, maybe mirrored, resized and normalised
    mean = np.array([0.485 * 255, 0.456 * 255, 0.406 * 255], np.float32)
    for i, window in enumerate(windows_seen.tolist()):
        data = [BIG, FILES["jpeg"]][i % 2]
        crop = tf.image.decode_and_crop_jpeg(data, window, channels=3)
        got = batches[i // 4][0][i % 4]
        options = [kiln.image.resize_on_host(c, [16, 16], "bilinear", False, False) for c in (crop, crop[:, ::-1])]
        assert any(np.allclose(got, (o - mean) * (1.0 / 58.0), atol=1e-4) for o in options)


def test_shape_arithmetic_stays_on_the_host():
    """The eval path of tensorflow/models' ResNet: an aspect-preserving resize computed
    from tf.shape, then a central crop by tf.slice, on images of two sizes."""
    def preprocess(data):
        image = tf.image.decode_jpeg(data, channels=3)
        shape = tf.shape(image)
        height, width = tf.cast(shape[0], tf.float32), tf.cast(shape[1], tf.float32)
        scale = 12.0 / tf.minimum(height, width)
        new_height, new_width = tf.cast(height * scale, tf.int32), tf.cast(width * scale, tf.int32)
        image = tf.image.resize_images(image, [new_height, new_width])
        shape = tf.shape(image)
        top, left = (shape[0] - 10) // 2, (shape[1] - 10) // 2
        return tf.slice(image, [top, left, 0], [10, 10, -1])

    ds = tf.data.Dataset.from_tensor_slices(np.array([BIG, FILES["jpeg"], BIG], dtype=object)).map(preprocess)
    out = list(ds.elements())
    assert [o.shape for o in out] == [(10, 10, 3)] * 3
    big = kiln.image.resize_on_host(tf.image.decode_jpeg(BIG), [12, 16], "bilinear", False, False)
    np.testing.assert_allclose(out[0], big[1:11, 3:13], atol=1e-5)
    small = kiln.image.resize_on_host(tf.image.decode_jpeg(FILES["jpeg"]), [12, 14], "bilinear", False, False)
    np.testing.assert_allclose(out[1], small[1:11, 2:12], atol=1e-5)
    fn = _map_function.MapFunction(preprocess, "test")
    fn(BIG, 0, 0)
    fn(FILES["jpeg"], 1, 0)
    assert sum(len(t) for t in fn.traces.values()) == 1  # one trace serves both sizes


def test_a_header_declaring_a_huge_image_is_refused_before_any_allocation():
    data = bytearray(BIG)
    sof = data.index(b"\xff\xc0")  # baseline frame header: length(2) precision(1) height(2) width(2)
    data[sof + 5:sof + 9] = (30000).to_bytes(2, "big") + (30000).to_bytes(2, "big")
    assert tf.image.extract_jpeg_shape(bytes(data)).tolist() == [30000, 30000, 3]
    for decode in (lambda d: tf.image.decode_jpeg(d), lambda d: tf.image.decode_and_crop_jpeg(d, [0, 0, 8, 8])):
        with pytest.raises(kiln.DataError, match=r"declares 30000x30000x3 samples, more than the 2\^29 bytes"):
            decode(bytes(data))


def distort_color(image, color_ordering=0):
    """slim's inception_preprocessing.distort_color, as written."""
    if color_ordering == 0:
        image = tf.image.random_brightness(image, max_delta=32. / 255.)
        image = tf.image.random_saturation(image, lower=0.5, upper=1.5)
        image = tf.image.random_hue(image, max_delta=0.2)
        image = tf.image.random_contrast(image, lower=0.5, upper=1.5)
    else:
        image = tf.image.random_saturation(image, lower=0.5, upper=1.5)
        image = tf.image.random_brightness(image, max_delta=32. / 255.)
        image = tf.image.random_contrast(image, lower=0.5, upper=1.5)
        image = tf.image.random_hue(image, max_delta=0.2)
    return tf.clip_by_value(image, 0.0, 1.0)


def test_colour_jitter_draws_per_element_within_its_ranges():
    def fn(data):
        image = tf.image.convert_image_dtype(tf.image.decode_jpeg(data, channels=3), tf.float32)
        image = tf.image.resize_images(image, [12, 12])
        return distort_color(image, 0), distort_color(image, 1), tf.image.random_brightness(image, 0.1) - image

    ds = tf.data.Dataset.from_tensor_slices(np.array([BIG] * 6, dtype=object)).map(fn, seed=8)
    out, again = list(ds.elements()), list(ds.elements())
    for (a, b, delta), (a2, b2, _) in zip(out, again):
        assert a.shape == (12, 12, 3) and 0.0 <= a.min() and a.max() <= 1.0
        np.testing.assert_array_equal(a, a2)
        np.testing.assert_array_equal(b, b2)
        assert np.ptp(delta) < 1e-5 and abs(delta.mean()) <= 0.1 + 1e-6  # one brightness shift per image
    assert len({float(o[2].mean()) for o in out}) == 6  # drawn per element
    assert not np.allclose(out[0][0], out[1][0])
    with pytest.raises(ValueError, match=r"\[random_hue\] max_delta 0.7 must be in \[0, 0.5\]"):
        mapped(lambda d: tf.image.random_hue(tf.image.decode_jpeg(d), 0.7))
    with pytest.raises(ValueError, match=r"\[random_contrast\] upper 0.5 must be > lower 1.5"):
        mapped(lambda d: tf.image.random_contrast(tf.image.decode_jpeg(d), 1.5, 0.5))
    with pytest.raises(ValueError, match=r"\[adjust_saturation\] takes RGB images"):
        mapped(lambda d: tf.image.adjust_saturation(tf.image.decode_jpeg(d, channels=1), 2.0))


def test_encode_jpeg_writes_what_the_decoder_reads_back():
    from test_images import RGB
    big = want("big")
    errors = []
    for chroma in (True, False):
        data = tf.image.encode_jpeg(big, quality=95, chroma_downsampling=chroma)
        assert data[:3] == b"\xff\xd8\xff" and tf.image.extract_jpeg_shape(data).tolist() == [29, 41, 3]
        errors.append(np.abs(tf.image.decode_jpeg(data).astype(int) - big.astype(int)).mean())
    assert errors[1] < errors[0] < 6  # full-resolution colour is closer; both are close
    assert len(tf.image.encode_jpeg(big, quality=30)) < len(tf.image.encode_jpeg(big, quality=95))
    grey = tf.image.encode_jpeg(RGB[..., :1])
    assert tf.image.extract_jpeg_shape(grey).tolist() == [10, 12, 1]
    np.testing.assert_array_equal(tf.image.decode_png(tf.image.encode_png(RGB)), RGB)
    in_map = mapped(lambda b: tf.image.encode_jpeg(tf.image.decode_jpeg(b), quality=90))
    assert tf.image.extract_jpeg_shape(in_map).tolist() == [29, 41, 3]
    with pytest.raises(ValueError, match=r"\[encode_jpeg\] takes a uint8 image"):
        tf.image.encode_jpeg(big.astype(np.float32))
    with pytest.raises(kiln.ConfigError, match=r"quality 101 is not in 0-100"):
        tf.image.encode_jpeg(big, quality=101)
    with pytest.raises(ValueError, match=r"format 'grayscale' takes images of 1 channel\(s\)"):
        tf.image.encode_jpeg(big, format="grayscale")
    assert tf.image.extract_jpeg_shape(tf.image.encode_jpeg(big, format="rgb")).tolist() == [29, 41, 3]
    with pytest.raises(NotImplementedError, match="progressive"):
        tf.image.encode_jpeg(big, progressive=True)
    with pytest.raises(NotImplementedError, match=r"encode_png\(compression=9\)"):
        tf.image.encode_png(RGB, compression=9)
