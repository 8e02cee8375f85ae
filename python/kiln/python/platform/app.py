"""tensorflow.python.platform.app: tf.app."""
# ruff: noqa: F401, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln._src.unsupported import refuse_other_names
from kiln.app import run

__getattr__ = refuse_other_names('tensorflow.python.platform.app', "kiln's mirror of it holds the names kiln implements, listed in python/kiln/python/platform/app.py")
