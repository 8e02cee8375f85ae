"""npu_bridge.estimator.npu.npu_loss_scale_optimizer: the adapter's module of NPULossScaleOptimizer
(its code is kiln.npu_bridge.estimator.npu.npu_optimizer's)."""
from kiln.npu_bridge.estimator.npu.npu_optimizer import NPULossScaleOptimizer

__all__ = ["NPULossScaleOptimizer"]
