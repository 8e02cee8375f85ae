"""Inception-style map functions in the C++ element loop (src/data/element_plan.h): a
VarLenFeature of boxes shaped on the host (expand_dims, concat, transpose),
extract_jpeg_shape, sample_distorted_bounding_box, unstack/stack of its window,
decode_and_crop_jpeg and a bilinear resize; the evaluation form's resize and
central_crop; the other small-value ops (squeeze, reshape, cast) and nearest resizes.
Held to the Python element loop bit for bit, as test_element_loop holds the plain ones;
sample_distorted_bounding_box and the host resizes are one C++ implementation that both
loops call, so what these tests hold is the plan's wiring of slots, attributes and draws."""
import numpy as np
import pytest
from test_element_loop import assert_same, jpeg, run

import kiln as tf
from kiln._src import map_loops as _map_loops

SIZES = ((60, 80), (72, 54), (64, 64))


def write_boxed(path, n, boxes=True):
    """Records as ImageNet's TFRecords hold them: a JPEG, a label, 0-2 boxes per image."""
    with tf.io.TFRecordWriter(str(path)) as w:
        for i in range(n):
            k = i % 3 if boxes else 0
            ymin = [0.1 * (j + 1) for j in range(k)]
            xmin = [0.05 * (j + 1) for j in range(k)]
            feature = {"image/encoded": tf.train.Feature(bytes_list=tf.train.BytesList(value=[jpeg(i, SIZES[i % 3])])),
                       "image/class/label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 10 + 1]))}
            for key, values in (("ymin", ymin), ("xmin", xmin), ("ymax", [v + 0.5 for v in ymin]),
                                ("xmax", [v + 0.4 for v in xmin])):
                feature["image/object/bbox/" + key] = tf.train.Feature(float_list=tf.train.FloatList(value=values))
            w.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
    return str(path)


def parse(record):
    spec = {"image/encoded": tf.FixedLenFeature([], tf.string, default_value=""),
            "image/class/label": tf.FixedLenFeature([], tf.int64, default_value=-1)}
    spec.update({"image/object/bbox/" + k: tf.VarLenFeature(tf.float32) for k in ("xmin", "ymin", "xmax", "ymax")})
    f = tf.parse_single_example(record, spec)
    corner = [tf.expand_dims(f["image/object/bbox/" + k].values, 0) for k in ("ymin", "xmin", "ymax", "xmax")]
    bbox = tf.transpose(tf.expand_dims(tf.concat(corner, 0), 0), [0, 2, 1])
    return f["image/encoded"], tf.cast(f["image/class/label"], tf.int32), bbox


def train_fn(record):
    contents, label, bbox = parse(record)
    begin, size, _ = tf.image.sample_distorted_bounding_box(
        tf.image.extract_jpeg_shape(contents), bounding_boxes=bbox, min_object_covered=0.1,
        aspect_ratio_range=(0.75, 1.33), area_range=(0.08, 1.0), max_attempts=10, use_image_if_no_bounding_boxes=True)
    y, x, _ = tf.unstack(begin)
    h, w, _ = tf.unstack(size)
    image = tf.image.decode_and_crop_jpeg(contents, tf.stack([y, x, h, w]), channels=3)
    image = tf.image.random_flip_left_right(tf.image.resize_images(image, [32, 32]))
    return (image - 127.0) / 64.0, label - 1


def eval_fn(record):
    contents, label, _ = parse(record)
    image = tf.image.resize_images(tf.image.decode_jpeg(contents, channels=3), [40, 40])
    return tf.image.central_crop(image, 0.8) / 255.0, label - 1


@pytest.mark.parametrize("fn", [train_fn, eval_fn])
def test_inception_crops_run_in_cpp_as_in_python(tmp_path, fn):
    path = write_boxed(tmp_path / "a.tfrecord", 30)

    def make():
        return tf.data.TFRecordDataset([path]).map(fn, num_parallel_calls=2, seed=3).batch(8).repeat(2)
    native, counts = run("auto", make)
    assert_same(native, run("python", make)[0])
    assert counts.get("cpp", 0) == 2 * 29 and counts.get("python", 0) == 2
    assert native[0][0].shape == (8, 32, 32, 3) and native[0][0].dtype == np.float32  # eval: central 0.8 of 40
    assert native[0][1].tolist() == [i % 10 for i in range(8)]
    if fn is train_fn:  # windows differ between passes: the draws are keyed by position
        assert not np.array_equal(native[0][0], native[4][0])


def test_windows_cover_a_box_and_images_without_boxes_use_the_image(tmp_path):
    path = write_boxed(tmp_path / "a.tfrecord", 24)

    def windows(record):
        contents, _, bbox = parse(record)
        shape = tf.image.extract_jpeg_shape(contents)
        begin, size, box = tf.image.sample_distorted_bounding_box(shape, bbox, min_object_covered=0.5,
                                                                  use_image_if_no_bounding_boxes=True)
        return shape, begin, size, box, bbox
    make = lambda: tf.data.TFRecordDataset([path]).map(windows, seed=4)
    native, counts = run("auto", make)
    assert_same(native, run("python", make)[0])
    assert counts.get("cpp", 0) == 23
    for shape, begin, size, box, bbox in native:
        h, w = int(shape[0]), int(shape[1])
        y, x, hh, ww = int(begin[0]), int(begin[1]), int(size[0]), int(size[1])
        assert begin.dtype == np.int32 and size[2] == -1 and 0 <= y and y + hh <= h and 0 <= x and x + ww <= w
        np.testing.assert_allclose(box.reshape(-1), [y / h, x / w, (y + hh) / h, (x + ww) / w], rtol=1e-6)
        boxes = [(int(b[1] * w), int(b[0] * h), int(b[3] * w), int(b[2] * h)) for b in bbox.reshape(-1, 4)] or \
            [(0, 0, w, h)]
        covered = [max(0, min(x + ww, x1) - max(x, x0)) * max(0, min(y + hh, y1) - max(y, y0)) / ((x1 - x0) * (y1 - y0))
                   for x0, y0, x1, y1 in boxes]
        assert max(covered) >= 0.5 or (y, x, hh, ww) == (0, 0, h, w)  # a covering window, or the whole image


def test_small_value_ops_and_nearest_resizes(tmp_path):
    path = write_boxed(tmp_path / "a.tfrecord", 12)

    def fn(record):
        contents, label, _ = parse(record)
        shape = tf.cast(tf.image.extract_jpeg_shape(contents, output_type=tf.int64), tf.float32)
        image = tf.image.decode_jpeg(contents, channels=3)
        small = tf.image.resize_nearest_neighbor(image, [9, 7], align_corners=True)  # a host op: sizes vary
        hw = tf.reshape(tf.squeeze(tf.reshape(shape, [1, 3, 1]), [2]), [-1])
        return small, hw, label
    make = lambda: tf.data.TFRecordDataset([path]).map(fn).batch(4)
    native, counts = run("auto", make)
    assert_same(native, run("python", make)[0])
    assert counts.get("cpp", 0) == 11
    assert native[0][0].dtype == np.uint8 and native[0][0].shape == (4, 9, 7, 3)
    assert native[0][1][1].tolist() == [72.0, 54.0, 3.0]


def test_bad_boxes_are_the_same_error_in_both_loops(tmp_path):
    path = str(tmp_path / "a.tfrecord")
    with tf.io.TFRecordWriter(path) as w:
        for i, ymin in enumerate([0.1, 0.2, 1.5]):  # the third box is outside [0, 1]
            feature = {"image/encoded": tf.train.Feature(bytes_list=tf.train.BytesList(value=[jpeg(i, (40, 40))]))}
            for key, v in (("ymin", ymin), ("xmin", 0.1), ("ymax", 0.9), ("xmax", 0.9)):
                feature["image/object/bbox/" + key] = tf.train.Feature(float_list=tf.train.FloatList(value=[v]))
            w.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
    messages = []
    for loop in ("auto", "python"):
        previous, _map_loops.element_loop = _map_loops.element_loop, loop
        try:
            with pytest.raises(ValueError, match=r"\[sample_distorted_bounding_box\] every bounding box") as e:
                list(tf.data.TFRecordDataset([path]).map(train_fn, num_parallel_calls=2).elements())
        finally:
            _map_loops.element_loop = previous
        messages.append(str(e.value))
    assert messages[0] == messages[1]
