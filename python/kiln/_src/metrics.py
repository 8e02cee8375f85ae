"""kiln.metrics: TensorFlow 1.x's tf.metrics for EstimatorSpec(eval_metric_ops=...).

As in TensorFlow, a metric is a pair of tensors (value, update_op). evaluate() sums each
metric's total and count over every batch (and every rank) and divides once. In TRAIN
mode the pair reads running totals, as TensorFlow's local variables hold them: value is
the metric over the steps before this one of the current train() call, update_op the
metric including this step (what `tf.identity(accuracy[1], name='train_accuracy')`
logs). The totals are local variables '<name>/total' and '<name>/count': not in
checkpoints, zero at the start of every train()."""
from kiln import _core
from kiln._src.dtypes import float32, int64
from kiln._src.graph import Tensor, cast, convert_to_tensor, current, maximum, reduce_sum


class MetricPair(tuple):
    """(value, update_op): two kiln.Tensors, with the batch's total and count for evaluate()."""

    def __new__(cls, value, update_op, total, count):
        pair = super().__new__(cls, (value, update_op))
        pair._total, pair._count = total, count
        return pair

    @property
    def value(self):
        return self[0]

    @property
    def update_op(self):
        return self[1]


def _register(ctx, pair):
    ctx.metrics[pair[0]._id] = pair
    ctx.metrics[pair[1]._id] = pair
    return pair


def _pair(name, batch_total, batch_count):
    ctx = current("metrics." + name)
    scope = ctx.unique_layer_name(name)
    if ctx.mode != "train":
        ratio = batch_total / maximum(batch_count, 1e-30)
        return _register(ctx, MetricPair(ratio, ratio, batch_total, batch_count))
    total = _core.local_variable(ctx.scope, scope + "/total", "f32", [])
    count = _core.local_variable(ctx.scope, scope + "/count", "f32", [])
    new_total, new_count = total + batch_total, count + batch_count
    _core.assign(total, new_total)
    _core.assign(count, new_count)
    # div_no_nan, as TensorFlow's metrics: 0 before anything was counted.
    value = total / maximum(count, 1e-30)
    update = new_total / maximum(new_count, 1e-30)
    return _register(ctx, MetricPair(value, update, batch_total, batch_count))


def _weights(weights, like, op):
    """float32 weights broadcast to `like`'s shape, or None."""
    if weights is None:
        return None
    w = cast(convert_to_tensor(weights, like=like, op=op), float32)
    return _core.broadcast_to(w, list(like._shape)) if list(w._shape) != list(like._shape) else w


def accuracy(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """The fraction (weighted: the weight share) of predictions equal to labels (same
    shape; as TensorFlow's, predictions are cast to the labels' dtype first, so float
    labels compare with integer class ids as floats)."""
    if not isinstance(labels, Tensor) or not isinstance(predictions, Tensor):
        raise TypeError("[metrics.accuracy] labels and predictions must be kiln.Tensors")
    shape_l, shape_p = list(labels._shape), list(predictions._shape)
    if shape_l != shape_p:
        if shape_l == shape_p + [1] or shape_p == shape_l + [1]:  # [N, 1] labels, as TensorFlow squeezes them
            labels = _core.reshape(labels, shape_p)
        else:
            raise ValueError("[metrics.accuracy] labels %s and predictions %s differ in shape"
                             % (tuple(shape_l), tuple(shape_p)))
    if labels.dtype.is_floating:
        hit = cast(_core.equal(labels, cast(predictions, labels.dtype)), float32)
    else:
        hit = cast(_core.equal(cast(labels, int64), cast(cast(predictions, labels.dtype), int64)), float32)
    return _weighted_mean(name or "accuracy", hit, weights, "metrics.accuracy")


def mean(values, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """The (weighted) mean of `values` over every example evaluated."""
    return _weighted_mean(name or "mean", cast(convert_to_tensor(values, op="metrics.mean"), float32), weights,
                          "metrics.mean")


def _weighted_mean(name, v, weights, op):
    """The metric pair of the (weighted) mean of float32 `v`."""
    w = _weights(weights, v, op)
    if w is None:
        return _pair(name, reduce_sum(v), _core.scalar_like(v, float(_numel(v))))
    return _pair(name, reduce_sum(v * w), reduce_sum(w))


def _numel(t):
    n = 1
    for d in t._shape:
        n *= d
    return n


def as_metric(name, m):
    """(total, count) of an eval_metric_ops entry: a MetricPair, or a (value, update_op)
    tuple of a metric's tensors."""
    if isinstance(m, MetricPair):
        return (m._total, m._count)
    if isinstance(m, tuple) and len(m) == 2 and all(isinstance(t, Tensor) for t in m):
        ctx = current("eval_metric_ops")
        pair = ctx.metrics.get(m[1]._id) or ctx.metrics.get(m[0]._id)
        if pair is not None:
            return (pair._total, pair._count)
    raise TypeError("[EstimatorSpec] eval_metric_ops['%s'] is %r; use a kiln.metrics metric (accuracy, mean, ...) "
                    "or its (value, update_op) pair" % (name, type(m).__name__))
