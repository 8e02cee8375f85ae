"""tf.keras.activations. The names; their code is in kiln._src.keras_activations."""
# ruff: noqa: F401, A004
# (a package of names: each is imported to be re-exported, some shadowing builtins as TensorFlow's do)
from kiln._src.keras_activations import (
    elu,
    gelu,
    get,
    identity,
    linear,
    nn,
    relu,
    selu,
    sigmoid,
    softmax,
    softplus,
    softsign,
    swish,
    tanh,
)
