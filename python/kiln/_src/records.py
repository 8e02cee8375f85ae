"""TFRecord files from Python, as tf.io / tf.python_io give them: TFRecordWriter,
tf_record_iterator, TFRecordOptions, TFRecordCompressionType. The framing (length, masked
CRC-32C of the length, the bytes, masked CRC-32C of the bytes), plain or GZIP or ZLIB, is
kiln's C++ reader and writer (the bytes TensorFlow writes); a damaged record is a
kiln.DataError naming the file and the record's offset."""
import os

from kiln import _core
from kiln._src.dtypes import string
from kiln._src.generator_dataset import GeneratorDataset, interleave
from kiln._src.graph import unsupported


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


def tfrecord_dataset(filenames, compression_type=None, buffer_size=None, num_parallel_reads=None):
    """tf.data.TFRecordDataset: the records of `filenames` (a path or a list of them) as
    bytes elements, file after file, or with num_parallel_reads > 1 interleaved from that
    many files at once, record by record, as tf.data does. buffer_size (bytes of read
    buffer) is checked and changes no record: kiln's reader sizes its buffer itself."""
    if isinstance(filenames, (str, bytes, os.PathLike)):
        filenames = [filenames]
    try:
        files = [os.fsdecode(f) for f in filenames]
    except TypeError:
        raise TypeError("[TFRecordDataset] filenames must be a path or a list of paths, not %r" % (filenames,)) from None
    if not files:
        raise ValueError("[TFRecordDataset] filenames is empty")
    for f in files:
        if not os.path.isfile(f):
            raise FileNotFoundError("[TFRecordDataset] %s: no such file" % f)
    if buffer_size is not None and (isinstance(buffer_size, bool) or not isinstance(buffer_size, int)
                                    or buffer_size < 0):
        raise ValueError("[TFRecordDataset] buffer_size %r must be None or an integer >= 0 (bytes)" % (buffer_size,))
    compression = TFRecordOptions(compression_type).compression_type
    cycle = 1 if num_parallel_reads in (None, 1) else num_parallel_reads
    if cycle == -1:  # AUTOTUNE
        cycle = len(files)
    if isinstance(cycle, bool) or not isinstance(cycle, int) or cycle < 1:
        raise ValueError("[TFRecordDataset] num_parallel_reads %r must be an integer >= 1 or AUTOTUNE" % (cycle,))
    return GeneratorDataset(lambda: interleave((tf_record_iterator(f, compression) for f in files), cycle, 1),
                            string, (), ())
