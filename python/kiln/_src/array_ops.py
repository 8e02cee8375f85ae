"""TensorFlow 1.x's array and math ops beyond the primitives (kiln.stack, kiln.shape,
kiln.cond, kiln.clip_by_global_norm, ...), composed from kiln's ops. kiln's shapes are
static: tf.shape(x) is a constant whose values stay known to the ops that take a shape."""
import numbers

import numpy as np

from kiln import _core
from kiln._src.dtypes import as_dtype, float32, int32
from kiln._src.dtypes import bool as _bool
from kiln._src.graph import (
    Tensor,
    TensorShape,
    _axes,
    _int_attr,
    concat,
    convert_to_tensor,
    current,
    exp,
    keep_narrow,
    log,
    maximum,
    minimum,
    named,
    on_host,
    reduce_max,
    reduce_min,
    reduce_sum,
    reshape,
    sqrt,
    unsupported,
    where,
)
from kiln._src.graph import convert_to_tensor as to_tensor
from kiln._src.map_function import HostValue

# --- values known while the graph is built ---------------------------------------------


def static_value(t):
    """The numpy value of a tensor whose value is known at graph-building time (tf.shape's
    result, its elements, constants made from numbers), else None."""
    if not isinstance(t, Tensor):
        return None
    return current("static_value").static_values.get(t._id)


def _known(t, value):
    current("static_value").static_values[t._id] = np.asarray(value)
    return t


def constant_of(value, dtype):
    """A constant tensor of `value` whose value stays known (static_value)."""
    arr = np.asarray(value)
    return _known(to_tensor(arr, dtype=dtype, op="constant"), arr)


def shape(input, name=None, out_type=int32):  # noqa: A002 (TensorFlow's name)
    if isinstance(input, HostValue):  # an image decoded in Dataset.map: its shape per element, on the host
        return input._trace.record(lambda v: np.array(np.shape(v), as_dtype(out_type).as_numpy_dtype), [input],
                                   keep=True)
    x = convert_to_tensor(input, op="shape")
    return named(constant_of(np.array(x._shape, dtype=np.int64), out_type), name)


def shape_n(inputs, out_type=int32, name=None):
    return [shape(x, out_type=out_type) for x in inputs]


def size(input, name=None, out_type=int32):  # noqa: A002
    x = convert_to_tensor(input, op="size")
    return named(constant_of(int(np.prod(x._shape, dtype=np.int64)), out_type), name)


def rank(input, name=None):  # noqa: A002
    return named(constant_of(len(convert_to_tensor(input, op="rank")._shape), int32), name)


def int_list(shape_like, op):
    """A shape given as ints, Dimensions, a list of those and of known tensors, or a known tensor."""
    if isinstance(shape_like, Tensor):
        v = static_value(shape_like)
        if v is None:
            unsupported("%s with a shape computed in the graph" % op, "kiln's shapes are static; give ints")
        return [int(d) for d in np.asarray(v).reshape(-1)]
    out = []
    for d in shape_like:
        if isinstance(d, Tensor):
            v = static_value(d)
            if v is None or np.asarray(v).size != 1:
                unsupported("%s with a shape computed in the graph" % op, "kiln's shapes are static; give ints")
            out.append(int(np.asarray(v).reshape(-1)[0]))
        elif d is None:
            out.append(-1)
        else:
            out.append(int(d))
    return out


# --- arrays -----------------------------------------------------------------------------


def stack(values, axis=0, name=None):
    """tf.stack: the tensors (of one shape) along a new axis."""
    h = on_host(lambda vs, a: np.stack([np.asarray(v) for v in vs], int(a)), list(values), axis,
                native=("stack", [0], lambda: {"axis": _int_attr(axis)}), moves=True)
    if h is not None:
        return h
    xs = [convert_to_tensor(v, op="stack") for v in values]
    if not xs:
        raise ValueError("[stack] needs at least one tensor")
    known = [np.asarray(v) if isinstance(v, (int, float, bool, np.generic)) else static_value(x)
             for v, x in zip(values, xs)]
    rank = len(xs[0]._shape)
    axis = axis + rank + 1 if axis < 0 else axis
    parts = [_core.reshape(x, list(x._shape[:axis]) + [1] + list(x._shape[axis:])) for x in xs]
    out = named(parts[0] if len(parts) == 1 else concat(parts, axis), name)
    if all(k is not None for k in known):
        _known(out, np.stack(known, axis))
    return out


def unstack(value, num=None, axis=0, name=None):
    h = on_host(lambda v, a: [np.asarray(x) for x in np.moveaxis(np.asarray(v), int(a), 0)], value, axis,
                native=("unstack", [0], lambda: {"axis": _int_attr(axis)}))
    if h is not None:
        return h
    x = convert_to_tensor(value, op="unstack")
    s = list(x._shape)
    axis = axis + len(s) if axis < 0 else axis
    out = []
    for i in range(s[axis]):
        begin = [0] * len(s)
        end = list(s)
        begin[axis], end[axis] = i, i + 1
        out.append(_core.reshape(_core.slice(x, begin, end), s[:axis] + s[axis + 1:]))
    return out


def split(value, num_or_size_splits, axis=0, num=None, name=None):
    x = convert_to_tensor(value, op="split")
    s = list(x._shape)
    axis = int(axis) + len(s) if int(axis) < 0 else int(axis)
    if isinstance(num_or_size_splits, numbers.Integral):
        n = int(num_or_size_splits)
        if s[axis] % n:
            raise ValueError("[split] axis %d of extent %d does not split into %d equal parts" % (axis, s[axis], n))
        sizes = [s[axis] // n] * n
    else:
        sizes = int_list(num_or_size_splits, "split")
        if -1 in sizes:
            sizes[sizes.index(-1)] = s[axis] - sum(z for z in sizes if z != -1)
    if sum(sizes) != s[axis]:
        raise ValueError("[split] sizes %s do not add up to axis %d's extent %d" % (sizes, axis, s[axis]))
    out, at = [], 0
    for z in sizes:
        begin, end = [0] * len(s), list(s)
        begin[axis], end[axis] = at, at + z
        out.append(_core.slice(x, begin, end))
        at += z
    return out


def tile(input, multiples, name=None):  # noqa: A002
    x = convert_to_tensor(input, op="tile")
    m = int_list(multiples, "tile")
    if len(m) != len(x._shape):
        raise ValueError("[tile] %d multiples for a tensor of rank %d" % (len(m), len(x._shape)))
    for axis, k in enumerate(m):
        if k != 1:
            x = concat([x] * k, axis)
    return named(x, name)


def fill(dims, value, name=None):
    d = int_list(dims, "fill")
    v = float(static_value(value)) if isinstance(value, Tensor) else value
    dtype = float32 if isinstance(v, float) else int32
    return named(_core.constant(current("fill").scope, float(v), dtype.kiln, d), name)


def range_(start, limit=None, delta=1, dtype=None, name="range"):  # tf.range, with static bounds
    args = (start, limit, delta)
    vals = [static_value(v) if isinstance(v, Tensor) else v for v in args]
    if any(isinstance(a, Tensor) and v is None for a, v in zip(args, vals)):
        unsupported("range with bounds computed in the graph", "kiln's shapes are static")
    # A bound computed from a None extent (tf.shape(x)[0], + 1, // 2, ...) holds the extent's
    # build-time stand-in, UNKNOWN_EXTENT: far beyond real extents.
    fed = any(isinstance(a, Tensor) and np.ndim(v) == 0 and (int(v) % _core.UNKNOWN_EXTENT == 0 and int(v) != 0
                                                              or abs(int(v)) >= _core.UNKNOWN_EXTENT // 2)
              for a, v in zip(args, vals))
    start, limit, delta = vals
    if limit is None:
        start, limit = 0, start
    if fed:
        unsupported("range over a dimension fed at run time (tf.range(tf.shape(x)[0]) of a placeholder's None "
                    "extent)", "kiln builds ranges as constants; give the placeholder that dimension, or gather "
                    "with indices fed in the feed_dict")
    arr = np.arange(start, limit, delta)
    dt = as_dtype(dtype) if dtype is not None else (float32 if arr.dtype.kind == "f" else int32)
    return named(constant_of(arr, dt), name)


def add_n(inputs, name=None):
    xs = [convert_to_tensor(x, op="add_n") for x in inputs]
    if not xs:
        raise ValueError("[add_n] needs at least one tensor")
    out = xs[0]
    for x in xs[1:]:
        out = out + x
    return named(out if len(xs) > 1 else identity_copy(out), name)


def identity_copy(t):
    return _core.add(t, _core.scalar_like(t, 0)) if t._dtype != "bool" else t


def gather(params, indices, validate_indices=None, name=None, axis=None, batch_dims=0):
    """tf.gather: rows of params (axis 0, or another axis through transposes)."""
    p = convert_to_tensor(params, op="gather")
    idx = convert_to_tensor(indices, dtype=None if isinstance(indices, Tensor) else int32, op="gather")
    axis = 0 if axis is None else int(static_value(axis) if isinstance(axis, Tensor) else axis)
    if batch_dims:
        unsupported("gather(batch_dims=...)", "kiln gathers rows of one table")
    rank = len(p._shape)
    axis = axis + rank if axis < 0 else axis
    if axis == 0:
        return named(keep_narrow(_core.gather(p, idx), p), name)
    perm = [axis] + [a for a in range(rank) if a != axis]
    g = _core.gather(_core.transpose(p, perm), idx)  # [idx..., rest...]
    ir = len(idx._shape)
    # rest is the other axes in order; put the index axes where `axis` was.
    order = list(range(ir, ir + axis)) + list(range(ir)) + list(range(ir + axis, ir + rank - 1))
    return named(keep_narrow(_core.transpose(g, order), p), name)


def cond(pred, true_fn=None, false_fn=None, strict=False, name=None, fn1=None, fn2=None):
    """tf.cond with both branches computed and the predicate choosing (kiln graphs have no
    branches): equal to TensorFlow's where the branches change no state. A known predicate
    (a Python bool, a constant) takes one branch only, as TensorFlow would."""
    true_fn = true_fn or fn1
    false_fn = false_fn or fn2
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError("[cond] true_fn and false_fn must be callables")
    known = pred if isinstance(pred, (bool, np.bool_)) else static_value(pred)
    if known is not None:
        return true_fn() if bool(np.asarray(known)) else false_fn()
    ctx = current("cond")
    before = len(ctx.updates)
    a, b = true_fn(), false_fn()
    if len(ctx.updates) != before:
        unsupported("cond whose branches assign variables", "kiln computes both branches; move the updates out of cond")
    p = convert_to_tensor(pred, op="cond")
    return _select_nested(p, a, b)


def _select_nested(p, a, b):
    if isinstance(a, (list, tuple)):
        return type(a)(_select_nested(p, x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return {k: _select_nested(p, a[k], b[k]) for k in a}
    a = convert_to_tensor(a, like=b if isinstance(b, Tensor) else None, op="cond")
    b = convert_to_tensor(b, like=a, op="cond")
    if list(a._shape) != list(b._shape):
        raise ValueError("[cond] the branches give shapes %s and %s; they must be equal" % (a._shape, b._shape))
    return where(_core.broadcast_to(p, list(a._shape)) if a._shape else p, a, b)


# --- math -------------------------------------------------------------------------------


def squared_difference(x, y, name=None):
    d = convert_to_tensor(x, like=y if isinstance(y, Tensor) else None, op="squared_difference") - y
    return named(d * d, name)


def reciprocal(x, name=None):
    return named(1.0 / convert_to_tensor(x, op="reciprocal"), name)


def log1p(x, name=None):
    return named(log(1.0 + convert_to_tensor(x, op="log1p")), name)


def expm1(x, name=None):
    return named(exp(convert_to_tensor(x, op="expm1")) - 1.0, name)


def logical_not(x, name=None):
    return named(_core.equal(convert_to_tensor(x, op="logical_not"), _core.scalar_like(x, 0)), name)


def logical_and(x, y, name=None):
    return named(_core.not_equal(_core.cast(x, "i32") * _core.cast(y, "i32"), _core.scalar_like(_core.cast(x, "i32"), 0)),
                 name)


def logical_or(x, y, name=None):
    return named(_core.not_equal(_core.cast(x, "i32") + _core.cast(y, "i32"), _core.scalar_like(_core.cast(x, "i32"), 0)),
                 name)


def reduce_any(input_tensor, axis=None, keepdims=False, name=None, keep_dims=None):
    x = _core.cast(convert_to_tensor(input_tensor, op="reduce_any"), "f32")
    return named(_core.not_equal(reduce_max(x, axis, keepdims or bool(keep_dims)), _core.scalar_like(x, 0)), name)


def reduce_all(input_tensor, axis=None, keepdims=False, name=None, keep_dims=None):
    x = _core.cast(convert_to_tensor(input_tensor, op="reduce_all"), "f32")
    return named(_core.not_equal(reduce_min(x, axis, keepdims or bool(keep_dims)), _core.scalar_like(x, 0)), name)


def count_nonzero(input_tensor, axis=None, keepdims=False, dtype=None, name=None):
    x = convert_to_tensor(input_tensor, op="count_nonzero")
    nz = _core.cast(_core.not_equal(x, _core.scalar_like(x, 0)), "i64")
    return named(reduce_sum(nz, axis, keepdims), name)


# --- clipping ---------------------------------------------------------------------------


def global_norm(t_list, name=None):
    """sqrt of the sum of every element's square, in float32."""
    total = None
    for t in t_list:
        if t is None:
            continue
        t = _core.cast(t, "f32") if t._dtype != "f32" else t
        s = reduce_sum(t * t)
        total = s if total is None else total + s
    if total is None:
        raise ValueError("[global_norm] no tensors")
    return named(sqrt(total), name)


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """TensorFlow's: (every t * clip_norm / max(global_norm, clip_norm), the global norm)."""
    ts = list(t_list)
    norm = use_norm if use_norm is not None else global_norm([t for t in ts if t is not None])
    limit = clip_norm if isinstance(clip_norm, Tensor) else _core.hyperparameter(norm._scope, float(clip_norm), "f32")
    factor = limit / maximum(norm, limit)
    out = [None if t is None else t * (factor if t._dtype == "f32" else _core.cast(factor, t._dtype)) for t in ts]
    return out, norm


def clip_by_norm(t, clip_norm, axes=None, name=None):
    x = convert_to_tensor(t, op="clip_by_norm")
    ss = reduce_sum(x * x, _axes(axes) if axes is not None else None, keepdims=True)
    limit = convert_to_tensor(clip_norm, like=x, op="clip_by_norm")
    return named(x * limit / maximum(sqrt(ss), limit), name)


def clip_by_average_norm(t, clip_norm, name=None):
    x = convert_to_tensor(t, op="clip_by_average_norm")
    n = 1
    for d in x._shape:
        n *= d
    return named(clip_by_norm(x, float(clip_norm) * n), name)


def boolean_mask(*args, **kwargs):
    unsupported("boolean_mask", "its result's shape depends on the data; kiln's shapes are static (use kiln.where)")


__all__ = ["add_n", "boolean_mask", "clip_by_average_norm", "clip_by_global_norm", "clip_by_norm", "cond",
           "count_nonzero", "expm1", "fill", "gather", "global_norm", "log1p", "logical_and", "logical_not",
           "logical_or", "rank", "reciprocal", "reduce_all", "reduce_any", "shape", "shape_n", "size", "split",
           "squared_difference", "stack", "tile", "unstack"]

_ = (_bool, minimum, reshape)  # re-exported names kept for the package's namespace


def reverse(tensor, axis, name=None):
    """tf.reverse (reverse_v2): the elements in reverse order along each of `axis`."""
    axes = int_list(axis, "reverse")
    x = convert_to_tensor(tensor, op="reverse")
    rank = len(x._shape)
    seen = set()
    for a in axes:
        if not -rank <= a < rank:
            raise ValueError("[reverse] axis %d is out of range for a tensor of rank %d; valid: %d to %d"
                             % (a, rank, -rank, rank - 1))
        a %= rank
        if a in seen:
            raise ValueError("[reverse] axis %d is given twice in %s" % (a, axes))
        seen.add(a)
        x = gather(x, np.arange(x._shape[a] - 1, -1, -1, dtype=np.int32), axis=a)
    return named(x, name)


def ensure_shape(x, shape, name=None):
    """tf.ensure_shape: x as it is when its shape fits `shape` (None: any extent), else a
    ValueError naming both. In Dataset.map each shape of a host value (a decoded image) is
    traced, and so checked, when first met."""
    t = convert_to_tensor(x, op="ensure_shape")
    want = None if shape is None else [None if d is None or (not isinstance(d, Tensor) and int(d) == -1) else int(d)
                                       for d in shape]
    if not TensorShape(t._shape).is_compatible_with(want):
        raise ValueError("[ensure_shape] the shape is %s; expected %s (None: any extent)" % (list(t._shape), want))
    return named(t, name) if name else t
