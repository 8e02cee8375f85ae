"""tf.app.flags / tf.flags. The names; their code is in kiln._src.flags."""
# ruff: noqa: F401, A004
# (a package of names: each is imported to be re-exported, some shadowing builtins as TensorFlow's do)
from kiln._src.flags import (
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
