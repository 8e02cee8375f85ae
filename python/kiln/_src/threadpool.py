"""tf.data.experimental's thread pools (tensorflow.python.data.experimental.ops.threadpool),
as ImageNet scripts wrap their pipelines in them: override_threadpool(dataset,
PrivateThreadPool(n)) runs the dataset's map functions on at most n threads. kiln maps on
at most one thread per core anyway (Python threads beyond that fight over the GIL), so a
pool larger than the machine changes nothing and a smaller one caps the maps."""
import numbers

from kiln._src import log as _log


class PrivateThreadPool:
    def __init__(self, num_threads, display_name=None, max_intra_op_parallelism=1):
        if isinstance(num_threads, bool) or not isinstance(num_threads, numbers.Integral) or num_threads < 1:
            raise ValueError("[PrivateThreadPool] num_threads %r must be an integer >= 1" % (num_threads,))
        if max_intra_op_parallelism != 1:
            raise ValueError("[PrivateThreadPool] max_intra_op_parallelism %r: kiln runs each map function's graph on "
                             "its one map thread; only 1 is valid" % (max_intra_op_parallelism,))
        self.num_threads = int(num_threads)
        self.display_name = display_name  # a label, as in TensorFlow (kiln's threads are named kiln-map)


def override_threadpool(dataset, thread_pool):
    if not isinstance(thread_pool, PrivateThreadPool):
        raise TypeError("[override_threadpool] thread_pool is a %s; it takes a PrivateThreadPool"
                        % type(thread_pool).__name__)
    if hasattr(dataset, "_cap_threads"):
        return dataset._cap_threads(thread_pool.num_threads)
    raise TypeError("[override_threadpool] takes a tf.data pipeline (TFRecordDataset, from_generator, a "
                    "mapped dataset); got %s" % type(dataset).__name__)


class _OptionGroup:
    """A group of tf.data.Options fields: any may be set (None: TensorFlow's default)."""

    def __init__(self):
        self.__dict__["_set"] = {}

    def __setattr__(self, name, value):
        self._set[name] = value

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self._set.get(name)


class ThreadingOptions(_OptionGroup):
    """private_threadpool_size (the maps' thread cap, as PrivateThreadPool) and
    max_intra_op_parallelism (kiln runs a map function on its one thread: only 1)."""


class Options:
    """tf.data.Options for Dataset.with_options: threading (experimental_threading) caps
    the map threads; deterministic True is kiln's order; optimization and distribute
    fields have nothing to change in kiln's pipelines and warn naming themselves."""

    def __init__(self):
        self.threading = ThreadingOptions()
        self.experimental_optimization = _OptionGroup()
        self.experimental_distribute = _OptionGroup()
        self.deterministic = None
        self.experimental_slack = None

    @property
    def experimental_threading(self):
        return self.threading

    @experimental_threading.setter
    def experimental_threading(self, value):
        self.threading = value

    @property
    def experimental_deterministic(self):
        return self.deterministic

    @experimental_deterministic.setter
    def experimental_deterministic(self, value):
        self.deterministic = value


def with_options(dataset, options):
    """Dataset.with_options(options), for kiln's datasets (duck-typed: _cap_threads)."""
    if not isinstance(options, Options):
        raise TypeError("[with_options] takes a tf.data.Options, not %s" % type(options).__name__)
    t = options.threading._set
    intra = t.get("max_intra_op_parallelism")
    if intra not in (None, 1):
        raise ValueError("[Options] threading.max_intra_op_parallelism %r: kiln runs each map function's graph on its "
                         "one map thread; only 1 is valid" % (intra,))
    size = t.get("private_threadpool_size")
    if size:
        dataset = override_threadpool(dataset, PrivateThreadPool(int(size)))
    if options.deterministic is False:
        _log.warn("[Options.deterministic] False is ignored: kiln's pipelines always keep their order", stacklevel=3)
    for group, fields in (("experimental_optimization", options.experimental_optimization._set),
                          ("experimental_distribute", options.experimental_distribute._set)):
        for k in sorted(fields):
            _log.warn("[Options.%s.%s] is ignored: kiln's pipelines have no such setting" % (group, k), stacklevel=3)
    if options.experimental_slack:
        _log.warn("[Options.experimental_slack] is ignored: kiln's prefetch needs no slack", stacklevel=3)
    return dataset
