"""ExperimentalConfig and RunConfig (the seed's NPURunConfig) with the seed's and TensorFlow's
keyword arguments. The names; their code is in kiln._src.config."""
# ruff: noqa: F401, A004
# (a package of names: each is imported to be re-exported, some shadowing builtins as TensorFlow's do)
from kiln._src.config import (
    ExperimentalConfig,
    NPURunConfig,
    RunConfig,
)
