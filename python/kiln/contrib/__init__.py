"""kiln.contrib: the parts of tf.contrib that TensorFlow 1.x training scripts use most:
layers (regularizers, initializers, layers, optimize_loss), framework (arg_scope), slim
(its basic layers and arg_scope), data (AUTOTUNE and the input-pipeline helpers), rnn
(the cells) and legacy_seq2seq (rnn_decoder and the sequence losses)."""
from kiln.contrib import data, framework, layers, legacy_seq2seq, rnn, slim  # noqa: F401
