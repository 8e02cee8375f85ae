"""kiln.layers: TensorFlow 1.x's tf.layers, functions and classes, over the layers tf.keras
shares (_layers_*.py). Variables are named '<layer>/kernel', '<layer>/bias', ...; layers
are named 'dense', 'dense_1', ... per variable scope unless name= is given; name= with
reuse=True shares the variables of an earlier call, as in TensorFlow."""
from kiln._src import layers_conv as _conv
from kiln._src import layers_core as _core_layers
from kiln._src import layers_norm as _norm
from kiln._src.graph import expand_dims, named, squeeze, unsupported
from kiln._src.layer import Layer  # noqa: F401 (tf.layers.Layer)

Dense = _core_layers.Dense
Dropout = _core_layers.Dropout
Flatten = _core_layers.Flatten
Conv2D = _conv.Conv2D
MaxPooling2D = _conv.MaxPooling2D
AveragePooling2D = _conv.AveragePooling2D
BatchNormalization = _norm.BatchNormalization
SeparableConv2D = None  # set below


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None, bias_initializer=None,
          kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
          bias_constraint=None, trainable=True, name=None, reuse=None):
    """activation(inputs @ kernel + bias) over the last axis of inputs."""
    return Dense(units, activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                 bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint, trainable, name,
                 _reuse=reuse)(inputs)


def conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
           dilation_rate=(1, 1), activation=None, use_bias=True, kernel_initializer=None, bias_initializer=None,
           kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
           bias_constraint=None, trainable=True, name=None, reuse=None):
    """2-D convolution layer; kernel [kh, kw, in, filters] (TensorFlow's layout)."""
    return Conv2D(filters, kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias,
                  kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer, activity_regularizer,
                  kernel_constraint, bias_constraint, trainable, name, _reuse=reuse)(inputs)


def max_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    return named(MaxPooling2D(pool_size, strides, padding, data_format)(inputs), name)


def average_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    return named(AveragePooling2D(pool_size, strides, padding, data_format)(inputs), name)


def flatten(inputs, name=None, data_format="channels_last"):
    """[batch, ...] -> [batch, product of the rest]."""
    return named(Flatten(data_format)(inputs), name)


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    """Identity unless training; then each element kept with probability 1 - rate and
    scaled by 1 / (1 - rate) (kiln's random op: reproducible from the seed)."""
    return named(Dropout(rate, noise_shape, seed)(inputs, training=training), name)


def batch_normalization(inputs, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                        beta_initializer=None, gamma_initializer=None, moving_mean_initializer=None,
                        moving_variance_initializer=None, beta_regularizer=None, gamma_regularizer=None,
                        beta_constraint=None, gamma_constraint=None, training=False, trainable=True, name=None,
                        reuse=None, renorm=False, renorm_clipping=None, renorm_momentum=0.99, fused=None,
                        virtual_batch_size=None, adjustment=None):
    """TensorFlow 1's batch normalization; in training, its moving-average updates go to
    tf.GraphKeys.UPDATE_OPS (run them with control_dependencies around minimize)."""
    return BatchNormalization(axis, momentum, epsilon, center, scale, beta_initializer, gamma_initializer,
                              moving_mean_initializer, moving_variance_initializer, beta_regularizer,
                              gamma_regularizer, beta_constraint, gamma_constraint, renorm, renorm_clipping,
                              renorm_momentum, fused, trainable, virtual_batch_size, adjustment, name,
                              _reuse=reuse)(inputs, training=training)


def separable_conv2d(*args, **kwargs):
    unsupported("layers.separable_conv2d", "use nn.separable_conv2d with variables of your own, or "
                "keras.layers.DepthwiseConv2D then a 1x1 conv2d")


def conv2d_transpose(*args, **kwargs):
    unsupported("layers.conv2d_transpose", "kiln has no transposed convolution")


def conv1d(inputs, filters, kernel_size, strides=1, padding="valid", data_format="channels_last", dilation_rate=1,
           activation=None, use_bias=True, kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
           bias_regularizer=None, trainable=True, name=None, reuse=None, **kwargs):
    """A 1-D convolution as a 2-D one of height 1: inputs [N, W, C], kernel [1, k, C, filters]
    (TensorFlow's conv1d kernel is [k, C, filters]; kiln names its kernel the same but keeps
    the height axis)."""
    x = expand_dims(inputs, 1)
    y = Conv2D(filters, (1, int(kernel_size)), (1, int(strides)), padding, data_format, (1, int(dilation_rate)),
               activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
               None, None, None, trainable, name or None, _reuse=reuse)
    y._base_name = "conv1d"
    return squeeze(y(x), [1])


del SeparableConv2D
