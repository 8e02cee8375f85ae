"""tf.logging, TensorFlow 1.x's names; their code is in kiln._src.tf_logging."""
# ruff: noqa: F401, A004
# (a package of names: each is imported to be re-exported, some shadowing builtins as TensorFlow's do)
from kiln._src.tf_logging import (
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
