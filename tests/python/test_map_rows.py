"""Dataset.map and filter on a from_tensor_slices dataset run its rows in the C++ element
loop (_map_loops.map_rows: no Python per row, one thread per core, results written in
place) when the function's trace has a C++ form. Held to the Python row loop
(_map_loops.element_loop = "python") bit for bit: features, dicts of several features,
labels, across chunk boundaries; datasets the plan cannot take keep the Python loop, and
predicates that are not one bool per row get its errors."""
import numpy as np
import pytest

import kiln as tf
from kiln._src import map_loops as _map_loops


def mapped(make, loop):
    previous, _map_loops.element_loop = _map_loops.element_loop, loop
    before = _map_loops.loop_counts["cpp"]
    try:
        d = make()
    finally:
        _map_loops.element_loop = previous
    arrays = [d._features, d._labels] + [a for _, a in d._more]
    return arrays, (d._feature_key, d._label_key, [k for k, _ in d._more]), _map_loops.loop_counts["cpp"] - before


def assert_loops_agree(make, rows):
    cpp, cpp_keys, cpp_count = mapped(make, "auto")
    py, py_keys, py_count = mapped(make, "python")
    assert cpp_count == rows and py_count == 0
    assert cpp_keys == py_keys
    for a, b in zip(cpp, py):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_array_equal(a, b)
    return cpp


@pytest.mark.parametrize("rows", [1, 5, 2500])  # 2500: across the 2048-row chunks
def test_images_to_rgb_floats_as_the_python_loop(rows):
    images = ((np.arange(rows * 6 * 5) * 7) % 256).astype(np.uint8).reshape(rows, 6, 5, 1)
    labels = (np.arange(rows) % 10).astype(np.int32)

    def rgb(image, label):
        return {"images": tf.image.grayscale_to_rgb((1.0 / 255.0) * tf.to_float(image))}, {"labels": label}

    arrays = assert_loops_agree(lambda: tf.data.Dataset.from_tensor_slices((images, labels)).map(rgb), rows)
    np.testing.assert_array_equal(arrays[0][:, :, :, 2], images[..., 0] * np.float32(1.0 / 255.0))
    np.testing.assert_array_equal(arrays[1], labels)


def test_several_features_host_reshapes_and_no_labels():
    x = np.arange(300 * 4, dtype=np.float32).reshape(300, 4)
    ids = np.arange(300, dtype=np.int64)

    def fn(row):
        return {"x": tf.reshape(row["x"], [2, 2]) * 2.0, "id": row["id"] + 1, "sum": tf.reduce_sum(row["x"])}

    arrays = assert_loops_agree(lambda: tf.data.Dataset.from_tensor_slices({"x": x, "id": ids}).map(fn), 300)
    np.testing.assert_array_equal(arrays[0], x.reshape(300, 2, 2) * 2)


def test_a_shards_strided_rows():
    x = np.arange(40 * 3, dtype=np.float32).reshape(40, 3)
    arrays = assert_loops_agree(lambda: tf.data.Dataset.from_tensor_slices(x).shard(3, 1).map(lambda r: r * 2.0), 13)
    np.testing.assert_array_equal(arrays[0], x[1::3] * 2)


def test_the_mapped_dataset_keeps_the_ops_before_the_map():
    x = np.arange(64 * 3, dtype=np.float32).reshape(64, 3)
    y = np.arange(64, dtype=np.int32) % 2
    src = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(64, seed=3).repeat(2)
    d = src.map(lambda a, b: (a * 0.5, b))
    assert d._ops == src._ops and d._ops
    np.testing.assert_array_equal(d._features, x * np.float32(0.5))


def test_a_trace_without_a_plan_keeps_the_python_loop(monkeypatch):
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    monkeypatch.setattr(_map_loops.MapFunction, "plan", lambda self, key: None)
    before = _map_loops.loop_counts["cpp"]
    d = tf.data.Dataset.from_tensor_slices(x).map(lambda r: r + 1.0)
    assert _map_loops.loop_counts["cpp"] == before
    np.testing.assert_array_equal(d._features, x + 1)


def test_filter_runs_its_rows_in_cpp_as_the_python_loop():
    x = np.arange(3000 * 2, dtype=np.float32).reshape(3000, 2)
    y = (np.arange(3000) % 7).astype(np.int32)

    def make():
        return tf.data.Dataset.from_tensor_slices((x, y)).filter(lambda a, b: tf.logical_and(b > 2, a[0] > 100.0))
    cpp, _, cpp_count = mapped(make, "auto")
    py, _, py_count = mapped(make, "python")
    assert cpp_count == 3000 and py_count == 0
    keep = (y > 2) & (x[:, 0] > 100)
    for a, b, want in zip(cpp[:2], py[:2], (x[keep], y[keep])):
        np.testing.assert_array_equal(a, want)
        np.testing.assert_array_equal(b, want)


def test_filter_predicates_that_are_not_one_bool_say_so():
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    with pytest.raises(TypeError, match="must return a scalar bool tensor"):
        tf.data.Dataset.from_tensor_slices(x).filter(lambda a: a > 1.0)
    with pytest.raises(ValueError, match="keeps none of the 3 examples"):
        tf.data.Dataset.from_tensor_slices(x).filter(lambda a: a[0] > 100.0)
