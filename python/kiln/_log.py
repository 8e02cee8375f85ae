"""Where kiln's lines go: the Estimator's progress and resume lines and LoggingTensorHook's.
Printed to stdout unless kiln.set_log_function() says otherwise (None: silent)."""
import sys


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
    if _sink[0] is not None:
        _sink[0](line)
