"""tensorflow.python.keras.activations."""
# ruff: noqa: F401, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln._src.unsupported import refuse_other_names
from kiln.keras.activations import (
    elu,
    gelu,
    get,
    identity,
    linear,
    relu,
    selu,
    sigmoid,
    softmax,
    softplus,
    softsign,
    swish,
    tanh,
)

__getattr__ = refuse_other_names('tensorflow.python.keras.activations', "kiln's mirror of it holds the names kiln implements, listed in python/kiln/python/keras/activations.py")
