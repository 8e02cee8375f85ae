"""kiln.npu_bridge.estimator: npu (npu_config, npu_hook, npu_estimator, npu_optimizer) and npu_ops."""
from kiln.npu_bridge.estimator import npu, npu_ops  # noqa: F401
