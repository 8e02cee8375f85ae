"""tensorflow.python.summary.summary: tf.summary."""
# ruff: noqa: F401, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln._src.unsupported import refuse_other_names
from kiln.summary import (
    FileWriter,
    FileWriterCache,
    Summary,
    audio,
    convert_to_tensor,
    current,
    histogram,
    histogram_value,
    image,
    image_values,
    merge,
    merge_all,
    scalar,
    tensor_summary,
    text,
    write_values,
)

__getattr__ = refuse_other_names('tensorflow.python.summary.summary', "kiln's mirror of it holds the names kiln implements, listed in python/kiln/python/summary/summary.py")
