"""tensorflow.python.ops.metrics: tf.metrics."""
# ruff: noqa: F401, F403, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln._src.unsupported import refuse_other_names
from kiln.metrics import *

__getattr__ = refuse_other_names('tensorflow.python.ops.metrics', "kiln's mirror of it holds those of kiln.metrics")
