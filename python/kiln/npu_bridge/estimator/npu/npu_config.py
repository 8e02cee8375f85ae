"""The seed's npu_config module: ExperimentalConfig and NPURunConfig."""
from kiln._src.config import ExperimentalConfig, NPURunConfig, RunConfig  # noqa: F401
