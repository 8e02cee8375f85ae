"""tensorflow.python.framework.constant_op: constants."""
# ruff: noqa: F401, F403, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln import constant
from kiln._src.unsupported import refuse_other_names

__getattr__ = refuse_other_names('tensorflow.python.framework.constant_op', "kiln's mirror of it holds the names kiln implements, listed in python/kiln/python/framework/constant_op.py")
