"""tensorflow.python.ops.losses.losses: tf.losses."""
# ruff: noqa: F401, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln._src.unsupported import refuse_other_names
from kiln.losses import (
    Reduction,
    Tensor,
    abs,
    absolute_difference,
    add_loss,
    cast,
    convert_to_tensor,
    get_losses,
    get_regularization_loss,
    get_regularization_losses,
    get_total_loss,
    hinge_loss,
    huber_loss,
    log_loss,
    maximum,
    mean_squared_error,
    minimum,
    reduce_mean,
    reduce_sum,
    sigmoid_cross_entropy,
    softmax_cross_entropy,
    sparse_softmax_cross_entropy,
    square,
)

__getattr__ = refuse_other_names('tensorflow.python.ops.losses.losses', "kiln's mirror of it holds the names kiln implements, listed in python/kiln/python/ops/losses/losses.py")
