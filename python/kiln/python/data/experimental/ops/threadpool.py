"""tensorflow.python.data.experimental.ops.threadpool: private thread pools."""
# ruff: noqa: F401, F403, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln._src.threadpool import PrivateThreadPool, override_threadpool
from kiln._src.unsupported import refuse_other_names

__getattr__ = refuse_other_names('tensorflow.python.data.experimental.ops.threadpool', "kiln's mirror of it holds the names kiln implements, listed in python/kiln/python/data/experimental/ops/threadpool.py")
