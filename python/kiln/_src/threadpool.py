"""tf.data.experimental's thread pools (tensorflow.python.data.experimental.ops.threadpool),
as ImageNet scripts wrap their pipelines in them: override_threadpool(dataset,
PrivateThreadPool(n)) runs the dataset's map functions on at most n threads. kiln maps on
at most one thread per core anyway (Python threads beyond that fight over the GIL), so a
pool larger than the machine changes nothing and a smaller one caps the maps."""
import numbers


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
