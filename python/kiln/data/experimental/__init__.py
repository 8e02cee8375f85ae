"""tf.data.experimental: AUTOTUNE, shuffle_and_repeat and the private thread pools."""
# ruff: noqa: F401, A004
# (a package of names: each is imported to be re-exported, some shadowing builtins as TensorFlow's do)
from kiln._src import threadpool
from kiln._src.data import AUTOTUNE, shuffle_and_repeat
from kiln._src.threadpool import ThreadingOptions
