"""tensorflow.python.framework.dtypes: element types."""
# ruff: noqa: F401, F403, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln import (
    DType,
    as_dtype,
    bfloat16,
    bool,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    string,
    uint8,
    uint16,
)
from kiln._src.unsupported import refuse_other_names

__getattr__ = refuse_other_names('tensorflow.python.framework.dtypes', "kiln's mirror of it holds the names kiln implements, listed in python/kiln/python/framework/dtypes.py")
