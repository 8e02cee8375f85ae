"""The TensorFlow 1.x names kiln provides compute what TensorFlow's do (checked against
numpy through predict), and the names kiln lacks say so."""
import math

import numpy as np
import pytest
from conftest import make_estimator

import kiln

B = 4
RNG = np.random.default_rng(3)
X = RNG.normal(0, 1, size=(B, 18)).astype(np.float32)
LABELS = np.array([0, 2, 1, 2], dtype=np.int32)
DW = RNG.normal(0, 1, size=(3, 3, 2, 1)).astype(np.float32)  # depthwise filters: [kh, kw, in, multiplier]
DW2 = RNG.normal(0, 1, size=(2, 2, 2, 2)).astype(np.float32)
LRN_W = RNG.normal(0, 1, size=(B, 1, 2, 9)).astype(np.float32)


def ops_under_test(features, labels):
    x = features
    img = kiln.reshape(x, [B, 3, 3, 2])  # NHWC
    w = kiln.ones([2, 2, 2, 3]) * 0.5  # HWIO
    out = {
        "matmul_tb": kiln.matmul(x, x, transpose_b=True),
        "at": x @ kiln.transpose(x),
        "arith": (x * 2.0 - 1.0) / 4.0 + x ** 2,
        "rsub": 1.0 - x,
        "concat": kiln.concat([x, -x], axis=1),
        "reduce_mean": kiln.reduce_mean(x, axis=1),
        "reduce_sum_keep": kiln.reduce_sum(x, axis=[1], keepdims=True),
        "reduce_max": kiln.reduce_max(img, axis=[1, 2]),
        "reduce_min": kiln.reduce_min(x, axis=1),
        "argmax": kiln.argmax(x, axis=1),
        "one_hot": kiln.one_hot(labels, 3, on_value=5.0, off_value=-1.0),
        "relu": kiln.nn.relu(x),
        "gelu": kiln.nn.gelu(x),
        "tanh": kiln.nn.tanh(x),
        "sigmoid": kiln.nn.sigmoid(x),
        "softmax": kiln.nn.softmax(x),
        "log_softmax": kiln.nn.log_softmax(x, axis=-1),
        "xent": kiln.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=x[:, :3]),
        "cast": kiln.cast(x * 10.0, kiln.int32),
        "index": x[:, 2:5],
        "index_int": img[:, 0, :, 1],
        "where": kiln.where(x > 0.0, x, kiln.zeros_like(x)),
        "clip": kiln.clip_by_value(x, -0.5, 0.5),
        "sqrt": kiln.sqrt(kiln.abs(x)),
        "expand_squeeze": kiln.squeeze(kiln.expand_dims(x, 1), axis=1),
        "pad": kiln.pad(img, [[0, 0], [1, 0], [0, 1], [0, 0]]),
        "slice": kiln.slice(x, [0, 3], [-1, 4]),
        "conv_same": kiln.nn.conv2d(img, w, strides=[1, 1, 1, 1], padding="SAME"),
        "conv_valid_s2": kiln.nn.conv2d(img, w, strides=2, padding="VALID"),
        "conv_same_s2": kiln.nn.conv2d(img, w, strides=[1, 2, 2, 1], padding="SAME"),
        "pool_valid": kiln.nn.max_pool2d(img, 2, 1, "VALID"),
        "pool_same": kiln.nn.max_pool2d(img, 3, 1, "SAME"),
        "depthwise_same": kiln.nn.depthwise_conv2d(img, kiln.constant(DW), [1, 1, 1, 1], "SAME"),
        "depthwise_s2_m2": kiln.nn.depthwise_conv2d(img, kiln.constant(DW2), [1, 2, 2, 1], "SAME"),
        "depthwise_valid_nchw": kiln.nn.depthwise_conv2d(kiln.transpose(img, [0, 3, 1, 2]), kiln.constant(DW2),
                                                         [1, 1, 1, 1], "VALID", data_format="NCHW"),
        "flatten": kiln.layers.flatten(img),
        "maximum": kiln.maximum(x, 0.25),
        "lrn": kiln.nn.lrn(kiln.reshape(x, [B, 1, 2, 9]), 2, bias=0.5, alpha=0.3, beta=0.75),
        "lrn_defaults": kiln.nn.local_response_normalization(img),  # a radius of 5 over 2 channels
        # d/dx of sum(lrn * W) (the band matmul's and the square roots' gradients), beta 0.75 and 0.6
        "lrn_grad": kiln.gradients(kiln.reduce_sum(kiln.nn.lrn(kiln.reshape(x, [B, 1, 2, 9]), 2, bias=0.5, alpha=0.3,
                                                               beta=0.75) * LRN_W), [x])[0],
        "lrn_grad_pow": kiln.gradients(kiln.reduce_sum(kiln.nn.lrn(kiln.reshape(x, [B, 1, 2, 9]), 1, bias=2.0,
                                                                   alpha=0.5, beta=0.6) * LRN_W), [x])[0],
    }
    return out


def conv_ref(img, w, stride, pads):
    (pt, pb), (pl, pr) = pads
    p = np.pad(img, [(0, 0), (pt, pb), (pl, pr), (0, 0)])
    kh, kw, _, co = w.shape
    oh = (p.shape[1] - kh) // stride + 1
    ow = (p.shape[2] - kw) // stride + 1
    out = np.zeros((img.shape[0], oh, ow, co), np.float32)
    for i in range(oh):
        for j in range(ow):
            patch = p[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
            out[:, i, j, :] = np.tensordot(patch, w, axes=([1, 2, 3], [0, 1, 2]))
    return out


def depthwise_ref(img, w, stride, pads):
    """Output channel c*M + m: input channel c convolved with w[:, :, c, m]."""
    kh, kw, c, m = w.shape
    out = [conv_ref(img[..., k:k + 1], w[:, :, k:k + 1, :], stride, pads) for k in range(c)]
    return np.concatenate(out, axis=3)


def pool_ref(img, k, pad):
    p = np.pad(img, [(0, 0), (pad, pad), (pad, pad), (0, 0)], constant_values=-np.inf)
    o = p.shape[1] - k + 1
    return np.stack([np.stack([p[:, i:i + k, j:j + k, :].max(axis=(1, 2)) for j in range(o)], 1) for i in range(o)], 1)


def lrn_ref(x, radius, bias, alpha, beta):
    """TensorFlow's LRN: x / (bias + alpha * sum of squares over channels d-r..d+r) ** beta."""
    c = x.shape[-1]
    sq = np.stack([(x[..., max(0, d - radius):d + radius + 1] ** 2).sum(-1) for d in range(c)], axis=-1)
    return x / (bias + alpha * sq) ** beta


def lrn_grad_ref(x, radius, bias, alpha, beta):
    """d/dx of sum(lrn_ref(x) * LRN_W), by central differences in float64."""
    x = x.reshape(B, 1, 2, 9).astype(np.float64)
    g = np.zeros_like(x)
    h = 1e-6
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += h
        down[i] -= h
        g[i] = ((lrn_ref(up, radius, bias, alpha, beta) - lrn_ref(down, radius, bias, alpha, beta)) * LRN_W).sum() / (2 * h)
    return g.reshape(B, 18)


def expected():
    x = X.astype(np.float64)
    img = X.reshape(B, 3, 3, 2)
    w = np.full((2, 2, 2, 3), 0.5, np.float32)
    e = np.exp(x - x.max(1, keepdims=True))
    sm = e / e.sum(1, keepdims=True)
    l3 = x[:, :3] - np.log(np.exp(x[:, :3]).sum(1, keepdims=True))
    return {
        "matmul_tb": x @ x.T, "at": x @ x.T, "arith": (x * 2 - 1) / 4 + x ** 2, "rsub": 1 - x,
        "concat": np.concatenate([x, -x], 1), "reduce_mean": x.mean(1), "reduce_sum_keep": x.sum(1, keepdims=True),
        "reduce_max": img.max(axis=(1, 2)), "reduce_min": x.min(1), "argmax": x.argmax(1),
        "one_hot": np.where(np.eye(3)[LABELS] > 0, 5.0, -1.0), "relu": np.maximum(x, 0),
        "gelu": x * 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2))), "tanh": np.tanh(x),
        "sigmoid": 1 / (1 + np.exp(-x)), "softmax": sm, "log_softmax": np.log(sm),
        "xent": -l3[np.arange(B), LABELS], "cast": np.trunc(x.astype(np.float32) * 10).astype(np.int32),
        "index": x[:, 2:5], "index_int": img[:, 0, :, 1], "where": np.where(x > 0, x, 0), "clip": np.clip(x, -0.5, 0.5),
        "sqrt": np.sqrt(np.abs(x)), "expand_squeeze": x, "pad": np.pad(img, [(0, 0), (1, 0), (0, 1), (0, 0)]),
        "slice": x[:, 3:7],
        "conv_same": conv_ref(img, w, 1, ((0, 1), (0, 1))),
        "conv_valid_s2": conv_ref(img, w, 2, ((0, 0), (0, 0))),
        "conv_same_s2": conv_ref(img, w, 2, ((0, 1), (0, 1))),
        "pool_valid": pool_ref(img, 2, 0), "pool_same": pool_ref(img, 3, 1),
        "depthwise_same": depthwise_ref(img, DW, 1, ((1, 1), (1, 1))),
        "depthwise_s2_m2": depthwise_ref(img, DW2, 2, ((0, 1), (0, 1))),
        "depthwise_valid_nchw": depthwise_ref(img, DW2, 1, ((0, 0), (0, 0))).transpose(0, 3, 1, 2),
        "flatten": X, "maximum": np.maximum(x, 0.25),
        "lrn": lrn_ref(x.reshape(B, 1, 2, 9), 2, 0.5, 0.3, 0.75),
        "lrn_defaults": lrn_ref(img.astype(np.float64), 5, 1.0, 1.0, 0.5),
        "lrn_grad": lrn_grad_ref(X, 2, 0.5, 0.3, 0.75), "lrn_grad_pow": lrn_grad_ref(X, 1, 2.0, 0.5, 0.6),
    }


def model_fn(features, labels, mode):
    if mode == kiln.estimator.ModeKeys.PREDICT:
        return kiln.estimator.EstimatorSpec(mode, predictions=ops_under_test(features, labels))
    w = kiln.get_variable("w", [18, 1], initializer=kiln.initializers.zeros())
    loss = kiln.reduce_mean(kiln.square(kiln.matmul(features, w)))
    return kiln.estimator.EstimatorSpec(mode, loss=loss, train_op=kiln.train.GradientDescentOptimizer(0.1).minimize(loss))


@pytest.fixture(scope="module")
def predicted():
    est = make_estimator(fn=model_fn)
    est.train(lambda: iter([(X, LABELS)]), max_steps=1)
    return next(est.predict(lambda: iter([(X, LABELS)]), yield_single_examples=False))


@pytest.mark.parametrize("name", sorted(expected()))
def test_op_matches_numpy(predicted, name):
    np.testing.assert_allclose(predicted[name], expected()[name], rtol=2e-5, atol=2e-5, err_msg=name)


def in_model_fn(body):
    """Runs body() inside a model_fn's graph (train mode) and returns what it raised."""
    caught = []

    def fn(features, labels, mode):
        try:
            body(features, labels)
        except Exception as e:  # noqa: BLE001 (the test inspects it)
            caught.append(e)
        w = kiln.get_variable("w", [18, 1])
        loss = kiln.reduce_mean(kiln.matmul(features, w))
        return kiln.estimator.EstimatorSpec(mode, loss=loss, train_op=kiln.train.GradientDescentOptimizer(0.1).minimize(loss))

    make_estimator(fn=fn).train(lambda: iter([(X, LABELS)]), max_steps=1)
    return caught[0] if caught else None


@pytest.mark.parametrize("body,name", [
    (lambda f, l: f[:, ::2], "strided indexing"),
    (lambda f, l: kiln.one_hot(l, 3, axis=0), "one_hot(axis=0)"),
    (lambda f, l: kiln.placeholder(kiln.float32), "placeholder"),
    (lambda f, l: kiln.boolean_mask(f, l), "boolean_mask"),
    (lambda f, l: kiln.layers.conv2d_transpose(f, 3, 3), "layers.conv2d_transpose"),
    (lambda f, l: kiln.keras.Input(shape=(3,)), "keras.Input"),
    (lambda f, l: kiln.train.AdadeltaOptimizer(0.1), "AdadeltaOptimizer"),
    (lambda f, l: kiln.cast(f, kiln.float64), "float64 tensors"),
    (lambda f, l: kiln.cond(kiln.reduce_sum(f) > 0, lambda: kiln.assign(kiln.get_variable("c", [1]), [1.0]).value,
                            lambda: kiln.zeros([1])), "cond whose branches assign"),
])
def test_missing_names_say_so(body, name):
    e = in_model_fn(body)
    assert isinstance(e, NotImplementedError), repr(e)
    assert name in str(e) and "not provided by kiln" in str(e)


def test_depthwise_filter_of_other_channels_says_so_in_tensorflows_shapes():
    e = in_model_fn(lambda f, l: kiln.nn.depthwise_conv2d(kiln.reshape(f, [B, 3, 3, 2]), kiln.ones([3, 3, 4, 1]),
                                                           [1, 1, 1, 1], "SAME"))
    assert isinstance(e, ValueError), repr(e)
    assert "input has 2 channels but the filter [3, 3, 4, 1] expects 4" in str(e)


def test_tensor_properties():
    seen = {}

    def body(f, l):
        t = kiln.identity(f * 2.0, name="doubled")
        seen.update(shape=t.shape.as_list(), dtype=t.dtype, name=t.name, rank=t.shape.ndims,
                    g=kiln.get_default_graph().get_tensor_by_name("doubled:0")._same(t))
        with pytest.raises(TypeError, match="truth value"):
            bool(t)
        with pytest.raises(TypeError, match="dtypes float32 and int32"):
            t + kiln.cast(t, kiln.int32)

    assert in_model_fn(body) is None
    assert seen == {"shape": [B, 18], "dtype": kiln.float32, "name": "doubled:0", "rank": 2, "g": True}
