"""tensorflow.python.ops.nn: tf.nn."""
# ruff: noqa: F401, F403, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln._src.unsupported import refuse_other_names
from kiln.nn import *

__getattr__ = refuse_other_names('tensorflow.python.ops.nn', "kiln's mirror of it holds those of kiln.nn")
