"""kiln.contrib: the parts of tf.contrib that TensorFlow 1.x training scripts use most:
layers (regularizers, initializers, layers, optimize_loss), framework (arg_scope), slim
(its basic layers and arg_scope) and data (AUTOTUNE and the input-pipeline helpers)."""
import types as _types

from kiln._src import data as _data
from kiln.contrib import framework, layers, rnn, slim  # noqa: F401

data = _types.ModuleType("kiln.contrib.data")
data.AUTOTUNE = _data.AUTOTUNE
data.shuffle_and_repeat = _data.shuffle_and_repeat
