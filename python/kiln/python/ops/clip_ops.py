"""tensorflow.python.ops.clip_ops: clipping values and gradients."""
# ruff: noqa: F401, F403, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln import clip_by_average_norm, clip_by_global_norm, clip_by_norm, clip_by_value, global_norm
from kiln._src.unsupported import refuse_other_names

__getattr__ = refuse_other_names('tensorflow.python.ops.clip_ops', "kiln's mirror of it holds the names kiln implements, listed in python/kiln/python/ops/clip_ops.py")
