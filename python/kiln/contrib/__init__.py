"""kiln.contrib: the parts of tf.contrib that TensorFlow 1.x training scripts use most:
layers (regularizers, initializers, layers, optimize_loss), framework (arg_scope), slim
(its basic layers and arg_scope) and data (AUTOTUNE and the input-pipeline helpers)."""
from kiln.contrib import data, framework, layers, rnn, slim  # noqa: F401
