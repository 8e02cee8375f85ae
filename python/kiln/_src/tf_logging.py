"""kiln.logging: tf.logging's verbosity switch over kiln's log lines (progress, resume,
LoggingTensorHook). INFO and below show them; WARN and above silence them."""
import sys

from kiln._src import log as _log

DEBUG, INFO, WARN, ERROR, FATAL = 10, 20, 30, 40, 50
WARNING = WARN


_NAMES = {"DEBUG": DEBUG, "INFO": INFO, "WARN": WARN, "WARNING": WARN, "ERROR": ERROR, "FATAL": FATAL,
          "CRITICAL": FATAL}


_level = [INFO]
_counts = {}  # (file, line) of a log_every_n / log_first_n call -> calls so far


def set_verbosity(v):
    """A level (tf.logging.INFO, ...) or its name ('INFO'), as Python's logging takes them.
    kiln's own lines (progress, resume, hooks) are INFO: above INFO they are silenced."""
    level = _NAMES.get(v.upper()) if isinstance(v, str) else v
    if level not in (DEBUG, INFO, WARN, ERROR, FATAL):
        raise ValueError("[logging.set_verbosity] %r is not one of DEBUG, INFO, WARN, ERROR, FATAL (or their names)"
                         % (v,))
    _level[0] = level
    _log.set_log_function(_log._print if level <= INFO else None)


def get_verbosity():
    return _level[0]


def _text(msg, args):
    """As Python's logging formats a record: str(msg), %-formatted when args are given."""
    return str(msg) % args if args else str(msg)


def log(level, msg, *args):
    """The line when level is at or above the verbosity: INFO and DEBUG lines go where
    kiln's lines go (kiln.set_log_function), WARNING and above to that sink or, when it is
    silenced, to stderr."""
    if level < _level[0]:
        return
    prefix = {WARN: "WARNING: ", ERROR: "ERROR: ", FATAL: "FATAL: "}.get(level, "")
    line = prefix + _text(msg, args)
    if level >= WARN and _log._sink[0] is None:
        if not _log._QUIET_RANK or level >= ERROR:
            sys.stderr.write(line + "\n")
        return
    _log.emit(line)


def info(msg, *args):
    log(INFO, msg, *args)


def warning(msg, *args):
    log(WARN, msg, *args)


warn = warning


def error(msg, *args):
    log(ERROR, msg, *args)


def fatal(msg, *args):
    log(FATAL, msg, *args)


def debug(msg, *args):
    log(DEBUG, msg, *args)


def _call_count():
    frame = sys._getframe(2)  # the caller of log_every_n / log_first_n
    key = (frame.f_code.co_filename, frame.f_lineno)
    _counts[key] = _counts.get(key, 0) + 1
    return _counts[key]


def log_every_n(level, msg, n, *args):
    """Logs the 1st, (n+1)th, (2n+1)th, ... call from this line of the caller."""
    if (_call_count() - 1) % max(int(n), 1) == 0:
        log(level, msg, *args)


def log_first_n(level, msg, n, *args):
    """Logs the first n calls from this line of the caller."""
    if _call_count() <= n:
        log(level, msg, *args)
