"""TFRecord files from Python, as tf.io / tf.python_io give them: TFRecordWriter,
tf_record_iterator, TFRecordOptions, TFRecordCompressionType. The framing (length, masked
CRC-32C of the length, the bytes, masked CRC-32C of the bytes), plain or GZIP or ZLIB, is
kiln's C++ reader and writer (the bytes TensorFlow writes); a damaged record is a
kiln.DataError naming the file and the record's offset."""
import os

from . import _core


class TFRecordCompressionType:
    NONE = 0
    ZLIB = 1
    GZIP = 2


_NAMES = {None: "", "": "", "NONE": "", "GZIP": "GZIP", "ZLIB": "ZLIB",
          TFRecordCompressionType.NONE: "", TFRecordCompressionType.ZLIB: "ZLIB", TFRecordCompressionType.GZIP: "GZIP"}


class TFRecordOptions:
    """tf.io.TFRecordOptions(compression_type): '' / None, 'GZIP', 'ZLIB' (or a
    TFRecordCompressionType); the zlib tuning arguments are TensorFlow's defaults only."""

    def __init__(self, compression_type=None, **zlib_settings):
        if zlib_settings:
            from ._graph import unsupported
            unsupported("TFRecordOptions(%s=...)" % ", ".join(sorted(zlib_settings)), "kiln uses zlib's defaults")
        if compression_type not in _NAMES:
            raise ValueError("[compression_type] %r is not one of: '' (none), 'GZIP', 'ZLIB'" % (compression_type,))
        self.compression_type = _NAMES[compression_type]


def _compression(options):
    if options is None:
        return ""
    if isinstance(options, TFRecordOptions):
        return options.compression_type
    return TFRecordOptions(options).compression_type


class TFRecordWriter:
    """tf.io.TFRecordWriter(path, options=None): write(bytes) per record; a context manager."""

    def __init__(self, path, options=None):
        self._w = _core.RecordWriter(os.fspath(path), _compression(options))

    def write(self, record):
        if isinstance(record, str):
            record = record.encode()
        if not isinstance(record, (bytes, bytearray, memoryview)):
            raise TypeError("[TFRecordWriter.write] takes bytes (a serialized record), not %s" % type(record).__name__)
        self._w.write(bytes(record))

    def flush(self):
        self._w.flush()

    def close(self):
        self._w.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def tf_record_iterator(path, options=None):
    """tf.python_io.tf_record_iterator: each record of a TFRecord file, as bytes."""
    r = _core.RecordReader(os.fspath(path), _compression(options))
    while True:
        rec = r.next()
        if rec is None:
            return
        yield rec
