"""kiln.nn: TensorFlow 1.x's tf.nn names over kiln's ops. Convolutions and pooling take
TensorFlow's layouts (NHWC input and HWIO filters by default; NCHW with
data_format='NCHW') and 'SAME'/'VALID' padding; kiln computes in NCHW and transposes at
the edges."""
from . import _core
from ._graph import Tensor, convert_to_tensor, maximum, minimum, named, reduce_sum, unsupported
from ._graph import log as _log
from ._graph import exp as _exp
from ._graph import abs as _abs


def relu(features, name=None):
    return named(_core.relu(features), name)


def relu6(features, name=None):
    return named(minimum(_core.relu(features), 6.0), name)


def leaky_relu(features, alpha=0.2, name=None):
    return named(maximum(features, features * alpha), name)


def gelu(features, approximate=False, name=None):
    if approximate:
        unsupported("gelu(approximate=True)", "kiln's gelu is the exact x * Phi(x)")
    return named(_core.gelu(features), name)


def tanh(x, name=None):
    return named(_core.tanh(x), name)


def sigmoid(x, name=None):
    return named(_core.sigmoid(x), name)


def softmax(logits, axis=None, name=None, dim=None):
    axis = -1 if axis is None and dim is None else (axis if axis is not None else dim)
    return named(_core.softmax(logits, int(axis)), name)


def log_softmax(logits, axis=None, name=None, dim=None):
    axis = -1 if axis is None and dim is None else (axis if axis is not None else dim)
    return named(_core.log_softmax(logits, int(axis)), name)


def _labels_vector(labels, op):
    if not isinstance(labels, Tensor):
        raise TypeError("[%s] labels must be a kiln.Tensor" % op)
    if labels.dtype.is_floating:
        raise TypeError("[%s] labels must be integer class ids, not %s" % (op, labels.dtype.name))
    shape = list(labels._shape)
    if len(shape) == 2 and shape[1] == 1:
        return _core.reshape(labels, [shape[0]])
    return labels


def sparse_softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """Per-example cross-entropy of logits [N, C] against class ids [N]: shape [N]."""
    if _sentinel is not None or labels is None or logits is None:
        raise ValueError("[sparse_softmax_cross_entropy_with_logits] call it with labels=... and logits=...")
    lab = _labels_vector(labels, "sparse_softmax_cross_entropy_with_logits")
    return named(_core.sparse_softmax_cross_entropy(logits, lab), name)


def softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, axis=-1, name=None, dim=None):
    """Per-example cross-entropy against a distribution over classes (e.g. one-hot)."""
    if _sentinel is not None or labels is None or logits is None:
        raise ValueError("[softmax_cross_entropy_with_logits] call it with labels=... and logits=...")
    axis = dim if dim is not None else axis
    return named(-reduce_sum(convert_to_tensor(labels, like=logits) * _core.log_softmax(logits, int(axis)), axis), name)


softmax_cross_entropy_with_logits_v2 = softmax_cross_entropy_with_logits


def sigmoid_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """max(x, 0) - x * z + log(1 + exp(-|x|)), elementwise (TensorFlow's stable form)."""
    if _sentinel is not None or labels is None or logits is None:
        raise ValueError("[sigmoid_cross_entropy_with_logits] call it with labels=... and logits=...")
    z = convert_to_tensor(labels, like=logits)
    x = logits
    return named(_core.relu(x) - x * z + _log(1.0 + _exp(-_abs(x))), name)


def l2_loss(t, name=None):
    return named(reduce_sum(t * t) * 0.5, name)


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    axis = dim if axis is None else axis
    ss = reduce_sum(x * x, axis, keepdims=True)
    return named(x * _core.rsqrt(maximum(ss, epsilon)), name)


def bias_add(value, bias, data_format=None, name=None):
    if data_format in ("NCHW", "channels_first"):
        rank = len(value._shape)
        bias = _core.reshape(bias, [bias._shape[0]] + [1] * (rank - 2))
    return named(value + bias, name)


def dropout(x, *args, **kwargs):
    unsupported("nn.dropout", "kiln's IR has no random-number op; drop dropout from the model or use it only outside training")


# --- convolution and pooling ----------------------------------------------------------


def _pair(v, name, data_format="NHWC"):
    """2 spatial values from an int, [h, w] or TensorFlow's 4-element form."""
    if isinstance(v, int):
        return [v, v]
    v = [int(x) for x in v]
    if len(v) == 2:
        return v
    if len(v) == 4:
        spatial = v[1:3] if data_format == "NHWC" else v[2:4]
        batch_channel = [v[0], v[3]] if data_format == "NHWC" else [v[0], v[1]]
        if batch_channel != [1, 1]:
            raise ValueError("[%s] %s: the batch and channel entries must be 1" % (name, v))
        return spatial
    raise ValueError("[%s] %r: expected an int, 2 values or 4 values" % (name, v))


def _same_padding(size, window, stride):
    out = -(-size // stride)
    total = max((out - 1) * stride + window - size, 0)
    return total // 2, total - total // 2


def _check_format(data_format, op):
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError("[%s] data_format '%s' is not one of: NHWC, NCHW" % (op, data_format))


def _padding(padding, x_nchw, window, stride, op, pooling):
    """(x, symmetric padding) for kiln: 'VALID' pads nothing; 'SAME' pads as TensorFlow
    does, through the op's padding when symmetric, else (convolution only) a pad op."""
    if isinstance(padding, str) and padding.upper() == "VALID":
        return x_nchw, [0, 0]
    if not (isinstance(padding, str) and padding.upper() == "SAME"):
        raise ValueError("[%s] padding %r is not one of: 'SAME', 'VALID'" % (op, padding))
    h, w = x_nchw._shape[2], x_nchw._shape[3]
    ph = _same_padding(h, window[0], stride[0])
    pw = _same_padding(w, window[1], stride[1])
    if ph[0] == ph[1] and pw[0] == pw[1]:
        return x_nchw, [ph[0], pw[0]]
    if pooling:
        unsupported(
            "%s with padding 'SAME' that pads unevenly (%s, %s)" % (op, ph, pw),
            "kiln pads pooling windows evenly; use 'VALID' or an input size the stride divides",
        )
    return _core.pad(x_nchw, [0, 0, ph[0], pw[0]], [0, 0, ph[1], pw[1]]), [0, 0]


def _to_nchw(x, data_format):
    return _core.transpose(x, [0, 3, 1, 2]) if data_format == "NHWC" else x


def _from_nchw(x, data_format):
    return _core.transpose(x, [0, 2, 3, 1]) if data_format == "NHWC" else x


def conv2d(input, filters=None, strides=None, padding=None, use_cudnn_on_gpu=True, data_format="NHWC",  # noqa: A002
           dilations=None, name=None, filter=None):  # noqa: A002
    """2-D convolution: input NHWC (or NCHW), filters [height, width, in, out]."""
    _check_format(data_format, "nn.conv2d")
    filters = filter if filters is None else filters
    if filters is None or strides is None or padding is None:
        raise ValueError("[nn.conv2d] needs filters, strides and padding")
    if dilations is not None and _pair(dilations, "nn.conv2d dilations", data_format) != [1, 1]:
        unsupported("nn.conv2d with dilations", "kiln's convolution is not dilated")
    stride = _pair(strides, "nn.conv2d strides", data_format)
    fs = list(filters._shape)
    if len(fs) != 4:
        raise ValueError("[nn.conv2d] filters must be [height, width, in, out], not %s" % (fs,))
    x, pad = _padding(padding, _to_nchw(input, data_format), fs[:2], stride, "nn.conv2d", pooling=False)
    w = _core.transpose(filters, [3, 2, 0, 1])
    return named(_from_nchw(_core.conv2d(x, w, stride, pad), data_format), name)


def _pool(fn, op, input, ksize, strides, padding, data_format, name):  # noqa: A002
    _check_format(data_format, op)
    window = _pair(ksize, op + " ksize", data_format)
    stride = _pair(strides, op + " strides", data_format)
    x, pad = _padding(padding, _to_nchw(input, data_format), window, stride, op, pooling=True)
    return named(_from_nchw(fn(x, window, stride, pad), data_format), name)


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    return _pool(_core.max_pool2d, "nn.max_pool2d", input, ksize, strides, padding, data_format, name)


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    return _pool(_core.avg_pool2d, "nn.avg_pool2d", input, ksize, strides, padding, data_format, name)


def max_pool(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):  # noqa: A002
    return max_pool2d(value if input is None else input, ksize, strides, padding, data_format, name)


def avg_pool(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):  # noqa: A002
    return avg_pool2d(value if input is None else input, ksize, strides, padding, data_format, name)
