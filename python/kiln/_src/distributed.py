"""kiln.distributed: the data-parallel job this process is a rank of.

`mpirun -np N python3 script.py` trains one model over N ranks exactly as `mpirun -np N
kiln train` does: importing kiln joins the job (only when an MPI launcher started the
process), each rank trains on its share of every global batch that input_fn yields, the
gradients are averaged in the graph, rank 0's weights are broadcast at the start, rank 0
alone writes checkpoints and prints kiln's lines. Every rank must run the same script with
the same model_fn, configuration and input (the same global batches in the same order).

An exception that escapes the script on any rank ends the whole job (MPI_Abort), naming
the rank, instead of leaving the others waiting for it in a collective.
"""
import sys
import traceback

from kiln import _core


def rank():
    """This process's rank in the job (0 outside mpirun)."""
    return _core.world_rank()


def size():
    """Ranks in the job (1 outside mpirun)."""
    return _core.world_size()


def local_size():
    """Ranks of the job on this host."""
    return _core.world_local_size()


def is_chief():
    """True on rank 0, the rank that writes checkpoints and prints."""
    return rank() == 0


def stats():
    """Since the process started: seconds in collectives, bytes reduced and MPI_Allreduce calls."""
    return _core.world_stats()


def _abort_on_uncaught(kind, value, tb):
    """sys.excepthook of a rank: print the exception with the rank, then end every rank.

    Without it the rank would exit (through MPI_Finalize, which waits for the others) while
    the other ranks wait for it in the step's all_reduce: the job would hang."""
    try:
        sys.stdout.flush()
    except Exception:  # noqa: BLE001 (a closed or broken stdout must not stop the abort)
        pass
    try:
        sys.stderr.write("kiln: rank %d: error: %s: %s (ending every rank of the job)\n"
                         % (rank(), kind.__name__, value))
        traceback.print_exception(kind, value, tb)
        sys.stderr.flush()
    finally:
        _core.world_abort(130 if issubclass(kind, KeyboardInterrupt) else 1)


def _install():
    if size() > 1:
        sys.excepthook = _abort_on_uncaught
