"""tensorflow.python.util.nest: tf.nest."""
# ruff: noqa: F401, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln._src.unsupported import refuse_other_names
from kiln.nest import (
    TensorShape,
    assert_same_structure,
    flatten,
    is_nested,
    is_sequence,
    map_structure,
    pack_sequence_as,
)

__getattr__ = refuse_other_names('tensorflow.python.util.nest', "kiln's mirror of it holds the names kiln implements, listed in python/kiln/python/util/nest.py")
