"""tensorflow.python.framework.tensor_shape: static shapes."""
# ruff: noqa: F401, F403, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln import Dimension, TensorShape
from kiln._src.unsupported import refuse_other_names

__getattr__ = refuse_other_names('tensorflow.python.framework.tensor_shape', "kiln's mirror of it holds the names kiln implements, listed in python/kiln/python/framework/tensor_shape.py")
