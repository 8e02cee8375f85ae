"""The one layer implementation behind tf.layers (functions and classes) and tf.keras.layers:
a Layer makes its variables on its first call, under its name ('dense', 'dense_1', ...,
unique per variable scope for tf.layers and graph-wide for keras, as TensorFlow 1 names
them), reuses them on later calls, and keeps its updates (batch normalization's moving
averages) and losses (regularizers)."""
import re

from kiln import _core
from kiln._src import initializers as init
from kiln._src import keras_activations as activations
from kiln._src import keras_initializers
from kiln._src import scopes as _scopes
from kiln._src.graph import Tensor, TensorShape, _local, convert_to_tensor, current, unsupported
from kiln._src.variables import get_variable


def snake_case(name):
    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", s).lower()


class Layer:
    """Subclasses implement build(input_shape) (making weights with add_weight) and
    call(inputs, ...). `_keras` chooses the naming (and defaults) of tf.keras."""

    _keras = False
    _base_name = None

    def __init__(self, trainable=True, name=None, dtype=None, _reuse=None, **kwargs):
        unknown = set(kwargs) - {"input_shape", "batch_input_shape", "input_dim", "weights", "activity_regularizer",
                                 "autocast", "dynamic"}
        if unknown:
            raise TypeError("[%s] unknown arguments: %s" % (type(self).__name__, ", ".join(sorted(unknown))))
        if kwargs.get("weights") is not None:
            unsupported("%s(weights=...)" % type(self).__name__, "kiln initialises weights from their initializers")
        if kwargs.get("activity_regularizer") is not None:
            unsupported("%s(activity_regularizer=...)" % type(self).__name__, "use kernel_regularizer")
        self.trainable = bool(trainable)
        self._given_name = name
        self.name = name
        self.dtype = dtype
        self._reuse = _reuse
        self.built = False
        self._scope_name = None  # the variable scope its weights live in
        self._graph = None
        self.updates = []
        self.losses = []
        self._weights = []
        self._trainable_weights = []
        self._non_trainable_weights = []
        self._call_count = 0
        if self._keras and name is None:  # keras names a layer when it is made, graph-wide
            ctx = getattr(_local, "ctx", None)
            if ctx is not None and ctx.scope.open:
                self._ensure_name(ctx)

    # --- naming ---------------------------------------------------------------------------

    def _ensure_name(self, ctx):
        if self.name is None:
            base = self._base_name or snake_case(type(self).__name__)
            self.name = ctx.unique_layer_name(base, keras=self._keras)

    def _check_graph(self, ctx):
        if self._graph is not None and self._graph is not ctx.scope:
            raise ValueError("[%s] layer '%s' was built in another model_fn call; kiln builds a new graph for every "
                             "mode, so make layers inside model_fn" % (type(self).__name__, self.name))
        self._graph = ctx.scope

    # --- weights --------------------------------------------------------------------------

    def add_weight(self, name, shape, dtype=None, initializer=None, regularizer=None, trainable=True,
                   constraint=None, partitioner=None, use_resource=None, synchronization=None, aggregation=None,
                   getter=None, **kwargs):
        if constraint is not None:
            unsupported("%s constraint" % type(self).__name__, "kiln applies no weight constraints")
        trainable = bool(trainable) and self.trainable
        v = get_variable(name, shape=[int(d) for d in shape], dtype=dtype or self.dtype or "float32",
                         initializer=initializer, trainable=trainable)
        self._weights.append(v)
        (self._trainable_weights if trainable else self._non_trainable_weights).append(v)
        if regularizer is not None and trainable:
            loss = regularizer(v)
            if loss is not None:
                self.losses.append(loss)
                _scopes.add_to_collection(_scopes.GraphKeys.REGULARIZATION_LOSSES, loss)
        return v

    add_variable = add_weight

    @property
    def weights(self):
        return list(self._weights)

    variables = weights

    @property
    def trainable_weights(self):
        return list(self._trainable_weights)

    trainable_variables = trainable_weights

    @property
    def non_trainable_weights(self):
        return list(self._non_trainable_weights)

    non_trainable_variables = non_trainable_weights

    def add_update(self, updates, inputs=None):
        """Updates of this layer (moving averages): tf.layers also files them under
        UPDATE_OPS, tf.keras keeps them in layer.updates only (as TensorFlow 1 does)."""
        items = updates if isinstance(updates, (list, tuple)) else [updates]
        self.updates.extend(items)
        if not self._keras:
            for u in items:
                _scopes.add_to_collection(_scopes.GraphKeys.UPDATE_OPS, u)

    def add_loss(self, losses, inputs=None):
        items = losses if isinstance(losses, (list, tuple)) else [losses]
        self.losses.extend(items)
        for loss in items:
            _scopes.add_to_collection(_scopes.GraphKeys.REGULARIZATION_LOSSES, loss)

    # --- calling --------------------------------------------------------------------------

    def build(self, input_shape):
        pass

    def call(self, inputs, **kwargs):
        return inputs

    def __call__(self, inputs, *args, **kwargs):
        ctx = current(type(self).__name__)
        self._check_graph(ctx)
        self._ensure_name(ctx)
        if not self.built:
            scope = _scopes.variable_scope(self.name, reuse=self._reuse if self._reuse else None)
        else:
            scope = _scopes.variable_scope(self._scope_object, reuse=True)
        with scope as s:
            if not self.built:
                self._scope_object = s
                shapes = _shapes_of(inputs)
                self.build(shapes)
                self.built = True
            outputs = self.call(inputs, *args, **kwargs)
        self._call_count += 1
        return outputs

    def apply(self, inputs, *args, **kwargs):
        return self.__call__(inputs, *args, **kwargs)

    def get_config(self):
        return {"name": self.name, "trainable": self.trainable}

    def count_params(self):
        total = 0
        for w in self._weights:
            n = 1
            for d in w._shape:
                n *= d
            total += n
        return total


def _shapes_of(inputs):
    if isinstance(inputs, (list, tuple)):
        return [_shapes_of(i) for i in inputs]
    if isinstance(inputs, dict):
        return {k: _shapes_of(v) for k, v in inputs.items()}
    x = convert_to_tensor(inputs, op="layer")
    return TensorShape(x._shape)


def activation_of(activation):
    """A callable from a name ('relu', 'softmax', ...), a callable, or None."""
    if activation is None or callable(activation):
        return activation
    return activations.get(activation)


def initializer_of(x, default):
    """kiln.initializers.Initializer from an initializer, its keras name or None."""
    if isinstance(x, str) or isinstance(x, dict):
        return keras_initializers.get(x)
    return init.as_initializer(x, default)


def is_tensor(x):
    return isinstance(x, Tensor)


_ = _core  # the bindings, for subclasses
