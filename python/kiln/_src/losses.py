"""kiln.losses: TensorFlow 1.x's tf.losses. Each loss is reduced as TensorFlow's default
(SUM_BY_NONZERO_WEIGHTS: the weighted sum over the examples with a non-zero weight; with a
scalar weight, the mean times it) and joins the LOSSES collection, which get_total_loss
adds up with the regularization losses."""
from kiln import _core
from kiln._src import nn
from kiln._src import scopes as _scopes
from kiln._src.array_ops import add_n
from kiln._src.graph import (
    Tensor,
    abs,  # noqa: A004 (the graph's abs, TensorFlow's name)
    cast,
    constant,
    convert_to_tensor,
    log,
    maximum,
    minimum,
    named,
    reduce_mean,
    reduce_sum,
    square,
)


class Reduction:
    NONE = "none"
    SUM = "weighted_sum"
    MEAN = "weighted_mean"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls):
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE, cls.SUM_BY_NONZERO_WEIGHTS)


def _reduce(per_example, weights, reduction, op):
    if reduction not in Reduction.all():
        raise ValueError("[%s] reduction %r is not one of: %s" % (op, reduction, ", ".join(Reduction.all())))
    if isinstance(weights, Tensor):
        w = cast(weights, "float32")
        if list(w._shape) != list(per_example._shape):
            w = _core.broadcast_to(w if len(w._shape) <= len(per_example._shape) else _core.reshape(
                w, list(per_example._shape)), list(per_example._shape))
        weighted = per_example * w
        if reduction == Reduction.NONE:
            return weighted
        total = reduce_sum(weighted)
        if reduction == Reduction.SUM:
            return total
        if reduction == Reduction.MEAN:
            return total / maximum(reduce_sum(w), 1e-30)
        if reduction == Reduction.SUM_OVER_BATCH_SIZE:
            return total / _numel(per_example)
        nonzero = reduce_sum(cast(_core.not_equal(w, _core.scalar_like(w, 0)), "float32"))
        return total / maximum(nonzero, 1.0)
    w = float(weights)
    if reduction == Reduction.NONE:
        return per_example * w if w != 1.0 else per_example
    if reduction == Reduction.SUM:
        return reduce_sum(per_example) * w if w != 1.0 else reduce_sum(per_example)
    if reduction == Reduction.MEAN:
        return reduce_mean(per_example)
    loss = reduce_mean(per_example)
    return loss if w == 1.0 else loss * w


def _numel(t):
    n = 1
    for d in t._shape:
        n *= d
    return float(n)


def _finish(loss, scope, loss_collection):
    loss = named(loss, scope)
    if loss_collection:
        _scopes.add_to_collection(loss_collection, loss)
    return loss


def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope=None, loss_collection=_scopes.GraphKeys.LOSSES,
                                 reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Mean softmax cross-entropy of logits [N, C] against class ids [N]."""
    per = nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    return _finish(_reduce(per, weights, reduction, "losses.sparse_softmax_cross_entropy"), scope, loss_collection)


def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=_scopes.GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    onehot_labels = convert_to_tensor(onehot_labels, like=logits) if not isinstance(onehot_labels, Tensor) else (
        cast(onehot_labels, "float32") if onehot_labels._dtype != logits._dtype else onehot_labels)
    if label_smoothing:
        c = logits._shape[-1]
        onehot_labels = onehot_labels * (1.0 - label_smoothing) + label_smoothing / c
    per = nn.softmax_cross_entropy_with_logits(labels=onehot_labels, logits=logits)
    return _finish(_reduce(per, weights, reduction, "losses.softmax_cross_entropy"), scope, loss_collection)


def sigmoid_cross_entropy(multi_class_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=_scopes.GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    z = convert_to_tensor(multi_class_labels, like=logits)
    if label_smoothing:
        z = z * (1.0 - label_smoothing) + 0.5 * label_smoothing
    per = nn.sigmoid_cross_entropy_with_logits(labels=z, logits=logits)
    return _finish(_reduce(per, weights, reduction, "losses.sigmoid_cross_entropy"), scope, loss_collection)


def mean_squared_error(labels, predictions, weights=1.0, scope=None, loss_collection=_scopes.GraphKeys.LOSSES,
                       reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    d = convert_to_tensor(labels, like=predictions) - predictions
    return _finish(_reduce(square(d), weights, reduction, "losses.mean_squared_error"), scope, loss_collection)


def absolute_difference(labels, predictions, weights=1.0, scope=None, loss_collection=_scopes.GraphKeys.LOSSES,
                        reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    d = convert_to_tensor(labels, like=predictions) - predictions
    return _finish(_reduce(abs(d), weights, reduction, "losses.absolute_difference"), scope, loss_collection)


def huber_loss(labels, predictions, weights=1.0, delta=1.0, scope=None, loss_collection=_scopes.GraphKeys.LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    err = abs(convert_to_tensor(labels, like=predictions) - predictions)
    quad = minimum(err, float(delta))
    per = quad * quad * 0.5 + (err - quad) * float(delta)
    return _finish(_reduce(per, weights, reduction, "losses.huber_loss"), scope, loss_collection)


def log_loss(labels, predictions, weights=1.0, epsilon=1e-7, scope=None, loss_collection=_scopes.GraphKeys.LOSSES,
             reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    y = convert_to_tensor(labels, like=predictions)
    per = -y * log(predictions + epsilon) - (1.0 - y) * log(1.0 - predictions + epsilon)
    return _finish(_reduce(per, weights, reduction, "losses.log_loss"), scope, loss_collection)


def hinge_loss(labels, logits, weights=1.0, scope=None, loss_collection=_scopes.GraphKeys.LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    y = convert_to_tensor(labels, like=logits) * 2.0 - 1.0
    per = _core.relu(1.0 - y * logits)
    return _finish(_reduce(per, weights, reduction, "losses.hinge_loss"), scope, loss_collection)


# --- collections ------------------------------------------------------------------------


def add_loss(loss, loss_collection=_scopes.GraphKeys.LOSSES):
    if loss_collection:
        _scopes.add_to_collection(loss_collection, loss)


def get_losses(scope=None, loss_collection=_scopes.GraphKeys.LOSSES):
    return _scopes.get_collection(loss_collection, scope)


def get_regularization_losses(scope=None):
    return _scopes.get_collection(_scopes.GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope=None, name="total_regularization_loss"):
    """The sum of the regularization losses (0 when there are none)."""
    losses = get_regularization_losses(scope)
    return add_n(losses, name=name) if losses else constant(0.0, name=name)


def get_total_loss(add_regularization_losses=True, name="total_loss", scope=None):
    losses = get_losses(scope)
    if add_regularization_losses:
        losses = losses + get_regularization_losses(scope)
    if not losses:
        raise ValueError("[get_total_loss] no losses in the LOSSES or REGULARIZATION_LOSSES collections")
    return add_n(losses, name=name)
