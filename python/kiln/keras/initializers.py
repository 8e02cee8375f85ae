"""tf.keras.initializers. The names; their code is in kiln._src.keras_initializers."""
# ruff: noqa: F401, A004
# (a package of names: each is imported to be re-exported, some shadowing builtins as TensorFlow's do)
from kiln._src.keras_initializers import (
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
    base,
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
