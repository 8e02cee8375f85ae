"""TFRecord files from Python (tf.io.TFRecordWriter, tf.python_io.tf_record_iterator):
the files real TensorFlow wrote (tests/formats/fixtures) read back record for record, plain,
GZIP and ZLIB; kiln's writer gives TensorFlow's bytes; damage is a DataError naming the
file and the offset."""
import json
import os

import pytest

import kiln

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "formats", "fixtures")


def records():
    with open(os.path.join(FIXTURES, "expected.json")) as f:
        return [bytes.fromhex(h) for h in json.load(f)["records"]]


def test_reads_what_tensorflow_wrote():
    want = records()
    assert list(kiln.python_io.tf_record_iterator(os.path.join(FIXTURES, "examples.tfrecord"))) == want
    gz = kiln.io.TFRecordOptions(compression_type="GZIP")
    assert list(kiln.io.tf_record_iterator(os.path.join(FIXTURES, "examples.tfrecord.gz"), options=gz)) == want
    zl = kiln.python_io.TFRecordOptions(kiln.python_io.TFRecordCompressionType.ZLIB)
    assert list(kiln.python_io.tf_record_iterator(os.path.join(FIXTURES, "examples.tfrecord.zlib"), zl)) == want


def test_writes_tensorflows_bytes(tmp_path):
    want = records()
    path = tmp_path / "out.tfrecord"
    with kiln.io.TFRecordWriter(str(path)) as w:
        for r in want:
            w.write(r)
    with open(os.path.join(FIXTURES, "examples.tfrecord"), "rb") as f:
        assert path.read_bytes() == f.read()
    with kiln.io.TFRecordWriter(tmp_path / "out.gz", options="GZIP") as w:
        for r in want:
            w.write(r)
    assert list(kiln.io.tf_record_iterator(tmp_path / "out.gz", options="GZIP")) == want


def test_damage_and_bad_options_are_clear_errors(tmp_path):
    with open(os.path.join(FIXTURES, "examples.tfrecord"), "rb") as f:
        data = bytearray(f.read())
    data[20] ^= 0x01  # inside the first record's bytes
    bad = tmp_path / "bad.tfrecord"
    bad.write_bytes(bytes(data))
    with pytest.raises(kiln.DataError, match=r"bad.tfrecord' is damaged at offset 0: the data's CRC-32C"):
        list(kiln.io.tf_record_iterator(str(bad)))
    with pytest.raises(kiln.DataError, match="is not GZIP"):
        list(kiln.io.tf_record_iterator(os.path.join(FIXTURES, "examples.tfrecord"), options="GZIP"))
    with pytest.raises(ValueError, match=r"\[compression_type\] 'LZ4'"):
        kiln.io.TFRecordOptions("LZ4")
    with pytest.raises(TypeError, match="takes bytes"):
        kiln.io.TFRecordWriter(str(tmp_path / "x")).write(3)
    with pytest.raises(kiln.DataError, match="cannot open"):
        list(kiln.io.tf_record_iterator(str(tmp_path / "missing")))
