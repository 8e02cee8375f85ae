"""tensorflow.python.platform.flags: tf.flags."""
# ruff: noqa: F401, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln._src.unsupported import refuse_other_names
from kiln.flags import (
    FLAGS,
    DEFINE_bool,
    DEFINE_boolean,
    DEFINE_enum,
    DEFINE_float,
    DEFINE_integer,
    DEFINE_list,
    DEFINE_multi_string,
    DEFINE_string,
    Error,
    IllegalFlagValueError,
    UnrecognizedFlagError,
    mark_flag_as_required,
    mark_flags_as_required,
)

__getattr__ = refuse_other_names('tensorflow.python.platform.flags', "kiln's mirror of it holds the names kiln implements, listed in python/kiln/python/platform/flags.py")
