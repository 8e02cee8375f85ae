"""The graph ops are built into: the current graph, Tensor's operators and properties, and
the TensorFlow 1.x ops kiln's IR provides (kiln.matmul, kiln.reshape, ...).

While model_fn runs, its graph (one per mode and batch shape) is the current one; outside
model_fn it is the default tf.Graph (Graph below: get_default_graph, as_default), which
lives as long as the script and is run by a Session (kiln/_src/session.py). Ops TensorFlow
has and kiln's IR lacks raise NotImplementedError naming them (see unsupported()).
"""
import builtins
import contextlib
import numbers
import threading

import numpy as np

from kiln import _core
from kiln._src.dtypes import as_dtype, float32, from_kiln, int32, int64
from kiln._src.dtypes import bool as _bool
from kiln._src.unsupported import unsupported

Tensor = _core.Tensor
_local = threading.local()
builtins_slice = builtins.slice


class GraphContext:
    """What model_fn's graph needs besides the C++ graph: layer name counters, the seed
    that variables without one derive theirs from, the tensors hooks may fetch."""

    def __init__(self, scope, seed, mode):
        self.scope = scope
        self.seed = seed  # the graph-level seed (RunConfig random_seed; tf.set_random_seed replaces it)
        self.mode = mode
        self.layer_counts = {}  # tf.layers' names, per variable scope: {scope: {base: count}}
        self.keras_counts = {}  # tf.keras layers' names, graph-wide
        self.variables = 0
        self.training_hooks = []
        self.metrics = {}  # tensor id -> kiln.metrics.MetricPair, for eval_metric_ops given as tuples
        # _scopes.py: collections, scopes, control dependencies, deferred updates
        self.collections = {}
        self.name_stack = []
        self.var_scopes = []
        self.scope_counts = {}
        self.name_scope_counts = {}
        self.control_deps = []
        self.tensor_deps = {}
        self.updates = []
        self.random_ops = 0
        self.random_inputs = None  # (seed, step, rank) tensors of the random ops, made once
        self.regularizers_applied = set()
        self.static_values = {}  # tensor id -> numpy value known at graph-building time (kiln.shape, ...)
        self.warm_start = {}  # variable name -> (checkpoint prefix, tensor name): tf.train.init_from_checkpoint
        self.narrow = {}  # tensor id -> the narrow integer DType (uint8, ...) an int32 tensor stands for
        self.graph = None  # the tf.Graph this context builds (None: a model_fn's graph)
        self.placeholders = {}  # tf.placeholder's id -> its declared shape (None for an extent fed at run time)
        self.defaults = {}  # placeholder_with_default's id -> its default tensor
        self.unranked = set()  # ids of the placeholders declared without a shape (built as scalars)
        self.iterators = []  # the iterators whose get_next() made placeholders here (session mode)
        self.iterator_handles = {}  # string_handle() bytes -> the iterator (from_string_handle reads it)
        self.host_placeholders = {}  # 'name:0' of each tf.string placeholder -> it (fed by name too)
        self.seed_given = False  # tf.set_random_seed was called
        self.run_counter = None  # a tf.Graph's count of sess.run calls, the random ops' counter (Graph.run_counter)

    def unique_layer_name(self, base, keras=False):
        """tf.layers names layers per variable scope; tf.keras graph-wide (as TensorFlow 1 does)."""
        if keras:
            counts = self.keras_counts
        else:
            counts = self.layer_counts.setdefault(self.var_scopes[-1].name if self.var_scopes else "", {})
        n = counts.get(base, 0)
        counts[base] = n + 1
        return base if n == 0 else "%s_%d" % (base, n)

    def next_seed(self):
        self.variables += 1
        return (self.seed * 1000003 + self.variables) % (2**62)


def current(op):
    """The context of the graph being built: model_fn's while it runs, else the default
    tf.Graph's."""
    ctx = getattr(_local, "ctx", None)
    if ctx is not None and ctx.scope.open:
        return ctx
    if ctx is not None:
        raise ValueError("[%s] no graph is being built: the model_fn call this runs in has returned" % op)
    return get_default_graph_object()._ctx


def _active_ctx():
    """current()'s context without making a default graph (None if there is none)."""
    ctx = getattr(_local, "ctx", None)
    if ctx is not None:
        return ctx if ctx.scope.open else None
    stack = getattr(_local, "graphs", None)
    g = stack[-1] if stack else _default[0]
    return g._ctx if g is not None else None


def enter(ctx):
    previous = getattr(_local, "ctx", None)
    _local.ctx = ctx
    return previous


def leave(previous):
    _local.ctx = previous


def strip_index(name):
    """'loss:0' -> 'loss' (kiln values have one output). Other indices are an error."""
    if ":" in name:
        base, _, index = name.rpartition(":")
        if index != "0":
            raise ValueError("[fetch] '%s': kiln values have one output, ':0'" % name)
        return base
    return name


# --- Tensor ---------------------------------------------------------------------------


class Dimension(int):
    """One extent of a static shape: an int with TensorFlow 1's `.value`."""

    @property
    def value(self):
        return int(self)

    def __repr__(self):
        return "Dimension(%d)" % int(self)


class TensorShape(tuple):
    """A static shape: as_list(), ndims, shape[i].value as in TensorFlow 1. An extent a
    placeholder leaves to its feeds is None."""

    def __new__(cls, dims=()):
        return super().__new__(cls, tuple(None if d is None else Dimension(int(d)) for d in dims))

    def __getitem__(self, key):
        out = super().__getitem__(key)
        return TensorShape(out) if isinstance(key, builtins_slice) else out

    def as_list(self):
        return [None if d is None else int(d) for d in self]

    @property
    def ndims(self):
        return len(self)

    @property
    def rank(self):
        return len(self)

    @property
    def dims(self):
        return list(self)

    def num_elements(self):
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self:
            n *= int(d)
        return n

    def is_fully_defined(self):
        return all(d is not None for d in self)

    def is_compatible_with(self, other):
        other = list(other) if other is not None else None
        if other is None:
            return True
        return len(other) == len(self) and all(o is None or d is None or int(o) == int(d) for o, d in zip(other, self))

    def assert_is_compatible_with(self, other):
        if not self.is_compatible_with(other):
            raise ValueError("shapes %s and %s are incompatible" % (self.as_list(), list(other)))

    def merge_with(self, other):
        self.assert_is_compatible_with(other)
        return self

    def concatenate(self, other):
        return TensorShape(self.as_list() + list(other))

    def with_rank(self, rank):
        if len(self) != rank:
            raise ValueError("shape %s must have rank %d" % (self.as_list(), rank))
        return self


def _tensor_repr(t):
    if not t._scope.open:
        return "<kiln.Tensor of a model_fn call that has returned>"
    return "<kiln.Tensor %s shape=%s dtype=%s>" % (
        repr(t.name) if t.name else "(unnamed)",
        tuple(static_dims(t)),
        from_kiln(t._dtype).name,
    )


def _no_bool(t):
    raise TypeError("a kiln.Tensor has no truth value while the graph is built (it holds no value yet); "
                    "use kiln.where to choose between tensors")


def _no_iter(t):
    raise TypeError("a kiln.Tensor is not iterable; index it (t[0])")


def narrow_dtype(t):
    """The narrow integer type (uint8, int16, ...) an int32 tensor holds, or None."""
    ctx = _active_ctx()
    return ctx.narrow.get(t._id) if ctx is not None and t._dtype == "i32" else None


def mark_narrow(t, dtype):
    """Records that int32 tensor t holds values of the narrow integer type `dtype`."""
    ctx = _active_ctx()
    if ctx is not None and dtype.wrap is not None:
        ctx.narrow[t._id] = dtype
    return t


def keep_narrow(y, *xs):
    """y marked as the narrow integer type its inputs share: an op that only moves elements
    (reshape, slice, concat, pad, ...) keeps a uint8 image uint8, as in TensorFlow."""
    kinds = {narrow_dtype(x) if isinstance(x, Tensor) else None for x in xs}
    return mark_narrow(y, kinds.pop()) if len(kinds) == 1 and None not in kinds else y


Tensor.dtype = property(lambda t: narrow_dtype(t) or from_kiln(t._dtype))
Tensor.name = property(lambda t: (t._name + ":0") if t._name else None)
Tensor.ndim = property(lambda t: len(t._shape))
Tensor.graph = property(lambda t: t._scope)
Tensor.__repr__ = _tensor_repr
Tensor.__bool__ = _no_bool
Tensor.__iter__ = _no_iter
Tensor.__len__ = lambda t: t._shape[0] if t._shape else _no_iter(t)


def _set_shape(t, shape):
    """Checks that the static shape agrees (None entries match anything); kiln's shapes are
    always known."""
    TensorShape(static_dims(t)).assert_is_compatible_with(None if shape is None else list(shape))


Tensor.set_shape = _set_shape


def convert_to_tensor(x, like=None, dtype=None, op="convert_to_tensor"):
    """A Tensor as is; a Python or numpy number as a scalar constant of `like`'s dtype
    (or `dtype`); a uniform numpy array as a constant of its shape."""
    if hasattr(x, "_as_tensor"):  # an update (tf.assign's result) stands for the value it writes
        x = x._as_tensor()
    if isinstance(x, Tensor):
        if dtype is not None and as_dtype(dtype).kiln != x._dtype:
            raise TypeError(
                "[%s] tensor of dtype %s where %s is needed; use kiln.cast" % (op, from_kiln(x._dtype).name, as_dtype(dtype).name)
            )
        return x
    if dtype is None:
        if like is not None:
            dtype = from_kiln(like._dtype)
        elif isinstance(x, (bool, np.bool_)):
            dtype = _bool
        elif isinstance(x, numbers.Integral):
            dtype = int32
        else:
            dtype = float32
    dtype = as_dtype(dtype)
    scope = like._scope if like is not None else current(op).scope
    if isinstance(x, (numbers.Number, np.generic)):
        return _core.constant(scope, float(x), dtype.kiln, [])
    arr = _numeric_array(x, op)
    flat = arr.reshape(-1)
    if flat.size and not np.all(flat == flat[0]) and flat.size <= 64 and dtype.kiln in ("i32", "i64") and \
            np.any((flat != 0) & (flat % UNKNOWN_EXTENT == 0)):
        # A shape with extents fed at run time (tf.shape of a placeholder's value): one
        # constant per element, whose value a step graph replaces (python/src/session.cpp).
        parts = [_core.constant(scope, float(v), dtype.kiln, [1]) for v in flat]
        return _core.reshape(_core.concat(parts, 0), list(arr.shape))
    if flat.size and not np.all(flat == flat[0]):
        # Differing values: an array constant, fed to the compiled step like a hyperparameter.
        np_type = {"f32": np.float32, "f16": np.float16, "bf16": np.float32, "i32": np.int32, "i64": np.int64,
                   "bool": np.bool_}[dtype.kiln]
        t = _core.constant_values(scope, np.ascontiguousarray(arr.astype(np_type)))
        return t if dtype.kiln != "bf16" else _core.cast(t, "bf16")
    return _core.constant(scope, float(flat[0]) if flat.size else 0.0, dtype.kiln, list(arr.shape))


def _numeric_array(x, op):
    """x as a numpy array of numbers, or TypeError at once (never a walk through an
    object's items: numpy would index a sequence-like object without end)."""
    if isinstance(x, np.ndarray):
        arr = x
    elif isinstance(x, (list, tuple)):
        if _holds_tensor(x):
            unsupported("a list of tensors where one tensor is needed (%s)" % op, "combine them with kiln.stack or kiln.concat")
        arr = np.asarray(x)
    else:
        raise TypeError("[%s] cannot make a tensor of a %s; give a kiln.Tensor, a number, a numpy array or a "
                        "list of numbers" % (op, type(x).__name__))
    if arr.dtype.kind not in "biuf":
        raise TypeError("[%s] cannot make a tensor of a %s of dtype %s" % (op, type(x).__name__, arr.dtype))
    return arr


def _holds_tensor(x):
    return any(isinstance(v, Tensor) or (isinstance(v, (list, tuple)) and _holds_tensor(v)) for v in x)


def _no_array(t, *args, **kwargs):
    raise TypeError("a kiln.Tensor has no value while the graph is built, so it is no numpy array; "
                    "fetch it with a hook (SessionRunArgs) or from predict()")


Tensor.__array__ = _no_array


def on_host(compute, *args, native=None, moves=False):
    """compute's result recorded on the host when a traced map function applies an op to
    small host values and numbers only (kiln/_src/map_function.py, HostValue); else None.
    native: (kind, data arguments' indices, attrs()) of its C++ form (_map_function.native_form).
    moves: an op that only moves elements, kept on the host for host values of any size."""
    from kiln._src import map_function as _map_function
    if _map_function.active_trace() is None:
        return None
    out = _map_function.on_host(compute, *args, native=native, moves=moves)
    return None if out is _map_function.NOT_ON_HOST else out


def host_code(d):
    """numpy's code of a dtype ("f4", "i8", "u1", "b1") for a host op's C++ form; ValueError
    for one the C++ element loop does not hold."""
    code = np.dtype(d.as_numpy_dtype).str[1:]
    if code not in ("u1", "u2", "i1", "i2", "i4", "i8", "f2", "f4", "f8", "b1"):
        raise ValueError("no C++ form for %s" % code)
    return code


def _int_attr(x):
    """An axis given as a Python or numpy integer (a host value or tensor: TypeError)."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise TypeError("not an integer")
    return int(x)


_HOST_BINARY = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.true_divide,
                "maximum": np.maximum, "minimum": np.minimum, "pow": np.power, "equal": np.equal,
                "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal, "greater": np.greater,
                "greater_equal": np.greater_equal}


def _binary(fn, op):
    host = _HOST_BINARY.get(op)

    def apply(a, b, name=None):
        if host is not None:
            h = on_host(lambda x, y: _numpy_kind(host(x, y), x, y), a, b)
            if h is not None:
                return h
        if not isinstance(a, Tensor) and not isinstance(b, Tensor):
            a = convert_to_tensor(a, op=op)
        if not isinstance(a, Tensor):
            a = convert_to_tensor(a, like=b, op=op)
        if not isinstance(b, Tensor):
            b = convert_to_tensor(b, like=a, op=op)
        if a._dtype != b._dtype:
            raise TypeError(
                "[%s] operands have dtypes %s and %s; kiln.cast one of them"
                % (op, from_kiln(a._dtype).name, from_kiln(b._dtype).name)
            )
        return named(fn(a, b), name)

    apply.__name__ = op
    return apply


def _numpy_kind(out, a, b):
    """numpy's result typed as TensorFlow types it: float32 with a Python float stays
    float32, int32 with a Python int stays int32 (numpy may widen them)."""
    out = np.asarray(out)
    arrays = [np.asarray(x) for x in (a, b) if isinstance(x, (np.ndarray, np.generic))]
    if arrays and out.dtype.kind == arrays[0].dtype.kind and out.dtype != arrays[0].dtype:
        return out.astype(arrays[0].dtype)
    return out


def named(t, name):
    """Names `t` (unique in its graph, as TensorFlow makes names unique) so that hooks can
    fetch it as 'name:0'. An already named value gets a new identity node. A host value
    of a map function (kiln/_src/map_function.py) has no name to take."""
    if name is None or not isinstance(t, Tensor):
        return t
    if t._name or t._op in ("variable", "placeholder"):
        t = _core.add(t, _core.scalar_like(t, 0.0))
    ctx = _active_ctx()
    if ctx is not None and ctx.name_stack and "/" not in name[:1]:
        name = "/".join(ctx.name_stack) + "/" + name
    base, n = name, 0
    while t._scope.find(name) is not None:
        n += 1
        name = "%s_%d" % (base, n)
    return t._named(name)


add = _binary(_core.add, "add")
subtract = _binary(_core.sub, "subtract")
multiply = _binary(_core.mul, "multiply")
divide = _binary(_core.div, "divide")
maximum = _binary(_core.maximum, "maximum")
minimum = _binary(_core.minimum, "minimum")
pow = _binary(_core.pow, "pow")  # noqa: A001 (TensorFlow's name)
equal = _binary(_core.equal, "equal")
not_equal = _binary(_core.not_equal, "not_equal")
less = _binary(_core.less, "less")
less_equal = _binary(_core.less_equal, "less_equal")
greater = _binary(_core.greater, "greater")
greater_equal = _binary(_core.greater_equal, "greater_equal")
truediv = divide


def _swap(f):
    return lambda a, b: f(b, a)


Tensor.__add__ = add
Tensor.__radd__ = _swap(add)
Tensor.__sub__ = subtract
Tensor.__rsub__ = _swap(subtract)
Tensor.__mul__ = multiply
Tensor.__rmul__ = _swap(multiply)
Tensor.__truediv__ = divide
Tensor.__rtruediv__ = _swap(divide)
Tensor.__pow__ = pow
Tensor.__rpow__ = _swap(pow)
Tensor.__lt__ = less
Tensor.__le__ = less_equal
Tensor.__gt__ = greater
Tensor.__ge__ = greater_equal
Tensor.__neg__ = lambda t: _core.neg(t)
Tensor.__abs__ = lambda t: _core.abs(t)


def _unary(fn, op):
    def apply(x, name=None):
        return named(fn(convert_to_tensor(x, op=op)), name)

    apply.__name__ = op
    return apply


negative = _unary(_core.neg, "negative")
abs = _unary(_core.abs, "abs")  # noqa: A001
sign = _unary(_core.sign, "sign")
exp = _unary(_core.exp, "exp")
log = _unary(_core.log, "log")
sqrt = _unary(_core.sqrt, "sqrt")
rsqrt = _unary(_core.rsqrt, "rsqrt")
square = _unary(_core.square, "square")
tanh = _unary(_core.tanh, "tanh")
sigmoid = _unary(_core.sigmoid, "sigmoid")
erf = _unary(_core.erf, "erf")
cos = _unary(_core.cos, "cos")
stop_gradient = _unary(_core.stop_gradient, "stop_gradient")


def identity(x, name=None):
    x = convert_to_tensor(x, op="identity")
    ctx = current("identity")
    if ctx.control_deps:  # the value depends on the block's control inputs (_scopes.py)
        x = keep_narrow(_core.add(x, _core.scalar_like(x, 0.0)), x) if x._dtype != "bool" else x
        ctx.tensor_deps.setdefault(x._id, []).extend(ctx.control_deps)
    return named(x, name) if name else x


def where(condition, x=None, y=None, name=None):
    if x is None or y is None:
        unsupported("where(condition) without x and y", "it returns data-dependent shapes; kiln's shapes are static")
    if not isinstance(x, Tensor):
        x = convert_to_tensor(x, like=y if isinstance(y, Tensor) else None, op="where")
    if not isinstance(y, Tensor):
        y = convert_to_tensor(y, like=x, op="where")
    return named(_core.select(condition, x, y), name)


def matmul(a, b, transpose_a=False, transpose_b=False, name=None):
    return named(_core.matmul(a, b, bool(transpose_a), bool(transpose_b)), name)


Tensor.__matmul__ = matmul
Tensor.__rmatmul__ = _swap(matmul)


def cast(x, dtype, name=None):
    d = as_dtype(dtype)
    h = on_host(lambda v: np.asarray(v).astype(d.as_numpy_dtype), x, native=("cast", [0], lambda: {"to": host_code(d)}))
    if h is not None:
        return h
    y = _core.cast(convert_to_tensor(x, op="cast"), d.kiln)
    if d.wrap is not None:  # a narrow integer held in int32: wrap around into its range
        lo, hi = d.wrap
        span = hi - lo + 1
        shifted = y - _core.scalar_like(y, lo)
        q = _core.div(shifted, _core.scalar_like(y, span))
        r = shifted - q * _core.scalar_like(y, span)
        r = _core.select(_core.less(r, _core.scalar_like(r, 0)), r + _core.scalar_like(r, span), r)
        y = mark_narrow(r + _core.scalar_like(r, lo), d)
    return named(y, name)


def _shape_list(shape, op):
    """Ints from a list of ints, Dimensions, None (-1) and tensors whose values are known
    (kiln.shape's result and its elements), or from such a tensor."""
    def known(t):
        ctx = _active_ctx()
        v = ctx.static_values.get(t._id) if ctx is not None else None
        if v is None:
            unsupported("%s with a shape computed in the graph" % op, "shapes are static in kiln; pass a list of ints")
        return np.asarray(v).reshape(-1)

    if isinstance(shape, Tensor):
        return [int(d) for d in known(shape)]
    out = []
    for d in shape:
        if isinstance(d, Tensor):
            out.extend(int(v) for v in known(d))
        else:
            out.append(-1 if d is None else int(d))
    return out


def reshape(tensor, shape, name=None):
    h = on_host(lambda v, s: np.reshape(v, np.asarray(s, np.int64).reshape(-1)), tensor, shape,
                native=("reshape", [0], lambda: {"ints": [int(n) for n in np.asarray(shape, np.int64).reshape(-1)]}),
                moves=True)
    if h is not None:
        return h
    tensor = convert_to_tensor(tensor, op="reshape")
    return named(keep_narrow(_core.reshape(tensor, _shape_list(shape, "reshape")), tensor), name)


def transpose(a, perm=None, name=None):
    h = on_host(lambda v, p: np.transpose(v, None if p is None else np.asarray(p, np.int64).reshape(-1)), a, perm,
                native=("transpose", [0], lambda: {"ints": [] if perm is None else
                                                   [int(n) for n in np.asarray(perm, np.int64).reshape(-1)]}),
                moves=True)
    if h is not None:
        return h
    a = convert_to_tensor(a, op="transpose")
    perm = list(reversed(range(len(a._shape)))) if perm is None else _shape_list(perm, "transpose")
    return named(keep_narrow(_core.transpose(a, perm), a), name)


def concat(values, axis, name=None):
    h = on_host(lambda vs, a: np.concatenate([np.asarray(v) for v in vs], int(a)), list(values), axis,
                native=("concat", [0], lambda: {"axis": _int_attr(axis)}), moves=True)
    if h is not None:
        return h
    xs = [convert_to_tensor(v, op="concat") for v in values]
    return named(keep_narrow(_core.concat(xs, int(axis)), *xs), name)


def _axes(axis):
    if axis is None:
        return []
    if isinstance(axis, (list, tuple)):
        return [int(a) for a in axis]
    return [int(axis)]


def _reduction(fn, op):
    def apply(input_tensor, axis=None, keepdims=None, name=None, keep_dims=None, reduction_indices=None):
        if axis is None:
            axis = reduction_indices
        keep = bool(keepdims if keepdims is not None else keep_dims)
        return named(fn(convert_to_tensor(input_tensor, op=op), _axes(axis), keep), name)

    apply.__name__ = op
    return apply


reduce_sum = _reduction(_core.reduce_sum, "reduce_sum")
reduce_mean = _reduction(_core.reduce_mean, "reduce_mean")
reduce_max = _reduction(_core.reduce_max, "reduce_max")


def reduce_min(input_tensor, axis=None, keepdims=None, name=None, keep_dims=None, reduction_indices=None):
    x = convert_to_tensor(input_tensor, op="reduce_min")
    return named(-reduce_max(-x, axis, keepdims, None, keep_dims, reduction_indices), name)


def argmax(input, axis=None, name=None, dimension=None, output_type=int64):  # noqa: A002 (TensorFlow's name)
    if axis is None:
        axis = dimension if dimension is not None else 0
    out = _core.argmax(input, int(axis))
    if as_dtype(output_type).kiln != out._dtype:
        out = _core.cast(out, as_dtype(output_type).kiln)
    return named(out, name)


def argmin(input, axis=None, name=None, dimension=None, output_type=int64):  # noqa: A002
    return argmax(-convert_to_tensor(input, op="argmin"), axis, name, dimension, output_type)


def arg_max(input, dimension, name=None, output_type=int64):  # noqa: A002 (TensorFlow 1's older name)
    return argmax(input, axis=dimension, name=name, output_type=output_type)


def arg_min(input, dimension, name=None, output_type=int64):  # noqa: A002 (TensorFlow 1's older name)
    return argmin(input, axis=dimension, name=name, output_type=output_type)


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    if axis not in (None, -1):
        unsupported("one_hot(axis=%r)" % axis, "kiln's one_hot puts the new axis last (axis=-1)")
    dtype = as_dtype(dtype) if dtype is not None else float32
    out = _core.one_hot(indices, int(depth), dtype.kiln)
    on = 1.0 if on_value is None else float(on_value)
    off = 0.0 if off_value is None else float(off_value)
    if (on, off) != (1.0, 0.0):
        out = out * (on - off) + off
    return named(out, name)


def expand_dims(input, axis, name=None):  # noqa: A002
    h = on_host(lambda v, a: np.expand_dims(v, int(a)), input, axis,
                native=("expand_dims", [0], lambda: {"axis": _int_attr(axis)}), moves=True)
    if h is not None:
        return h
    input = convert_to_tensor(input, dtype=float32 if _all_floats(input) else None, op="expand_dims")  # noqa: A001
    shape = list(input._shape)
    axis = int(axis)
    if axis < 0:
        axis += len(shape) + 1
    return named(keep_narrow(_core.reshape(input, shape[:axis] + [1] + shape[axis:]), input), name)


def _all_floats(x):
    """A Python list of floats becomes a float32 tensor, as TensorFlow makes it."""
    return isinstance(x, (list, tuple)) and np.asarray(x).dtype.kind == "f"


def squeeze(input, axis=None, name=None):  # noqa: A002
    h = on_host(lambda v, a: np.squeeze(v, None if a is None else tuple(_axes(a))), input, axis,
                native=("squeeze", [0], lambda: {"ints": [] if axis is None else [int(a) for a in _axes(axis)]}),
                moves=True)
    if h is not None:
        return h
    input = convert_to_tensor(input, op="squeeze")  # noqa: A001
    shape = list(input._shape)
    axes = [a % len(shape) for a in _axes(axis)] if axis is not None else [i for i, d in enumerate(shape) if d == 1]
    for a in axes:
        if shape[a] != 1:
            raise ValueError("[squeeze] axis %d has extent %d, not 1" % (a, shape[a]))
    return named(keep_narrow(_core.reshape(input, [d for i, d in enumerate(shape) if i not in axes]), input), name)


def host_slice(v, begin, size, op="slice"):
    """tf.slice of a value held on the host (size -1: to the end), checked as TensorFlow
    checks it."""
    v = np.asarray(v)
    begin = [int(b) for b in np.asarray(begin).reshape(-1)]
    size = [int(n) for n in np.asarray(size).reshape(-1)]
    if len(begin) != v.ndim or len(size) != v.ndim:
        raise ValueError("[%s] begin %s and size %s need one entry per axis of the shape %s" % (op, begin, size, v.shape))
    end = [d if n == -1 else b + n for b, n, d in zip(begin, size, v.shape)]
    if any(b < 0 or e > d or e <= b for b, e, d in zip(begin, end, v.shape)):
        raise ValueError("[%s] begin %s, size %s do not fit the shape %s" % (op, begin, size, v.shape))
    return np.ascontiguousarray(v[tuple(builtins_slice(b, e) for b, e in zip(begin, end))])


def on_host_data(compute, data, *args, native=None):
    """compute(data, *args) recorded on the host when `data` is a host value of a traced
    map function (of any size: a decoded image) and args hold small host values and
    numbers only; else None. native: as on_host's, data being argument 0."""
    from kiln._src import map_function as _map_function
    if not isinstance(data, _map_function.HostValue):
        return None
    out = _map_function.on_host(compute, *args, data=data, native=native)
    return None if out is _map_function.NOT_ON_HOST else out


def slice(input_, begin, size, name=None):  # noqa: A001 (TensorFlow's name)
    h = on_host_data(host_slice, input_, begin, size)
    if h is not None:
        return h
    begin = _shape_list(begin, "slice")
    shape = list(input_._shape)
    end = [b + (shape[i] - b if s == -1 else s) for i, (b, s) in enumerate(zip(begin, _shape_list(size, "slice")))]
    return named(_core.slice(input_, begin, end), name)


def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    if str(mode).upper() != "CONSTANT" or constant_values != 0:
        unsupported("pad(mode=%r, constant_values=%r)" % (mode, constant_values), "kiln pads with zeros only")
    paddings = [[int(a), int(b)] for a, b in paddings]
    tensor = convert_to_tensor(tensor, op="pad")
    return named(keep_narrow(_core.pad(tensor, [p[0] for p in paddings], [p[1] for p in paddings]), tensor), name)


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    return named(minimum(maximum(t, clip_value_min), clip_value_max), name)


def constant(value, dtype=None, shape=None, name=None):
    if isinstance(value, Tensor):
        raise TypeError("[constant] the value is a kiln.Tensor; a constant holds numbers (use kiln.identity)")
    arr = value if isinstance(value, (numbers.Number, np.generic)) else _numeric_array(value, "constant")
    arr = np.asarray(arr)
    if shape is not None:
        arr = np.broadcast_to(arr, tuple(int(d) for d in shape))
    if dtype is None:
        dtype = float32 if arr.dtype.kind == "f" else (int32 if arr.dtype.kind in "iu" else _bool if arr.dtype.kind == "b" else None)
    t = convert_to_tensor(arr, dtype=dtype, op="constant")
    if arr.size <= 64:  # small constants stay known at graph-building time (static_value)
        current("constant").static_values[t._id] = arr
    return named(t, name)


def zeros(shape, dtype=float32, name=None):
    return named(_core.constant(current("zeros").scope, 0.0, as_dtype(dtype).kiln, _shape_list(shape, "zeros")), name)


def ones(shape, dtype=float32, name=None):
    return named(_core.constant(current("ones").scope, 1.0, as_dtype(dtype).kiln, _shape_list(shape, "ones")), name)


def zeros_like(tensor, dtype=None, name=None):
    return zeros(tensor._shape, dtype or from_kiln(tensor._dtype), name)


def ones_like(tensor, dtype=None, name=None):
    return ones(tensor._shape, dtype or from_kiln(tensor._dtype), name)


def _getitem(t, key):
    """Indexing with ints, slices of step 1 and `...`: a slice, then a reshape that drops
    the int-indexed axes."""
    key = key if isinstance(key, tuple) else (key,)
    shape = list(t._shape)
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexError("[index] at most one '...'")
    if Ellipsis in key:
        i = key.index(Ellipsis)
        key = key[:i] + (np.s_[:],) * (len(shape) - len(key) + 1) + key[i + 1 :]
    if len(key) > len(shape):
        raise IndexError("[index] %d indices for a tensor of rank %d" % (len(key), len(shape)))
    begin, end, keep = [], [], []
    for axis, extent in enumerate(shape):
        k = key[axis] if axis < len(key) else np.s_[:]
        if isinstance(k, numbers.Integral):
            i = int(k) + extent if k < 0 else int(k)
            if not 0 <= i < extent:
                raise IndexError("[index] index %d is out of range for axis %d of extent %d" % (k, axis, extent))
            begin.append(i)
            end.append(i + 1)
        elif isinstance(k, type(np.s_[:])):
            start, stop, step = k.indices(extent)
            if step != 1:
                unsupported("strided indexing (step %d)" % step, "kiln's slice takes contiguous ranges")
            begin.append(start)
            end.append(max(start, stop))
            keep.append(max(0, stop - start))
        else:
            unsupported("indexing with %s" % type(k).__name__, "kiln indexes with ints, slices of step 1 and '...'")
    out = _core.slice(t, begin, end)
    out = _core.reshape(out, keep) if len(keep) != len(shape) else out
    ctx = _active_ctx()
    if ctx is not None and t._id in ctx.static_values:
        ctx.static_values[out._id] = np.asarray(ctx.static_values[t._id])[key]
    return keep_narrow(out, t)


Tensor.__getitem__ = _getitem


def get_default_graph():
    """The graph ops go into: model_fn's while it runs, else the default tf.Graph."""
    ctx = getattr(_local, "ctx", None)
    if ctx is not None and ctx.scope.open and getattr(ctx, "graph", None) is None:
        return _DefaultGraph(ctx.scope)
    return get_default_graph_object()


class _DefaultGraph:
    def __init__(self, scope):
        self._scope = scope

    def get_tensor_by_name(self, name):
        t = self._scope.find(strip_index(name))
        if t is None:
            raise KeyError("[get_tensor_by_name] no value '%s' in the graph; named values: %s" % (name, ", ".join(self._scope.named_values())))
        return t


# --- tf.Graph: a graph that lives past model_fn ------------------------------------------

UNKNOWN_EXTENT = _core.UNKNOWN_EXTENT  # what a None dimension is built with (python/src/session.cpp)
_default = [None]  # the process's default graph, made when first needed


class GraphDef:
    """What Graph.as_graph_def() and Session.graph_def give: kiln's IR as TensorFlow's
    GraphDef (each node's name, op and inputs) for TensorBoard and tf.io.write_graph; kiln
    does not import one back."""

    def __init__(self, scope):
        self._scope = scope

    def SerializeToString(self):  # noqa: N802 (protobuf's name)
        return _core.graph_def(self._scope, False)

    def __str__(self):
        return _core.graph_def(self._scope, True)


class Graph(_DefaultGraph):
    """tf.Graph: ops built at module level (or under `with g.as_default():`) go into it, and a
    Session runs it. Its C++ graph is kiln's IR, the one the Estimator compiles."""

    def __init__(self):
        super().__init__(_core.new_graph())
        # The graph-level seed until tf.set_random_seed: KILN_RANDOM_SEED (0 unset), as a
        # RunConfig without random_seed takes it, so an unchanged script runs with several.
        self._ctx = GraphContext(self._scope, _core.setting_integer("KILN_RANDOM_SEED", 0, 2**53 - 1) or 0, None)
        self._ctx.graph = self
        self._finalized = False

    def run_counter(self):
        """The i64 scalar every Session feeds with its count of runs so far, made once: the
        random ops' counter in a tf.Graph, so each sess.run draws new values."""
        if self._ctx.run_counter is None:
            self._ctx.run_counter = _core.placeholder(self._scope, _unique_name(self._scope, self._ctx, "kiln_run_count"),
                                                      "i64", [])
        return self._ctx.run_counter

    def loss_scale(self):
        """The float32 scalar every optimizer of this graph scales its loss by, made once
        (kiln's name, kLossScaleName): a Session feeds it under a float16 precision and folds
        it away otherwise (python/src/session.cpp's StepGraph)."""
        t = self._scope.find(_core.LOSS_SCALE_NAME)
        return t if t is not None else _core.placeholder(self._scope, _core.LOSS_SCALE_NAME, "f32", [])

    @contextlib.contextmanager
    def as_default(self):
        stack = _local.__dict__.setdefault("graphs", [])
        stack.append(self)
        try:
            yield self
        finally:
            stack.pop()

    def finalize(self):
        self._finalized = True

    def as_graph_def(self, from_version=None, add_shapes=False):
        return GraphDef(self._scope)

    @property
    def finalized(self):
        return self._finalized

    def get_operation_by_name(self, name):
        return self.get_tensor_by_name(name)

    def get_collection(self, key, scope=None):
        items = list(self._ctx.collections.get(key, []))
        if scope is None:
            return items
        return [v for v in items if getattr(v, "name", None) and v.name.startswith(scope)]

    def _check_not_finalized(self, op):
        if self._finalized:
            raise RuntimeError("[%s] Graph is finalized and cannot be modified." % op)

    def __repr__(self):
        return "<kiln.Graph of %d named values>" % len(self._scope.named_values())


def get_default_graph_object():
    """The tf.Graph outside model_fn: the innermost as_default() one, else the process's."""
    stack = getattr(_local, "graphs", None)
    if stack:
        return stack[-1]
    if _default[0] is None:
        _default[0] = Graph()
    return _default[0]


def reset_default_graph():
    """A new, empty default graph (TensorFlow refuses this inside `with g.as_default():`)."""
    if getattr(_local, "graphs", None):
        raise AssertionError("Do not use tf.reset_default_graph() to clear nested graphs. If you need a cleared "
                             "graph, exit the nesting and create a new graph.")
    if getattr(_local, "ctx", None) is not None:
        raise ValueError("[reset_default_graph] called inside model_fn")
    _default[0] = Graph()


def _graph_for(op):
    """The tf.Graph being built, or ValueError inside model_fn (whose inputs the Estimator feeds)."""
    ctx = current(op)
    g = getattr(ctx, "graph", None)
    if g is None:
        unsupported("%s inside model_fn" % op, "the Estimator feeds features and labels to model_fn (its input "
                    "comes from input_fn); build placeholders in a tf.Graph run by a Session")
    g._check_not_finalized(op)
    return g


def _unique_name(scope, ctx, name):
    if ctx.name_stack:
        name = "/".join(ctx.name_stack) + "/" + name
    base, n = name, 0
    while scope.find(name) is not None:
        n += 1
        name = "%s_%d" % (base, n)
    return name


def _declared_shape(shape, op):
    dims = shape.as_list() if hasattr(shape, "as_list") else list(shape)
    return [None if d is None or (not isinstance(d, Dimension) and int(d) == -1) else int(d) for d in dims]


def placeholder(dtype, shape=None, name=None):
    """tf.placeholder: a value every sess.run that needs it feeds (feed_dict); None extents
    take the fed value's, and each fed shape is a signature of its own. Without a shape
    (tf.placeholder(tf.float32), as scripts declare keep_prob or a learning rate) kiln needs
    a rank to build the graph and takes a scalar's; feeding it anything else is an error
    that says to declare the shape."""
    g = _graph_for("placeholder")
    dims = [] if shape is None else _declared_shape(shape, "placeholder")
    if as_dtype(dtype).name == "string":
        taken = {n.split(":")[0] for n in g._ctx.host_placeholders}
        base = _unique_name(g._scope, g._ctx, name or "Placeholder")
        unique, k = base, 0
        while unique in taken:
            k += 1
            unique = "%s_%d" % (base, k)
        p = HostPlaceholder(unique, dims)
        g._ctx.host_placeholders[p.name] = p
        return p
    t = _core.placeholder(g._scope, _unique_name(g._scope, g._ctx, name or "Placeholder"), as_dtype(dtype).kiln,
                          [UNKNOWN_EXTENT if d is None else d for d in dims])
    g._ctx.placeholders[t._id] = dims
    if shape is None:
        g._ctx.unranked.add(t._id)
    return t


class HostPlaceholder:
    """tf.placeholder(tf.string) in a tf.Graph: kiln's graphs hold numbers, so it is fed but
    never computed with; it carries the string handle Iterator.from_string_handle reads."""

    def __init__(self, name, dims):
        self.name, self.shape = name + ":0", TensorShape(dims)
        self.dtype = as_dtype("string")

    def _as_tensor(self):
        unsupported("computing with a tf.string placeholder", "kiln's graphs hold numbers; a string placeholder "
                    "can only feed Iterator.from_string_handle its handle")

    def __repr__(self):
        return "<kiln string placeholder '%s'>" % self.name


def placeholder_with_default(input, shape, name=None):  # noqa: A002 (TensorFlow's name)
    """tf.placeholder_with_default: `input` unless a sess.run feeds it (shape None: the
    default's)."""
    g = _graph_for("placeholder_with_default")
    default = convert_to_tensor(input, op="placeholder_with_default")
    dims = list(static_dims(default)) if shape is None else _declared_shape(shape, "placeholder_with_default")
    if len(dims) != len(default._shape) or any(d is not None and d != e for d, e in zip(dims, default._shape)):
        raise ValueError("[placeholder_with_default] the default of shape %s does not have the shape %s"
                         % (list(default._shape), dims))
    t = _core.placeholder(g._scope, _unique_name(g._scope, g._ctx, name or "PlaceholderWithDefault"), default._dtype,
                          [UNKNOWN_EXTENT if d is None else d for d in dims])
    g._ctx.placeholders[t._id] = dims
    g._ctx.defaults[t._id] = default
    return t


def static_dims(t):
    """t's shape as TensorFlow shows it: None for an extent fed at run time."""
    return [None if d and d % UNKNOWN_EXTENT == 0 else d for d in t._shape]


Tensor.shape = property(lambda t: TensorShape(static_dims(t)))
Tensor.get_shape = lambda t: TensorShape(static_dims(t))
