"""`from kiln.npu_bridge.npu_init import *`: the names the seed's scripts use (the NPU
run config and estimator, the hooks, the optimizer wrappers and loss-scale managers,
npu_ops, and `os`, which scripts of the Ascend ModelZoo use through this import)."""
import os

from kiln import ConfigProto, GraphOptions, OptimizerOptions, RewriterConfig, Session, no_op
from kiln._src import distributed as _distributed
from kiln._src.config import ExperimentalConfig, NPURunConfig, RunConfig
from kiln._src.estimator import Estimator, EstimatorSpec, ModeKeys, NPUEstimator
from kiln._src.session_config import with_cpu_settings
from kiln._src.train import TellMeStepOrLossHook
from kiln.npu_bridge.estimator import npu, npu_ops  # noqa: F401
from kiln.npu_bridge.estimator.npu import npu_config, npu_estimator, npu_hook, npu_optimizer, util

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
    """The adapter's helper: config_proto (or a new ConfigProto) with soft placement, no
    device log, no remapping and no XLA, which kiln's Session does anyway (it warns about
    none of them). The NpuOptimizer's options go in a custom optimizer the script adds."""
    return with_cpu_settings(config_proto if isinstance(config_proto, ConfigProto) else ConfigProto())


def npu_session_config_init(session_config=None):
    """npu_config_proto() with an NpuOptimizer custom optimizer added (its parameter_map empty)."""
    config = session_config if isinstance(session_config, ConfigProto) else ConfigProto()
    config.graph_options.rewrite_options.custom_optimizers.add().name = "NpuOptimizer"
    return with_cpu_settings(config)


def npu_graph_options(graph_options=None):
    options = graph_options if isinstance(graph_options, GraphOptions) else GraphOptions()
    options.optimizer_options.global_jit_level = OptimizerOptions.OFF
    return options


def npu_optimizer_options(optimizer_options=None):
    options = optimizer_options if isinstance(optimizer_options, OptimizerOptions) else OptimizerOptions()
    options.global_jit_level = OptimizerOptions.OFF
    return options


def init_resource():
    """The adapter's device set-up for sess.run scripts: (a Session with an NpuOptimizer
    config, the op that shuts the device down). kiln has no device to open: the op does
    nothing, and the ranks are mpirun's (get_npu_rank_id, get_npu_rank_size)."""
    util.global_dict_init()
    util.set_value("npu_rank_id", get_npu_rank_id())
    util.set_value("npu_local_rank_id", get_npu_local_rank_id())
    util.set_value("npu_rank_size", get_npu_rank_size())
    return Session(config=npu_session_config_init()), no_op(name="npu_shutdown")


def shutdown_resource(sess, npu_shutdown):
    sess.run(npu_shutdown)


def close_session(sess):
    sess.close()


def get_npu_rank_id():
    return _distributed.rank()


def get_npu_local_rank_id():
    """This rank's place among the ranks of its host, for mpirun's default placement (each
    host's ranks numbered consecutively, the same count on every host)."""
    return _distributed.rank() % max(1, _distributed.local_size())


def get_npu_rank_size():
    return _distributed.size()


__all__ = ["os", "ExperimentalConfig", "NPURunConfig", "RunConfig", "NPUEstimator", "Estimator", "EstimatorSpec",
           "ModeKeys", "TellMeStepOrLossHook", "util", "npu_config", "npu_hook", "npu_estimator", "npu_optimizer", "npu_ops",
           "NPUDistributedOptimizer", "NPULossScaleOptimizer", "FixedLossScaleManager",
           "ExponentialUpdateLossScaleManager", "npu_tf_optimizer", "npu_distributed_optimizer_wrapper",
           "npu_run_config_init", "npu_hooks_append", "npu_config_proto", "npu_session_config_init",
           "npu_graph_options", "npu_optimizer_options", "init_resource", "shutdown_resource", "close_session",
           "get_npu_rank_id", "get_npu_local_rank_id", "get_npu_rank_size", "RewriterConfig", "ConfigProto"]
