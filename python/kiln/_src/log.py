"""Where kiln's lines go: the Estimator's progress and resume lines and LoggingTensorHook's.
Printed to stdout unless kiln.set_log_function() says otherwise (None: silent). In a
data-parallel job (mpirun) only rank 0 logs, as `kiln train` does; the other ranks print
only errors."""
import sys
import warnings

from kiln import _core

_QUIET_RANK = _core.world_rank() != 0


def _print(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


_sink = [_print]


def set_log_function(fn):
    """fn(line) receives every line kiln logs; None turns logging off."""
    if fn is not None and not callable(fn):
        raise TypeError("set_log_function takes a callable or None")
    _sink[0] = fn


def emit(line):
    if _sink[0] is not None and not _QUIET_RANK:
        _sink[0](line)


def warn(message, stacklevel):
    """warnings.warn for kiln's own warnings (rank 0's alone in a data-parallel job);
    stacklevel counts from the caller of warn()."""
    if not _QUIET_RANK:
        warnings.warn(message, stacklevel=stacklevel + 1)
