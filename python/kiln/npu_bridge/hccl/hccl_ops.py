"""The seed's hccl_ops, over kiln's ranks (mpirun): allreduce of a tensor in the step."""
from kiln import _core
from kiln._src.graph import convert_to_tensor, unsupported


def allreduce(tensor, reduction="sum", fusion=1, fusion_id=-1, group="hccl_world_group"):
    """The elementwise sum of `tensor` over the ranks (reduction 'sum'); the tensor itself
    in a job of one rank."""
    if reduction != "sum":
        unsupported("hccl_ops.allreduce(reduction=%r)" % reduction, "kiln sums over the ranks ('sum')")
    x = convert_to_tensor(tensor, op="hccl_ops.allreduce")
    return _core.all_reduce_sum(x)


def broadcast(tensor, root_rank=0, fusion=0, fusion_id=-1, group="hccl_world_group"):
    unsupported("hccl_ops.broadcast", "kiln broadcasts rank 0's variables when training starts")
