"""Normalization layers shared by tf.layers and tf.keras.layers.

BatchNormalization, as TensorFlow computes it: in training, the batch's mean and (biased)
variance normalize, and the moving averages move by moving -= (moving - batch) * (1 -
momentum), where a 4-D input's batch variance is Bessel-corrected (n / (n - 1)), as
TensorFlow's fused kernel gives it, and any other input's is not; in inference the moving
statistics normalize. The moving-average updates are deferred (_scopes.py): tf.layers files
them under UPDATE_OPS, tf.keras keeps them in layer.updates; they run only when the
train_op holds them (control_dependencies or group), as in TensorFlow."""
from kiln import _core
from kiln._src import initializers as init
from kiln._src import keras_backend as backend
from kiln._src import scopes as _scopes
from kiln._src.array_ops import static_value
from kiln._src.graph import convert_to_tensor, reduce_mean, rsqrt, square, unsupported
from kiln._src.layer import Layer, initializer_of


def _known_bool(training, op):
    if isinstance(training, bool):
        return training
    known = static_value(training)
    if known is None:
        unsupported("%s(training=<a tensor>)" % op, "pass a Python bool, e.g. mode == tf.estimator.ModeKeys.TRAIN")
    return bool(known)


class BatchNormalization(Layer):
    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True, beta_initializer=None,
                 gamma_initializer=None, moving_mean_initializer=None, moving_variance_initializer=None,
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None, gamma_constraint=None,
                 renorm=False, renorm_clipping=None, renorm_momentum=0.99, fused=None, trainable=True,
                 virtual_batch_size=None, adjustment=None, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name, **kwargs)
        if renorm or virtual_batch_size is not None or adjustment is not None:
            unsupported("BatchNormalization(renorm=, virtual_batch_size=, adjustment=)", "kiln's batch norm is plain")
        self.axis = axis if isinstance(axis, int) else (axis[0] if len(axis) == 1 else None)
        if self.axis is None:
            unsupported("BatchNormalization over several axes", "normalize one channel axis")
        self.momentum, self.epsilon = float(momentum), float(epsilon)
        self.center, self.scale = bool(center), bool(scale)
        self.beta_initializer = initializer_of(beta_initializer, init.zeros())
        self.gamma_initializer = initializer_of(gamma_initializer, init.ones())
        self.moving_mean_initializer = initializer_of(moving_mean_initializer, init.zeros())
        self.moving_variance_initializer = initializer_of(moving_variance_initializer, init.ones())
        self.beta_regularizer, self.gamma_regularizer = beta_regularizer, gamma_regularizer

    def build(self, input_shape):
        s = input_shape.as_list()
        self._rank = len(s)
        self._channel = self.axis % len(s)
        c = [s[self._channel]]
        self.gamma = self.add_weight("gamma", c, initializer=self.gamma_initializer,
                                     regularizer=self.gamma_regularizer) if self.scale else None
        self.beta = self.add_weight("beta", c, initializer=self.beta_initializer,
                                    regularizer=self.beta_regularizer) if self.center else None
        self.moving_mean = self.add_weight("moving_mean", c, initializer=self.moving_mean_initializer, trainable=False)
        self.moving_variance = self.add_weight("moving_variance", c, initializer=self.moving_variance_initializer,
                                               trainable=False)

    def _broadcast(self, v):
        shape = [1] * self._rank
        shape[self._channel] = v._shape[0]
        return _core.reshape(v, shape)

    def call(self, inputs, training=False):
        if training is None:
            training = bool(backend.learning_phase()) if self._keras else False
        training = _known_bool(training, type(self).__name__)
        x = convert_to_tensor(inputs, op=self.name)
        axes = [a for a in range(self._rank) if a != self._channel]
        if training:
            mean = reduce_mean(x, axes)
            var = reduce_mean(square(x - self._broadcast(mean)), axes)
            n = 1
            for a in axes:
                n *= x._shape[a]
            # TensorFlow's fused kernel (4-D input) moves the variance by the corrected one.
            moved_var = var * (n / (n - 1.0)) if self._rank == 4 and n > 1 else var
            decay = 1.0 - self.momentum
            with _scopes.control_dependencies(None):
                self.add_update([
                    _scopes.Update(self.moving_mean, self.moving_mean - (self.moving_mean - mean) * decay,
                                   self.name + "/AssignMovingAvg"),
                    _scopes.Update(self.moving_variance, self.moving_variance - (self.moving_variance - moved_var) * decay,
                                   self.name + "/AssignMovingAvg_1")])
        else:
            mean, var = self.moving_mean, self.moving_variance
        inv = rsqrt(var + self.epsilon)
        if self.gamma is not None:
            inv = inv * self.gamma
        shift = -mean * inv + (self.beta if self.beta is not None else 0.0)
        return x * self._broadcast(inv) + self._broadcast(shift)


class LayerNormalization(Layer):
    """Normalizes over `axis` (the last by default) per example: keras's LayerNormalization."""

    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", beta_regularizer=None, gamma_regularizer=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.axis = [axis] if isinstance(axis, int) else list(axis)
        self.epsilon, self.center, self.scale = float(epsilon), bool(center), bool(scale)
        self.beta_initializer = initializer_of(beta_initializer, init.zeros())
        self.gamma_initializer = initializer_of(gamma_initializer, init.ones())
        self.beta_regularizer, self.gamma_regularizer = beta_regularizer, gamma_regularizer

    def build(self, input_shape):
        s = input_shape.as_list()
        self._axes = sorted(a % len(s) for a in self.axis)
        self._param_shape = [s[a] for a in self._axes]
        self.gamma = self.add_weight("gamma", self._param_shape, initializer=self.gamma_initializer,
                                     regularizer=self.gamma_regularizer) if self.scale else None
        self.beta = self.add_weight("beta", self._param_shape, initializer=self.beta_initializer,
                                    regularizer=self.beta_regularizer) if self.center else None
        self._rank = len(s)

    def call(self, inputs):
        x = convert_to_tensor(inputs, op=self.name)
        mean = reduce_mean(x, self._axes, keepdims=True)
        var = reduce_mean(square(x - mean), self._axes, keepdims=True)
        y = (x - mean) * rsqrt(var + self.epsilon)
        shape = [x._shape[a] if a in self._axes else 1 for a in range(self._rank)]
        if self.gamma is not None:
            y = y * _core.reshape(self.gamma, shape)
        if self.beta is not None:
            y = y + _core.reshape(self.beta, shape)
        return y


BatchNorm = BatchNormalization
