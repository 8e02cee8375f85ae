"""Variable initialisers under TensorFlow's names, with TensorFlow 1.x's formulas and defaults. The
names; their code is in kiln._src.initializers."""
# ruff: noqa: F401, A004
# (a package of names: each is imported to be re-exported, some shadowing builtins as TensorFlow's do)
from kiln._src.initializers import (
    Initializer,
    as_initializer,
    constant,
    constant_initializer,
    contrib_variance_scaling,
    glorot_normal,
    glorot_normal_initializer,
    glorot_uniform,
    glorot_uniform_initializer,
    he_normal,
    he_uniform,
    lecun_normal,
    lecun_uniform,
    ones,
    ones_initializer,
    random_normal,
    random_normal_initializer,
    random_uniform,
    random_uniform_initializer,
    truncated_normal,
    truncated_normal_initializer,
    variance_scaling,
    variance_scaling_initializer,
    xavier_initializer,
    zeros,
    zeros_initializer,
)
