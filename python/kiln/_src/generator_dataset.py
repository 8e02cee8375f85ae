"""Element pipelines: Dataset.from_generator (the elements a Python generator yields, as
tf.data's from_generator gives them) and TFRecordDataset (the records of TFRecord files,
as bytes). Each generator element is converted to output_types (and checked against
output_shapes) once; map and filter run their traced function on kiln's interpreter
(kiln/_src/map_function.py); shuffle (a seeded buffer shuffle, reshuffled each repetition),
batch, padded_batch, repeat, take, skip and cache run over numpy elements in Python, one
step per element. kiln makes the next batch while the training step runs, as it does for
any iterable input."""
import itertools
import numbers
import os

import numpy as np

from kiln._core import DataError
from kiln._src import threadpool as _threadpool
from kiln._src.batching import _map_structure, _stack, batches  # noqa: F401 (map_loops' too)
from kiln._src.dtypes import as_dtype
from kiln._src.graph import unsupported
from kiln._src.iterators import Iterator, element_spec
from kiln._src.map_function import filter_stage
from kiln._src.map_loops import map_stage


class TensorSpec:
    """tf.TensorSpec(shape, dtype=float32, name=None): the type and shape of one component
    of a generator's elements (output_signature=)."""

    def __init__(self, shape, dtype="float32", name=None):
        self.shape = None if shape is None else tuple(None if d is None or d == -1 else int(d) for d in shape)
        self.dtype = as_dtype(dtype)
        self.name = name

    def __repr__(self):
        return "TensorSpec(shape=%s, dtype=kiln.%s, name=%r)" % (self.shape, self.dtype.name, self.name)


def _same_form(types, element, where):
    """DataError unless element has the tuple/dict form of output_types."""
    if isinstance(types, dict):
        if not isinstance(element, dict) or set(element) != set(types):
            raise DataError("%s is %s; output_types expects a dict with keys %s"
                            % (where, _describe(element), sorted(types)))
        for k in types:
            _same_form(types[k], element[k], "%s[%r]" % (where, k))
    elif isinstance(types, (tuple, list)):
        if not isinstance(element, (tuple, list)) or len(element) != len(types):
            raise DataError("%s is %s; output_types expects a tuple of %d" % (where, _describe(element), len(types)))
        for i, t in enumerate(types):
            _same_form(t, element[i], "%s[%d]" % (where, i))


def _describe(x):
    if isinstance(x, (tuple, list)):
        return "a %s of %d" % (type(x).__name__, len(x))
    if isinstance(x, dict):
        return "a dict with keys %s" % sorted(x)
    return "a %s" % type(x).__name__


def _leaf_converter(index_ref):
    def convert(value, dtype, shape, path):
        where = "[from_generator] element %d%s" % (index_ref[0], path)
        if dtype.name == "string":
            if isinstance(value, str):
                value = value.encode()
            if not isinstance(value, (bytes, np.ndarray)):
                raise DataError("%s is a %s; output_types says string (bytes)" % (where, type(value).__name__))
            return value
        try:
            arr = np.asarray(value, dtype=dtype.as_numpy_dtype)
        except (TypeError, ValueError) as e:
            raise DataError("%s cannot be made a %s array: %s" % (where, dtype.name, e)) from None
        if shape is not None:
            if len(shape) != arr.ndim or any(d is not None and d != a for d, a in zip(shape, arr.shape)):
                raise DataError("%s has shape %s; output_shapes says %s (None: any size)"
                                % (where, arr.shape, tuple(shape)))
        return arr
    return convert


def _shapes_like(types, shapes):
    """output_shapes in output_types' form (None where not given)."""
    if shapes is None:
        return _map_structure(lambda t, path: None, types)
    def norm(t, s, path):
        if s is None:
            return None
        dims = s.as_list() if hasattr(s, "as_list") else list(s)
        return tuple(None if d is None or d == -1 else int(d) for d in dims)
    try:
        return _map_structure(norm, types, shapes)
    except (KeyError, IndexError, TypeError):
        raise ValueError("[from_generator] output_shapes %r does not have the form of output_types %r"
                         % (shapes, types)) from None


def _count(value, op, allow_all=True):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or (value < 0 and not (allow_all and value == -1)):
        raise ValueError("[Dataset.%s] count %r must be an integer >= 0%s" % (op, value, " or -1 (all)" if allow_all else ""))
    return int(value)


class GeneratorDataset:
    """What Dataset.from_generator returns. Methods return new datasets."""

    def __init__(self, generator, types, shapes, args, ops=()):
        self._generator = generator
        self._types = types  # None after a map: the function's output decides
        self._shapes = shapes
        self._args = args
        self._ops = list(ops)
        self._form = None

    @staticmethod
    def make(generator, output_types=None, output_shapes=None, args=None, output_signature=None):
        if not callable(generator):
            raise TypeError("[Dataset.from_generator] generator %r is not callable; pass the generator function, "
                            "not what it returns" % (generator,))
        if output_signature is not None:
            if output_types is not None or output_shapes is not None:
                raise TypeError("[Dataset.from_generator] give output_signature or output_types/output_shapes, not both")
            if not all(isinstance(s, TensorSpec) for s in _leaves(output_signature)):
                raise TypeError("[Dataset.from_generator] output_signature holds kiln.TensorSpec values")
            types = _map_structure(lambda s, path: s.dtype, output_signature)
            shapes = _map_structure(lambda s, path: s.shape, output_signature)
        elif output_types is None:
            raise TypeError("[Dataset.from_generator] needs output_types (or output_signature): the dtype of each "
                            "component of an element, e.g. (kiln.float32, kiln.int64)")
        else:
            types = _map_structure(lambda t, path: as_dtype(t), output_types)
            shapes = _shapes_like(types, output_shapes)
        return GeneratorDataset(generator, types, shapes, tuple(args) if args is not None else ())

    def _with(self, op):
        d = GeneratorDataset(self._generator, self._types, self._shapes, self._args, self._ops + [op])
        d._form = self._form
        if op[0] in ("map", "interleave"):
            d._form = None
        return d

    def _structure(self):
        """The form of an element (types, or after a map the first element itself)."""
        if self._types is not None and not any(op[0] in ("map", "interleave") for op in self._ops):
            return self._types
        if self._form is None:
            first = next(iter(self.elements()), None)
            if first is None:
                raise DataError("[Dataset.map] the dataset holds no elements")
            self._form = first
        return self._form

    def _has(self, kind):
        return any(op[0] == kind for op in self._ops)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True):
        """A buffer shuffle as tf.data's: each element is drawn from a buffer of the next
        buffer_size; seed None: RunConfig's random_seed, else 0."""
        if not isinstance(buffer_size, numbers.Integral) or isinstance(buffer_size, bool) or buffer_size < 1:
            raise ValueError("[Dataset.shuffle] buffer_size %r must be an integer >= 1" % (buffer_size,))
        return self._with(("shuffle", int(buffer_size), seed, bool(reshuffle_each_iteration)))

    def batch(self, batch_size, drop_remainder=False):
        if isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral) or batch_size < 1:
            raise ValueError("[Dataset.batch] batch_size %r must be an integer >= 1" % (batch_size,))
        return self._with(("batch", int(batch_size), bool(drop_remainder), None))

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None, drop_remainder=False):
        """Batches elements whose shapes differ: each component is padded to padded_shapes
        (None or -1 in a dimension, or padded_shapes None: the longest in the batch) with
        padding_values (default 0)."""
        if isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral) or batch_size < 1:
            raise ValueError("[Dataset.padded_batch] batch_size %r must be an integer >= 1" % (batch_size,))
        types = self._structure()
        shapes = None if padded_shapes is None else _shapes_like(types, padded_shapes)
        values = None
        if padding_values is not None:
            values = padding_values if not isinstance(types, (tuple, dict)) or isinstance(padding_values, type(types)) \
                else _map_structure(lambda t, path: padding_values, types)
        return self._with(("batch", int(batch_size), bool(drop_remainder), (shapes, values)))

    def repeat(self, count=None):
        if count is not None and (isinstance(count, bool) or not isinstance(count, numbers.Integral)
                                  or (count < 0 and count != -1)):
            raise ValueError("[Dataset.repeat] count %r must be None, -1 or an integer >= 0" % (count,))
        return self._with(("repeat", None if count in (None, -1) else int(count)))

    def take(self, count):
        return self._with(("take", _count(count, "take")))

    def skip(self, count):
        return self._with(("skip", _count(count, "skip")))

    def prefetch(self, buffer_size):
        return self  # kiln makes the next batch of any Python input while the step runs

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
        if filename:
            unsupported("Dataset.cache(filename) of a generator", "kiln caches in memory only: cache() without a file")
        return self._with(("cache",))

    def map(self, map_func, num_parallel_calls=None, deterministic=None, seed=None):
        """map_func(element) traced into a kiln graph and run for every element
        (kiln/_src/map_function.py). num_parallel_calls=N maps on N threads, at most one per
        core (and at most a threadpool.PrivateThreadPool's threads), in order, with the
        draws of a sequential map (also with deterministic=False: kiln's order costs
        nothing); AUTOTUNE: one per core when the function runs in the C++ element loop,
        one when it runs in Python (kiln/_src/map_loops.py)."""
        if not callable(map_func):
            raise TypeError("[Dataset.map] %r is not callable; pass a function of the element" % (map_func,))
        autotune = num_parallel_calls == -1
        if num_parallel_calls is None or autotune:
            parallel = len(os.sched_getaffinity(0)) if autotune else 1
        elif isinstance(num_parallel_calls, bool) or not isinstance(num_parallel_calls, numbers.Integral) \
                or num_parallel_calls < 1:
            raise ValueError("[Dataset.map] num_parallel_calls %r must be an integer >= 1 or AUTOTUNE"
                             % (num_parallel_calls,))
        else:
            parallel = int(num_parallel_calls)
        return self._with(("map", map_func, seed, parallel, autotune))

    def _cap_threads(self, threads):
        """A copy whose maps run on at most `threads` threads (threadpool.override_threadpool)."""
        ops = [op[:3] + (min(op[3], threads),) + op[4:] if op[0] == "map" else op for op in self._ops]
        d = GeneratorDataset(self._generator, self._types, self._shapes, self._args, ops)
        d._form = self._form
        return d

    def flat_map(self, map_func):
        """map_func(element) -> a dataset, whose elements follow one another. map_func runs
        in Python once per element, on its numpy (or bytes) values, as with interleave."""
        return self.interleave(map_func, cycle_length=1, block_length=1)

    def interleave(self, map_func, cycle_length=None, block_length=1, num_parallel_calls=None, deterministic=None):
        """map_func(element) -> a dataset, for cycle_length elements at once, block_length
        elements from each in turn (tf.data's order; cycle_length None or AUTOTUNE: the
        CPUs, as tf.data takes). map_func runs in Python once per input element, on its
        values: TFRecordDataset(filename), from_tensor_slices(array), ... The inputs are
        read on the pipeline's thread: num_parallel_calls is checked, and the order is the
        one tf.data gives with deterministic=True whatever it is."""
        if not callable(map_func):
            raise TypeError("[Dataset.interleave] %r is not callable; pass a function of the element" % (map_func,))
        if num_parallel_calls not in (None, -1) and (isinstance(num_parallel_calls, bool) or not isinstance(
                num_parallel_calls, numbers.Integral) or num_parallel_calls < 1):
            raise ValueError("[Dataset.interleave] num_parallel_calls %r must be an integer >= 1 or AUTOTUNE"
                             % (num_parallel_calls,))
        cycle = (os.cpu_count() or 1) if cycle_length in (None, -1) else cycle_length
        for name, v in (("cycle_length", cycle), ("block_length", block_length)):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
                raise ValueError("[Dataset.interleave] %s %r must be an integer >= 1" % (name, v))
        return self._with(("interleave", map_func, int(cycle), int(block_length)))

    def shard(self, num_shards, index):
        """Every num_shards-th element from the index-th (a rank's share of the data)."""
        n, i = _shard_args(num_shards, index)
        return self._with(("shard", n, i))

    def apply(self, transformation_func):
        """transformation_func(dataset) -> dataset (tf.data.experimental's transformations)."""
        return transformation_func(self)

    def filter(self, predicate):
        """Keeps the elements for which predicate(element), a scalar bool tensor, is True."""
        if not callable(predicate):
            raise TypeError("[Dataset.filter] %r is not callable; pass a function of the element" % (predicate,))
        return self._with(("filter", predicate))

    def make_one_shot_iterator(self):
        return Iterator(self)

    def make_initializable_iterator(self, shared_name=None):
        return Iterator(self, initializable=True)

    def __iter__(self):
        return self.elements()

    def as_numpy_iterator(self):
        return self.elements()

    def _parts(self):
        """(the keys of a features dict or None, whether elements hold labels, the key of a
        one-entry labels dict or None)."""
        t = self._structure()
        has_labels = isinstance(t, tuple) and len(t) == 2
        features = t[0] if has_labels else t
        keys = list(features) if isinstance(features, dict) and features else None
        label = t[1] if has_labels else None
        return keys, has_labels, next(iter(label)) if isinstance(label, dict) and len(label) == 1 else None

    def is_batched(self):
        return self._has("batch")

    def elements(self, default_seed=0):
        """The pipeline's output, element by element (batches once batched), as numpy."""
        stream = self._source
        ops = list(self._ops)
        while ops:
            op = ops.pop(0)
            if op[0] == "map" and ops and ops[0][0] == "batch" and ops[0][3] is None:
                stream = map_stage(stream, op, default_seed, batch=ops.pop(0)[1:3])  # batched where mapped
                continue
            stream = _STAGES[op[0]](stream, op, default_seed)
        return stream()

    @staticmethod
    def of_elements(make_iterator):
        """An element pipeline over what make_iterator() yields, taken as it is (elements of
        other pipelines: zip, range, from_tensors)."""
        return GeneratorDataset(make_iterator, None, None, ())

    def _source(self):
        if self._types is None:
            yield from self._generator()
            return
        index = [0]
        convert = _leaf_converter(index)
        try:
            it = iter(self._generator(*self._args))
        except TypeError as e:
            raise TypeError("[Dataset.from_generator] generator(%s) did not return an iterator: %s"
                            % (", ".join(map(repr, self._args)), e)) from None
        for element in it:
            if isinstance(element, list) and isinstance(self._types, tuple):
                element = tuple(element)
            _same_form(self._types, element, "[from_generator] element %d" % index[0])
            yield _map_structure(lambda t, shape, e, path: convert(e, t, shape, path), self._types, self._shapes,
                                 element)
            index[0] += 1


def _leaves(structure):
    out = []
    _map_structure(lambda leaf, path: out.append(leaf), structure)
    return out


def _shuffle(src, op, default_seed):
    _, size, seed, reshuffle = op
    seed = int(default_seed if seed is None else seed) % 2**64
    runs = itertools.count()

    def stream():
        rng = np.random.default_rng([seed, next(runs) if reshuffle else 0])
        buffer = []
        for element in src():
            if len(buffer) < size:
                buffer.append(element)
                continue
            i = int(rng.integers(len(buffer)))
            yield buffer[i]
            buffer[i] = element
        rng.shuffle(buffer)
        yield from buffer
    return stream


def _batch(src, op, default_seed):
    _, size, drop, pad = op
    return lambda: batches(src(), size, drop, pad)


def _repeat(src, op, default_seed):
    count = op[1]

    def stream():
        for _ in (itertools.count() if count is None else range(count)):
            yield from src()
    return stream


def _take(src, op, default_seed):
    return lambda: itertools.islice(src(), op[1]) if op[1] >= 0 else src()


def _skip(src, op, default_seed):
    return lambda: itertools.islice(src(), op[1] if op[1] >= 0 else None, None) if op[1] != -1 else iter(())


def _cache(src, op, default_seed):
    kept, done = [], [False]

    def stream():
        if done[0]:
            yield from kept
            return
        kept.clear()
        for element in src():
            kept.append(element)
            yield element
        done[0] = True
    return stream


def interleave(sources, cycle, block):
    """tf.data's interleave order over an iterable of iterables: `cycle` open at once, up to
    `block` items from each in turn; an exhausted one gives its place to the next source
    when the cycle comes back to it."""
    sources = iter(sources)
    slots = [None] * cycle
    open_, pos, taken, ended = 0, 0, 0, False
    while not ended or open_:
        it = slots[pos]
        if it is not None:
            item = next(it, _END)
            if item is not _END:
                taken += 1
                if taken == block:
                    pos, taken = (pos + 1) % cycle, 0
                yield item
                continue
            slots[pos] = None
            open_ -= 1
            pos, taken = (pos + 1) % cycle, 0
        elif not ended:
            nxt = next(sources, _END)
            if nxt is _END:
                ended = True
            else:
                slots[pos] = iter(nxt)
                open_ += 1
        else:
            pos, taken = (pos + 1) % cycle, 0


_END = object()


def elements_of(ds, default_seed, op):
    """The elements of a dataset a flat_map / interleave function returned."""
    if isinstance(ds, GeneratorDataset):
        return ds.elements(default_seed)
    if hasattr(ds, "_elements"):  # kiln.data.Dataset over arrays
        return ds._elements().elements(default_seed)
    raise TypeError("[Dataset.%s] the function returned a %s; it must return a dataset" % (op, type(ds).__name__))


def _interleave(src, op, default_seed):
    _, fn, cycle, block = op
    what = "flat_map" if cycle == 1 and block == 1 else "interleave"

    def stream():
        def sources():
            for element in src():
                yield elements_of(fn(*element) if isinstance(element, tuple) else fn(element), default_seed, what)
        return interleave(sources(), cycle, block)
    return stream


def _shard_args(num_shards, index):
    for name, v in (("num_shards", num_shards), ("index", index)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise ValueError("[Dataset.shard] %s %r must be an integer" % (name, v))
    if num_shards < 1 or not 0 <= index < num_shards:
        raise ValueError("[Dataset.shard] index %r must be from 0 to num_shards - 1 (num_shards %r >= 1)"
                         % (index, num_shards))
    return int(num_shards), int(index)


def _shard(src, op, default_seed):
    _, n, i = op
    return lambda: itertools.islice(src(), i, None, n)


def _map(src, op, default_seed):
    return map_stage(src, op, default_seed)


def _filter(src, op, default_seed):
    return filter_stage(src, op, default_seed)


_STAGES = {"shuffle": _shuffle, "batch": _batch, "repeat": _repeat, "take": _take, "skip": _skip, "cache": _cache,
           "map": _map, "filter": _filter, "interleave": _interleave, "shard": _shard}
