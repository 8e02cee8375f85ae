"""tf.errors: the exceptions a Session raises, with TensorFlow's names and attributes
(node_def, op, message, error_code), so that scripts' `except tf.errors.X:` lines work."""


class OpError(Exception):
    """TensorFlow's base of the errors a run raises."""

    error_code = 2

    def __init__(self, node_def=None, op=None, message="", *args):
        super().__init__(message)
        self.node_def, self.op, self.message = node_def, op, message

    def __str__(self):
        return self.message


def _error(name, code, doc):
    return type(name, (OpError,), {"error_code": code, "__doc__": doc})


CancelledError = _error("CancelledError", 1, "The operation was cancelled.")
UnknownError = _error("UnknownError", 2, "An unknown error.")
InvalidArgumentError = _error("InvalidArgumentError", 3, "A bad argument: a feed of the wrong shape, a missing feed.")
DeadlineExceededError = _error("DeadlineExceededError", 4, "A deadline passed.")
NotFoundError = _error("NotFoundError", 5, "A file or name was not found.")
AlreadyExistsError = _error("AlreadyExistsError", 6, "What was to be made exists already.")
PermissionDeniedError = _error("PermissionDeniedError", 7, "No permission.")
ResourceExhaustedError = _error("ResourceExhaustedError", 8, "Out of memory or another resource.")
FailedPreconditionError = _error("FailedPreconditionError", 9, "A variable read before it was initialised.")
AbortedError = _error("AbortedError", 10, "The operation was aborted.")
OutOfRangeError = _error("OutOfRangeError", 11, "An iterator reached its end.")
UnimplementedError = _error("UnimplementedError", 12, "The operation is not implemented.")
InternalError = _error("InternalError", 13, "An internal error.")
UnavailableError = _error("UnavailableError", 14, "A service is unavailable.")
DataLossError = _error("DataLossError", 15, "Data was lost or corrupted.")
