"""TFRecord files from Python, as tf.io / tf.python_io give them. The names; their code is in
kiln._src.records."""
# ruff: noqa: F401, A004
# (a package of names: each is imported to be re-exported, some shadowing builtins as TensorFlow's do)
from kiln._src.records import (
    TFRecordCompressionType,
    TFRecordOptions,
    TFRecordWriter,
    tf_record_iterator,
    tfrecord_dataset,
)
