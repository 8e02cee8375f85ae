"""tensorflow.python.ops.random_ops: random tensors."""
# ruff: noqa: F401, F403, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln import random_normal, random_uniform, truncated_normal
from kiln._src.unsupported import refuse_other_names
from kiln.image import random_crop

__getattr__ = refuse_other_names('tensorflow.python.ops.random_ops', "kiln's mirror of it holds the names kiln implements, listed in python/kiln/python/ops/random_ops.py")
