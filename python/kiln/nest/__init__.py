"""tf.nest (tensorflow.python.util.nest). The names; their code is in kiln._src.nest."""
# ruff: noqa: F401, A004
# (a package of names: each is imported to be re-exported, some shadowing builtins as TensorFlow's do)
from kiln._src.nest import (
    TensorShape,
    assert_same_structure,
    flatten,
    is_nested,
    is_sequence,
    map_structure,
    pack_sequence_as,
)
