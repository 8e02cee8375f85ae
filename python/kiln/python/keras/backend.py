"""tensorflow.python.keras.backend: tf.keras.backend."""
# ruff: noqa: F401, F403, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln._src.unsupported import refuse_other_names
from kiln.keras.backend import *

__getattr__ = refuse_other_names('tensorflow.python.keras.backend', "kiln's mirror of it holds those of kiln.keras.backend")
