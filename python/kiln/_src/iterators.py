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
from kiln._src.graph import current, placeholder, unsupported

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


class Iterator:
    def __init__(self, dataset, initializable=False):
        self._dataset = dataset
        self._initializable = initializable
        self._session_next = None  # in a tf.Graph: (the element's structure, its placeholders)
        self._initializer_op = None

    @property
    def initializer(self):
        if not self._initializable:
            raise ValueError("[Iterator.initializer] a one-shot iterator has no initializer; "
                             "use make_initializable_iterator()")
        if not _in_session_graph():
            return _NoOp()
        if self._initializer_op is None:
            self._initializer_op = _scopes.Operation("MakeIterator", deps=[], init_vars=[])
            self._initializer_op.reset_iterators = [self]
        return self._initializer_op

    def get_next(self, name=None):
        if _in_session_graph():
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
        """Placeholders in the form of the dataset's elements (each call the same ones, as
        TensorFlow's get_next() in one run gives one element), typed and shaped as its
        first element, the batch dimension None."""
        if self._session_next is None:
            first = next(iter(self.elements(0)), None)
            if first is None:
                raise ValueError("[get_next] the dataset holds no elements")
            batched = self._dataset.is_batched() if hasattr(self._dataset, "is_batched") else self._dataset._has("batch")
            leaves = []
            for i, v in enumerate(_nest.flatten(first)):
                a = np.asarray(v)
                if a.dtype.kind in "OSU":
                    unsupported("a string component of get_next() in a Session", "map the records to numbers "
                                "first (decode_raw, parse_single_example, ...): kiln's graphs hold numbers")
                dtype = float32 if a.dtype == np.float64 else as_dtype(a.dtype)  # kiln computes in float32
                shape = [None if batched and d == 0 else n for d, n in enumerate(a.shape)]
                leaves.append(placeholder(dtype, shape, name=(name or "IteratorGetNext") + ("" if i == 0 else "_%d" % i)))
            self._session_next = (first, leaves)
            current("get_next").iterators.append(self)
        first, leaves = self._session_next
        return _nest.pack_sequence_as(first, leaves)

    def elements(self, seed):
        """A fresh pass over the dataset's elements, as numpy."""
        return self._dataset.elements(seed)

    def session_placeholders(self):
        return [] if self._session_next is None else self._session_next[1]

    def string_handle(self, name=None):
        unsupported("Iterator.string_handle", "kiln feeds one dataset per train/evaluate/predict call")


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
