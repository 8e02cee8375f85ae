"""tf.keras.layers inside model_fn: the layers tf.layers uses, named keras's way
(graph-wide: 'dense', 'dense_1', ...), their updates kept in layer.updates."""
import inspect

from kiln._src import array_ops as _array_ops
from kiln._src import keras_activations
from kiln._src import layers_conv as _conv
from kiln._src import layers_core as _core_layers
from kiln._src import layers_norm as _norm
from kiln._src import nn as _nn
from kiln._src.graph import concat as _concat
from kiln._src.graph import unsupported
from kiln._src.layer import Layer as _Layer


def _keras(cls, name=None):
    return type(name or cls.__name__, (cls,), {"_keras": True, "__module__": __name__})


class Layer(_Layer):
    """Base class for a user's keras layers (build, call, add_weight)."""

    _keras = True


Dense = _keras(_core_layers.Dense)
Dropout = _keras(_core_layers.Dropout)
Flatten = _keras(_core_layers.Flatten)
Activation = _keras(_core_layers.Activation)
Reshape = _keras(_core_layers.Reshape)
Embedding = _keras(_core_layers.Embedding)
Lambda = _keras(_core_layers.Lambda)
Conv2D = _keras(_conv.Conv2D)
DepthwiseConv2D = _keras(_conv.DepthwiseConv2D)
MaxPooling2D = _keras(_conv.MaxPooling2D)
AveragePooling2D = _keras(_conv.AveragePooling2D)
GlobalAveragePooling2D = _keras(_conv.GlobalAveragePooling2D)
GlobalMaxPooling2D = _keras(_conv.GlobalMaxPooling2D)
BatchNormalization = _keras(_norm.BatchNormalization)
LayerNormalization = _keras(_norm.LayerNormalization)
Convolution2D, MaxPool2D, AvgPool2D = Conv2D, MaxPooling2D, AveragePooling2D
GlobalAvgPool2D, GlobalMaxPool2D = GlobalAveragePooling2D, GlobalMaxPooling2D


class ReLU(Layer):
    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.max_value, self.negative_slope = max_value, negative_slope

    def call(self, inputs):
        return keras_activations.relu(inputs, self.negative_slope, self.max_value)


class Softmax(Layer):
    def __init__(self, axis=-1, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.axis = axis

    def call(self, inputs):
        return _nn.softmax(inputs, self.axis)


def _binary_merge(fn_name):
    class Merge(Layer):
        def call(self, inputs):
            if fn_name == "add":
                return _array_ops.add_n(inputs)
            out = inputs[0]
            for x in inputs[1:]:
                out = out * x if fn_name == "multiply" else out - x
            return out
    return Merge


Add = type("Add", (_binary_merge("add"),), {})
Multiply = type("Multiply", (_binary_merge("multiply"),), {})
Subtract = type("Subtract", (_binary_merge("subtract"),), {})


class Concatenate(Layer):
    def __init__(self, axis=-1, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.axis = axis

    def call(self, inputs):
        return _concat(list(inputs), self.axis)


def Input(*args, **kwargs):  # noqa: N802 (keras's name)
    unsupported("keras.Input (the functional API)", "build the model inside model_fn with keras.Sequential, a "
                "keras.Model subclass, or layers called on the features")


InputLayer = Input


def SimpleRNN(*args, **kwargs):  # noqa: N802
    unsupported("keras.layers.SimpleRNN/LSTM/GRU", "kiln has no recurrent layers; unroll with tf.nn.static_rnn")


LSTM = GRU = SimpleRNN


def accepts_training(layer):
    try:
        return "training" in inspect.signature(layer.call).parameters
    except (TypeError, ValueError):
        return False
