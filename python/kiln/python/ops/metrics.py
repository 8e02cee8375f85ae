"""tensorflow.python.ops.metrics: tf.metrics."""
# ruff: noqa: F401, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln._src.unsupported import refuse_other_names
from kiln.metrics import (
    MetricPair,
    Tensor,
    accuracy,
    as_metric,
    cast,
    convert_to_tensor,
    current,
    float32,
    int64,
    maximum,
    mean,
    reduce_sum,
)

__getattr__ = refuse_other_names('tensorflow.python.ops.metrics', "kiln's mirror of it holds the names kiln implements, listed in python/kiln/python/ops/metrics.py")
