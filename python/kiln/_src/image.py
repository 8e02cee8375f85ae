"""tf.image as input pipelines use it in Dataset.map: decoding (decode_jpeg, decode_png,
decode_image: host ops, by libjpeg-turbo and libpng in C++) and the graph ops that resize,
crop, flip and normalise an image, built from kiln's ops so that the traced map function
runs them with no Python per element.

Shapes are static in kiln's graphs: an image there is [height, width, channels] (or a
batch [n, height, width, channels]) of known size. A decoded image is a host value of the
map function until a graph op takes it (kiln/_src/map_function.py), so the ops that make its
size fixed (resize_images, crop_to_bounding_box, central_crop, random_crop, the random
flips, tf.slice) run on the host when given one, and images of any size share one trace. Resizing is TensorFlow 1.x's
(align_corners=False and half_pixel_centers=False unless asked), computed as products with
interpolation matrices. The random ops (random_flip_left_right, random_crop, ...) draw
from kiln's counter-based generator, keyed by the dataset's seed and the element's
position, so a pipeline is reproducible from its seed.
"""
import functools
import numbers

import numpy as np

from kiln import _core
from kiln._src.array_ops import gather, range_, static_value
from kiln._src.dtypes import as_dtype, float32, int32, uint8
from kiln._src.graph import (
    Tensor,
    cast,
    concat,
    convert_to_tensor,
    host_slice,
    mark_narrow,
    matmul,
    named,
    narrow_dtype,
    on_host_data,
    reduce_mean,
    reshape,
    transpose,
    unsupported,
    where,
)
from kiln._src.image_dtype import _dtype_of, convert_image_dtype
from kiln._src.map_function import HostValue, Random, _known_value, host_op
from kiln._src.random_ops import random_uniform

# --- decoding (host ops) ----------------------------------------------------------------

def _image_array(img):
    if img.bits == 16:
        return np.frombuffer(img.pixels16, dtype=np.uint16).reshape(img.height, img.width, img.channels).copy()
    return np.frombuffer(img.pixels, dtype=np.uint8).reshape(img.height, img.width, img.channels).copy()


def _bytes_of(contents, op):
    if isinstance(contents, np.ndarray) and contents.shape == () and contents.dtype.kind in "SO":
        contents = contents.item()  # a scalar string component (Dataset.from_tensors(b"..."))
    if isinstance(contents, str):
        contents = contents.encode()
    if not isinstance(contents, (bytes, bytearray, np.bytes_)):
        raise TypeError("[%s] contents is a %s; it takes the bytes of an image file" % (op, type(contents).__name__))
    return bytes(contents)


def _decode_jpeg(contents, channels, dct_method, fancy_upscaling, ratio):
    if ratio != 1:
        unsupported("decode_jpeg(ratio=%r)" % ratio, "kiln decodes at full size: resize after decoding")
    return _image_array(_core.decode_jpeg(_bytes_of(contents, "decode_jpeg"), int(channels), dct_method or "",
                                          bool(fancy_upscaling)))


def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True, try_recover_truncated=False,
                acceptable_fraction=1, dct_method="", name=None):
    """A JPEG file's bytes -> uint8 [height, width, channels] (0: as stored, 1, 3)."""
    _whole_jpegs_only("decode_jpeg", try_recover_truncated, acceptable_fraction)
    native = None
    if ratio == 1 and isinstance(channels, numbers.Integral) and isinstance(dct_method or "", str):
        native = ("decode_jpeg", {"channels": int(channels), "dct": dct_method or "", "fancy": bool(fancy_upscaling)})
    return host_op("decode_jpeg", _decode_jpeg, contents, channels, dct_method, fancy_upscaling, ratio, keep=True,
                   native=native)


def _whole_jpegs_only(op, try_recover_truncated, acceptable_fraction):
    if try_recover_truncated or acceptable_fraction != 1:
        unsupported("%s(try_recover_truncated=True or acceptable_fraction < 1)" % op,
                    "a damaged or truncated JPEG is an error in kiln")


def _decode_and_crop(contents, window, channels, dct_method, fancy_upscaling, ratio):
    if ratio != 1:
        unsupported("decode_and_crop_jpeg(ratio=%r)" % ratio, "kiln decodes at full size: resize after decoding")
    w = [int(v) for v in np.asarray(window).reshape(-1)]
    return _image_array(_core.decode_and_crop_jpeg(_bytes_of(contents, "decode_and_crop_jpeg"), w, int(channels),
                                                   dct_method or "", bool(fancy_upscaling)))


def decode_and_crop_jpeg(contents, crop_window, channels=0, ratio=1, fancy_upscaling=True,
                         try_recover_truncated=False, acceptable_fraction=1, dct_method="", name=None):
    """The window crop_window = [offset_y, offset_x, height, width] of a JPEG, decoded
    without decoding the rows above and below it (as TensorFlow's op, the pixels at the
    window's left and right edges are those of a decode cut at the iMCU boundaries, which
    may differ slightly from a whole decode cropped). The window usually comes from
    sample_distorted_bounding_box; a window outside the image is an error."""
    _whole_jpegs_only("decode_and_crop_jpeg", try_recover_truncated, acceptable_fraction)
    native = None
    if ratio == 1 and isinstance(channels, numbers.Integral) and isinstance(dct_method or "", str) and \
            isinstance(contents, HostValue) and isinstance(crop_window, HostValue):
        native = ("decode_and_crop_jpeg", {"channels": int(channels), "dct": dct_method or "",
                                           "fancy": bool(fancy_upscaling)})
    return host_op("decode_and_crop_jpeg", _decode_and_crop, contents, crop_window, channels, dct_method,
                   fancy_upscaling, ratio, keep=True, native=native)


def extract_jpeg_shape(contents, output_type=int32, name=None):
    """[height, width, channels] of a JPEG, read from its header alone (nothing is decoded)."""
    t = as_dtype(output_type)
    if t.name not in ("int32", "int64"):
        raise ValueError("[extract_jpeg_shape] output_type %s: valid are int32 and int64" % t.name)
    return host_op("extract_jpeg_shape",
                   lambda c: np.array(_core.jpeg_shape(_bytes_of(c, "extract_jpeg_shape")), t.as_numpy_dtype),
                   contents, keep=True, native=("jpeg_shape", {"to": "i4" if t.name == "int32" else "i8"}))


def _decode_png(contents, channels, dtype):
    d = as_dtype(dtype)
    if d.name not in ("uint8", "uint16"):
        raise ValueError("[decode_png] dtype %s: valid are uint8 and uint16" % d.name)
    return _image_array(_core.decode_png(_bytes_of(contents, "decode_png"), int(channels), d.name == "uint16"))


def decode_png(contents, channels=0, dtype=uint8, name=None):
    """A PNG file's bytes -> uint8 (or uint16) [height, width, channels] (0: as stored, 1-4)."""
    native = None
    if isinstance(channels, numbers.Integral) and as_dtype(dtype).name in ("uint8", "uint16"):
        native = ("decode_png", {"channels": int(channels), "sixteen": as_dtype(dtype).name == "uint16"})
    return host_op("decode_png", _decode_png, contents, channels, dtype, keep=True, native=native)


def _decode_image(contents, channels, dtype, expand_animations):
    data = _bytes_of(contents, "decode_image")
    if _core.looks_like_png(data):
        return _decode_png(data, channels or 0, dtype)
    if _core.looks_like_jpeg(data):
        if as_dtype(dtype).name != "uint8":
            raise ValueError("[decode_image] a JPEG decodes to uint8, not %s" % as_dtype(dtype).name)
        return _decode_jpeg(data, channels or 0, "", True, 1)
    raise _core.DataError("[decode_image] %d bytes that are neither a JPEG nor a PNG image (GIF and BMP are not "
                          "decoded by kiln)" % len(data))


def decode_image(contents, channels=None, dtype=uint8, name=None, expand_animations=True):
    """A JPEG or PNG file's bytes (told apart by their signature) -> [height, width, channels]."""
    return host_op("decode_image", _decode_image, contents, channels, dtype, expand_animations, keep=True)


def _pixels8(image, op):
    x = np.asarray(image)
    if x.ndim == 2:
        x = x[..., None]
    if x.ndim != 3 or x.dtype != np.uint8:
        raise ValueError("[%s] takes a uint8 image [height, width, channels]; got %s of shape %s"
                         % (op, x.dtype, list(x.shape)))
    return np.ascontiguousarray(x)


def _encode_jpeg(image, quality, chroma_downsampling):
    x = _pixels8(image, "encode_jpeg")
    return _core.encode_jpeg(x.tobytes(), x.shape[0], x.shape[1], x.shape[2], int(quality), bool(chroma_downsampling))


def encode_jpeg(image, format="", quality=95, progressive=False, optimize_size=False,  # noqa: A002 (TF's name)
                chroma_downsampling=True, density_unit="in", x_density=300, y_density=300, xmp_metadata="",
                name=None):
    """A uint8 image [height, width, 1 or 3] -> the bytes of a baseline JPEG file (libjpeg-turbo),
    at TensorFlow's defaults: quality 95, 4:2:0 chroma, 300 dpi."""
    if format not in ("", "grayscale", "rgb"):
        raise ValueError("[encode_jpeg] format %r: valid are '', 'grayscale' and 'rgb'" % (format,))
    if progressive or optimize_size or density_unit != "in" or (x_density, y_density) != (300, 300) or xmp_metadata:
        unsupported("encode_jpeg(progressive, optimize_size, density or xmp_metadata other than the defaults)",
                    "kiln writes baseline JPEGs at 300 dpi")
    def run(img, q, chroma):
        want = {"grayscale": 1, "rgb": 3}.get(format)
        if want is not None and np.shape(img)[-1] != want:
            raise ValueError("[encode_jpeg] format %r takes images of %d channel(s); got shape %s"
                             % (format, want, list(np.shape(img))))
        return _encode_jpeg(img, q, chroma)
    return host_op("encode_jpeg", run, image, quality, chroma_downsampling, keep=True)


def encode_png(image, compression=-1, name=None):
    """A uint8 image [height, width, 1-4] -> the bytes of a PNG file (libpng)."""
    if compression != -1:
        unsupported("encode_png(compression=%r)" % (compression,), "kiln writes PNGs at libpng's default level")

    def run(img):
        x = _pixels8(img, "encode_png")
        return _core.encode_png(x.tobytes(), x.shape[0], x.shape[1], x.shape[2])
    return host_op("encode_png", run, image, keep=True)


# --- graph ops ----------------------------------------------------------------------------

def _image(image, op):
    t = convert_to_tensor(image, op=op)
    if len(t._shape) not in (3, 4):
        raise ValueError("[%s] takes an image [height, width, channels] or a batch of them [n, h, w, c]; got shape %s"
                         % (op, t._shape))
    return t


def _axes(t):
    """(height axis, width axis) of an image or a batch of images."""
    return (0, 1) if len(t._shape) == 3 else (1, 2)


def _same_dtype(y, like):
    d = narrow_dtype(like)
    return mark_narrow(y, d) if d is not None else y


def _reverse(t, axis):
    n = t._shape[axis]
    return _same_dtype(gather(t, np.arange(n - 1, -1, -1, dtype=np.int32), axis=axis), t)


def flip_left_right(image):
    t = _image(image, "flip_left_right")
    return _reverse(t, _axes(t)[1])


def flip_up_down(image):
    t = _image(image, "flip_up_down")
    return _reverse(t, _axes(t)[0])


def _host_flip(x, rng, axis_index):
    x = np.asarray(x)
    axis = (x.ndim - 3) + axis_index
    if x.ndim == 3:
        return np.flip(x, axis) if rng.random() < 0.5 else x  # a view: what takes it next copies
    mirror = rng.random(x.shape[0]) < 0.5
    return np.where(mirror.reshape(-1, 1, 1, 1), np.flip(x, axis), x)


def _random_flip(image, seed, axis_index, op):
    if isinstance(image, HostValue):  # a decoded image whose size may vary: flipped on the host
        return host_op(op, lambda x, rng: _host_flip(x, rng, axis_index), image, Random(seed), keep=True,
                       native=("random_flip", {"axis": axis_index}))
    t = _image(image, op)
    axis = _axes(t)[axis_index]
    flipped = _reverse(t, axis)
    if len(t._shape) == 3:  # one draw for the image
        mirror = random_uniform([], seed=seed) < 0.5
        cond = _core.broadcast_to(mirror, list(t._shape))
    else:  # one draw per image of the batch
        mirror = random_uniform([t._shape[0]], seed=seed) < 0.5
        cond = _core.broadcast_to(reshape(mirror, [t._shape[0], 1, 1, 1]), list(t._shape))
    return _same_dtype(where(cond, flipped, t), t)


def random_flip_left_right(image, seed=None):
    """Mirrors the image (each image of a batch) with probability 1/2."""
    return _random_flip(image, seed, 1, "random_flip_left_right")


def random_flip_up_down(image, seed=None):
    return _random_flip(image, seed, 0, "random_flip_up_down")


def _static_ints(values, op, what):
    if isinstance(values, Tensor):
        v = static_value(values)
        if v is None:
            unsupported("%s with a computed %s" % (op, what), "kiln's shapes are static: give numbers")
        values = v
    if isinstance(values, numbers.Integral):
        values = [values]
    return [int(v) for v in np.asarray(values).reshape(-1)]


def _box(image, box, op):
    """(tensor, height axis, width axis, height, width, offset h, offset w, target h, target w)."""
    t = _image(image, op)
    ha, wa = _axes(t)
    return (t, ha, wa, t._shape[ha], t._shape[wa]) + tuple(_static_ints(v, op, "box")[0] for v in box)


def _host_box(x, oh, ow, th, tw, op):
    x = np.asarray(x)
    lead = [0] * (x.ndim - 3)
    return host_slice(x, lead + [oh, ow, 0], [-1] * len(lead) + [th, tw, -1], op)


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    h = on_host_data(lambda x, a, b, c, d: _host_box(x, a, b, c, d, "crop_to_bounding_box"), image, offset_height,
                     offset_width, target_height, target_width)
    if h is not None:
        return h
    t, ha, wa, h, w, oh, ow, th, tw = _box(image, (offset_height, offset_width, target_height, target_width),
                                           "crop_to_bounding_box")
    if oh < 0 or ow < 0 or th < 1 or tw < 1 or oh + th > h or ow + tw > w:
        raise ValueError("[crop_to_bounding_box] box (offset %d, %d, size %d x %d) does not fit the %d x %d image"
                         % (oh, ow, th, tw, h, w))
    begin = [0] * len(t._shape)
    end = list(t._shape)
    begin[ha], begin[wa], end[ha], end[wa] = oh, ow, oh + th, ow + tw
    return _same_dtype(_core.slice(t, begin, end), t)


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    t, ha, wa, h, w, oh, ow, th, tw = _box(image, (offset_height, offset_width, target_height, target_width),
                                           "pad_to_bounding_box")
    if oh < 0 or ow < 0 or oh + h > th or ow + w > tw:
        raise ValueError("[pad_to_bounding_box] the %d x %d image at offset %d, %d does not fit %d x %d"
                         % (h, w, oh, ow, th, tw))
    low = [0] * len(t._shape)
    high = [0] * len(t._shape)
    low[ha], low[wa], high[ha], high[wa] = oh, ow, th - h - oh, tw - w - ow
    return _same_dtype(_core.pad(t, low, high), t)


def resize_image_with_crop_or_pad(image, target_height, target_width):
    """Centre-crops or zero-pads to the target size (TensorFlow's offsets)."""
    t = _image(image, "resize_image_with_crop_or_pad")
    th = _static_ints(target_height, "resize_image_with_crop_or_pad", "size")[0]
    tw = _static_ints(target_width, "resize_image_with_crop_or_pad", "size")[0]
    ha, wa = _axes(t)
    h, w = t._shape[ha], t._shape[wa]
    crop_h, crop_w = max(h - th, 0), max(w - tw, 0)
    t = crop_to_bounding_box(t, crop_h // 2, crop_w // 2, min(th, h), min(tw, w))
    pad_h, pad_w = max(th - h, 0), max(tw - w, 0)
    return pad_to_bounding_box(t, pad_h // 2, pad_w // 2, th, tw)


resize_with_crop_or_pad = resize_image_with_crop_or_pad


def central_crop(image, central_fraction):
    """The central `central_fraction` (0, 1] of the image, TensorFlow's offsets."""
    f = float(central_fraction)
    if not 0.0 < f <= 1.0:
        raise ValueError("[central_crop] central_fraction %r must be in (0, 1]" % (central_fraction,))
    h = on_host_data(lambda x: _host_central(x, f), image, native=("central_crop", [0], lambda: {"fraction": f}))
    if h is not None:
        return h
    t = _image(image, "central_crop")
    if f == 1.0:
        return t
    ha, wa = _axes(t)
    h, w = t._shape[ha], t._shape[wa]
    sh, sw = int((h - h * f) / 2), int((w - w * f) / 2)
    return crop_to_bounding_box(t, sh, sw, h - 2 * sh, w - 2 * sw)


def _host_central(x, f):
    x = np.asarray(x)
    h, w = x.shape[-3], x.shape[-2]
    sh, sw = int((h - h * f) / 2), int((w - w * f) / 2)
    return _host_box(x, sh, sw, h - 2 * sh, w - 2 * sw, "central_crop")


def _host_random_crop(x, size, rng):
    x = np.asarray(x)
    size = [int(v) for v in np.asarray(size).reshape(-1)]
    if len(size) != x.ndim or any(s < 1 or s > d for s, d in zip(size, x.shape)):
        raise ValueError("[random_crop] size %s must have one entry per axis of the value's shape %s, each from 1 to "
                         "that axis' size" % (size, list(x.shape)))
    begin = [int(rng.integers(0, d - s + 1)) for s, d in zip(size, x.shape)]
    return host_slice(x, begin, size, "random_crop")


def _fixed_ints(v):
    """v as a list of ints when it is known while tracing (numbers, a list of them, a
    constant tensor), else None."""
    v = _known_value(v)
    if isinstance(v, (HostValue, Tensor)) or (isinstance(v, (list, tuple)) and
                                               any(isinstance(x, (HostValue, Tensor)) for x in v)):
        return None
    return [int(x) for x in np.asarray(v).reshape(-1)]


def random_crop(value, size, seed=None, name=None):
    """A random window of `size` (one number per axis of value), at an offset drawn
    uniformly where the window fits."""
    if isinstance(value, HostValue):  # a decoded image whose size may vary: cropped on the host
        fixed = _fixed_ints(size)
        return host_op("random_crop", _host_random_crop, value, size, Random(seed), keep=True,
                       native=None if fixed is None else ("random_crop", {"size": fixed}))
    t = convert_to_tensor(value, op="random_crop")
    size = _static_ints(size, "random_crop", "size")
    if len(size) != len(t._shape) or any(s < 1 or s > d for s, d in zip(size, t._shape)):
        raise ValueError("[random_crop] size %s must have one entry per axis of the value's shape %s, each from 1 to "
                         "that axis' size" % (size, t._shape))
    out = t
    for axis, (s, d) in enumerate(zip(size, t._shape)):
        if s == d:
            continue
        offset = random_uniform([], minval=0, maxval=d - s + 1, dtype=int32, seed=seed)
        idx = _core.add(_core.broadcast_to(offset, [s]), range_(s, dtype=int32))
        out = gather(out, idx, axis=axis)
    return named(_same_dtype(out, t), name)


def per_image_standardization(image):
    """(image - mean) / max(stddev, 1 / sqrt(pixels)) over each image, in float32."""
    t = _image(image, "per_image_standardization")
    x = cast(t, float32)  # TensorFlow standardizes the values as they are, not scaled to [0, 1]
    axes = [len(t._shape) - 3, len(t._shape) - 2, len(t._shape) - 1]
    n = float(np.prod(t._shape[-3:]))
    mean = reduce_mean(x, axis=axes, keepdims=True)
    centred = x - mean
    var = reduce_mean(centred * centred, axis=axes, keepdims=True)
    std = _core.sqrt(var)
    adjusted = _core.maximum(std, _core.scalar_like(std, 1.0 / np.sqrt(n)))
    return centred / adjusted


def grayscale_to_rgb(images, name=None):
    """[..., 1] -> [..., 3]: the grey channel repeated."""
    t = _image(images, "grayscale_to_rgb")
    if t._shape[-1] != 1:
        raise ValueError("[grayscale_to_rgb] takes images with 1 channel (last dimension 1); got shape %s" % (t._shape,))
    return named(_same_dtype(concat([t, t, t], axis=len(t._shape) - 1), t), name)


def rgb_to_grayscale(images, name=None):
    """[..., 3] -> [..., 1]: ITU-R BT.601 luma (0.2989 R + 0.5870 G + 0.1140 B), computed in
    float32 and converted back to the images' dtype as TensorFlow does."""
    t = _image(images, "rgb_to_grayscale")
    if t._shape[-1] != 3:
        raise ValueError("[rgb_to_grayscale] takes images with 3 channels (last dimension 3); got shape %s" % (t._shape,))
    dtype = _dtype_of(t)
    x = convert_image_dtype(t, float32)
    weights = convert_to_tensor(np.array([[0.2989], [0.5870], [0.1140]], dtype=np.float32))
    flat = reshape(x, [-1, 3])
    grey = reshape(matmul(flat, weights), list(t._shape[:-1]) + [1])
    return named(convert_image_dtype(grey, dtype), name)


class ResizeMethod:
    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"


_METHOD_CODES = {0: "bilinear", 1: "nearest", 2: "bicubic", 3: "area"}


def _source_coord(i, scale, half_pixel):
    return (i + 0.5) * scale - 0.5 if half_pixel else i * scale


def _bilinear_matrix(n_in, n_out, align_corners, half_pixel):
    scale = (n_in - 1) / (n_out - 1) if align_corners and n_out > 1 else n_in / n_out
    m = np.zeros((n_out, n_in), np.float64)
    for i in range(n_out):
        x = _source_coord(i, scale, half_pixel)
        lo_f = np.floor(x)
        lo, hi = max(int(lo_f), 0), min(int(np.ceil(x)), n_in - 1)
        frac = x - lo_f
        m[i, lo] += 1 - frac
        m[i, hi] += frac
    return m.astype(np.float32)


def _scale(n_in, n_out, align_corners):
    """TensorFlow's CalculateResizeScale, in float32 as it computes it."""
    if align_corners and n_out > 1:
        return np.float32(n_in - 1) / np.float32(n_out - 1)
    return np.float32(n_in) / np.float32(n_out)


_TABLE = 1024  # TensorFlow's bicubic weights are tabulated at 1/1024 of a pixel


@functools.lru_cache(maxsize=2)
def _cubic_table(a):
    x = np.arange(_TABLE + 1, dtype=np.float64) / _TABLE
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    x1 = x + 1.0
    far = ((a * x1 - 5 * a) * x1 + 8 * a) * x1 - 4 * a
    return near.astype(np.float32), far.astype(np.float32)


def _bicubic_matrix(n_in, n_out, align_corners, half_pixel):
    """TensorFlow's resize_bicubic along one axis as a matrix: Keys' cubic with a = -0.75
    and edge taps clamped (TF 1.x), or with a = -0.5 and taps outside the image dropped and
    the rest renormalised (half_pixel_centers)."""
    near, far = _cubic_table(-0.5 if half_pixel else -0.75)
    scale = _scale(n_in, n_out, align_corners)
    m = np.zeros((n_out, n_in), np.float64)
    for i in range(n_out):
        x = (np.float32(i) + np.float32(0.5)) * scale - np.float32(0.5) if half_pixel else np.float32(i) * scale
        lo = int(np.floor(x))
        k = int(np.rint((x - lo) * _TABLE))
        taps = [(lo - 1, far[k]), (lo, near[k]), (lo + 1, near[_TABLE - k]), (lo + 2, far[_TABLE - k])]
        if half_pixel:
            taps = [(j, w) for j, w in taps if 0 <= j < n_in]
            total = sum(float(w) for _, w in taps)
            taps = [(j, float(w) / total) for j, w in taps]
        for j, w in taps:
            m[i, min(max(j, 0), n_in - 1)] += float(w)
    return m.astype(np.float32)


def _area_matrix(n_in, n_out, align_corners, half_pixel):
    """TensorFlow's resize_area along one axis: each output cell averages the input cells
    it covers, partial cells weighted by the part covered."""
    if half_pixel:
        unsupported("resize_area(half_pixel_centers=True)", "TensorFlow's resize_area has no half-pixel centres")
    scale = float(_scale(n_in, n_out, align_corners))
    m = np.zeros((n_out, n_in), np.float64)
    for i in range(n_out):
        lo, hi = i * scale, (i + 1) * scale
        for j in range(int(np.floor(lo)), int(np.ceil(hi))):
            if j < lo:
                w = scale if j + 1 > hi else j + 1 - lo
            else:
                w = hi - j if j + 1 > hi else 1.0
            m[i, min(max(j, 0), n_in - 1)] += w / scale
    return m.astype(np.float32)


_MATRICES = {"bilinear": lambda n_in, n_out, a, h: _bilinear_matrix(n_in, n_out, a, h),
             "bicubic": _bicubic_matrix, "area": _area_matrix}


@functools.lru_cache(maxsize=256)
def _matrix(method, n_in, n_out, align_corners, half_pixel):
    return _MATRICES[method](n_in, n_out, align_corners, half_pixel)


def _nearest_index(n_in, n_out, align_corners, half_pixel):
    scale = (n_in - 1) / (n_out - 1) if align_corners and n_out > 1 else n_in / n_out
    out = []
    for i in range(n_out):
        x = (i + 0.5) * scale if half_pixel else i * scale
        j = int(np.round(x)) if align_corners else int(np.floor(x))
        out.append(min(max(j, 0), n_in - 1))
    return np.array(out, np.int32)


def _resize(images, size, method, align_corners, half_pixel_centers, op):
    method = _METHOD_CODES.get(method, method)
    if method not in ("bilinear", "nearest", "bicubic", "area"):
        raise ValueError("[%s] method %r: valid are ResizeMethod.BILINEAR, NEAREST_NEIGHBOR, BICUBIC and AREA"
                         % (op, method))
    if _on_host(images, size):
        native = None
        if method in ("bilinear", "nearest") and isinstance(images, HostValue) and not _holds_host(size):
            attrs = _resize_attrs(_check_size(_static_ints(size, op, "size"), op), method, align_corners,
                                  half_pixel_centers)
            native = ("resize", dict(attrs, op=op))
        return host_op(op, lambda x, s: resize_on_host(x, s, method, align_corners, half_pixel_centers, op), images,
                       size, keep=True, native=native)
    t = _image(images, op)
    size = _check_size(_static_ints(size, op, "size"), op)
    ha, wa = _axes(t)
    (h, w), (oh, ow) = (t._shape[ha], t._shape[wa]), size
    if method == "nearest":
        out = t
        if oh != h:
            out = gather(out, _nearest_index(h, oh, align_corners, half_pixel_centers), axis=ha)
        if ow != w:
            out = gather(out, _nearest_index(w, ow, align_corners, half_pixel_centers), axis=wa)
        return _same_dtype(out, t)
    x = cast(t, float32)
    batched = len(t._shape) == 4
    if not batched:
        x = reshape(x, [1] + list(t._shape))
    n, c = x._shape[0], x._shape[3]
    xs = transpose(x, [0, 3, 1, 2])  # [n, c, h, w]
    rh = convert_to_tensor(np.broadcast_to(_matrix(method, h, oh, align_corners, half_pixel_centers), (n, c, oh, h)))
    rw = convert_to_tensor(np.broadcast_to(_matrix(method, w, ow, align_corners, half_pixel_centers), (n, c, ow, w)))
    y = _core.matmul(_core.matmul(rh, xs, False, False), rw, False, True)  # [n, c, oh, ow]
    y = transpose(y, [0, 2, 3, 1])
    return y if batched else reshape(y, [oh, ow, c])


def _resize_attrs(size, method, align_corners, half_pixel_centers):
    """A bilinear or nearest host resize as src/data/host_ops/resize.h takes it (both loops)."""
    return {"size": list(size), "method": method, "align_corners": bool(align_corners),
            "half_pixel_centers": bool(half_pixel_centers)}


def _check_size(size, op):
    if len(size) != 2 or min(size) < 1:
        raise ValueError("[%s] size %s must be [new_height, new_width], both >= 1" % (op, size))
    return size


def _on_host(images, size):
    """Whether a resize runs on the host: its image is a host value of a map function (a
    decoded image, whose size may change from element to element) or its size is one."""
    return isinstance(images, HostValue) or _holds_host(size)


def _holds_host(x):
    if isinstance(x, (list, tuple)):
        return any(_holds_host(v) for v in x)
    return isinstance(x, HostValue)


def resize_on_host(image, size, method, align_corners, half_pixel_centers, op="resize_images"):
    """A resize of an image (or batch) held on the host, with TensorFlow's arithmetic:
    bilinear interpolates along the width, then the height, in float32; bicubic and area
    are products with the matrices the graph path uses; nearest keeps the dtype."""
    x = np.asarray(image)
    if x.ndim not in (3, 4):
        raise ValueError("[%s] takes an image [height, width, channels] or a batch of them; got shape %s"
                         % (op, x.shape))
    oh, ow = _check_size([int(v) for v in np.asarray(size).reshape(-1)], op)
    h, w = x.shape[-3], x.shape[-2]
    if method in ("bilinear", "nearest"):  # src/data/host_ops/resize.h, as the C++ element loop runs it
        return _core.resize_on_host(np.ascontiguousarray(x), _resize_attrs([oh, ow], method, align_corners,
                                                                           half_pixel_centers), op)
    x = x.astype(np.float32)
    lead = x.shape[:-3]  # bicubic and area: the interpolation as two products with its matrices
    rh = _matrix(method, h, oh, bool(align_corners), bool(half_pixel_centers))
    rw = _matrix(method, w, ow, bool(align_corners), bool(half_pixel_centers))
    t = np.matmul(rh, x.reshape(lead + (h, -1))).reshape(lead + (oh, w, x.shape[-1]))
    return np.matmul(rw, t)


def resize_images(images, size, method=ResizeMethod.BILINEAR, align_corners=False, preserve_aspect_ratio=False,
                  name=None):
    """TensorFlow 1.x's resize (align_corners=False, no half-pixel centres): bilinear gives
    float32, nearest keeps the dtype."""
    if preserve_aspect_ratio:
        unsupported("resize_images(preserve_aspect_ratio=True)", "give the size to resize to")
    return named(_resize(images, size, method, bool(align_corners), False, "resize_images"), name)


resize = resize_images


def resize_bilinear(images, size, align_corners=False, half_pixel_centers=False, name=None):
    return named(_resize(images, size, "bilinear", bool(align_corners), bool(half_pixel_centers), "resize_bilinear"),
                 name)


def resize_bicubic(images, size, align_corners=False, half_pixel_centers=False, name=None):
    return named(_resize(images, size, "bicubic", bool(align_corners), bool(half_pixel_centers), "resize_bicubic"),
                 name)


def resize_area(images, size, align_corners=False, name=None):
    return named(_resize(images, size, "area", bool(align_corners), False, "resize_area"), name)


def resize_nearest_neighbor(images, size, align_corners=False, half_pixel_centers=False, name=None):
    return named(_resize(images, size, "nearest", bool(align_corners), bool(half_pixel_centers),
                         "resize_nearest_neighbor"), name)


from kiln._src.distorted_box import sample_distorted_bounding_box, sample_distorted_bounding_box_v2  # noqa: E402,F401
from kiln._src.image_colour import (  # noqa: E402,F401
    adjust_brightness,
    adjust_contrast,
    adjust_hue,
    adjust_saturation,
    hsv_to_rgb,
    random_brightness,
    random_contrast,
    random_hue,
    random_saturation,
    rgb_to_hsv,
)
