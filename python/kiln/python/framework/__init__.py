"""tensorflow.python.framework: the module paths of it that scripts import (constant_op, dtypes, ops, tensor_shape)."""
