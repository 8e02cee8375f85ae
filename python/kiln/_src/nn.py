"""kiln.nn: TensorFlow 1.x's tf.nn names over kiln's ops. Convolutions and pooling take
TensorFlow's layouts (NHWC input and HWIO filters by default; NCHW with
data_format='NCHW') and 'SAME'/'VALID' padding; kiln computes in NCHW and transposes at
the edges."""
import numpy as np

from kiln import _core
from kiln._src.graph import (
    Tensor,
    concat,
    convert_to_tensor,
    matmul,
    maximum,
    minimum,
    named,
    pow,  # noqa: A004 (TensorFlow's name)
    reduce_mean,
    reduce_sum,
    reshape,
    sqrt,
    square,
    unsupported,
    where,
)
from kiln._src.graph import abs as _abs
from kiln._src.graph import exp as _exp
from kiln._src.graph import log as _log
from kiln._src.random_ops import dropout  # noqa: F401 (tf.nn.dropout)
from kiln._src.rnn import bidirectional_dynamic_rnn, dynamic_rnn, static_bidirectional_rnn, static_rnn  # noqa: F401


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


def xw_plus_b(x, weights, biases, name=None):
    """tf.nn.xw_plus_b: matmul(x, weights) + biases."""
    return named(matmul(x, weights) + biases, name)


def softplus(features, name=None):
    """log(1 + exp(x)), stable: max(x, 0) + log(1 + exp(-|x|))."""
    x = convert_to_tensor(features, op="softplus")
    return named(_core.relu(x) + _log(1.0 + _exp(-_abs(x))), name)


def softsign(features, name=None):
    x = convert_to_tensor(features, op="softsign")
    return named(x / (1.0 + _abs(x)), name)


def elu(features, name=None):
    x = convert_to_tensor(features, op="elu")
    return named(where(_core.greater(x, _core.scalar_like(x, 0)), x, _exp(minimum(x, 0.0)) - 1.0), name)


def selu(features, name=None):
    x = convert_to_tensor(features, op="selu")
    a, s = 1.6732632423543772, 1.0507009873554805
    return named(where(_core.greater(x, _core.scalar_like(x, 0)), x * s, (_exp(minimum(x, 0.0)) - 1.0) * (a * s)), name)


def swish(features, name=None):
    x = convert_to_tensor(features, op="swish")
    return named(x * _core.sigmoid(x), name)


silu = swish


def crelu(features, name=None, axis=-1):
    x = convert_to_tensor(features, op="crelu")
    return named(concat([_core.relu(x), _core.relu(-x)], axis), name)


def moments(x, axes, shift=None, name=None, keep_dims=None, keepdims=None):
    """(mean, variance) over `axes` (the variance biased, as TensorFlow's), in float32."""
    x = convert_to_tensor(x, op="moments")
    keep = bool(keepdims if keepdims is not None else keep_dims)
    xf = _core.cast(x, "f32") if x._dtype != "f32" else x
    mean = reduce_mean(xf, list(axes), keepdims=True)
    var = reduce_mean(square(xf - mean), list(axes), keepdims=True)
    if not keep:
        mean = _core.reshape(mean, [d for i, d in enumerate(x._shape) if i not in [a % len(x._shape) for a in axes]])
        var = _core.reshape(var, list(mean._shape))
    return mean, var


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """tf.nn.batch_normalization: (x - mean) * scale / sqrt(variance + epsilon) + offset."""
    x = convert_to_tensor(x, op="nn.batch_normalization")
    inv = _core.rsqrt(variance + variance_epsilon)
    if scale is not None:
        inv = inv * scale
    y = x * inv + ((offset - mean * inv) if offset is not None else -mean * inv)
    return named(y, name)


def in_top_k(predictions, targets, k, name=None):
    """True where targets[i] is among the k largest of predictions[i] (ties count for the
    target, as TensorFlow's)."""
    p = convert_to_tensor(predictions, op="in_top_k")
    t = convert_to_tensor(targets, op="in_top_k")
    n, c = p._shape
    hot = _core.one_hot(_core.cast(t, "i32"), c, "f32")
    target_score = reduce_sum(p * hot, [1], True)
    higher = _core.cast(_core.greater(p, target_score), "f32")
    return named(_core.less(reduce_sum(higher, [1], False), _core.scalar_like(reduce_sum(higher, [1], False), float(k))),
                 name)


def embedding_lookup(params, ids, partition_strategy="mod", name=None, validate_indices=True, max_norm=None):
    if isinstance(params, (list, tuple)):
        if len(params) != 1:
            unsupported("embedding_lookup over several shards", "give one table")
        params = params[0]
    if max_norm is not None:
        unsupported("embedding_lookup(max_norm=...)", "kiln does not renormalise rows")
    return named(_core.gather(params, convert_to_tensor(ids, op="embedding_lookup")), name)


def zero_fraction(value, name=None):
    x = convert_to_tensor(value, op="zero_fraction")
    return named(_core.reduce_mean(_core.cast(_core.equal(x, _core.scalar_like(x, 0)), "f32"), [], False), name)


def lrn(input, depth_radius=5, bias=1, alpha=1, beta=0.5, name=None):  # noqa: A002
    """tf.nn.local_response_normalization over the last axis of an NHWC tensor:
    x / (bias + alpha * sum of x^2 over the channels within depth_radius) ** beta. The
    window sum is one matrix product of the squares [pixels, channels] with a band of
    ones [channels, channels] (a oneDNN matmul forward and backward), not 2 * depth_radius
    + 1 shifted slices added: the same sums, in another order."""
    x = convert_to_tensor(input, op="lrn")
    shape = list(x._shape)
    c = shape[-1]
    i = np.arange(c)
    band = (np.abs(i[:, None] - i[None, :]) <= int(depth_radius)).astype(np.float32)
    sq = reshape(x * x, [-1, c])
    total = reshape(matmul(sq, convert_to_tensor(band, like=x, op="lrn")), shape)
    return named(x / _power(total * alpha + bias, float(beta)), name)


def _power(t, beta):
    """t ** beta for t > 0; the usual LRN exponents (0.5, 0.75, 1) through square roots,
    which vectorize (libm's powf is a scalar call per element: most of an LRN's time)."""
    if beta == 1.0:
        return t
    if beta == 0.5:
        return sqrt(t)
    if beta == 0.75:
        root = sqrt(t)
        return root * sqrt(root)
    return pow(t, _core.scalar_like(t, beta))


local_response_normalization = lrn


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
        return x_nchw, (ph, pw)  # uneven: the pooling functions pad themselves (_uneven_pool)
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


def _uneven_pool(fn, x, window, stride, pads):
    """'SAME' pooling that pads more at the end (stride 2, window 3 on an even size), as
    TensorFlow does: a max pool takes the maximum of the real elements only (the padding is
    the lowest float), an average pool divides by the number of real elements."""
    (t, b), (left, right) = pads
    if fn is _core.max_pool2d:
        lowest = _core.scalar_like(x, -3.4028234663852886e38)
        inside = _core.pad(_core.add(_core.mul(x, _core.scalar_like(x, 0.0)), _core.scalar_like(x, 1.0)),
                           [0, 0, t, left], [0, 0, b, right])
        padded = _core.pad(x, [0, 0, t, left], [0, 0, b, right])
        filled = where(_core.greater(inside, _core.scalar_like(inside, 0.5)), padded, lowest)
        return fn(filled, window, stride, [0, 0])
    ones = _core.add(_core.mul(x, _core.scalar_like(x, 0.0)), _core.scalar_like(x, 1.0))
    total = fn(_core.pad(x, [0, 0, t, left], [0, 0, b, right]), window, stride, [0, 0])
    count = fn(_core.pad(ones, [0, 0, t, left], [0, 0, b, right]), window, stride, [0, 0])
    return total / count


def _pool(fn, op, input, ksize, strides, padding, data_format, name):  # noqa: A002
    _check_format(data_format, op)
    window = _pair(ksize, op + " ksize", data_format)
    stride = _pair(strides, op + " strides", data_format)
    x, pad = _padding(padding, _to_nchw(input, data_format), window, stride, op, pooling=True)
    if isinstance(pad, tuple):
        return named(_from_nchw(_uneven_pool(fn, x, window, stride, pad), data_format), name)
    if fn is _core.avg_pool2d and pad != [0, 0]:
        # TensorFlow's average leaves the padding out of each window's count.
        return named(_from_nchw(_uneven_pool(fn, x, window, stride, ((pad[0], pad[0]), (pad[1], pad[1]))),
                                data_format), name)
    return named(_from_nchw(fn(x, window, stride, pad), data_format), name)


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    return _pool(_core.max_pool2d, "nn.max_pool2d", input, ksize, strides, padding, data_format, name)


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    return _pool(_core.avg_pool2d, "nn.avg_pool2d", input, ksize, strides, padding, data_format, name)


def max_pool(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):  # noqa: A002
    return max_pool2d(value if input is None else input, ksize, strides, padding, data_format, name)


def avg_pool(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):  # noqa: A002
    return avg_pool2d(value if input is None else input, ksize, strides, padding, data_format, name)


def depthwise_conv2d(input, filter, strides, padding, rate=None, name=None, data_format="NHWC",  # noqa: A002
                     dilations=None):
    """tf.nn.depthwise_conv2d: filter [kh, kw, in, multiplier]; output channel c*M + m is
    input channel c convolved with filter[:, :, c, m]: a convolution with one group per
    input channel, filter [in*M, 1, kh, kw] (oneDNN's depthwise kernels)."""
    _check_format(data_format, "nn.depthwise_conv2d")
    if (rate is not None and _pair(rate, "rate") != [1, 1]) or (dilations is not None and _pair(dilations, "dilations") != [1, 1]):
        unsupported("depthwise_conv2d with dilations", "kiln's convolutions are not dilated")
    fs = list(filter._shape)
    if len(fs) != 4:
        raise ValueError("[nn.depthwise_conv2d] filter must be [height, width, in, multiplier], not %s" % (fs,))
    kh, kw, c, m = fs
    stride = _pair(strides, "nn.depthwise_conv2d strides", data_format)
    x, pad = _padding(padding, _to_nchw(convert_to_tensor(input, op="depthwise_conv2d"), data_format), [kh, kw], stride,
                      "nn.depthwise_conv2d", pooling=False)
    if x._shape[1] != c:
        raise ValueError("[nn.depthwise_conv2d] input has %d channels but the filter %s expects %d"
                         % (x._shape[1], fs, c))
    w = _core.reshape(_core.transpose(filter, [2, 3, 0, 1]), [c * m, 1, kh, kw])
    return named(_from_nchw(_core.conv2d(x, w, stride, pad, c), data_format), name)


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding, rate=None, name=None,  # noqa: A002
                     data_format="NHWC", dilations=None):
    d = depthwise_conv2d(input, depthwise_filter, strides, padding, rate, None, data_format, dilations)
    return named(conv2d(d, pointwise_filter, [1, 1, 1, 1], "VALID", data_format=data_format), name)


def conv1d(value=None, filters=None, stride=None, padding=None, use_cudnn_on_gpu=None, data_format="NWC", name=None,
           input=None, dilations=None):  # noqa: A002
    """tf.nn.conv1d as a 2-D convolution of height 1: value [N, W, C], filters [k, C, O]."""
    x = value if value is not None else input
    if data_format not in ("NWC", "NHWC"):
        unsupported("conv1d(data_format=%r)" % data_format, "use NWC")
    x4 = _core.reshape(x, [x._shape[0], 1] + list(x._shape[1:]))
    f4 = _core.reshape(filters, [1] + list(filters._shape))
    y = conv2d(x4, f4, [1, 1, int(stride), 1], padding)
    return named(_core.reshape(y, [y._shape[0]] + list(y._shape[2:])), name)



