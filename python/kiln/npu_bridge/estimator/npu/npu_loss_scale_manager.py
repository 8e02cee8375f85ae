"""npu_bridge.estimator.npu.npu_loss_scale_manager: the adapter's module of the loss-scale
managers (their code is kiln.npu_bridge.estimator.npu.npu_optimizer's)."""
from kiln.npu_bridge.estimator.npu.npu_optimizer import ExponentialUpdateLossScaleManager, FixedLossScaleManager

__all__ = ["ExponentialUpdateLossScaleManager", "FixedLossScaleManager"]
