"""tf.losses, TensorFlow 1.x's names; their code is in kiln._src.losses."""
# ruff: noqa: F401, A004
# (a package of names: each is imported to be re-exported, some shadowing builtins as TensorFlow's do)
from kiln._src.losses import (
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
    nn,
    reduce_mean,
    reduce_sum,
    sigmoid_cross_entropy,
    softmax_cross_entropy,
    sparse_softmax_cross_entropy,
    square,
)
