"""kiln.layers: TensorFlow 1.x's tf.layers. Variables are named '<layer>/kernel' and
'<layer>/bias' (layers are named 'dense', 'dense_1', ... unless name= is given), kernels
Glorot-uniform and biases zero by default, as in TensorFlow."""
from . import _core
from . import initializers as init
from . import nn
from ._graph import current, named, unsupported
from ._variables import get_variable


def _layer_name(name, base):
    ctx = current("layers." + base)
    return name if name else ctx.unique_layer_name(base)


def _activate(y, activation):
    return activation(y) if activation is not None else y


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None,
          bias_initializer=None, trainable=True, name=None, reuse=None):
    """activation(inputs @ kernel + bias) over the last axis of inputs."""
    if reuse:
        unsupported("layers.dense(reuse=True)", "each kiln graph builds its layers once")
    scope = _layer_name(name, "dense")
    shape = list(inputs._shape)
    if len(shape) < 2:
        raise ValueError("[layers.dense] inputs must have rank >= 2 (batch first), not shape %s" % (shape,))
    kernel = get_variable(scope + "/kernel", [shape[-1], int(units)], inputs.dtype,
                          init.as_initializer(kernel_initializer, init.glorot_uniform()), trainable)
    x = inputs if len(shape) == 2 else _core.reshape(inputs, [-1, shape[-1]])
    y = _core.matmul(x, kernel, False, False)
    if use_bias:
        bias = get_variable(scope + "/bias", [int(units)], inputs.dtype, init.as_initializer(bias_initializer, init.zeros()),
                            trainable)
        y = y + bias
    if len(shape) != 2:
        y = _core.reshape(y, shape[:-1] + [int(units)])
    return _activate(y, activation)


def _data_format(data_format, op):
    if data_format in ("channels_last", "NHWC"):
        return "NHWC"
    if data_format in ("channels_first", "NCHW"):
        return "NCHW"
    raise ValueError("[%s] data_format '%s' is not one of: channels_last, channels_first" % (op, data_format))


def conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
           dilation_rate=(1, 1), activation=None, use_bias=True, kernel_initializer=None, bias_initializer=None,
           trainable=True, name=None, reuse=None):
    """2-D convolution layer; kernel [kh, kw, in, filters] (TensorFlow's layout)."""
    if reuse:
        unsupported("layers.conv2d(reuse=True)", "each kiln graph builds its layers once")
    fmt = _data_format(data_format, "layers.conv2d")
    scope = _layer_name(name, "conv2d")
    kh, kw = nn._pair(kernel_size, "layers.conv2d kernel_size")
    channels = inputs._shape[3] if fmt == "NHWC" else inputs._shape[1]
    kernel = get_variable(scope + "/kernel", [kh, kw, channels, int(filters)], inputs.dtype,
                          init.as_initializer(kernel_initializer, init.glorot_uniform()), trainable)
    y = nn.conv2d(inputs, kernel, nn._pair(strides, "layers.conv2d strides"), str(padding).upper(), data_format=fmt,
                  dilations=nn._pair(dilation_rate, "layers.conv2d dilation_rate"))
    if use_bias:
        bias = get_variable(scope + "/bias", [int(filters)], inputs.dtype, init.as_initializer(bias_initializer, init.zeros()),
                            trainable)
        y = nn.bias_add(y, bias, data_format=fmt)
    return _activate(y, activation)


def max_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    fmt = _data_format(data_format, "layers.max_pooling2d")
    return named(nn.max_pool2d(inputs, nn._pair(pool_size, "pool_size"), nn._pair(strides, "strides"),
                               str(padding).upper(), fmt), name)


def average_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    fmt = _data_format(data_format, "layers.average_pooling2d")
    return named(nn.avg_pool2d(inputs, nn._pair(pool_size, "pool_size"), nn._pair(strides, "strides"),
                               str(padding).upper(), fmt), name)


def flatten(inputs, name=None, data_format="channels_last"):
    """[batch, ...] -> [batch, product of the rest]."""
    shape = list(inputs._shape)
    rest = 1
    for d in shape[1:]:
        rest *= d
    return named(_core.reshape(inputs, [shape[0], rest]), name)


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    """Identity when not training; training with dropout is not provided (no random op)."""
    if training is True:
        unsupported("layers.dropout(training=True)", "kiln's IR has no random-number op; train without dropout")
    if not isinstance(training, bool):
        unsupported("layers.dropout(training=<tensor>)", "pass a Python bool (mode == ModeKeys.TRAIN)")
    return named(inputs, name) if name else inputs


def batch_normalization(*args, **kwargs):
    unsupported("layers.batch_normalization", "kiln has no moving-statistics update yet")


