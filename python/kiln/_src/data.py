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
Dataset.zip((features, labels)) pairs two from_tensor_slices datasets; take/skip slice the
arrays (before shuffle and repeat). Dataset.from_generator (kiln/_src/generator_dataset.py)
runs a Python generator's elements through shuffle/batch/padded_batch/repeat/take/skip.
input_fn may also return iterator.get_next() of a one-shot or initializable iterator
(kiln/_src/iterators.py). TFRecordDataset reads TFRecord files into the same element pipeline;
map and filter trace their function into a kiln graph (kiln/_src/map_function.py). A map of a
from_tensor_slices dataset without random ops is applied to every example once, and the
result stays a C++ pipeline; one with random ops runs per element, drawing anew each epoch.
"""
import itertools
import numbers
import os

import numpy as np

from kiln import _core
from kiln._src import generator_dataset as _generator_dataset
from kiln._src import map_loops as _map_loops
from kiln._src import threadpool as _threadpool
from kiln._src.dtypes import as_dtype
from kiln._src.generator_dataset import GeneratorDataset, TensorSpec  # noqa: F401 (kiln.data names)
from kiln._src.graph import unsupported
from kiln._src.iterators import (  # noqa: F401
    Iterator,
    element_spec,
    make_initializable_iterator,
    make_one_shot_iterator,
)
from kiln._src.map_function import MapFunction, _key_of, _leaves
from kiln._src.records import tfrecord_dataset as _tfrecord_dataset

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


def _plain(d):
    """A from_tensor_slices dataset of one array (or a dict of one), nothing applied."""
    return isinstance(d, Dataset) and d._labels is None and not d._ops


def _strings(x):
    if isinstance(x, list):
        return bool(x) and all(isinstance(v, (str, bytes)) for v in x)
    return isinstance(x, np.ndarray) and x.dtype.kind in "SU" or (
        isinstance(x, np.ndarray) and x.dtype == object and x.size and all(isinstance(v, (str, bytes)) for v in x.flat))


def _split_features(features, what, several=True):
    """(array, key, more): features as an array (key None, more []), or a dict of them: the
    first entry's array and key, and [(key, array)] of the others. Labels (several=False)
    are one array or a dict of one."""
    if isinstance(features, dict):
        if not features:
            raise ValueError("%s is an empty dict; give at least one array" % what)
        for k in features:
            if not isinstance(k, str) or not k:
                raise TypeError("%s has the key %r; a feature's key must be a non-empty string" % (what, k))
        if len(features) != 1 and not several:
            unsupported("%s as a dict of %d entries" % (what, len(features)),
                        "kiln feeds one labels tensor; pass one array or a dict with one entry")
        items = list(features.items())
        return items[0][1], items[0][0], items[1:]
    return features, None, []


def _more_arrays(more, rows, what):
    """The further features of a dict as checked input arrays, each with `rows` rows."""
    out = []
    for key, value in more:
        a = _as_input_array(value, "%s['%s']" % (what, key))
        if a.shape[0] != rows:
            raise ValueError("%s['%s'] has %d rows (shape %s) but the first feature %d: every feature needs one row "
                             "per example" % (what, key, a.shape[0], a.shape, rows))
        out.append((key, a))
    return tuple(out)


def _component_slices(components):
    """from_tensor_slices of a tuple of other than two arrays ((x, ids, y), say): an element
    pipeline of tuples, for a map that makes (features, labels) of them, as tf.data's."""
    what = "[Dataset.from_tensor_slices]"
    if not components:
        raise ValueError("%s the tuple is empty; give (features, labels), features, or a tuple of arrays" % what)
    arrays = []
    for k, c in enumerate(components):
        if isinstance(c, dict):
            unsupported("%s a dict inside a tuple of %d" % (what, len(components)),
                        "give (features_dict, labels), or arrays in the tuple")
        arrays.append(_as_input_array(c, "%s component %d" % (what, k)))
    n = arrays[0].shape[0]
    for k, a in enumerate(arrays):
        if a.shape[0] != n:
            raise ValueError("%s component %d has %d rows (shape %s) but component 0 has %d: every component needs "
                             "one row per example" % (what, k, a.shape[0], a.shape, n))
    examples = [tuple(a[i] for a in arrays) for i in range(n)]
    types = tuple(as_dtype(a.dtype) for a in arrays)
    return GeneratorDataset(lambda: iter(examples), types, _generator_dataset._shapes_like(types, None), ())


class Dataset:
    """A pipeline over in-memory numpy arrays, run by kiln in C++. Methods return new
    datasets, as tf.data's do."""

    def __init__(self, features, labels, feature_key, label_key=None, more=()):
        self._features = features
        self._labels = labels
        self._feature_key = feature_key
        self._label_key = label_key  # labels as a dict of one entry ({'labels': array}): its key
        self._more = tuple(more)  # features as a dict of several: ((key, array), ...) after the first
        self._ops = []  # ("shuffle", seed) ("batch", n, drop) ("repeat", count) ("prefetch", n)

    def _cap_threads(self, threads):
        return self  # a C++ pipeline of arrays: its maps ran when they were built (override_threadpool)

    @staticmethod
    def from_tensor_slices(tensors):
        """(features, labels) arrays with the examples along axis 0, or features alone. A
        list of strings (file names, say) gives an element pipeline of bytes."""
        if _strings(tensors):
            items = [t.encode() if isinstance(t, str) else bytes(t) for t in np.asarray(tensors, dtype=object).reshape(-1)]
            if not items:
                raise ValueError("[Dataset.from_tensor_slices] the list of strings is empty")
            return GeneratorDataset(lambda: iter(items), as_dtype("string"), (), ())
        if isinstance(tensors, tuple):
            if len(tensors) != 2:
                return _component_slices(tensors)
            features, labels = tensors
        else:
            features, labels = tensors, None
        features, key, more = _split_features(features, "[Dataset.from_tensor_slices] features")
        labels, label_key, _ = (None, None, []) if labels is None else _split_features(
            labels, "[Dataset.from_tensor_slices] labels", several=False)
        f = _as_input_array(features, "[Dataset.from_tensor_slices] features")
        lab = None if labels is None else _as_input_array(labels, "[Dataset.from_tensor_slices] labels")
        if f.shape[0] == 0:
            raise ValueError("[Dataset.from_tensor_slices] features hold no examples (shape %s)" % (f.shape,))
        if lab is not None and lab.shape[0] != f.shape[0]:
            raise ValueError("[Dataset.from_tensor_slices] features have %d examples (shape %s) but labels %d "
                             "(shape %s)" % (f.shape[0], f.shape, lab.shape[0], lab.shape))
        return Dataset(f, lab, key, label_key, _more_arrays(more, f.shape[0], "[Dataset.from_tensor_slices] features"))

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None):
        """The files matching file_pattern (a glob, or a list of them), sorted, then shuffled
        each iteration unless shuffle=False (tf.data's default is to shuffle)."""
        import glob
        patterns = [file_pattern] if isinstance(file_pattern, (str, bytes, os.PathLike)) else list(file_pattern)
        files = sorted({f for p in patterns for f in glob.glob(os.fsdecode(p))})
        if not files:
            raise _core.DataError("[Dataset.list_files] no files match %s" % ", ".join(map(repr, patterns)))
        d = Dataset.from_tensor_slices(files)
        return d if shuffle is False else d.shuffle(len(files), seed=seed)

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None, output_signature=None):
        """Elements from generator(*args), converted to output_types (checked against
        output_shapes where given); see kiln/_src/generator_dataset.py."""
        return GeneratorDataset.make(generator, output_types, output_shapes, args, output_signature)

    @staticmethod
    def zip(datasets):
        """Dataset.zip of a tuple (or dict) of datasets: tuples of their elements, ending with
        the shortest, as tf.data's. Two plain from_tensor_slices datasets of one array each
        stay a C++ pipeline of (features, labels)."""
        if isinstance(datasets, tuple) and len(datasets) == 2 and all(_plain(d) for d in datasets) \
                and datasets[1]._feature_key is None and datasets[0]._label_key is None:
            f, lab = datasets
            n = min(f._features.shape[0], lab._features.shape[0])
            return Dataset(f._features[:n], lab._features[:n], f._feature_key, more=f._select(slice(0, n))._more)
        parts = list(datasets.values()) if isinstance(datasets, dict) else list(datasets) \
            if isinstance(datasets, (tuple, list)) else None
        if not parts or not all(isinstance(d, (Dataset, GeneratorDataset)) for d in parts):
            raise TypeError("[Dataset.zip] takes a tuple or dict of datasets, not %r" % (datasets,))

        def zipped():
            its = [iter(_generator_dataset.elements_of(d, 0, "zip")) for d in parts]
            for items in zip(*its):
                yield dict(zip(datasets.keys(), items)) if isinstance(datasets, dict) else tuple(items)
        return GeneratorDataset.of_elements(zipped)

    @staticmethod
    def range(*args, output_type=None):
        """range(stop), range(start, stop[, step]): int64 scalars (an element pipeline)."""
        if not 1 <= len(args) <= 3 or not all(isinstance(a, numbers.Integral) and not isinstance(a, bool)
                                               for a in args):
            raise TypeError("[Dataset.range] takes 1 to 3 integers (start, stop, step), not %r" % (args,))
        r = range(*args)  # the builtin: a method does not see the class's names
        np_type = np.int64 if output_type is None else as_dtype(output_type).as_numpy_dtype
        if r.stop - r.start > 2**40 and r.step == 1:  # sys.maxsize and the like: count without a list
            return GeneratorDataset.of_elements(lambda: (np_type(i) for i in itertools.count(r.start)))
        return GeneratorDataset.of_elements(lambda: (np_type(i) for i in r))

    @staticmethod
    def from_tensors(tensors):
        """One element: `tensors` as they are (numpy arrays, numbers, tuples and dicts of them)."""
        element = _generator_dataset._map_structure(lambda v, path: np.asarray(v), tensors)
        return GeneratorDataset.of_elements(lambda: iter([element]))

    def _parts(self):
        return self._keys(), self._labels is not None, self._label_key

    def _keys(self):
        """The keys of the features dict, or None for a features array."""
        return None if self._feature_key is None else [self._feature_key] + [k for k, _ in self._more]

    def _with(self, op):
        d = Dataset(self._features, self._labels, self._feature_key, self._label_key, self._more)
        d._ops = self._ops + [op]
        return d

    def _select(self, index):
        """The examples `index` picks (a slice or a boolean mask) of every array, ops kept."""
        d = Dataset(self._features[index], None if self._labels is None else self._labels[index], self._feature_key,
                    self._label_key, tuple((k, a[index]) for k, a in self._more))
        d._ops = list(self._ops)
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

    def take(self, count):
        """The first `count` examples (batches, after batch); -1: all."""
        return self._slice("take", count)

    def skip(self, count):
        """All but the first `count` examples (batches, after batch); -1: none."""
        return self._slice("skip", count)

    def _slice(self, kind, count):
        if isinstance(count, bool) or not isinstance(count, numbers.Integral) or count < -1:
            raise ValueError("[Dataset.%s] count %r must be an integer >= 0 or -1 (all)" % (kind, count))
        if self._has("shuffle") or self._has("repeat"):
            unsupported("Dataset.%s after shuffle or repeat" % kind,
                        "kiln slices the examples before shuffling and repeating them: call %s before those"
                        % kind)
        per = next((op[1] for op in self._ops if op[0] == "batch"), 1)
        n = self._features.shape[0]
        if count == -1:
            lo, hi = (0, n) if kind == "take" else (n, n)
        else:
            lo, hi = (0, min(n, count * per)) if kind == "take" else (min(n, count * per), n)
        if hi <= lo:
            raise ValueError("[Dataset.%s(%d)] leaves no examples of the %d%s" % (
                kind, count, n, " (batches of %d)" % per if per > 1 else ""))
        return self._select(slice(lo, hi))

    def make_one_shot_iterator(self):  # noqa: F811 (the method; the module-level function is tf.data's too)
        return Iterator(self)

    def make_initializable_iterator(self, shared_name=None):  # noqa: F811
        return Iterator(self, initializable=True)

    def map(self, map_func, num_parallel_calls=None, deterministic=None, seed=None):
        """map_func over every example. Without random ops it runs once per example now (in
        the C++ element loop on one thread per core when its trace has a C++ form, else in
        Python; the same values), and the mapped arrays stay a C++ pipeline; with random
        ops the dataset becomes an element pipeline that draws anew each epoch."""
        if self._has("batch"):
            unsupported("Dataset.map after batch on from_tensor_slices", "map the examples, then batch them")
        fn = MapFunction(map_func, "Dataset.map")
        first = fn(self._example(0), 0, 0)
        if any(t.random is not None for ts in fn.traces.values() for t in ts):
            return self._elements().map(map_func, num_parallel_calls, seed=seed)
        n = self._features.shape[0]
        mapped = self._map_rows(fn)
        if mapped is not None:
            return self._from_columns(mapped, "Dataset.map")
        rows = [first] + [fn(self._example(i), i, 0) for i in range(1, n)]
        return self._from_rows(rows, "Dataset.map")

    def filter(self, predicate):
        """The examples for which predicate(example) is True (evaluated once per example, in
        the C++ element loop when its trace has a C++ form, as map)."""
        if self._has("batch"):
            unsupported("Dataset.filter after batch on from_tensor_slices", "filter the examples, then batch them")
        fn = MapFunction(predicate, "Dataset.filter")
        n = self._features.shape[0]
        fn(self._example(0), 0, 0)  # traced on the first example
        kept = self._map_rows(fn)
        if isinstance(kept, np.ndarray) and kept.shape == (n,) and kept.dtype == np.bool_:
            if not kept.any():
                raise ValueError("[Dataset.filter] the predicate keeps none of the %d examples" % n)
            return self._select(kept)
        keep = []  # no C++ plan, or not one bool per example: the Python loop, which says what is wrong
        for i in range(n):
            k = np.asarray(fn(self._example(i), i, 0))
            if k.shape != () or k.dtype != np.bool_:
                raise TypeError("[Dataset.filter] the predicate returned a %s of shape %s; it must return a scalar "
                                "bool tensor" % (k.dtype, k.shape))
            keep.append(bool(k))
        if not any(keep):
            raise ValueError("[Dataset.filter] the predicate keeps none of the %d examples" % len(keep))
        return self._select(np.array(keep))

    def shard(self, num_shards, index):
        """Every num_shards-th example from the index-th (before shuffle, repeat and batch)."""
        n, i = _generator_dataset._shard_args(num_shards, index)
        if self._ops:
            unsupported("Dataset.shard after %s on from_tensor_slices" % ", ".join(op[0] for op in self._ops),
                        "shard the examples first, then shuffle, repeat and batch them")
        d = self._select(slice(i, None, n))  # strided rows: spec() hands C++ a C-order copy
        if d._features.shape[0] == 0:
            raise ValueError("[Dataset.shard(%d, %d)] leaves no examples of the %d" % (n, i, self._features.shape[0]))
        return d

    def apply(self, transformation_func):
        return transformation_func(self)

    def interleave(self, map_func, cycle_length=None, block_length=1, num_parallel_calls=None, deterministic=None):
        """map_func(example) -> a dataset, interleaved as tf.data does (an element pipeline)."""
        return self._elements().interleave(map_func, cycle_length, block_length)

    def flat_map(self, map_func):
        return self._elements().flat_map(map_func)

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None, drop_remainder=False):
        """Batches of examples padded to padded_shapes (an element pipeline; arrays' rows all
        have one shape, so without padded_shapes this is batch())."""
        if self._has("batch"):
            unsupported("Dataset.padded_batch after batch on from_tensor_slices", "pad the examples once")
        return self._elements().padded_batch(batch_size, padded_shapes, padding_values, drop_remainder)

    def _example(self, i):
        f = self._features[i] if self._feature_key is None else dict(
            [(self._feature_key, self._features[i])] + [(k, a[i]) for k, a in self._more])
        if self._labels is None:
            return f
        return f, (self._labels[i] if self._label_key is None else {self._label_key: self._labels[i]})

    def _map_rows(self, fn):
        """fn (traced on the first example) over every example in the C++ element loop, its
        results stacked; None where that loop cannot take it (_map_loops.map_rows)."""
        columns = []
        _leaves(self._example(slice(None)), columns)  # each leaf of an example, for all of them
        return _map_loops.map_rows(fn, _key_of(self._example(0))[0], columns, self._features.shape[0])

    def _from_columns(self, out, op):
        """A dataset of the examples `out` holds stacked: a function's result form (features,
        or (features, labels); each an array or a dict of them) whose arrays have a row per
        example."""
        pairs = isinstance(out, tuple) and len(out) == 2
        features = out[0] if pairs else out
        more, key = [], None
        if isinstance(features, dict):
            keys = list(features)
            _split_features(features, "[%s] the function's features" % op)  # checks the keys
            key, f = keys[0], features[keys[0]]
            more = [(k, features[k]) for k in keys[1:]]
        else:
            f = features
        label_key, lab = None, None
        if pairs and isinstance(out[1], dict):
            label_key = _split_features(out[1], "[%s] the function's labels" % op, several=False)[1]
            lab = out[1][label_key]
        elif pairs:
            lab = out[1]
        return self._with_arrays(f, key, more, lab, label_key, op)

    def _from_rows(self, rows, op):
        pairs = isinstance(rows[0], tuple) and len(rows[0]) == 2
        features = [r[0] for r in rows] if pairs else rows
        try:
            more = []
            if isinstance(features[0], dict):
                keys = list(features[0])
                _split_features(features[0], "[%s] the function's features" % op)  # checks the keys
                key = keys[0]
                f = np.stack([r[key] for r in features])
                more = [(k, np.stack([np.asarray(r[k]) for r in features])) for k in keys[1:]]
            else:
                key, f = None, np.stack([np.asarray(r) for r in features])
            label_key = None
            if pairs and isinstance(rows[0][1], dict):
                labels = [r[1] for r in rows]
                label_key = _split_features(labels[0], "[%s] the function's labels" % op, several=False)[1]
                lab = np.stack([np.asarray(r[label_key]) for r in labels])
            else:
                lab = np.stack([np.asarray(r[1]) for r in rows]) if pairs else None
        except ValueError as e:
            raise DataError("[%s] the function's results differ in shape between examples: %s" % (op, e)) from None
        return self._with_arrays(f, key, more, lab, label_key, op)

    def _with_arrays(self, f, key, more, lab, label_key, op):
        """This dataset's ops over the examples of these arrays (a map's results)."""
        f = _as_input_array(f, "[%s] features" % op)
        d = Dataset(f, None if lab is None else _as_input_array(lab, "[%s] labels" % op), key, label_key,
                    _more_arrays(more, f.shape[0], "[%s] features" % op))
        d._ops = list(self._ops)
        return d

    def _elements(self):
        """This dataset as an element pipeline (kiln/_src/generator_dataset.py), its shuffle,
        repeat and batch carried over."""
        n = self._features.shape[0]
        examples = [self._example(i) for i in range(n)]
        form = examples[0]
        types = _generator_dataset._map_structure(lambda v, path: as_dtype(np.asarray(v).dtype), form)
        d = GeneratorDataset(lambda: iter(examples), types, _generator_dataset._shapes_like(types, None), ())
        for op in self._ops:
            if op[0] == "shuffle":
                d = d.shuffle(n, seed=op[1])
            elif op[0] == "repeat":
                d = d.repeat(None if op[1] == -1 else op[1])
            elif op[0] == "batch":
                d = d.batch(op[1], drop_remainder=op[2])
        return d

    def elements(self, default_seed=0):
        """The pipeline's output, element by element (batches once batched), as numpy."""
        return self._elements().elements(default_seed)

    def __iter__(self):
        return self.elements()

    def as_numpy_iterator(self):
        return self.elements()

    @property
    def output_types(self):
        """The DTypes of an element (TF 1's), from the first element."""
        return element_spec(self)[0]

    @property
    def output_shapes(self):
        """The TensorShapes of an element, the batch dimension None."""
        return element_spec(self)[1]

    def with_options(self, options):
        return _threadpool.with_options(self, options)

    def cache(self, filename=""):
        return self  # the arrays are in memory already

    def spec(self, default_seed=0):
        """The C++ description of this pipeline (kiln._core.SliceSpec)."""
        if not self._has("batch"):
            unsupported("a Dataset without batch()", "an Estimator trains on batches: call .batch(n)")
        s = _core.SliceSpec()
        s.features = np.ascontiguousarray(self._features)  # C++ reads the rows in place; a no-op when they are
        s.labels = None if self._labels is None else np.ascontiguousarray(self._labels)
        s.more = [(k, np.ascontiguousarray(a)) for k, a in self._more]
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
        `skip`: what training sees (features a dict when the dataset has several)."""
        out = []
        for f, lab, more in _core.slice_batches(self.spec(default_seed), int(limit), int(skip)):
            out.append((dict([(self._feature_key, f)] + list(more)) if more else f, lab))
        return out


def _describe_more(more):
    return "{%s}" % ", ".join("'%s': %s %s" % (k, d, tuple(s)) for k, d, s in more) if more else "none"


class BatchReader:
    """Turns the items of a Python iterable into checked numpy batches for kiln, one call
    of next_batch() per batch (from kiln's prefetch thread)."""

    def __init__(self, iterable, info):
        try:
            self._it = iter(iterable)
        except TypeError:
            raise TypeError("[input_fn] returned a %s; expected a kiln.data.Dataset or an iterable of "
                            "(features, labels) numpy tuples" % type(iterable).__name__) from None
        self._info = info
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
        what = "[input_fn] batch %d: features" % i
        features, key, more = _split_features(features, what)
        f = _as_input_array(features, what)
        if f.shape[0] == 0:
            raise DataError("[input_fn] batch %d holds no examples (features of shape %s): every batch needs at "
                            "least one" % (i, f.shape))
        try:
            more = _more_arrays(more, f.shape[0], what)
        except ValueError as e:
            raise DataError(str(e)) from None
        labels, label_key, _ = (None, None, []) if labels is None else _split_features(
            labels, "[input_fn] batch %d: labels" % i, several=False)
        lab = None if labels is None else _as_input_array(labels, "[input_fn] batch %d: labels" % i)
        if lab is not None and lab.shape[0] != f.shape[0]:
            raise DataError("[input_fn] batch %d: features have %d examples (shape %s) but labels %d (shape %s)"
                            % (i, f.shape[0], f.shape, lab.shape[0], lab.shape))
        self._check_like_first(i, f, lab, key, label_key, more)
        return (f, lab, list(more)) if more else (f, lab)

    def _check_like_first(self, i, f, lab, key, label_key, more):
        sig = (f.dtype, f.shape[1:], None if lab is None else (lab.dtype, lab.shape[1:]), key, label_key,
               tuple((k, a.dtype, a.shape[1:]) for k, a in more))
        if self._first is None:
            self._first = (sig, f.shape[0])
            self._info.feature_key, self._info.label_key = key, label_key
            self._info.more_keys = [k for k, _ in more]
            return
        if sig[5] != self._first[0][5]:
            raise DataError("[input_fn] batch %d has further features %s; the first batch had %s: every batch must "
                            "have the same features, dtypes and per-example shapes"
                            % (i, _describe_more(sig[5]), _describe_more(self._first[0][5])))
        first_sig, first_n = self._first
        if sig != first_sig:
            raise DataError("[input_fn] batch %d has features %s %s%s; the first batch had %s %s%s: every batch "
                            "must have the same dtypes and per-example shapes"
                            % (i, f.dtype, f.shape, "" if lab is None else " and labels %s %s" % (lab.dtype, lab.shape),
                               first_sig[0], (first_n,) + first_sig[1],
                               "" if first_sig[2] is None else " and labels %s %s" % (first_sig[2][0], (first_n,) + first_sig[2][1])))


def shuffle_and_repeat(buffer_size, count=None, seed=None):
    """tf.data.experimental.shuffle_and_repeat: for Dataset.apply."""
    return lambda ds: ds.shuffle(buffer_size, seed=seed).repeat(count)




class TFRecordDataset:
    """tf.data.TFRecordDataset(filenames, compression_type=, buffer_size=, num_parallel_reads=):
    the records of TFRecord files as bytes elements (kiln/_src/records.py). Dataset's static
    constructors are here too (TFRecordDataset.list_files), as in tf.data."""

    def __new__(cls, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None):
        return _tfrecord_dataset(filenames, compression_type, buffer_size, num_parallel_reads)

    list_files = staticmethod(Dataset.list_files)
    from_tensor_slices = staticmethod(Dataset.from_tensor_slices)
    from_tensors = staticmethod(Dataset.from_tensors)
    range = staticmethod(Dataset.range)
    zip = staticmethod(Dataset.zip)


def load_fashion_mnist(split="train", directory="/usr/share/datasets/fashion-mnist"):
    """Fashion-MNIST from the Debian package dataset-fashion-mnist: (features float32
    [N, 784] scaled to [0, 1], labels int32 [N]); split 'train' (60000) or 'test' (10000)."""
    return _core.load_fashion_mnist(directory, split)
