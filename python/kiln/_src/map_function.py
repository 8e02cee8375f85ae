"""The functions of Dataset.map and Dataset.filter: traced once into a kiln graph and run
on kiln's interpreter for every element, so no Python runs between their ops.

An element's numeric components become the graph's inputs. Its string components (a
TFRecord's serialized bytes, a feature of type string) cannot be graph values: the
function gets them as HostValue, which only host ops take (kiln.io.parse_single_example,
decode_raw, ...). A host op runs in C++ or numpy outside the graph; during the trace it is
recorded, with the first element's values giving the shapes, and for every later element
the recorded host ops run first and their numeric results feed the graph. An element
whose graph inputs have other shapes (another image size, another number of steps) is
traced again; traces are kept per shape. Image host ops keep their results on the host
(HostValue) until a graph op takes them, so a decoded image of any size resized or cropped
on the host to a fixed size needs one trace only. When every recorded host op has a C++
form (_Trace.plan), later elements run in C++ from start to end, on threads of their own
(kiln/_src/map_loops.py).

The graph runs on kiln's interpreter for the first elements, and compiled by kiln's CPU
backend (on a thread of its own, through the compile cache when KILN_CACHE_DIR is set)
once a pipeline has run 256 elements through it: short pipelines never wait for a
compiler, long ones run compiled. `backend` below ("tiered", "interp", "cpu") overrides
that, for tests.

Random ops in the function (tf.random_uniform, random_flip_left_right, ...) draw from
kiln's counter-based generator (Philox) keyed by the dataset's seed and the element's
position in the stream, so a pipeline is reproducible from its seed; the graph's random
ops and the host ops' (HostGenerator) alike.
"""
import itertools
import numbers
import threading

import numpy as np

from kiln import _core
from kiln._src.dtypes import as_dtype, string
from kiln._src.graph import GraphContext, Tensor, TensorShape, _numpy_kind, enter, leave, unsupported

_local = threading.local()
backend = "tiered"  # how MapGraphs run: see above
_KILN = {"float32": "f32", "float16": "f16", "int32": "i32", "int64": "i64", "bool": "bool",
         "uint8": "i32", "int8": "i32", "int16": "i32", "uint16": "i32"}


class HostValue:
    """A value of a traced map function that lives outside the graph: strings, the parts
    of a sparse feature, and what image host ops return (a decoded image, whose shape
    varies from element to element, a JPEG's shape, a crop window). Host ops take it; a
    graph op takes its numeric value as an input of the graph, made the first time one
    asks for it. Small host values (at most SMALL elements: shapes, boxes, offsets) stay on
    the host through the array ops and arithmetic that shape code uses (tf.shape, unstack,
    stack, concat, cast, +, *, ...), so they can feed host ops such as
    decode_and_crop_jpeg without a graph run between them."""

    def __init__(self, trace, slot, value):
        self._trace = trace
        self._slot = slot
        self.value = value  # the first element's value, while the trace runs
        self._tensor = None

    def _as_tensor(self):
        if self._tensor is None:
            self._tensor = self._trace.graph_input(self._slot, self.value)
        return self._tensor

    @property
    def shape(self):
        return TensorShape(np.shape(self.value))

    def get_shape(self):
        return self.shape

    def set_shape(self, shape):
        self.shape.assert_is_compatible_with(None if shape is None else list(shape))

    @property
    def ndim(self):
        return np.ndim(self.value)

    @property
    def dtype(self):
        return _string_dtype() if _is_host(self.value) else as_dtype(np.asarray(self.value).dtype)

    @property
    def name(self):
        return None

    def __len__(self):
        return len(self.value)

    def __repr__(self):
        return "<kiln host value of a Dataset.map function: %s>" % type(self.value).__name__


def _string_dtype():
    return string


SMALL = 64  # host values of at most this many elements stay on the host through array ops


def _small(v):
    return isinstance(v, HostValue) and not _is_host(v.value) and np.size(v.value) <= SMALL


def _host_arith(name, fn, reverse=False):
    def method(self, other=None):
        if other is None and name in ("neg", "abs", "invert"):
            if _small(self):
                return self._trace.record(fn, [self], keep=True)
            return getattr(self._as_tensor(), "__%s__" % name)()
        plain = isinstance(other, (numbers.Number, np.ndarray, np.generic)) and np.size(other) <= SMALL
        if _small(self) and (plain or (_small(other) and other._trace is self._trace)):
            args = [other, self] if reverse else [self, other]
            return self._trace.record(lambda a, b: _numpy_kind(fn(a, b), a, b), args, keep=True)
        other_t = other._as_tensor() if isinstance(other, HostValue) else other
        return getattr(self._as_tensor(), "__%s%s__" % ("r" if reverse else "", name))(other_t)
    return method


for _name, _fn in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("truediv", np.true_divide),
                   ("floordiv", np.floor_divide), ("mod", np.mod), ("pow", np.power),
                   ("lt", np.less), ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)]:
    setattr(HostValue, "__%s__" % _name, _host_arith(_name, _fn))
    if _name not in ("lt", "le", "gt", "ge"):
        setattr(HostValue, "__r%s__" % _name, _host_arith(_name, lambda a, b, f=_fn: f(a, b), reverse=True))
HostValue.__neg__ = _host_arith("neg", lambda a: np.negative(a))
HostValue.__abs__ = _host_arith("abs", lambda a: np.abs(a))


def _host_getitem(self, key):
    if _small(self) and not _has_tensor(key):
        return self._trace.record(lambda v, k: np.asarray(v)[k], [self, key], keep=True)
    return self._as_tensor()[key]


HostValue.__getitem__ = _host_getitem


def _has_tensor(x):
    if isinstance(x, (list, tuple)):
        return any(_has_tensor(v) for v in x)
    return isinstance(x, (Tensor, HostValue))


class SparseTensorValue:
    """What a VarLenFeature parses to (tf.SparseTensor's fields): indices [n, rank] int64,
    values [n], dense_shape [rank]."""

    def __init__(self, indices, values, dense_shape):
        self.indices, self.values, self.dense_shape = indices, values, dense_shape

    def __iter__(self):
        return iter((self.indices, self.values, self.dense_shape))

    def __repr__(self):
        return "SparseTensorValue(indices=%r, values=%r, dense_shape=%r)" % tuple(self)


def active_trace():
    return getattr(_local, "trace", None)


class Random:
    """The argument a random host op's compute gets in place of this marker: a
    HostGenerator keyed by the dataset's seed, the element's position, the rank and the
    op's own seed, so its draws are reproducible from the seed as the graph's random ops
    are."""

    def __init__(self, seed=None):
        self.seed = seed


class HostGenerator:
    """What a random host op's compute gets: numpy Generator's random() and integers(),
    drawn from kiln's Philox keyed by the dataset's seed, the element's position, the rank,
    the op's index in its function and the op's seed (src/data/host_draws.h), so the C++
    element loop draws the same numbers for the same element."""

    __slots__ = ("_draws",)

    def __init__(self, seed, position, rank, index, op_seed):
        self._draws = _core.HostDraws(int(seed) % 2**64, int(position) % 2**64, int(rank) % 2**64,
                                      int(index) % 2**64, -1 if op_seed is None else int(op_seed) % 2**63)

    def random(self, size=None, dtype=np.float64):
        f32 = np.dtype(dtype) == np.float32
        draw = self._draws.uniform_f32 if f32 else self._draws.uniform
        if size is None:
            return draw()
        shape = (size,) if isinstance(size, numbers.Integral) else tuple(size)
        values = [draw() for _ in range(int(np.prod(shape)))]
        return np.array(values, dtype=np.float32 if f32 else np.float64).reshape(shape)

    def integers(self, low, high=None):
        if high is None:
            low, high = 0, low
        return self._draws.integer(int(low), int(high))


_generator = HostGenerator


def _walk(args, fn):
    """args with fn applied to every leaf of its lists and tuples (one level of nesting as
    concat and stack take them, and deeper)."""
    if isinstance(args, (list, tuple)) and not isinstance(args, HostValue):
        return type(args)(_walk(a, fn) for a in args) if isinstance(args, tuple) else [_walk(a, fn) for a in args]
    return fn(args)


def _any_leaf(args, pred):
    found = []
    _walk(list(args), lambda a: found.append(a) if pred(a) else None)
    return bool(found)


def host_op(op, compute, *args, keep=False, native=None):
    """compute(*values) outside the graph: at once on plain values, or recorded into the
    map function being traced when an argument is (or holds) a HostValue. keep: numeric
    results stay HostValues (their shape may vary per element, or a host op takes them
    next) instead of becoming graph inputs at once. A Random() argument becomes a
    HostGenerator (see Random). native: (kind, attributes) of the op's C++ form
    (src/data/element_plan.h), whose inputs are the HostValue arguments in order; a
    function whose host ops all have one runs its elements in C++."""
    args = _walk(list(args), _known_value)
    if _any_leaf(args, lambda a: isinstance(a, Tensor)):
        unsupported("%s on a graph tensor" % op, "it is a host op of input pipelines: call it in the function "
                    "of Dataset.map, on the element's string components and what other host ops return")
    trace = active_trace()
    if trace is None or not _any_leaf(args, lambda a: isinstance(a, (HostValue, Random))):
        eager = _walk(list(args), lambda a: (_generator(0, 0, 0, 0, a.seed) if a.seed is not None else
                                             _generator(np.random.randint(2**62), 0, 0, 0, None))
                      if isinstance(a, Random) else a)  # outside a pipeline: reproducible only from an op seed
        return compute(*eager)
    return trace.record(compute, args, keep=keep, native=native)


def _known_value(a):
    """A graph tensor whose value is known while the graph is built (a small constant) as
    that value; anything else as it is."""
    if isinstance(a, Tensor):
        from kiln._src.array_ops import static_value
        v = static_value(a)
        return a if v is None else np.asarray(v)
    return a


NOT_ON_HOST = object()


def on_host(compute, *args, data=None, native=None, moves=False):
    """compute(*values) recorded on the host when the traced map function's arguments hold
    small host values and plain numbers only (no graph tensor, no large host value);
    NOT_ON_HOST otherwise, and the caller builds graph ops. data: a host value of any size
    (a decoded image) that compute takes first. native: (kind, data arguments' indices,
    attrs()) of the op's C++ form (see native_form). moves: the op only moves elements
    (reshape, transpose, concat, ...) and has a C++ form: host values of any size stay on
    the host through it, in their own dtype (a decoded uint8 image reshaped stays uint8)."""
    if data is not None:
        args = (data,) + args
    if active_trace() is None or not _any_leaf(args, lambda a: isinstance(a, HostValue)):
        return NOT_ON_HOST

    def graph_side(a):
        if isinstance(a, HostValue):
            return a is not data and not moves and not _small(a)
        return isinstance(a, Tensor) or hasattr(a, "_as_tensor")
    if _any_leaf(args, graph_side):
        return NOT_ON_HOST
    return active_trace().record(compute, args, keep=True, native=native_form(native, args))


def native_form(native, args):
    """The (kind, attributes) of a recorded op's C++ form (src/data/element_plan.h), or None
    when it has none for these arguments. native: (kind, the indices of the arguments that
    are its data, attrs()) or None. The C++ form takes the host values among the data
    arguments (flattened, in order) as its inputs and attrs() as its attributes, so it
    has one only when every leaf of the data arguments is a host value, no other argument
    holds one, data of concat and stack share a dtype, and attrs() can be computed."""
    if native is None:
        return None
    kind, data_at, attrs = native
    data = [args[i] for i in data_at]
    others = [a for i, a in enumerate(args) if i not in data_at]
    if not (_every_leaf(data, lambda a: isinstance(a, HostValue)) and
            not _any_leaf(others, lambda a: isinstance(a, (HostValue, Tensor)))):
        return None
    dtypes = set()
    _walk(data, lambda a: dtypes.add(np.asarray(a.value).dtype.str) if not _is_host(a.value) else dtypes.add("bytes"))
    if kind in ("concat", "stack") and len(dtypes) != 1:
        return None
    try:
        return kind, attrs()
    except (TypeError, ValueError):
        return None


def _every_leaf(args, pred):
    failed = []
    _walk(list(args), lambda a: failed.append(a) if not pred(a) else None)
    return not failed


def _leaves(x, out):
    """Flattens a tuple/list/dict/SparseTensorValue structure: returns its form."""
    if isinstance(x, dict):
        return ("dict", [(k, _leaves(v, out)) for k, v in x.items()])
    if isinstance(x, SparseTensorValue):
        return ("sparse", [_leaves(v, out) for v in x])
    if isinstance(x, (tuple, list)):
        return ("tuple", [_leaves(v, out) for v in x])
    out.append(x)
    return ("leaf", len(out) - 1)


def _build(form, leaves):
    kind, parts = form
    if kind == "leaf":
        return leaves[parts]
    if kind == "dict":
        return {k: _build(f, leaves) for k, f in parts}
    if kind == "sparse":
        return SparseTensorValue(*(_build(f, leaves) for f in parts))
    return tuple(_build(f, leaves) for f in parts)


def _is_host(v):
    return isinstance(v, (bytes, str)) or (isinstance(v, np.ndarray) and v.dtype.kind in "OSU")


class _Trace:
    def __init__(self, fn, op, element, seed):
        self.op = op
        self.graph = _core.MapGraph(op, backend)
        self.slots = 0
        self.steps = []  # (compute, [("slot", s) | ("const", v) | ("rng", ...)], out_slots, native or None)
        self.inputs = []  # (slot, kiln dtype, shape, numpy dtype) per graph input
        self.random = None
        self.random_ops = 0  # random host ops recorded so far (each keys its own draws)
        self.seed = seed
        leaves = []
        form = _leaves(element, leaves)
        self.element_slots = list(range(len(leaves)))
        self.slots = len(leaves)
        self.first = dict(enumerate(leaves))  # slot -> the first element's value, while tracing
        ctx = GraphContext(self.graph.scope, seed, "map")
        ctx.map_trace = self
        self.ctx = ctx
        args = _build(form, [HostValue(self, s, v) if _is_host(v) else self.graph_input(s, v)
                             for s, v in enumerate(leaves)])
        previous, _local.trace = active_trace(), self
        before = enter(ctx)
        try:
            result = fn(*args) if isinstance(args, tuple) else fn(args)
        finally:
            leave(before)
            _local.trace = previous
        if result is None:
            raise TypeError("[%s] the function returned None; it must return the element's new value (a tensor, or a "
                            "tuple or dict of them): is a `return` missing?" % op)
        outs = []
        self.out_form = _leaves(result, outs)
        if any(v is None for v in outs):
            raise TypeError("[%s] the function returned None inside %r; every component must be a value"
                            % (op, type(result).__name__))
        self.outputs, tensors = [], []
        for v in outs:
            if hasattr(v, "_as_tensor") and not isinstance(v, HostValue):
                v = v._as_tensor()
            if isinstance(v, Tensor):
                # A uint8/int8/int16/uint16 value the graph holds in int32 leaves in its own dtype,
                # as TensorFlow gives it (tf.image.flip_left_right of a decoded PNG is uint8).
                narrow = ctx.narrow.get(v._id) if v._dtype == "i32" else None
                self.outputs.append(("graph", len(tensors)) + ((narrow.as_numpy_dtype,) if narrow else ()))
                tensors.append(v)
            elif isinstance(v, HostValue):
                self.outputs.append(("slot", v._slot))
            else:
                self.outputs.append(("const", v))
        self.graph.finish(tensors)

    def graph_input(self, slot, value):
        arr = np.asarray(value)
        kiln = _KILN.get(arr.dtype.name)
        if kiln is None:
            raise TypeError("[%s] a component of dtype %s cannot be a graph value; kiln's graphs hold %s"
                            % (self.op, arr.dtype, ", ".join(sorted(_KILN))))
        np_type = {"f32": np.float32, "f16": np.float16, "i32": np.int32, "i64": np.int64, "bool": np.bool_}[kiln]
        self.inputs.append((slot, kiln, tuple(arr.shape), np_type))
        t = self.graph.input(kiln, list(arr.shape))
        if arr.dtype.name in ("uint8", "int8", "int16", "uint16"):
            self.ctx.narrow[t._id] = as_dtype(arr.dtype)  # tf.uint8 images stay uint8 to convert_image_dtype
        return t

    def random_inputs(self):
        """(seed, position, rank) of the random ops: inputs fed for every element."""
        if self.random is None:
            s, p, r = self.slots, self.slots + 1, self.slots + 2
            self.slots += 3
            self.random = (s, p, r)
            self.random_tensors = tuple(self.graph_input(x, np.int64(0)) for x in self.random)
        return self.random_tensors

    def record(self, compute, args, keep=False, native=None):
        def spec_of(a):
            if isinstance(a, HostValue):
                if a._trace is not self:
                    raise ValueError("[%s] a host value of another map function" % self.op)
                return ("slot", a._slot)
            if isinstance(a, Random):
                self.random_ops += 1
                return ("rng", (self.random_ops - 1, a.seed))
            return ("const", a)

        spec = _walk(list(args), spec_of)
        values = self._values(spec, lambda s: self.first[s], 0)
        result = compute(*values)
        leaves = []
        form = _leaves(result, leaves)
        out_slots = list(range(self.slots, self.slots + len(leaves)))
        self.slots += len(leaves)
        self.steps.append((compute, spec, out_slots, native))
        wrapped = []
        sparse = _sparse_leaves(form)
        for s, v in zip(out_slots, leaves):
            self.first[s] = v
            if keep or _is_host(v) or len(wrapped) in sparse:
                wrapped.append(HostValue(self, s, v))
            else:
                wrapped.append(self.graph_input(s, v))
        return _build(form, wrapped)

    def _values(self, spec, slot_value, position, rank=0):
        def value(x):
            if not (isinstance(x, tuple) and len(x) == 2 and x[0] in ("slot", "const", "rng")):
                return [value(v) for v in x] if isinstance(x, list) else tuple(value(v) for v in x)
            kind, v = x
            if kind == "slot":
                return slot_value(v)
            if kind == "rng":
                return _generator(self.seed, position, rank, v[0], v[1])
            return v
        return [value(x) for x in spec]

    def run(self, leaves, position, rank):
        """The function's result for one element, or None when this trace's shapes do not
        fit the element's host results."""
        slots = [None] * self.slots
        for s, v in zip(self.element_slots, leaves):
            slots[s] = v
        if self.random is not None:
            slots[self.random[0]] = np.int64(self.seed % 2**63)
            slots[self.random[1]] = np.int64(position)
            slots[self.random[2]] = np.int64(rank)
        for compute, spec, out_slots, _ in self.steps:
            out = []
            _leaves(compute(*self._values(spec, slots.__getitem__, position, rank)), out)
            for s, v in zip(out_slots, out):
                slots[s] = v
        feeds = []
        for slot, kiln, shape, np_type in self.inputs:
            arr = np.asarray(slots[slot])
            if arr.shape != shape:
                return None
            feeds.append(np.asarray(arr, dtype=np_type, order="C"))  # ascontiguousarray makes 0-d 1-d
        results = self.graph.run(feeds)
        out = [(results[o[1]] if len(o) == 2 else np.asarray(results[o[1]]).astype(o[2])) if o[0] == "graph"
               else slots[o[1]] if o[0] == "slot" else o[1] for o in self.outputs]
        return _build(self.out_form, out)


    def plan(self):
        """This trace as a C++ ElementPlan (src/data/element_plan.h), or None when a host
        op has no C++ form, an element component is neither bytes nor numbers, or the
        function returns a constant."""
        if any(native is None for _, _, _, native in self.steps) or any(o[0] == "const" for o in self.outputs):
            return None
        if not all(isinstance(self.first[s], bytes) or (not _is_host(self.first[s]) and
                                                         np.asarray(self.first[s]).dtype.kind in "biuf")
                   for s in self.element_slots):
            return None
        steps = []
        for _, spec, out_slots, (kind, attrs) in self.steps:
            if kind in _TAKES_BYTES and not isinstance(self.first[_slots_in(spec)[0]], bytes):
                return None  # a string array (parse of a batch, a 0-d array): the Python loop's
            inputs, draw = [], (-1, -1)
            for x in spec:
                if _is_spec(x, "rng"):
                    draw = (x[1][0], -1 if x[1][1] is None else int(x[1][1]) % 2**63)
                else:
                    inputs += _slots_in(x)  # a list's host values in order (concat, stack)
            steps.append((kind, inputs, out_slots) + draw + (attrs,))
        inputs = [(slot, kiln, list(shape)) for slot, kiln, shape, _ in self.inputs]
        outputs = [("graph", o[1]) + ((np.dtype(o[2]).str[1:],) if len(o) > 2 else ()) if o[0] == "graph"
                   else ("slot", o[1]) for o in self.outputs]
        graph = self.graph if any(o[0] == "graph" for o in self.outputs) else None
        return _core.ElementPlan(graph, len(self.element_slots), self.slots, steps, inputs,
                                 -1 if self.random is None else self.random[0], int(self.seed) % 2**64, outputs)


_TAKES_BYTES = ("parse_example", "decode_jpeg", "decode_png", "decode_raw", "jpeg_shape",
                "decode_and_crop_jpeg")  # C++ forms whose first input is one string


def _is_spec(x, kind):
    return isinstance(x, tuple) and len(x) == 2 and x[0] == kind


def _slots_in(x):
    if _is_spec(x, "slot"):
        return [x[1]]
    if _is_spec(x, "const") or _is_spec(x, "rng"):
        return []
    return [s for e in x for s in _slots_in(e)] if isinstance(x, (list, tuple)) else []


def _sparse_leaves(form):
    """The indices of the leaves of `form` that sit inside a SparseTensorValue."""
    found = set()

    def walk(f, inside):
        kind, parts = f
        if kind == "leaf":
            if inside:
                found.add(parts)
            return
        for p in (parts if kind != "dict" else [f2 for _, f2 in parts]):
            walk(p, inside or kind == "sparse")
    walk(form, False)
    return found


def _key_of(element):
    """(what selects an element's trace: its form and each leaf's kind, dtype and shape;
    its leaves)."""
    leaves = []
    form = _leaves(element, leaves)
    return (repr(form), tuple("host" if _is_host(v) else (np.asarray(v).dtype.name, np.shape(v)) for v in leaves)), leaves


class MapFunction:
    """fn traced per element form and host-result shapes; call(element, position)."""

    def __init__(self, fn, op):
        if not callable(fn):
            raise TypeError("[%s] %r is not callable; pass a function of the element" % (op, fn))
        self.fn = fn
        self.op = op
        self.traces = {}

    def __call__(self, element, position, seed):
        key, leaves = _key_of(element)
        for trace in self.traces.get(key, ()):
            out = trace.run(leaves, position, _core.world_rank())
            if out is not None:
                return out
        if len(self.traces.get(key, ())) >= 64:
            raise ValueError("[%s] the function's host results took more than 64 different shapes; kiln traces the "
                             "function once per shape: make the shapes fixed (e.g. resize images) in the function"
                             % self.op)
        trace = _Trace(self.fn, self.op, element, seed)
        self.traces.setdefault(key, []).append(trace)
        out = trace.run(leaves, position, _core.world_rank())
        assert out is not None, "a trace fits the element it was traced from"
        return out

    def plan(self, key):
        """(the trace of elements of `key`, its C++ ElementPlan), or None without one."""
        traces = self.traces.get(key, ())
        plan = traces[0].plan() if len(traces) == 1 else None
        return None if plan is None else (traces[0], plan)


def filter_stage(src, op, default_seed):
    pred = MapFunction(op[1], "Dataset.filter")
    seed = int(default_seed)
    runs = itertools.count()

    def stream():
        base = next(runs) << 32  # a random predicate draws anew each repetition, as map does
        for i, element in enumerate(src()):
            keep = pred(element, base + i, seed)
            arr = np.asarray(keep)
            if arr.shape != () or arr.dtype != np.bool_:
                raise TypeError("[Dataset.filter] the predicate returned a %s of shape %s; it must return a scalar "
                                "bool tensor" % (arr.dtype, arr.shape))
            if bool(arr):
                yield element
    return stream
