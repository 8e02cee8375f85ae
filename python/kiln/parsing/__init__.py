"""tf.io's parsing and decoding ops of input pipelines. The names; their code is in
kiln._src.parsing."""
# ruff: noqa: F401, A004
# (a package of names: each is imported to be re-exported, some shadowing builtins as TensorFlow's do)
from kiln._src.parsing import (
    FixedLenFeature,
    FixedLenSequenceFeature,
    SparseTensorValue,
    VarLenFeature,
    as_dtype,
    decode_raw,
    host_op,
    parse_example,
    parse_single_example,
    sparse_to_dense,
)
