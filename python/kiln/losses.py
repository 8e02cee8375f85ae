"""kiln.losses: TensorFlow 1.x's tf.losses (mean over the batch, weights a scalar)."""
from . import nn
from ._graph import Tensor, abs, convert_to_tensor, named, reduce_mean, square, unsupported


def _weighted(per_example, weights, op):
    if isinstance(weights, Tensor):
        unsupported("%s with a weights tensor" % op, "kiln takes a scalar weight")
    loss = reduce_mean(per_example)
    return loss if float(weights) == 1.0 else loss * float(weights)


def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope=None, **unused):
    """Mean softmax cross-entropy of logits [N, C] against class ids [N]."""
    per = nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    return named(_weighted(per, weights, "losses.sparse_softmax_cross_entropy"), scope)


def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing=0, scope=None, **unused):
    if label_smoothing:
        c = logits._shape[-1]
        onehot_labels = convert_to_tensor(onehot_labels, like=logits) * (1.0 - label_smoothing) + label_smoothing / c
    per = nn.softmax_cross_entropy_with_logits(labels=onehot_labels, logits=logits)
    return named(_weighted(per, weights, "losses.softmax_cross_entropy"), scope)


def sigmoid_cross_entropy(multi_class_labels, logits, weights=1.0, scope=None, **unused):
    per = nn.sigmoid_cross_entropy_with_logits(labels=multi_class_labels, logits=logits)
    return named(_weighted(per, weights, "losses.sigmoid_cross_entropy"), scope)


def mean_squared_error(labels, predictions, weights=1.0, scope=None, **unused):
    d = convert_to_tensor(labels, like=predictions) - predictions
    return named(_weighted(square(d), weights, "losses.mean_squared_error"), scope)


def absolute_difference(labels, predictions, weights=1.0, scope=None, **unused):
    d = convert_to_tensor(labels, like=predictions) - predictions
    return named(_weighted(abs(d), weights, "losses.absolute_difference"), scope)
