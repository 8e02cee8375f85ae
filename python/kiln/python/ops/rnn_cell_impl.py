"""tensorflow.python.ops.rnn_cell_impl: the recurrent cells."""
# ruff: noqa: F401, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln._src.unsupported import refuse_other_names
from kiln.nn.rnn_cell import BasicLSTMCell, GRUCell, LSTMCell, LSTMStateTuple, MultiRNNCell, RNNCell

__getattr__ = refuse_other_names('tensorflow.python.ops.rnn_cell_impl', "kiln's mirror of it holds the names kiln implements, listed in python/kiln/python/ops/rnn_cell_impl.py")
