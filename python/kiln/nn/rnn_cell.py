"""tf.nn.rnn_cell: the recurrent cells."""
# ruff: noqa: F401, A004
# (a package of names: each is imported to be re-exported, some shadowing builtins as TensorFlow's do)
from kiln._src.rnn import BasicLSTMCell, GRUCell, LSTMCell, LSTMStateTuple, MultiRNNCell, RNNCell
