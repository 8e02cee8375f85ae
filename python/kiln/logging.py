"""kiln.logging: tf.logging's verbosity switch over kiln's log lines (progress, resume,
LoggingTensorHook). INFO and below show them; WARN and above silence them."""
from . import _log

DEBUG, INFO, WARN, ERROR, FATAL = 10, 20, 30, 40, 50
WARNING = WARN


def set_verbosity(level):
    if level not in (DEBUG, INFO, WARN, ERROR, FATAL):
        raise ValueError("[logging.set_verbosity] %r is not one of DEBUG, INFO, WARN, ERROR, FATAL" % (level,))
    _log.set_log_function(_log._print if level <= INFO else None)


def info(msg, *args):
    _log.emit(msg % args if args else msg)
