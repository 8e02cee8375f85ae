"""kiln's element types under TensorFlow's names (kiln.float32, kiln.int32, ...)."""
import numpy as np


class DType:
    """An element type: `name` as TensorFlow spells it, `kiln` as kiln's IR does."""

    def __init__(self, name, kiln, numpy):
        self.name = name
        self.kiln = kiln
        self.as_numpy_dtype = numpy

    @property
    def is_floating(self):
        return self.kiln in ("f32", "f16", "bf16")

    @property
    def is_integer(self):
        return self.kiln in ("i32", "i64")

    def __repr__(self):
        return "kiln." + self.name

    def __eq__(self, other):
        try:
            return as_dtype(other).kiln == self.kiln
        except (TypeError, ValueError):
            return False

    def __hash__(self):
        return hash(self.kiln)


float32 = DType("float32", "f32", np.float32)
float16 = DType("float16", "f16", np.float16)
bfloat16 = DType("bfloat16", "bf16", np.float32)  # numpy has no bfloat16: values come back as float32
int32 = DType("int32", "i32", np.int32)
int64 = DType("int64", "i64", np.int64)
bool = DType("bool", "bool", np.bool_)  # noqa: A001 (TensorFlow's name)

_ALL = (float32, float16, bfloat16, int32, int64, bool)
_BY_KILN = {d.kiln: d for d in _ALL}
_BY_NAME = {d.name: d for d in _ALL}


def from_kiln(code):
    return _BY_KILN[code]


def as_dtype(x):
    """A DType from a DType, its name ('float32'), kiln's code ('f32') or a numpy dtype."""
    if isinstance(x, DType):
        return x
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
