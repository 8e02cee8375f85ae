"""kiln/_src/parsing.py: tf.train.Example parsing's defaults and spec checks, called on bytes and
in the function of Dataset.map (whose elements run in C++, src/formats/example.cpp)."""
import numpy as np
import pytest

import kiln as tf

EXACT = [2**63 - 1, -2**63, 2**53 + 1]  # through a double: -2**63, -2**63, 2**53


def example(**ints):
    return tf.train.Example(features=tf.train.Features(feature={
        k: tf.train.Feature(int64_list=tf.train.Int64List(value=v)) for k, v in ints.items()})).SerializeToString()


def test_int64_defaults_are_exact_on_bytes():
    record = example(present=[1])
    for v in EXACT:
        got = tf.parse_single_example(record, {"missing": tf.FixedLenFeature([], tf.int64, default_value=v)})
        assert got["missing"].dtype == np.int64 and int(got["missing"]) == v
    got = tf.io.parse_example([record, record], {"m": tf.io.FixedLenFeature([3], tf.int64, default_value=EXACT)})
    assert got["m"].tolist() == [EXACT, EXACT]
    got = tf.parse_single_example(record, {"m": tf.FixedLenFeature([2], tf.int64, default_value=np.int64(-2**63))})
    assert got["m"].tolist() == [-2**63, -2**63]


def test_int64_defaults_are_exact_through_dataset_map(tmp_path):
    path = str(tmp_path / "ints.tfrecord")
    with tf.io.TFRecordWriter(path) as w:
        for i in range(3):
            w.write(example(present=[i]))
    spec = {"present": tf.FixedLenFeature([], tf.int64)}
    spec.update({"d%d" % i: tf.FixedLenFeature([], tf.int64, default_value=v) for i, v in enumerate(EXACT)})
    ds = tf.data.TFRecordDataset(path).map(lambda r: tf.parse_single_example(r, spec)).batch(3)
    batches = list(ds)
    assert len(batches) == 1
    for i, v in enumerate(EXACT):
        assert np.asarray(batches[0]["d%d" % i]).tolist() == [v, v, v]


def test_an_int64_default_that_is_not_one_is_refused():
    record = example(present=[1])
    with pytest.raises(ValueError, match=r"feature 'm': default_value 2\.5 is not an int64"):
        tf.parse_single_example(record, {"m": tf.FixedLenFeature([], tf.int64, default_value=2.5)})
    with pytest.raises(ValueError, match=r"feature 'm': default_value 9223372036854775808 is outside int64's range"):
        tf.parse_single_example(record, {"m": tf.FixedLenFeature([], tf.int64, default_value=2**63)})


def test_a_shape_of_more_than_2_63_elements_names_the_feature():
    record = example(present=[1])
    for default in (None, 0):
        with pytest.raises(ValueError, match=r"\[parse_example\] feature 'image': shape \[4294967296, 4294967296\] "
                                             r"has more than 2\^63 elements"):
            tf.parse_single_example(record, {"image": tf.FixedLenFeature([2**32, 2**32], tf.int64,
                                                                         default_value=default)})
