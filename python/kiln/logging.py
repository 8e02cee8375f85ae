"""kiln.logging: tf.logging's verbosity switch over kiln's log lines (progress, resume,
LoggingTensorHook). INFO and below show them; WARN and above silence them."""
from . import _log

DEBUG, INFO, WARN, ERROR, FATAL = 10, 20, 30, 40, 50
WARNING = WARN


_NAMES = {"DEBUG": DEBUG, "INFO": INFO, "WARN": WARN, "WARNING": WARN, "ERROR": ERROR, "FATAL": FATAL,
          "CRITICAL": FATAL}


def set_verbosity(v):
    """A level (tf.logging.INFO, ...) or its name ('INFO'), as Python's logging takes them."""
    level = _NAMES.get(v.upper()) if isinstance(v, str) else v
    if level not in (DEBUG, INFO, WARN, ERROR, FATAL):
        raise ValueError("[logging.set_verbosity] %r is not one of DEBUG, INFO, WARN, ERROR, FATAL (or their names)"
                         % (v,))
    _log.set_log_function(_log._print if level <= INFO else None)


def info(msg, *args):
    _log.emit(msg % args if args else msg)


def warning(msg, *args):
    _log.emit("WARNING: " + (msg % args if args else msg))


warn = warning


def error(msg, *args):
    _log.emit("ERROR: " + (msg % args if args else msg))


def debug(msg, *args):
    pass


def log(level, msg, *args):
    if level >= INFO:
        _log.emit(msg % args if args else msg)


def get_verbosity():
    return INFO


def log_every_n(level, msg, n, *args):
    log(level, msg, *args)


def log_first_n(level, msg, n, *args):
    log(level, msg, *args)
