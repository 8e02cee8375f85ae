"""The seed's npu_ops: dropout(x, keep_prob) as tf.nn.dropout."""
from kiln._src.random_ops import dropout as _dropout


def dropout(x, keep_prob, noise_shape=None, seed=None, name=None):
    return _dropout(x, keep_prob=keep_prob, noise_shape=noise_shape, seed=seed, name=name)
