"""tensorflow.python.ops.init_ops: variable initialisers."""
# ruff: noqa: F401, F403, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln import (
    constant_initializer,
    glorot_normal_initializer,
    glorot_uniform_initializer,
    ones_initializer,
    random_normal_initializer,
    random_uniform_initializer,
    truncated_normal_initializer,
    uniform_unit_scaling_initializer,
    variance_scaling_initializer,
    zeros_initializer,
)
from kiln._src.unsupported import refuse_other_names

__getattr__ = refuse_other_names('tensorflow.python.ops.init_ops', "kiln's mirror of it holds the names kiln implements, listed in python/kiln/python/ops/init_ops.py")
