"""tensorflow.python.keras.initializers."""
# ruff: noqa: F401, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln._src.unsupported import refuse_other_names
from kiln.keras.initializers import (
    Constant,
    GlorotNormal,
    GlorotUniform,
    HeNormal,
    HeUniform,
    LecunNormal,
    LecunUniform,
    Ones,
    RandomNormal,
    RandomUniform,
    TruncatedNormal,
    VarianceScaling,
    Zeros,
    constant,
    get,
    glorot_normal,
    glorot_uniform,
    he_normal,
    he_uniform,
    lecun_normal,
    lecun_uniform,
    ones,
    zeros,
)

__getattr__ = refuse_other_names('tensorflow.python.keras.initializers', "kiln's mirror of it holds the names kiln implements, listed in python/kiln/python/keras/initializers.py")
