"""`from kiln.npu_bridge.npu_init import *`: the names the seed's scripts use."""
from ..config import ExperimentalConfig, NPURunConfig, RunConfig  # noqa: F401
from ..estimator import Estimator, EstimatorSpec, ModeKeys, NPUEstimator  # noqa: F401
from ..train import TellMeStepOrLossHook  # noqa: F401
from .estimator import npu  # noqa: F401
from .estimator.npu import npu_config, npu_estimator, npu_hook  # noqa: F401

__all__ = ["ExperimentalConfig", "NPURunConfig", "RunConfig", "NPUEstimator", "Estimator", "EstimatorSpec", "ModeKeys",
           "TellMeStepOrLossHook", "npu_config", "npu_hook", "npu_estimator"]
