"""tf.contrib.rnn: the cells, static_rnn and static_bidirectional_rnn (aliases of tf.nn.rnn_cell's)."""
from kiln._src.rnn import (  # noqa: F401
    BasicLSTMCell,
    GRUCell,
    LSTMCell,
    LSTMStateTuple,
    MultiRNNCell,
    RNNCell,
    static_bidirectional_rnn,
    static_rnn,
)
