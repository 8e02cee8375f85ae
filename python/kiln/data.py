"""kiln.data: input for Estimator.train/evaluate/predict.

An input_fn returns either
  - a Dataset built like tf.data: Dataset.from_tensor_slices((features, labels)) over
    numpy arrays, then .shuffle(buffer, seed=), .batch(n, drop_remainder=), .repeat(),
    .prefetch(n). kiln runs it in C++ (no Python per step), reading the arrays in place:
    float32, int32, int64 and bool arrays in C order are not copied; other numeric
    dtypes are converted once (floats to float32, integers to int32); or
  - any Python iterable of (features, labels) numpy tuples (or of features alone, for
    predict), e.g. a generator reading the user's own files. Each batch is checked and
    copied once into kiln's batch; the next one is made while the step runs.
Features may also be a dict with one entry ({'x': array}); model_fn then gets {'x': tensor}.
"""
import numbers

import numpy as np

from . import _core
from ._graph import unsupported

AUTOTUNE = -1
MAX_PREFETCH = 1024  # batches a prefetch thread keeps ready
MAX_BATCH = 2**31 - 1
DataError = _core.DataError


def _as_input_array(x, what):
    """x as a C-ordered numpy array of a dtype kiln holds (no copy when it already is)."""
    if not isinstance(x, np.ndarray):
        raise TypeError("%s is a %s, expected a numpy array" % (what, type(x).__name__))
    kind = x.dtype.kind
    if kind == "f":
        target = np.float32
    elif kind in "iu":
        target = x.dtype if x.dtype in (np.int32, np.int64) else np.int32
        if x.dtype not in (np.int32, np.int64) and x.size and (x.max() > 2**31 - 1 or x.min() < -(2**31)):
            raise ValueError("%s holds values outside int32" % what)
    elif kind == "b":
        target = np.bool_
    else:
        raise TypeError("%s has dtype %s; kiln takes float, integer or bool arrays" % (what, x.dtype))
    if x.ndim == 0:
        raise ValueError("%s is a scalar; expected an array with the examples along axis 0" % what)
    return np.ascontiguousarray(x, dtype=target)


def _split_features(features, what):
    """(array, key): features as an array, or the one entry of a dict of features."""
    if isinstance(features, dict):
        if len(features) != 1:
            unsupported("%s as a dict of %d entries" % (what, len(features)),
                        "kiln feeds one features tensor; pass one array or a dict with one entry")
        (key, value), = features.items()
        return value, key
    return features, None


class Dataset:
    """A pipeline over in-memory numpy arrays, run by kiln in C++. Methods return new
    datasets, as tf.data's do."""

    def __init__(self, features, labels, feature_key):
        self._features = features
        self._labels = labels
        self._feature_key = feature_key
        self._ops = []  # ("shuffle", seed) ("batch", n, drop) ("repeat", count) ("prefetch", n)

    @staticmethod
    def from_tensor_slices(tensors):
        """(features, labels) arrays with the examples along axis 0, or features alone."""
        if isinstance(tensors, tuple):
            if len(tensors) != 2:
                raise ValueError("[Dataset.from_tensor_slices] expected (features, labels), got a tuple of %d"
                                 % len(tensors))
            features, labels = tensors
        else:
            features, labels = tensors, None
        features, key = _split_features(features, "features")
        f = _as_input_array(features, "[Dataset.from_tensor_slices] features")
        lab = None if labels is None else _as_input_array(labels, "[Dataset.from_tensor_slices] labels")
        if f.shape[0] == 0:
            raise ValueError("[Dataset.from_tensor_slices] features hold no examples (shape %s)" % (f.shape,))
        if lab is not None and lab.shape[0] != f.shape[0]:
            raise ValueError("[Dataset.from_tensor_slices] features have %d examples (shape %s) but labels %d "
                             "(shape %s)" % (f.shape[0], f.shape, lab.shape[0], lab.shape))
        return Dataset(f, lab, key)

    def _with(self, op):
        d = Dataset(self._features, self._labels, self._feature_key)
        d._ops = self._ops + [op]
        return d

    def _has(self, kind):
        return any(op[0] == kind for op in self._ops)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True):
        """Shuffles each epoch as a whole, a seeded permutation (seed None: RunConfig's
        random_seed, else 0). Matches tf.data when buffer_size >= the number of examples;
        kiln never shuffles less than that."""
        if self._has("batch"):
            unsupported("Dataset.shuffle after batch", "shuffle the examples, then batch them")
        if self._has("shuffle"):
            raise ValueError("[Dataset.shuffle] the dataset is shuffled already")
        if not isinstance(buffer_size, numbers.Integral) or buffer_size < 1:
            raise ValueError("[Dataset.shuffle] buffer_size %r must be an integer >= 1" % (buffer_size,))
        if not reshuffle_each_iteration:
            unsupported("Dataset.shuffle(reshuffle_each_iteration=False)", "kiln shuffles each epoch anew")
        return self._with(("shuffle", seed))

    def batch(self, batch_size, drop_remainder=False):
        if self._has("batch"):
            raise ValueError("[Dataset.batch] the dataset is batched already")
        if isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral) or not 1 <= batch_size <= MAX_BATCH:
            raise ValueError("[Dataset.batch] batch_size %r must be an integer from 1 to %d" % (batch_size, MAX_BATCH))
        n = self._features.shape[0]
        if drop_remainder and batch_size > n:
            raise ValueError("[Dataset.batch] batch_size %d is larger than the %d examples with drop_remainder=True, "
                             "so no batch could be made" % (batch_size, n))
        return self._with(("batch", int(batch_size), bool(drop_remainder)))

    def repeat(self, count=None):
        if self._has("repeat"):
            raise ValueError("[Dataset.repeat] the dataset repeats already")
        if count is not None and (not isinstance(count, numbers.Integral) or (count < 1 and count != -1)):
            raise ValueError("[Dataset.repeat] count %r must be None, -1 or an integer >= 1" % (count,))
        return self._with(("repeat", -1 if count is None else int(count)))

    def prefetch(self, buffer_size):
        if not self._has("batch"):
            unsupported("Dataset.prefetch before batch", "kiln prefetches batches; call it after batch")
        if buffer_size != AUTOTUNE and (isinstance(buffer_size, bool) or not isinstance(buffer_size, numbers.Integral)
                                        or not 1 <= buffer_size <= MAX_PREFETCH):
            raise ValueError("[Dataset.prefetch] buffer_size %r must be an integer from 1 to %d (batches kept ready) "
                             "or AUTOTUNE" % (buffer_size, MAX_PREFETCH))
        return self._with(("prefetch", 2 if buffer_size == AUTOTUNE else int(buffer_size)))

    def map(self, *args, **kwargs):
        unsupported("Dataset.map", "it runs Python per example; transform the numpy arrays before "
                    "from_tensor_slices, or have input_fn return a generator")

    def filter(self, *args, **kwargs):
        unsupported("Dataset.filter", "filter the numpy arrays before from_tensor_slices")

    def cache(self, filename=""):
        return self  # the arrays are in memory already

    def spec(self, default_seed=0):
        """The C++ description of this pipeline (kiln._core.SliceSpec)."""
        if not self._has("batch"):
            unsupported("a Dataset without batch()", "an Estimator trains on batches: call .batch(n)")
        s = _core.SliceSpec()
        s.features = self._features
        s.labels = self._labels
        order = _core.SliceOrder()
        batched = False
        for op in self._ops:
            if op[0] == "shuffle":
                order.shuffle = True
                order.seed = int(default_seed if op[1] is None else op[1]) % 2**64
            elif op[0] == "batch":
                order.batch_size, order.drop_remainder = op[1], op[2]
                batched = True
            elif op[0] == "repeat":
                order.epochs = op[1]
                order.repeat_before_batch = not batched
            elif op[0] == "prefetch":
                s.prefetch = op[1]
        s.order = order
        return s

    def take_batches(self, limit, skip=0, default_seed=0):
        """The first `limit` batches as numpy (features, labels) tuples, after skipping
        `skip`: what training sees."""
        return _core.slice_batches(self.spec(default_seed), int(limit), int(skip))


class BatchReader:
    """Turns the items of a Python iterable into checked numpy batches for kiln, one call
    of next_batch() per batch (from kiln's prefetch thread)."""

    def __init__(self, iterable, info, fixed_batch):
        try:
            self._it = iter(iterable)
        except TypeError:
            raise TypeError("[input_fn] returned a %s; expected a kiln.data.Dataset or an iterable of "
                            "(features, labels) numpy tuples" % type(iterable).__name__) from None
        self._info = info
        self._fixed = fixed_batch
        self._index = 0
        self._first = None

    def __call__(self):
        i = self._index
        try:
            item = next(self._it)
        except StopIteration:
            return None
        except Exception as e:
            e.add_note("kiln: raised by input_fn's iterator while making batch %d" % i)
            raise
        self._index += 1
        if isinstance(item, tuple) and len(item) == 2:
            features, labels = item
        elif isinstance(item, tuple):
            raise TypeError("[input_fn] batch %d is a tuple of %d; expected (features, labels)" % (i, len(item)))
        else:
            features, labels = item, None
        features, key = _split_features(features, "[input_fn] batch %d: features" % i)
        f = _as_input_array(features, "[input_fn] batch %d: features" % i)
        if f.shape[0] == 0:
            raise DataError("[input_fn] batch %d holds no examples (features of shape %s): every batch needs at "
                            "least one" % (i, f.shape))
        lab = None if labels is None else _as_input_array(labels, "[input_fn] batch %d: labels" % i)
        if lab is not None and lab.shape[0] != f.shape[0]:
            raise DataError("[input_fn] batch %d: features have %d examples (shape %s) but labels %d (shape %s)"
                            % (i, f.shape[0], f.shape, lab.shape[0], lab.shape))
        self._check_like_first(i, f, lab, key)
        return (f, lab)

    def _check_like_first(self, i, f, lab, key):
        sig = (f.dtype, f.shape[1:], None if lab is None else (lab.dtype, lab.shape[1:]), key)
        if self._first is None:
            self._first = (sig, f.shape[0])
            self._info.feature_key = key
            return
        first_sig, first_n = self._first
        if sig != first_sig:
            raise DataError("[input_fn] batch %d has features %s %s%s; the first batch had %s %s%s: every batch "
                            "must have the same dtypes and per-example shapes"
                            % (i, f.dtype, f.shape, "" if lab is None else " and labels %s %s" % (lab.dtype, lab.shape),
                               first_sig[0], (first_n,) + first_sig[1],
                               "" if first_sig[2] is None else " and labels %s %s" % (first_sig[2][0], (first_n,) + first_sig[2][1])))
        if self._fixed and f.shape[0] != first_n:
            raise DataError("[input_fn] batch %d has %d examples, the first had %d: training needs every batch the "
                            "same size (drop the last, partial batch)" % (i, f.shape[0], first_n))


def load_fashion_mnist(split="train", directory="/usr/share/datasets/fashion-mnist"):
    """Fashion-MNIST from the Debian package dataset-fashion-mnist: (features float32
    [N, 784] scaled to [0, 1], labels int32 [N]); split 'train' (60000) or 'test' (10000)."""
    return _core.load_fashion_mnist(directory, split)
