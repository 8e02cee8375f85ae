"""Convolution and pooling layers shared by tf.layers and tf.keras.layers (TensorFlow's
layouts: NHWC by default, kernels [kh, kw, in, out])."""
from kiln import _core
from kiln._src import initializers as init
from kiln._src import nn
from kiln._src.graph import convert_to_tensor, reduce_max, reduce_mean, unsupported
from kiln._src.layer import Layer, activation_of, initializer_of


def data_format_of(data_format, op):
    if data_format in (None, "channels_last", "NHWC"):
        return "NHWC"
    if data_format in ("channels_first", "NCHW"):
        return "NCHW"
    raise ValueError("[%s] data_format '%s' is not one of: channels_last, channels_first" % (op, data_format))


def _padding(padding, op):
    p = str(padding).upper()
    if p not in ("SAME", "VALID"):
        raise ValueError("[%s] padding %r is not one of: 'same', 'valid'" % (op, padding))
    return p


class Conv2D(Layer):
    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None, dilation_rate=(1, 1),
                 activation=None, use_bias=True, kernel_initializer=None, bias_initializer=None,
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, groups=1, **kwargs):
        super().__init__(trainable=trainable, name=name, activity_regularizer=activity_regularizer, **kwargs)
        if kernel_constraint is not None or bias_constraint is not None:
            unsupported("Conv2D(kernel_constraint=, bias_constraint=)", "kiln applies no weight constraints")
        if groups != 1:
            unsupported("Conv2D(groups=%d)" % groups, "use DepthwiseConv2D for one group per channel")
        self.filters = int(filters)
        self.kernel_size = nn._pair(kernel_size, "Conv2D kernel_size")
        self.strides = nn._pair(strides, "Conv2D strides")
        self.padding = _padding(padding, "Conv2D")
        self.data_format = data_format_of(data_format, "Conv2D")
        self.dilation_rate = nn._pair(dilation_rate, "Conv2D dilation_rate")
        self.activation = activation_of(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializer_of(kernel_initializer, init.glorot_uniform())
        self.bias_initializer = initializer_of(bias_initializer, init.zeros())
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer

    def build(self, input_shape):
        s = input_shape.as_list()
        if len(s) != 4:
            raise ValueError("[%s] inputs must be 4-D (batch, height, width, channels), not %s" % (self.name, s))
        channels = s[3] if self.data_format == "NHWC" else s[1]
        kh, kw = self.kernel_size
        self.kernel = self.add_weight("kernel", [kh, kw, channels, self.filters], initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer)
        self.bias = (self.add_weight("bias", [self.filters], initializer=self.bias_initializer,
                                     regularizer=self.bias_regularizer) if self.use_bias else None)

    def call(self, inputs):
        x = convert_to_tensor(inputs, op=self.name)
        y = nn.conv2d(x, self.kernel, self.strides, self.padding, data_format=self.data_format,
                      dilations=self.dilation_rate)
        if self.bias is not None:
            y = nn.bias_add(y, self.bias, data_format=self.data_format)
        return self.activation(y) if self.activation is not None else y


class DepthwiseConv2D(Layer):
    _base_name = "depthwise_conv2d"

    def __init__(self, kernel_size, strides=(1, 1), padding="valid", depth_multiplier=1, data_format=None,
                 activation=None, use_bias=True, depthwise_initializer=None, bias_initializer=None,
                 depthwise_regularizer=None, bias_regularizer=None, trainable=True, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name, **kwargs)
        self.kernel_size = nn._pair(kernel_size, "DepthwiseConv2D kernel_size")
        self.strides = nn._pair(strides, "DepthwiseConv2D strides")
        self.padding = _padding(padding, "DepthwiseConv2D")
        self.depth_multiplier = int(depth_multiplier)
        self.data_format = data_format_of(data_format, "DepthwiseConv2D")
        self.activation = activation_of(activation)
        self.use_bias = bool(use_bias)
        self.depthwise_initializer = initializer_of(depthwise_initializer, init.glorot_uniform())
        self.bias_initializer = initializer_of(bias_initializer, init.zeros())
        self.depthwise_regularizer, self.bias_regularizer = depthwise_regularizer, bias_regularizer

    def build(self, input_shape):
        s = input_shape.as_list()
        channels = s[3] if self.data_format == "NHWC" else s[1]
        kh, kw = self.kernel_size
        self.depthwise_kernel = self.add_weight("depthwise_kernel", [kh, kw, channels, self.depth_multiplier],
                                                initializer=self.depthwise_initializer,
                                                regularizer=self.depthwise_regularizer)
        self.bias = (self.add_weight("bias", [channels * self.depth_multiplier], initializer=self.bias_initializer,
                                     regularizer=self.bias_regularizer) if self.use_bias else None)

    def call(self, inputs):
        strides = [1] + self.strides + [1] if self.data_format == "NHWC" else [1, 1] + self.strides
        y = nn.depthwise_conv2d(inputs, self.depthwise_kernel, strides, self.padding, data_format=self.data_format)
        if self.bias is not None:
            y = nn.bias_add(y, self.bias, data_format=self.data_format)
        return self.activation(y) if self.activation is not None else y


class _Pooling2D(Layer):
    _fn = None

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.pool_size = nn._pair(pool_size, type(self).__name__ + " pool_size")
        self.strides = nn._pair(strides if strides is not None else pool_size, type(self).__name__ + " strides")
        self.padding = _padding(padding, type(self).__name__)
        self.data_format = data_format_of(data_format, type(self).__name__)

    def call(self, inputs):
        fn = nn.max_pool2d if type(self)._fn == "max" else nn.avg_pool2d
        return fn(convert_to_tensor(inputs, op=self.name), self.pool_size, self.strides, self.padding, self.data_format)


class MaxPooling2D(_Pooling2D):
    _fn = "max"


class AveragePooling2D(_Pooling2D):
    _fn = "avg"


class _GlobalPooling2D(Layer):
    _reduce = None

    def __init__(self, data_format=None, keepdims=False, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.data_format = data_format_of(data_format, type(self).__name__)
        self.keepdims = bool(keepdims)

    def call(self, inputs):
        axes = [1, 2] if self.data_format == "NHWC" else [2, 3]
        return type(self)._reduce(convert_to_tensor(inputs, op=self.name), axes, keepdims=self.keepdims)


class GlobalAveragePooling2D(_GlobalPooling2D):
    _reduce = staticmethod(reduce_mean)


class GlobalMaxPooling2D(_GlobalPooling2D):
    _reduce = staticmethod(reduce_max)


MaxPool2D = MaxPooling2D
AvgPool2D = AveragePooling2D
Convolution2D = Conv2D
GlobalAvgPool2D = GlobalAveragePooling2D
GlobalMaxPool2D = GlobalMaxPooling2D

_ = _core
