"""tf.image's colour ops as Inception-style augmentation uses them (distort_color):
brightness, contrast, saturation and hue, fixed (adjust_*) or drawn (random_*), and the
RGB <-> HSV conversions, built from kiln's graph ops with TensorFlow's arithmetic so the
pixels match its kernels. An integer image is converted to float32 in [0, 1] first and
back to its dtype after, as TensorFlow does."""
import numbers

from kiln import _core
from kiln._src.dtypes import float32
from kiln._src.graph import abs as abs_
from kiln._src.graph import cast, concat, convert_to_tensor, named, reduce_mean, where
from kiln._src.image_dtype import _dtype_of, convert_image_dtype
from kiln._src.random_ops import random_uniform


def _as_float(image, op, rgb=True):
    t = convert_to_tensor(image, op=op)
    if len(t._shape) < 3 or (rgb and t._shape[-1] != 3):
        raise ValueError("[%s] takes %s images [..., height, width, %s]; got shape %s"
                         % (op, "RGB" if rgb else "", "3" if rgb else "channels", t._shape))
    dtype = _dtype_of(t)
    x = t if dtype.name == "float32" else convert_image_dtype(t, float32)
    return x, dtype


def _back(x, dtype, saturate):
    return x if dtype.name == "float32" else convert_image_dtype(x, dtype, saturate=saturate)


def _scalar(v, like, op):
    """A number or a scalar tensor (a random draw) as a float32 scalar tensor."""
    if isinstance(v, numbers.Number):
        return _core.scalar_like(like, float(v))
    t = cast(convert_to_tensor(v, op=op), float32)
    if t._shape not in ([], (), [1]):
        raise ValueError("[%s] takes a scalar; got shape %s" % (op, t._shape))
    return _core.reshape(t, [])


def adjust_brightness(image, delta):
    """image + delta (in [0, 1] units for integer images), saturated back to the dtype."""
    x, dtype = _as_float(image, "adjust_brightness", rgb=False)
    return _back(x + _scalar(delta, x, "adjust_brightness"), dtype, True)


def adjust_contrast(images, contrast_factor):
    """(x - mean) * factor + mean, the mean over each image's pixels, per channel."""
    x, dtype = _as_float(images, "adjust_contrast", rgb=False)
    axes = [len(x._shape) - 3, len(x._shape) - 2]
    mean = reduce_mean(x, axis=axes, keepdims=True)
    return _back((x - mean) * _scalar(contrast_factor, x, "adjust_contrast") + mean, dtype, True)


def _channels(x):
    n = len(x._shape)
    begin, end = [0] * n, list(x._shape)
    out = []
    for c in range(3):
        begin[-1], end[-1] = c, c + 1
        out.append(_core.slice(x, list(begin), list(end)))
    return out


def _max3(a, b, c):
    return _core.maximum(a, _core.maximum(b, c))


def _min3(a, b, c):
    return _core.minimum(a, _core.minimum(b, c))


def _hsv(x):
    """TensorFlow's rgb_to_hsv kernel on the channels: (h in [0, 1), s, v)."""
    r, g, b = _channels(x)
    v = _max3(r, g, b)
    rng = v - _min3(r, g, b)
    zero, one = _core.scalar_like(v, 0.0), _core.scalar_like(v, 1.0)
    s = where(_core.greater(v, zero), rng / where(_core.greater(v, zero), v, one), zero)
    norm = one / (_core.scalar_like(v, 6.0) * where(_core.greater(rng, zero), rng, one))
    h = where(_core.equal(r, v), norm * (g - b),
              where(_core.equal(g, v), norm * (b - r) + _core.scalar_like(v, 2.0 / 6.0),
                    norm * (r - g) + _core.scalar_like(v, 4.0 / 6.0)))
    h = where(_core.greater(rng, zero), h, zero)
    h = where(_core.less(h, zero), h + one, h)
    return h, s, v


def _rgb_by_category(h, s, v):
    """The adjust_hue / adjust_saturation kernels' hsv_to_rgb: by the sixth of the hue
    circle h falls in."""
    c = s * v
    m = v - c
    dh = h * _core.scalar_like(h, 6.0)

    def within(k):  # 1.0 where k <= dh < k + 1 (the last sixth open above), else 0.0
        inside = cast(_core.greater_equal(dh, _core.scalar_like(dh, float(k))), float32)
        if k < 5:
            inside = inside * cast(_core.less(dh, _core.scalar_like(dh, float(k + 1))), float32)
        return inside
    cat = [within(k) for k in range(6)]
    fmodu = dh - _core.scalar_like(dh, 2.0) * (cat[2] + cat[3]) - _core.scalar_like(dh, 4.0) * (cat[4] + cat[5])
    xx = c * (_core.scalar_like(c, 1.0) - abs_(fmodu - _core.scalar_like(c, 1.0)))
    r = c * (cat[0] + cat[5]) + xx * (cat[1] + cat[4])
    g = xx * (cat[0] + cat[3]) + c * (cat[1] + cat[2])
    b = xx * (cat[2] + cat[5]) + c * (cat[3] + cat[4])
    return concat([r + m, g + m, b + m], len(h._shape) - 1)


def adjust_saturation(image, saturation_factor):
    """HSV saturation times the factor, clipped to [0, 1]."""
    x, dtype = _as_float(image, "adjust_saturation")
    h, s, v = _hsv(x)
    s = s * _scalar(saturation_factor, s, "adjust_saturation")
    s = _core.minimum(_core.maximum(s, _core.scalar_like(s, 0.0)), _core.scalar_like(s, 1.0))
    return _back(_rgb_by_category(h, s, v), dtype, False)


def adjust_hue(image, delta):
    """The hue turned by delta (in turns, -1 to 1), wrapped into [0, 1)."""
    if isinstance(delta, numbers.Number) and not -1.0 <= delta <= 1.0:
        raise ValueError("[adjust_hue] delta %r must be in [-1, 1]" % (delta,))
    x, dtype = _as_float(image, "adjust_hue")
    h, s, v = _hsv(x)
    h = h + _scalar(delta, h, "adjust_hue")
    one = _core.scalar_like(h, 1.0)
    h = where(_core.greater_equal(h, one), h - one, h)  # fmod(h, 1) for h in [-1, 2)
    h = where(_core.less(h, _core.scalar_like(h, 0.0)), h + one, h)
    return _back(_rgb_by_category(h, s, v), dtype, False)


def rgb_to_hsv(images, name=None):
    x, _ = _as_float(images, "rgb_to_hsv")
    h, s, v = _hsv(x)
    return named(concat([h, s, v], len(x._shape) - 1), name)


def hsv_to_rgb(images, name=None):
    """TensorFlow's hsv_to_rgb op: each channel from its distance to the hue's sixths."""
    x, _ = _as_float(images, "hsv_to_rgb")
    h, s, v = _channels(x)
    dh = h * _core.scalar_like(h, 6.0)
    zero, one, two = (_core.scalar_like(h, f) for f in (0.0, 1.0, 2.0))

    def clamp(t):
        return _core.minimum(_core.maximum(t, zero), one)
    dr = clamp(abs_(dh - _core.scalar_like(h, 3.0)) - one)
    dg = clamp(two - abs_(dh - two))
    db = clamp(two - abs_(dh - _core.scalar_like(h, 4.0)))
    rest = one - s
    return named(concat([(rest + s * dr) * v, (rest + s * dg) * v, (rest + s * db) * v], len(x._shape) - 1), name)


def _check_bounds(op, lower, upper):
    if upper <= lower:
        raise ValueError("[%s] upper %r must be > lower %r" % (op, upper, lower))
    if lower < 0:
        raise ValueError("[%s] lower %r must be non-negative" % (op, lower))


def random_brightness(image, max_delta, seed=None):
    if max_delta < 0:
        raise ValueError("[random_brightness] max_delta %r must be non-negative" % (max_delta,))
    return adjust_brightness(image, random_uniform([], -max_delta, max_delta, seed=seed))


def random_contrast(image, lower, upper, seed=None):
    _check_bounds("random_contrast", lower, upper)
    return adjust_contrast(image, random_uniform([], lower, upper, seed=seed))


def random_saturation(image, lower, upper, seed=None):
    _check_bounds("random_saturation", lower, upper)
    return adjust_saturation(image, random_uniform([], lower, upper, seed=seed))


def random_hue(image, max_delta, seed=None):
    if not 0 <= max_delta <= 0.5:
        raise ValueError("[random_hue] max_delta %r must be in [0, 0.5]" % (max_delta,))
    return adjust_hue(image, random_uniform([], -max_delta, max_delta, seed=seed))

