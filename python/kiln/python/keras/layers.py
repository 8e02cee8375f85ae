"""tensorflow.python.keras.layers: tf.keras.layers."""
# ruff: noqa: F401, F403, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln._src.unsupported import refuse_other_names
from kiln.keras.layers import (
    GRU,
    LSTM,
    Activation,
    Add,
    AveragePooling2D,
    AvgPool2D,
    BatchNormalization,
    Concatenate,
    Conv2D,
    Convolution2D,
    Dense,
    DepthwiseConv2D,
    Dropout,
    Embedding,
    Flatten,
    GlobalAveragePooling2D,
    GlobalAvgPool2D,
    GlobalMaxPool2D,
    GlobalMaxPooling2D,
    Input,
    InputLayer,
    Lambda,
    Layer,
    LayerNormalization,
    MaxPool2D,
    MaxPooling2D,
    Multiply,
    ReLU,
    Reshape,
    SimpleRNN,
    Softmax,
    Subtract,
    accepts_training,
)

__getattr__ = refuse_other_names('tensorflow.python.keras.layers', "kiln's mirror of it holds the names kiln implements, listed in python/kiln/python/keras/layers.py")
