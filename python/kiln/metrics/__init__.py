"""tf.metrics, TensorFlow 1.x's names; their code is in kiln._src.metrics."""
# ruff: noqa: F401, A004
# (a package of names: each is imported to be re-exported, some shadowing builtins as TensorFlow's do)
from kiln._src.metrics import (
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
