"""Random tensors in the graph (tf.random_uniform, tf.random_normal, tf.truncated_normal, dropout).
The names; their code is in kiln._src.random_ops."""
# ruff: noqa: F401, A004
# (a package of names: each is imported to be re-exported, some shadowing builtins as TensorFlow's do)
from kiln._src.random_ops import (
    Tensor,
    as_dtype,
    convert_to_tensor,
    current,
    draw,
    dropout,
    float32,
    random_normal,
    random_uniform,
    set_random_seed,
    truncated_normal,
    where,
)
