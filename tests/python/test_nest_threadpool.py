"""tf.nest, and tf.data's private thread pools as ImageNet scripts use them
(threadpool.override_threadpool): a map runs on at most one thread per core and at most
the pool's threads."""
import collections
import os
import threading

import numpy as np
import pytest

import kiln as tf
from kiln.data import threadpool


def test_nest_flattens_and_packs_as_tensorflow_does():
    s = {"b": (1, [2, 3]), "a": 4}
    assert tf.nest.flatten(s) == [4, 1, 2, 3]  # dicts by sorted key
    assert tf.nest.pack_sequence_as(s, [40, 10, 20, 30]) == {"b": (10, [20, 30]), "a": 40}
    Point = collections.namedtuple("Point", "x y")
    assert tf.nest.map_structure(lambda a, b: a * b, Point(2, 3), Point(5, 7)) == Point(10, 21)
    assert tf.nest.map_structure(len, tf.TensorShape([3, 4])) == 2  # a TensorShape is a leaf
    with pytest.raises(ValueError, match="the two structures differ"):
        tf.nest.map_structure(lambda a, b: a, (1, 2), (1, [2]))
    with pytest.raises(ValueError, match="has 2 leaves; flat_sequence has 3"):
        tf.nest.pack_sequence_as((1, 2), [1, 2, 3])


def threads_used(wrap, parallel):
    names = set()

    def fn(x):
        names.add(threading.current_thread().name)  # the function is traced once per map thread
        return x * 2

    ds = tf.data.Dataset.from_generator(lambda: iter(range(64)), tf.int64, []).map(fn, num_parallel_calls=parallel)
    out = [int(v) for v in wrap(ds).elements()]
    assert out == [2 * i for i in range(64)]  # in order, whatever the threads
    return len(names)


def test_maps_run_on_at_most_a_thread_per_core_and_the_pools_threads():
    cores = len(os.sched_getaffinity(0))
    assert threads_used(lambda d: d, 16) <= min(16, cores)
    assert threads_used(lambda d: threadpool.override_threadpool(d, threadpool.PrivateThreadPool(1)), 16) == 1
    with pytest.raises(ValueError, match=r"max_intra_op_parallelism 4: .* only 1 is valid"):
        threadpool.PrivateThreadPool(2, max_intra_op_parallelism=4)
    with pytest.raises(ValueError, match=r"num_threads 0 must be an integer >= 1"):
        threadpool.PrivateThreadPool(0)
    with pytest.raises(TypeError, match="takes a PrivateThreadPool"):
        threadpool.override_threadpool(tf.data.Dataset.range(3), 4)
    with pytest.raises(TypeError, match="takes a tf.data pipeline"):
        threadpool.override_threadpool([1, 2], threadpool.PrivateThreadPool(2))
    arrays = tf.data.Dataset.from_tensor_slices((np.zeros((4, 2), np.float32), np.arange(4, dtype=np.int32)))
    assert threadpool.override_threadpool(arrays, threadpool.PrivateThreadPool(2)) is arrays  # its maps ran already
    assert tf.data.experimental.threadpool is threadpool
