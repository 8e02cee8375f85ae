"""tf.errors, TensorFlow 1.x's names; their code is in kiln._src.errors."""
# ruff: noqa: F401
# (a package of names: each is imported to be re-exported)
from kiln._src.errors import (
    AbortedError,
    AlreadyExistsError,
    CancelledError,
    DataLossError,
    DeadlineExceededError,
    FailedPreconditionError,
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    OpError,
    OutOfRangeError,
    PermissionDeniedError,
    ResourceExhaustedError,
    UnavailableError,
    UnimplementedError,
    UnknownError,
)
