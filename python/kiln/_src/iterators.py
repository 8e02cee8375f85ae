"""TF 1.x iterators over a kiln dataset: make_one_shot_iterator() and
make_initializable_iterator(), as an Estimator's input_fn uses them:

    iterator = dataset.make_one_shot_iterator()      # or tf.data.make_one_shot_iterator(dataset)
    features, labels = iterator.get_next()
    return features, labels

get_next() gives placeholders for the dataset's next batch in the dataset's own form
(features, or a dict of features, and labels); an Estimator that gets them back from
input_fn feeds model_fn from the dataset they came from, exactly as if input_fn had
returned the dataset, and in the form input_fn gave them (`{'images': images}, labels`
repacks the dataset's images into a dict). They cannot be computed with inside input_fn: kiln runs no graph
there (transform the arrays, or do the work in model_fn).

In a tf.Graph run by a Session (outside input_fn), get_next() gives real placeholders in
the dataset's structure (TensorFlow's IteratorGetNext), and each sess.run that needs them
feeds them the iterator's next element (session.py): a one-shot iterator starts on first
use, an initializable one at each run of its `initializer`; the end of the data is
tf.errors.OutOfRangeError inside sess.run."""
import contextlib
import threading

import numpy as np

from kiln._src import nest as _nest
from kiln._src import scopes as _scopes
from kiln._src.dtypes import as_dtype, float32
from kiln._src.graph import TensorShape, current, placeholder, unsupported

_local = threading.local()


@contextlib.contextmanager
def running_input_fn():
    """While an Estimator's input_fn runs: get_next() gives Elements, not placeholders."""
    depth = getattr(_local, "input_fn", 0)
    _local.input_fn = depth + 1
    try:
        yield
    finally:
        _local.input_fn = depth


def _in_session_graph():
    if getattr(_local, "input_fn", 0):
        return False
    try:
        return current("get_next").graph is not None
    except ValueError:
        return False


class Element:
    """One component of iterator.get_next(): the dataset's next batch of `part`."""

    def __init__(self, iterator, part, path):
        self._iterator = iterator
        self._part = part
        self._path = path  # where in the dataset's batch: (0 features | 1 labels | None the whole, key or None)

    def _as_tensor(self):
        unsupported("computing with iterator.get_next()'s %s inside input_fn" % self._part,
                    "kiln feeds them to model_fn as they come from the dataset: return them from input_fn "
                    "as they are, and do the work in model_fn")

    def __repr__(self):
        return "<kiln iterator.get_next() %s>" % self._part

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        self._as_tensor()


class _NoOp:
    """iterator.initializer: kiln starts the dataset from its beginning for each
    train/evaluate/predict call, so there is nothing to run."""
    name = "iterator_initializer"


class StringHandle:
    """What iterator.string_handle() gives: sess.run of it is the handle's bytes, which a
    string placeholder feeds to Iterator.from_string_handle to pick this iterator."""

    def __init__(self, iterator):
        self.iterator = iterator
        self.value = b"kiln-iterator-%d" % id(iterator)
        ctx = current("string_handle")
        ctx.iterator_handles[self.value] = iterator
        if iterator not in ctx.iterators:
            ctx.iterators.append(iterator)


class Iterator:
    """A TF 1.x iterator. Over a dataset (make_one_shot_iterator / make_initializable_iterator),
    or, in a tf.Graph, of a structure only: from_structure (make_initializer(dataset) picks its
    data) and from_string_handle (each run's fed handle picks the iterator it reads)."""

    def __init__(self, dataset, initializable=False, spec=None, handle=None):
        self._dataset = dataset
        self._initializable = initializable
        self._spec = spec  # (types, shapes) of a structure-only iterator
        self._handle = handle  # from_string_handle's string placeholder
        self._session_next = None  # in a tf.Graph: the placeholders of each get_next() call
        self._initializer_op = None

    @staticmethod
    def from_structure(output_types, output_shapes=None, shared_name=None, output_classes=None):
        return Iterator(None, initializable=True, spec=_spec(output_types, output_shapes, "from_structure"))

    @staticmethod
    def from_string_handle(string_handle, output_types, output_shapes=None, output_classes=None):
        if getattr(string_handle, "dtype", None) is None or string_handle.dtype.name != "string":
            raise TypeError("[from_string_handle] string_handle must be a tf.string placeholder, not %r"
                            % (string_handle,))
        return Iterator(None, spec=_spec(output_types, output_shapes, "from_string_handle"), handle=string_handle)

    @property
    def output_types(self):
        return self._spec[0] if self._spec is not None else self._dataset.output_types

    @property
    def output_shapes(self):
        return self._spec[1] if self._spec is not None else self._dataset.output_shapes

    @property
    def initializer(self):
        if not self._initializable or self._dataset is None:
            raise ValueError("[Iterator.initializer] a %s iterator has no initializer; use make_initializable_iterator()"
                             % ("one-shot" if self._handle is None and not self._initializable else "structure-only"))
        if not _in_session_graph():
            return _NoOp()
        if self._initializer_op is None:
            self._initializer_op = self.make_initializer(self._dataset)
        return self._initializer_op

    def make_initializer(self, dataset, name=None):
        """The op whose run starts this iterator over `dataset` (from_structure's)."""
        if not _in_session_graph():
            unsupported("Iterator.make_initializer inside input_fn", "return the dataset from input_fn")
        op = _scopes.Operation(name or "MakeIterator", deps=[], init_vars=[])
        op.reset_iterators = [(self, dataset)]
        ctx = current("make_initializer")
        if self not in ctx.iterators:
            ctx.iterators.append(self)
        return op

    def get_next(self, name=None):
        if self._spec is not None or _in_session_graph():
            return self._session_get_next(name)
        keys, has_labels, label_key = self._dataset._parts()
        part = 0 if has_labels else None
        features = Element(self, "features", (part, None))
        if keys is not None:
            features = {k: Element(self, "features['%s']" % k, (part, k)) for k in keys}
        if not has_labels:
            return features
        if label_key is None:
            return features, Element(self, "labels", (1, None))
        return features, {label_key: Element(self, "labels['%s']" % label_key, (1, label_key))}

    def _session_get_next(self, name):
        """Placeholders in the form of the elements, typed and shaped as the dataset's first
        element (the batch dimension None) or as from_structure / from_string_handle say.
        Each call makes its own (TensorFlow's IteratorGetNext ops): a run that needs two of
        them takes two consecutive elements."""
        if self._spec is None and self._session_next is None:
            self._spec_cache = element_spec(self._dataset)
        types, shapes = self._spec if self._spec is not None else self._spec_cache
        leaves = []
        for i, (dtype, shape) in enumerate(zip(_nest.flatten(types), _nest.flatten(shapes))):
            if dtype.name == "string":
                unsupported("a string component of get_next() in a Session", "map the records to numbers "
                            "first (decode_raw, parse_single_example, ...): kiln's graphs hold numbers")
            leaves.append(placeholder(float32 if dtype.name == "float64" else dtype, shape.as_list(),
                                      name=(name or "IteratorGetNext") + ("" if i == 0 else "_%d" % i)))
        self._session_next = (self._session_next or []) + [leaves]
        ctx = current("get_next")
        if self not in ctx.iterators:
            ctx.iterators.append(self)
        return _nest.pack_sequence_as(types, leaves)

    def session_groups(self):
        """The placeholders of each get_next() call, in the order they were made."""
        return self._session_next or []

    def string_handle(self, name=None):
        if not _in_session_graph():
            unsupported("Iterator.string_handle inside input_fn", "kiln feeds one dataset per train/evaluate/predict call")
        return StringHandle(self)


def _spec(output_types, output_shapes, op):
    """(types, shapes) of from_structure / from_string_handle: DTypes and TensorShapes in
    output_types' form."""
    types = _map(lambda t: as_dtype(t), output_types)
    if output_shapes is None:
        raise ValueError("[%s] give output_shapes: kiln builds each component's placeholder with its rank" % op)
    def shape(t, s):
        if s is None:
            raise ValueError("[%s] a component's output_shapes is None: kiln builds each component's placeholder "
                             "with its rank (give [None, ...])" % op)
        return TensorShape(s.as_list() if hasattr(s, "as_list") else list(s))
    return types, _map_pair(shape, types, output_shapes)


def _map(fn, x):
    if isinstance(x, dict):
        return type(x)((k, _map(fn, v)) for k, v in x.items())
    if isinstance(x, (tuple, list)) and not isinstance(x, TensorShape):
        return tuple(_map(fn, v) for v in x)
    return fn(x)


def _map_pair(fn, like, other):
    if isinstance(like, dict):
        return type(like)((k, _map_pair(fn, v, other[k])) for k, v in like.items())
    if isinstance(like, tuple):
        return tuple(_map_pair(fn, v, o) for v, o in zip(like, other))
    return fn(like, other)


def _declared_spec(dataset, batched):
    """from_generator's output_types and output_shapes, when they hold for the elements
    (no map changes them, every shape given): the extents they leave None stay None."""
    types, shapes = getattr(dataset, "_types", None), getattr(dataset, "_shapes", None)
    ops = [op[0] for op in getattr(dataset, "_ops", [])]
    if types is None or shapes is None or any(k in ("map", "interleave") for k in ops):
        return None
    given = []
    _map_pair(lambda t, s: given.append(s is not None), types, shapes)  # shapes are tuples: follow types' form
    if not all(given):
        return None
    padded = any(op[0] == "batch" and op[3] is not None for op in dataset._ops)
    lead = [None] if batched else []
    return types, _map_pair(lambda t, s: TensorShape(lead + [None if padded else d for d in s]), types, shapes)


def element_spec(dataset):
    """(types, shapes) of a dataset's elements, from its first: DTypes (float64 arrays as
    float32, which kiln computes in) and TensorShapes, the batch dimension None."""
    batched = dataset.is_batched() if hasattr(dataset, "is_batched") else dataset._has("batch")
    declared = _declared_spec(dataset, batched)
    if declared is not None:
        return declared
    first = next(iter(dataset.elements(0)), None)
    if first is None:
        raise ValueError("[get_next] the dataset holds no elements")

    def dtype(v):
        a = np.asarray(v)
        return as_dtype("string") if a.dtype.kind in "OSU" else as_dtype(a.dtype)

    def shape(v):
        return TensorShape([None if batched and d == 0 else n for d, n in enumerate(np.shape(v))])
    return _map(dtype, first), _map(shape, first)


def _values(result):
    """The leaves of what input_fn returned: (features, labels), each a value or a dict."""
    parts = list(result) if isinstance(result, tuple) else [result]
    return [v for p in parts for v in (p.values() if isinstance(p, dict) else [p])]


def dataset_of(result):
    """The dataset behind what input_fn returned when it is iterator.get_next()'s value
    (or features/labels taken from it), else None."""
    values = _values(result)
    found = [v._iterator for v in values if isinstance(v, Element)]
    if not found:
        return None
    if any(it is not found[0] for it in found) or len(found) != len(values):
        raise TypeError("[input_fn] returned values from different iterators, or an iterator's value beside "
                        "something else; return iterator.get_next() of one dataset as it is")
    return found[0]._dataset


def _form(x):
    """x's structure with each Element as its path (for comparing forms)."""
    if isinstance(x, Element):
        return x._path
    if isinstance(x, dict):
        return {k: _form(v) for k, v in x.items()}
    if isinstance(x, (tuple, list)):
        return tuple(_form(v) for v in x)
    return x


def repack_of(result):
    """None when input_fn returned get_next()'s value in the dataset's own form; else a
    function of the dataset's batch giving it in result's form (each Element replaced by
    the batch's value at its path)."""
    if dataset_of(result) is None:
        return None
    if _form(result) == _form(_values(result)[0]._iterator.get_next()):
        return None

    def value(batch, path):
        part, key = path
        v = batch if part is None else batch[part]
        return v if key is None else v[key]

    def repack(batch, x=result):
        if isinstance(x, Element):
            return value(batch, x._path)
        if isinstance(x, dict):
            return {k: repack(batch, v) for k, v in x.items()}
        return tuple(repack(batch, v) for v in x)
    return repack


def make_one_shot_iterator(dataset):
    """tf.data.make_one_shot_iterator / tf.compat.v1.data.make_one_shot_iterator."""
    return dataset.make_one_shot_iterator()


def make_initializable_iterator(dataset, shared_name=None):
    return dataset.make_initializable_iterator()
