"""tf.contrib.rnn: the cells and static_rnn (aliases of tf.nn.rnn_cell's)."""
from .._rnn import BasicLSTMCell, GRUCell, LSTMCell, LSTMStateTuple, MultiRNNCell, RNNCell, static_rnn  # noqa: F401
