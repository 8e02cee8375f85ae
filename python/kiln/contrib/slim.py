"""tf.contrib.slim's basic layers and arg_scope."""
from kiln._src import losses  # noqa: F401

from .framework import (  # noqa: F401
                        add_arg_scope,
                        arg_scope,
                        assign_from_checkpoint_fn,
                        get_model_variables,
                        get_variables,
                        get_variables_to_restore,
)
from .layers import (  # noqa: F401
                        avg_pool2d,
                        batch_norm,
                        conv2d,
                        dropout,
                        flatten,
                        fully_connected,
                        l2_regularizer,
                        layer_norm,
                        max_pool2d,
                        xavier_initializer,
)
