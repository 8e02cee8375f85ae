"""tf.keras.activations: activations by name, as layers' activation= takes them."""
from kiln._src import nn
from kiln._src.graph import identity, unsupported


def relu(x, alpha=0.0, max_value=None, threshold=0.0):
    if alpha or threshold:
        return nn.leaky_relu(x, alpha) if not threshold else _unsupported("relu(threshold=...)")
    y = nn.relu(x)
    return nn.minimum(y, float(max_value)) if max_value is not None else y


def _unsupported(what):
    unsupported("keras.activations." + what, "use relu, elu, selu, gelu, sigmoid, tanh, softmax, softplus, swish")


def softmax(x, axis=-1):
    return nn.softmax(x, axis)


def linear(x):
    return x


_BY_NAME = {
    "relu": relu, "elu": nn.elu, "selu": nn.selu, "gelu": nn.gelu, "sigmoid": nn.sigmoid, "tanh": nn.tanh,
    "softmax": softmax, "softplus": nn.softplus, "softsign": nn.softsign, "swish": nn.swish, "silu": nn.swish,
    "relu6": nn.relu6, "linear": linear, "log_softmax": nn.log_softmax, "leaky_relu": nn.leaky_relu,
}
elu, selu, gelu, sigmoid, tanh, softplus, softsign, swish = (nn.elu, nn.selu, nn.gelu, nn.sigmoid, nn.tanh, nn.softplus,
                                                             nn.softsign, nn.swish)


def get(identifier):
    if identifier is None:
        return linear
    if callable(identifier):
        return identifier
    if isinstance(identifier, str) and identifier in _BY_NAME:
        return _BY_NAME[identifier]
    raise ValueError("[activation] unknown activation %r; valid: %s" % (identifier, ", ".join(sorted(_BY_NAME))))


_ = identity
