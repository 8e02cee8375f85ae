"""kiln.npu_bridge.hccl: hccl_ops (collectives over the ranks of a data-parallel job)."""
from kiln.npu_bridge.hccl import hccl_ops  # noqa: F401
