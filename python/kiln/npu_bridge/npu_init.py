"""`from kiln.npu_bridge.npu_init import *`: the names the seed's scripts use (the NPU
run config and estimator, the hooks, the optimizer wrappers and loss-scale managers,
npu_ops, and `os`, which scripts of the Ascend ModelZoo use through this import)."""
import os

from kiln import ConfigProto
from kiln._src.config import ExperimentalConfig, NPURunConfig, RunConfig
from kiln._src.estimator import Estimator, EstimatorSpec, ModeKeys, NPUEstimator
from kiln._src.train import TellMeStepOrLossHook
from kiln.npu_bridge.estimator import npu, npu_ops  # noqa: F401
from kiln.npu_bridge.estimator.npu import npu_config, npu_estimator, npu_hook, npu_optimizer

from .estimator.npu.npu_optimizer import (
    ExponentialUpdateLossScaleManager,
    FixedLossScaleManager,
    NPUDistributedOptimizer,
    NPULossScaleOptimizer,
    npu_distributed_optimizer_wrapper,
    npu_tf_optimizer,
)


def npu_run_config_init(run_config=None, **kwargs):
    """The seed's helper: the run config itself (kiln's RunConfig is the NPURunConfig)."""
    return run_config if run_config is not None else NPURunConfig(**kwargs)


def npu_hooks_append(hooks_list=()):
    """The seed's helper: the hooks themselves (kiln needs no NPU hooks)."""
    return list(hooks_list)


def npu_config_proto(config_proto=None):
    return config_proto if config_proto is not None else ConfigProto()


__all__ = ["os", "ExperimentalConfig", "NPURunConfig", "RunConfig", "NPUEstimator", "Estimator", "EstimatorSpec",
           "ModeKeys", "TellMeStepOrLossHook", "npu_config", "npu_hook", "npu_estimator", "npu_optimizer", "npu_ops",
           "NPUDistributedOptimizer", "NPULossScaleOptimizer", "FixedLossScaleManager",
           "ExponentialUpdateLossScaleManager", "npu_tf_optimizer", "npu_distributed_optimizer_wrapper",
           "npu_run_config_init", "npu_hooks_append", "npu_config_proto"]
