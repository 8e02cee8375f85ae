"""kiln.metrics: streaming metrics for EstimatorSpec(eval_metric_ops=...). As in
TensorFlow, a metric unpacks into (value, update_op); both stand for the same metric,
which evaluate() sums over every batch."""
from . import _core
from ._graph import Tensor, cast, unsupported
from ._dtypes import int64


class Metric:
    def __init__(self, total, count):
        self.total, self.count = total, count

    def __iter__(self):
        return iter((self, self))

    def __getitem__(self, i):
        if i in (0, 1, -1, -2):
            return self
        raise IndexError(i)

    def __len__(self):
        return 2


def accuracy(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """The fraction of predictions equal to labels (both integer, same shape)."""
    if weights is not None:
        unsupported("metrics.accuracy(weights=...)", "kiln's accuracy counts every example once")
    if not isinstance(labels, Tensor) or not isinstance(predictions, Tensor):
        raise TypeError("[metrics.accuracy] labels and predictions must be kiln.Tensors")
    if predictions.dtype.is_floating or labels.dtype.is_floating:
        raise TypeError("[metrics.accuracy] labels and predictions must be integers (class ids); use kiln.argmax")
    if list(labels._shape) != list(predictions._shape):
        raise ValueError("[metrics.accuracy] labels %s and predictions %s differ in shape"
                         % (tuple(labels._shape), tuple(predictions._shape)))
    return Metric(*_core.accuracy_metric(cast(labels, int64), cast(predictions, int64)))


def mean(values, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """The mean of `values` over every example evaluated."""
    if weights is not None:
        unsupported("metrics.mean(weights=...)", "kiln's mean counts every value once")
    return Metric(*_core.mean_metric(values))


def as_metric(name, m):
    if isinstance(m, tuple) and m and isinstance(m[0], Metric):
        m = m[0]
    if not isinstance(m, Metric):
        raise TypeError("[EstimatorSpec] eval_metric_ops['%s'] is %r; use kiln.metrics.accuracy or kiln.metrics.mean"
                        % (name, type(m).__name__))
    return (m.total, m.count)
