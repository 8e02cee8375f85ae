"""`from kiln.npu_bridge.npu_init import *`: the names the seed's scripts use (the NPU
run config and estimator, the hooks, the optimizer wrappers and loss-scale managers,
npu_ops, and `os`, which scripts of the Ascend ModelZoo use through this import)."""
import os  # noqa: F401 (scripts rely on the star import providing it)

from ..config import ExperimentalConfig, NPURunConfig, RunConfig  # noqa: F401
from ..estimator import Estimator, EstimatorSpec, ModeKeys, NPUEstimator  # noqa: F401
from ..train import TellMeStepOrLossHook  # noqa: F401
from .estimator import npu, npu_ops  # noqa: F401
from .estimator.npu import npu_config, npu_estimator, npu_hook, npu_optimizer  # noqa: F401
from .estimator.npu.npu_optimizer import (ExponentialUpdateLossScaleManager, FixedLossScaleManager,  # noqa: F401
                                          NPUDistributedOptimizer, NPULossScaleOptimizer,
                                          npu_distributed_optimizer_wrapper, npu_tf_optimizer)


def npu_run_config_init(run_config=None, **kwargs):
    """The seed's helper: the run config itself (kiln's RunConfig is the NPURunConfig)."""
    return run_config if run_config is not None else NPURunConfig(**kwargs)


def npu_hooks_append(hooks_list=()):
    """The seed's helper: the hooks themselves (kiln needs no NPU hooks)."""
    return list(hooks_list)


def npu_config_proto(config_proto=None):
    from .. import ConfigProto
    return config_proto if config_proto is not None else ConfigProto()


__all__ = ["os", "ExperimentalConfig", "NPURunConfig", "RunConfig", "NPUEstimator", "Estimator", "EstimatorSpec",
           "ModeKeys", "TellMeStepOrLossHook", "npu_config", "npu_hook", "npu_estimator", "npu_optimizer", "npu_ops",
           "NPUDistributedOptimizer", "NPULossScaleOptimizer", "FixedLossScaleManager",
           "ExponentialUpdateLossScaleManager", "npu_tf_optimizer", "npu_distributed_optimizer_wrapper",
           "npu_run_config_init", "npu_hooks_append", "npu_config_proto"]
