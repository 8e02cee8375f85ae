"""tf.contrib.slim's basic layers and arg_scope."""
from .framework import (add_arg_scope, arg_scope, assign_from_checkpoint_fn, get_model_variables, get_variables,  # noqa: F401
                        get_variables_to_restore)
from .layers import (avg_pool2d, batch_norm, conv2d, dropout, flatten, fully_connected, l2_regularizer,  # noqa: F401
                     layer_norm, max_pool2d, xavier_initializer)
from .. import losses  # noqa: F401
