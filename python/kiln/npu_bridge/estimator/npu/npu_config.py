"""The seed's npu_config module: ExperimentalConfig and NPURunConfig."""
from ....config import ExperimentalConfig, NPURunConfig, RunConfig  # noqa: F401
