"""kiln's element types under TensorFlow's names (kiln.float32, kiln.int32, ...)."""
import builtins

import numpy as np

from kiln._src.unsupported import unsupported


class DType:
    """An element type: `name` as TensorFlow spells it, `kiln` as kiln's IR does."""

    def __init__(self, name, kiln, numpy, wrap=None, why=None):
        self.name = name
        self._kiln = kiln
        self.as_numpy_dtype = numpy
        self.wrap = wrap  # (low, high): a narrow integer type held in int32, cast with wrap-around
        self._why = why   # a type kiln's graphs do not hold: why

    @property
    def kiln(self):
        if self._kiln is None:
            unsupported("%s tensors in the graph" % self.name, self._why)
        return self._kiln

    @property
    def is_floating(self):
        return self._kiln in ("f32", "f16", "bf16") or self.name == "float64"

    @property
    def is_integer(self):
        return self._kiln in ("i32", "i64") and self.name not in ("bool",)

    @property
    def is_unsigned(self):
        return self.name.startswith("uint")

    @property
    def min(self):
        return self.wrap[0] if self.wrap else None

    @property
    def max(self):
        return self.wrap[1] if self.wrap else None

    def __repr__(self):
        return "kiln." + self.name

    def __eq__(self, other):
        try:
            o = as_dtype(other)
        except (TypeError, ValueError):
            return False
        return o.name == self.name or (o._kiln == self._kiln and o.wrap is None and self.wrap is None and
                                       o._kiln is not None)

    def __hash__(self):
        return hash(self.name)


float32 = DType("float32", "f32", np.float32)
float16 = DType("float16", "f16", np.float16)
bfloat16 = DType("bfloat16", "bf16", np.float32)  # numpy has no bfloat16: values come back as float32
int32 = DType("int32", "i32", np.int32)
int64 = DType("int64", "i64", np.int64)
bool = DType("bool", "bool", np.bool_)  # noqa: A001 (TensorFlow's name)
# Narrow integers are held in int32; a cast to them wraps around as TensorFlow's does.
int8 = DType("int8", "i32", np.int8, wrap=(-128, 127))
uint8 = DType("uint8", "i32", np.uint8, wrap=(0, 255))
int16 = DType("int16", "i32", np.int16, wrap=(-32768, 32767))
uint16 = DType("uint16", "i32", np.uint16, wrap=(0, 65535))
float64 = DType("float64", None, np.float64, why="kiln computes in float32 (and float16/bfloat16): cast to float32")
string = DType("string", None, np.object_, why="strings live in kiln's input pipelines (kiln.data), not in graphs")

_ALL = (float32, float16, bfloat16, int32, int64, bool, int8, uint8, int16, uint16, float64, string)
_BY_KILN = {d._kiln: d for d in (float32, float16, bfloat16, int32, int64, bool)}
_BY_NAME = {d.name: d for d in _ALL}
_BY_NAME.update(half=float16, float=float32, double=float64)  # TensorFlow's older names, as tf.placeholder("float")


def from_kiln(code):
    return _BY_KILN[code]


def as_dtype(x):
    """A DType from a DType, its name ('float32', or TensorFlow's 'float', 'half', 'double'),
    kiln's code ('f32'), a numpy dtype, or Python's float and bool (float32 and bool, as
    TensorFlow's as_dtype)."""
    if isinstance(x, DType):
        return x
    if x is builtins.float or x is builtins.bool:
        return float32 if x is builtins.float else bool
    if isinstance(x, str):
        if x in _BY_NAME:
            return _BY_NAME[x]
        if x in _BY_KILN:
            return _BY_KILN[x]
    else:
        try:
            name = np.dtype(x).name
        except TypeError:
            name = None
        if name in _BY_NAME:
            return _BY_NAME[name]
    raise TypeError("dtype %r is not one kiln has; valid: %s" % (x, ", ".join(d.name for d in _ALL)))
