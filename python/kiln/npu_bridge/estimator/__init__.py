"""kiln.npu_bridge.estimator: npu (npu_config, npu_hook, npu_estimator, npu_optimizer) and npu_ops."""
from . import npu, npu_ops  # noqa: F401
