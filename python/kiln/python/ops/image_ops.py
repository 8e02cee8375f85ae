"""tensorflow.python.ops.image_ops: tf.image."""
# ruff: noqa: F401, F403, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln._src.unsupported import refuse_other_names
from kiln.image import *

__getattr__ = refuse_other_names('tensorflow.python.ops.image_ops', "kiln's mirror of it holds those of kiln.image")
