"""tf.layers, TensorFlow 1.x's names; their code is in kiln._src.layers."""
# ruff: noqa: F401, A004
# (a package of names: each is imported to be re-exported, some shadowing builtins as TensorFlow's do)
from kiln._src.layers import (
    AveragePooling2D,
    BatchNormalization,
    Conv2D,
    Dense,
    Dropout,
    Flatten,
    Layer,
    MaxPooling2D,
    average_pooling2d,
    batch_normalization,
    conv1d,
    conv2d,
    conv2d_transpose,
    dense,
    dropout,
    flatten,
    max_pooling2d,
    separable_conv2d,
)
