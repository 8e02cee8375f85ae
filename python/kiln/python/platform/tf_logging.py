"""tensorflow.python.platform.tf_logging: tf.logging."""
# ruff: noqa: F401, A004
# (a mirror of a TensorFlow module's path: each name is imported to be re-exported)
from kiln._src.unsupported import refuse_other_names
from kiln.logging import (
    DEBUG,
    ERROR,
    FATAL,
    INFO,
    WARN,
    WARNING,
    debug,
    error,
    fatal,
    get_verbosity,
    info,
    log,
    log_every_n,
    log_first_n,
    set_verbosity,
    warn,
    warning,
)

__getattr__ = refuse_other_names('tensorflow.python.platform.tf_logging', "kiln's mirror of it holds the names kiln implements, listed in python/kiln/python/platform/tf_logging.py")
