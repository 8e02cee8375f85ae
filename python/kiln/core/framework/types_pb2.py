"""tensorflow.core.framework.types_pb2: the DataType enum's numbers, as TensorFlow's protos
(and checkpoints) spell element types; kiln's dtypes hold the ones kiln computes in."""
from kiln._src.unsupported import refuse_other_names

DT_INVALID = 0
DT_FLOAT = 1
DT_DOUBLE = 2
DT_INT32 = 3
DT_UINT8 = 4
DT_INT16 = 5
DT_INT8 = 6
DT_STRING = 7
DT_COMPLEX64 = 8
DT_INT64 = 9
DT_BOOL = 10
DT_BFLOAT16 = 14
DT_UINT16 = 17
DT_HALF = 19

__getattr__ = refuse_other_names("tensorflow.core.framework.types_pb2", "kiln's mirror of it holds the DataType numbers")
