"""tf.python_io (TensorFlow 1.x): TFRecord files from Python."""
# ruff: noqa: F401, A004
# (a package of names: each is imported to be re-exported, some shadowing builtins as TensorFlow's do)
from kiln._src.records import TFRecordCompressionType, TFRecordOptions, TFRecordWriter, tf_record_iterator
