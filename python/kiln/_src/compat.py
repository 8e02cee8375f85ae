"""The smaller corners of TensorFlow 1.x's top level that scripts touch: tf.gradients, static
asserts, the session-option messages, the top-level initializer names, the to_* casts, and
v2-behaviour switches (no-ops: kiln is graph-mode only)."""

import numpy as np

from kiln import _core
from kiln._src import array_ops as _array_ops
from kiln._src import dtypes as _dtypes
from kiln._src import graph as _graph
from kiln._src import initializers as _init
from kiln._src import scopes as _scopes
from kiln._src.dtypes import as_dtype, from_kiln
from kiln._src.graph import Tensor, convert_to_tensor, unsupported


def gradients(ys, xs, grad_ys=None, name="gradients", colocate_gradients_with_ops=False, gate_gradients=False,
              aggregation_method=None, stop_gradients=None, unconnected_gradients="none"):
    """tf.gradients: d(sum of ys, each weighted by its grad_ys) / d(each of xs)."""
    ys = list(ys) if isinstance(ys, (list, tuple)) else [ys]
    xs_list = list(xs) if isinstance(xs, (list, tuple)) else [xs]
    gys = [None] * len(ys) if grad_ys is None else (list(grad_ys) if isinstance(grad_ys, (list, tuple)) else [grad_ys])
    if stop_gradients:
        unsupported("gradients(stop_gradients=...)", "use kiln.stop_gradient where the values are made")
    total = None
    for y, gy in zip(ys, gys):
        y = convert_to_tensor(y, op="gradients")
        term = _graph.reduce_sum(y if gy is None else y * gy)
        total = term if total is None else total + term
    return list(_core.gradients(total, [convert_to_tensor(x, op="gradients") for x in xs_list]))


def _static(x, op):
    v = x if not isinstance(x, Tensor) else _array_ops.static_value(x)
    if v is None:
        unsupported("%s on values computed in the graph" % op, "kiln checks shapes and constants while the graph "
                    "is built; assert on those, or check the data in the input pipeline")
    return np.asarray(v)


def assert_equal(x, y, data=None, summarize=None, message=None, name=None):
    if isinstance(x, Tensor) and isinstance(y, Tensor) and x._same(y):
        return _scopes.no_op()
    if not np.array_equal(_static(x, "assert_equal"), _static(y, "assert_equal")):
        raise _core.GraphError("[assert_equal] %s%r != %r" % ((message + ": ") if message else "", x, y))
    return _scopes.no_op()


def assert_rank(x, rank, message=None, name=None):
    r = len(convert_to_tensor(x, op="assert_rank")._shape)
    if r != int(rank):
        raise _core.GraphError("[assert_rank] %stensor has rank %d, not %d" % ((message + ": ") if message else "", r,
                                                                               int(rank)))
    return _scopes.no_op()


def assert_type(tensor, tf_type, message=None, name=None):
    if from_kiln(tensor._dtype) != as_dtype(tf_type):
        raise _core.GraphError("[assert_type] %s is not %s" % (from_kiln(tensor._dtype).name, as_dtype(tf_type).name))
    return _scopes.no_op()


def _cast_to(dtype_name):
    def convert(x, name=None):
        return _graph.named(_graph.cast(x, getattr(_dtypes, dtype_name)), name)
    convert.__name__ = "to_" + {"float32": "float", "float64": "double"}.get(dtype_name, dtype_name)
    convert.__doc__ = "tf.%s (TensorFlow 1.x): cast to %s." % (convert.__name__, dtype_name)
    return convert


to_float = _cast_to("float32")
to_double = _cast_to("float64")
to_int32 = _cast_to("int32")
to_int64 = _cast_to("int64")
to_bfloat16 = _cast_to("bfloat16")


def is_tensor(x):
    return isinstance(x, Tensor)


def executing_eagerly():
    return False


def disable_eager_execution():
    pass


def disable_v2_behavior():
    pass


def enable_eager_execution(*args, **kwargs):
    unsupported("enable_eager_execution", "kiln builds graphs inside an Estimator's model_fn")



# Initializer spellings at the top level (tf.zeros_initializer, ...).
variance_scaling_initializer = _init.variance_scaling
truncated_normal_initializer = _init.truncated_normal
glorot_uniform_initializer = _init.glorot_uniform
glorot_normal_initializer = _init.glorot_normal
zeros_initializer = _init.zeros
ones_initializer = _init.ones
constant_initializer = _init.constant
random_normal_initializer = _init.random_normal
random_uniform_initializer = _init.random_uniform


def uniform_unit_scaling_initializer(factor=1.0, seed=None, dtype=None):
    """U(+-sqrt(3 / fan_in) * factor): variance_scaling(factor^2, fan_in, uniform)."""
    return _init.variance_scaling(float(factor) ** 2, "fan_in", "uniform", seed)
