"""tensorflow.python.ops.state_ops: assignments to variables."""
# ruff: noqa: F401, F403, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln import assign, assign_add, assign_sub
from kiln._src.unsupported import refuse_other_names

__getattr__ = refuse_other_names('tensorflow.python.ops.state_ops', "kiln's mirror of it holds the names kiln implements, listed in python/kiln/python/ops/state_ops.py")
