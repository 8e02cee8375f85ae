"""tensorflow.python.ops.control_flow_ops: cond, group, no_op, tuple."""
# ruff: noqa: F401, F403, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln import cond, group, no_op, tuple
from kiln._src.unsupported import refuse_other_names

__getattr__ = refuse_other_names('tensorflow.python.ops.control_flow_ops', "kiln's mirror of it holds the names kiln implements, listed in python/kiln/python/ops/control_flow_ops.py")
