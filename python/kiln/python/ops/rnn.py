"""tensorflow.python.ops.rnn: dynamic_rnn and static_rnn."""
# ruff: noqa: F401, F403, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln._src.unsupported import refuse_other_names
from kiln.nn import dynamic_rnn, static_rnn

__getattr__ = refuse_other_names('tensorflow.python.ops.rnn', "kiln's mirror of it holds the names kiln implements, listed in python/kiln/python/ops/rnn.py")
