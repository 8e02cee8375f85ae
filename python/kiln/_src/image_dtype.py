"""tf.image.convert_image_dtype: integers <-> floats as TensorFlow converts images, on the
host for a decoded image still there (a HostValue), else in the graph; below the other
image ops, which convert to float32 and back around their arithmetic."""
import functools

import numpy as np

from kiln import _core
from kiln._src.dtypes import as_dtype, float32
from kiln._src.graph import cast, convert_to_tensor, named, narrow_dtype, unsupported
from kiln._src.map_function import HostValue, host_op


def _dtype_of(t):
    """The dtype a tensor stands for: its narrow one (uint8 held in int32) if it has one."""
    return narrow_dtype(t) or as_dtype(t._dtype)


_INT_MAX = {"uint8": 255, "int8": 127, "uint16": 65535, "int16": 32767, "int32": 2**31 - 1}
_HOST_FLOATS = ("float16", "float32")


def _host_convertible(src, dst, saturate):
    """Whether convert_image_dtype has a host form for src -> dst: the graph's arithmetic
    exactly (integers to floats, floats to floats, floats to integers when saturated;
    an unsaturated out-of-range float has no one right integer)."""
    if src.name == "string" or dst.name not in _HOST_FLOATS + tuple(_INT_MAX):
        return False
    if src.name in _HOST_FLOATS:
        return dst.name in _HOST_FLOATS or (saturate and dst.name != "int32")
    return src.name in _INT_MAX and dst.name in _HOST_FLOATS


def _host_convert(x, dst, saturate):
    """convert_image_dtype on a host image, in float32 as the graph form computes."""
    x = np.asarray(x)
    out = np.dtype(dst.name)
    if x.dtype == out:
        return x
    if x.dtype.kind in "iu":
        return (x.astype(np.float32) * np.float32(1.0 / _INT_MAX[x.dtype.name])).astype(out, copy=False)
    if out.kind == "f":
        return x.astype(out)
    y = x.astype(np.float32)
    y = np.clip(y, np.float32(0.0), np.float32(1.0))  # saturate (the only float -> integer host form)
    return (y * np.float32(_INT_MAX[out.name] + 0.5)).astype(out)


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """Integers <-> floats as TensorFlow converts them: integers map [0, MAX] to [0, 1];
    floats scale by MAX + 0.5 on the way back (uint8: 255.5), truncated. A decoded image
    still on the host (a HostValue) is converted there, so the crops and flips after it
    stay on the host too."""
    if isinstance(image, HostValue) and _host_convertible(image.dtype, as_dtype(dtype), saturate):
        native = ("convert_image", {"to": "f4"}) if as_dtype(dtype).name == "float32" else None
        return host_op("convert_image_dtype", functools.partial(_host_convert, dst=as_dtype(dtype), saturate=saturate),
                       image, keep=True, native=native)
    t = convert_to_tensor(image, op="convert_image_dtype")
    src, dst = _dtype_of(t), as_dtype(dtype)
    if src.name == dst.name:
        return t
    int_max = _INT_MAX
    if src.is_floating and dst.is_floating:
        return named(cast(t, dst), name)
    if not src.is_floating and dst.is_floating:
        if src.name not in int_max:
            unsupported("convert_image_dtype from %s" % src.name, "kiln converts uint8, int8, uint16, int16, int32")
        return named(cast(t, float32) * (1.0 / int_max[src.name]) if dst.name == "float32" else
                     cast(cast(t, float32) * (1.0 / int_max[src.name]), dst), name)
    if src.is_floating and not dst.is_floating:
        if dst.name not in int_max or dst.name == "int32":
            unsupported("convert_image_dtype to %s" % dst.name, "kiln converts floats to uint8, int8, uint16, int16")
        x = cast(t, float32)
        if saturate:
            x = _core.maximum(_core.minimum(x, _core.scalar_like(x, 1.0)), _core.scalar_like(x, 0.0))
        return named(cast(x * (int_max[dst.name] + 0.5), dst), name)
    unsupported("convert_image_dtype between integer types (%s -> %s)" % (src.name, dst.name),
                "convert to float32 first")
