"""tensorflow.python.ops.array_ops: shapes, slicing, joining and creating tensors."""
# ruff: noqa: F401, F403, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln import (
    boolean_mask,
    concat,
    ensure_shape,
    expand_dims,
    fill,
    gather,
    identity,
    one_hot,
    ones,
    ones_like,
    pad,
    placeholder,
    rank,
    reshape,
    reverse,
    reverse_v2,
    shape,
    shape_n,
    size,
    slice,
    split,
    squeeze,
    stack,
    stop_gradient,
    tile,
    transpose,
    unstack,
    where,
    zeros,
    zeros_like,
)
from kiln._src.unsupported import refuse_other_names

__getattr__ = refuse_other_names('tensorflow.python.ops.array_ops', "kiln's mirror of it holds the names kiln implements, listed in python/kiln/python/ops/array_ops.py")
