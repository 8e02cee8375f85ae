"""tf.app. The names; their code is in kiln._src.app."""
# ruff: noqa: F401, A004
# (a package of names: each is imported to be re-exported, some shadowing builtins as TensorFlow's do)
from kiln._src.app import (
    flags,
    run,
)
