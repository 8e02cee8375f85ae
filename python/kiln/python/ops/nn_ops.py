"""tensorflow.python.ops.nn_ops: convolutions, pooling, activations, losses on logits."""
# ruff: noqa: F401, F403, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln._src.unsupported import refuse_other_names
from kiln.nn import (
    avg_pool,
    bias_add,
    conv1d,
    conv2d,
    depthwise_conv2d,
    dropout,
    elu,
    in_top_k,
    l2_loss,
    leaky_relu,
    log_softmax,
    max_pool,
    relu,
    relu6,
    selu,
    softmax,
    softmax_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits_v2,
    softplus,
    softsign,
    sparse_softmax_cross_entropy_with_logits,
)

__getattr__ = refuse_other_names('tensorflow.python.ops.nn_ops', "kiln's mirror of it holds the names kiln implements, listed in python/kiln/python/ops/nn_ops.py")
