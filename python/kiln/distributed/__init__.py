"""tf.distributed, TensorFlow 1.x's names; their code is in kiln._src.distributed."""
# ruff: noqa: F401, A004
# (a package of names: each is imported to be re-exported, some shadowing builtins as TensorFlow's do)
from kiln._src.distributed import (
    is_chief,
    local_size,
    rank,
    size,
    stats,
)
