"""Core layers shared by tf.layers and tf.keras.layers: Dense, Dropout, Flatten, Activation,
Reshape, Embedding, Lambda."""
from kiln import _core
from kiln._src import initializers as init
from kiln._src import keras_backend as backend
from kiln._src import random_ops
from kiln._src.array_ops import static_value
from kiln._src.graph import Tensor, convert_to_tensor, reshape, unsupported
from kiln._src.layer import Layer, activation_of, initializer_of


class Dense(Layer):
    """activation(inputs @ kernel + bias) over the last axis; kernel '<name>/kernel' [in, units]."""

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer=None, bias_initializer=None,
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name, activity_regularizer=activity_regularizer, **kwargs)
        if kernel_constraint is not None or bias_constraint is not None:
            unsupported("Dense(kernel_constraint=, bias_constraint=)", "kiln applies no weight constraints")
        try:  # as TensorFlow takes it: int(units), which must be positive
            count = int(units)
        except (TypeError, ValueError):
            count = 0
        if isinstance(units, bool) or count <= 0:
            raise ValueError("[dense] units=%r for layer '%s': expected a positive integer (the number of outputs)"
                             % (units, self.name or "dense"))
        self.units = count
        self.activation = activation_of(activation)
        self.use_bias = bool(use_bias)
        default_kernel = init.glorot_uniform()
        self.kernel_initializer = initializer_of(kernel_initializer, default_kernel)
        self.bias_initializer = initializer_of(bias_initializer, init.zeros())
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer

    def build(self, input_shape):
        shape = input_shape.as_list()
        if len(shape) < 2:
            raise ValueError("[%s] inputs must have rank >= 2 (batch first), not shape %s" % (self.name, shape))
        self.kernel = self.add_weight("kernel", [shape[-1], self.units], initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer)
        self.bias = (self.add_weight("bias", [self.units], initializer=self.bias_initializer,
                                     regularizer=self.bias_regularizer) if self.use_bias else None)

    def call(self, inputs):
        x = convert_to_tensor(inputs, op=self.name)
        shape = list(x._shape)
        flat = x if len(shape) == 2 else _core.reshape(x, [-1, shape[-1]])
        y = _core.matmul(flat, self.kernel if x._dtype == "f32" else _core.cast(self.kernel, x._dtype), False, False)
        if self.bias is not None:
            y = y + (self.bias if x._dtype == "f32" else _core.cast(self.bias, x._dtype))
        if len(shape) != 2:
            y = _core.reshape(y, shape[:-1] + [self.units])
        return self.activation(y) if self.activation is not None else y


class Dropout(Layer):
    """Keeps each element with probability 1 - rate (scaled by 1 / (1 - rate)) when training."""

    def __init__(self, rate=0.5, noise_shape=None, seed=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        # a tensor rate (a placeholder fed per run) is the dropout's to check
        self.rate = rate if isinstance(rate, Tensor) else float(rate)
        self.noise_shape, self.seed = noise_shape, seed

    def call(self, inputs, training=None):
        if training is None:
            training = self._default_training()
        if not isinstance(training, bool):
            known = static_value(training)
            if known is None:
                unsupported("%s(training=<a tensor>)" % type(self).__name__,
                            "pass a Python bool, e.g. mode == tf.estimator.ModeKeys.TRAIN")
            training = bool(known)
        x = convert_to_tensor(inputs, op=self.name)
        if not training or (not isinstance(self.rate, Tensor) and self.rate == 0):
            return x
        return random_ops.dropout(x, rate=self.rate, noise_shape=self.noise_shape, seed=self.seed)

    def _default_training(self):
        """tf.layers: False. tf.keras: the learning phase (kiln.keras.backend), False unless set."""
        if not self._keras:
            return False
        return bool(backend.learning_phase())


class Flatten(Layer):
    def __init__(self, data_format=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.data_format = data_format

    def call(self, inputs):
        x = convert_to_tensor(inputs, op="flatten")
        s = list(x._shape)
        if self.data_format in ("channels_first",) and len(s) == 4:
            x = _core.transpose(x, [0, 2, 3, 1])
        rest = 1
        for d in s[1:]:
            rest *= d
        return _core.reshape(x, [s[0], rest])


class Activation(Layer):
    def __init__(self, activation, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.activation = activation_of(activation)

    def call(self, inputs):
        return self.activation(convert_to_tensor(inputs, op=self.name))


class Reshape(Layer):
    """Reshapes every example to target_shape (the batch axis stays)."""

    def __init__(self, target_shape, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.target_shape = [int(d) for d in target_shape]

    def call(self, inputs):
        x = convert_to_tensor(inputs, op=self.name)
        return reshape(x, [x._shape[0]] + self.target_shape)


class Embedding(Layer):
    """Rows of an [input_dim, output_dim] table ('<name>/embeddings') at integer ids."""

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform", embeddings_regularizer=None,
                 activity_regularizer=None, embeddings_constraint=None, mask_zero=False, input_length=None, name=None,
                 **kwargs):
        super().__init__(name=name, activity_regularizer=activity_regularizer, **kwargs)
        if mask_zero:
            unsupported("Embedding(mask_zero=True)", "kiln has no masks")
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        self.embeddings_initializer = initializer_of(embeddings_initializer, init.random_uniform(-0.05, 0.05))
        self.embeddings_regularizer = embeddings_regularizer

    def build(self, input_shape):
        self.embeddings = self.add_weight("embeddings", [self.input_dim, self.output_dim],
                                          initializer=self.embeddings_initializer,
                                          regularizer=self.embeddings_regularizer)

    def call(self, inputs):
        ids = convert_to_tensor(inputs, op=self.name)
        if ids._dtype not in ("i32", "i64"):
            ids = _core.cast(ids, "i32")
        return _core.gather(self.embeddings, ids)


class Lambda(Layer):
    def __init__(self, function, output_shape=None, mask=None, arguments=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.function, self.arguments = function, dict(arguments or {})

    def call(self, inputs):
        return self.function(inputs, **self.arguments)
