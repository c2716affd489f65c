"""Run-time error classes, numbered as gRPC status codes (follows `tf.errors`).

Graph-construction mistakes are builtin `TypeError`/`ValueError`; everything that goes
wrong while a step runs is an `OpError` subclass. Retry contract (design.md §5):
`UnavailableError` means retry the call, `AbortedError` means recreate the session (what
`MonitoredSession` does), anything else means do not retry.
"""

from __future__ import annotations

from typing import Any

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class OpError(Exception):
    """A failure while running a step (follows `tf.errors.OpError`).

    Attributes:
      message: Human-readable description, naming the node or task involved.
      op: The `Operation` that failed, when known in this process, else None.
      node_def: The failing node's `NodeDef`, when known, else None.
      error_code: Integer status code (gRPC numbering).
    """

    def __init__(self, node_def: Any, op: Any, message: str, error_code: int = UNKNOWN):
        super().__init__(message)
        self._node_def = node_def
        self._op = op
        self._message = message
        self._error_code = error_code

    @property
    def message(self) -> str:
        """The error message."""
        return self._message

    @property
    def op(self) -> Any:
        """The `Operation` that failed, or None."""
        return self._op

    @property
    def node_def(self) -> Any:
        """The `NodeDef` of the failed op, or None."""
        return self._node_def

    @property
    def error_code(self) -> int:
        """The integer status code."""
        return self._error_code

    def __str__(self) -> str:
        return self._message

    def __reduce__(self):
        return (_rebuild_error, (self._error_code, self._message))


def _rebuild_error(code: int, message: str) -> OpError:
    return exception_type_from_error_code(code)(None, None, message)


class CancelledError(OpError):
    """The step was cancelled, e.g. by `Session.close()` or a closed queue."""

    def __init__(self, node_def=None, op=None, message="", *args, **kwargs):
        super().__init__(node_def, op, message, CANCELLED)


class UnknownError(OpError):
    """An error without a better class, e.g. an unexpected exception inside a kernel."""

    def __init__(self, node_def=None, op=None, message="", *args, **kwargs):
        super().__init__(node_def, op, message, UNKNOWN)


class InvalidArgumentError(OpError):
    """An op received a bad argument: wrong shape, dtype or value, or a missing feed."""

    def __init__(self, node_def=None, op=None, message="", *args, **kwargs):
        super().__init__(node_def, op, message, INVALID_ARGUMENT)


class DeadlineExceededError(OpError):
    """A deadline (`timeout_in_ms`, `operation_timeout_in_ms`) expired before completion."""

    def __init__(self, node_def=None, op=None, message="", *args, **kwargs):
        super().__init__(node_def, op, message, DEADLINE_EXCEEDED)


class NotFoundError(OpError):
    """A requested entity (file, checkpoint, variable, session target) was not found."""

    def __init__(self, node_def=None, op=None, message="", *args, **kwargs):
        super().__init__(node_def, op, message, NOT_FOUND)


class AlreadyExistsError(OpError):
    """An entity that was to be created already exists."""

    def __init__(self, node_def=None, op=None, message="", *args, **kwargs):
        super().__init__(node_def, op, message, ALREADY_EXISTS)


class PermissionDeniedError(OpError):
    """The caller may not run the operation."""

    def __init__(self, node_def=None, op=None, message="", *args, **kwargs):
        super().__init__(node_def, op, message, PERMISSION_DENIED)


class UnauthenticatedError(OpError):
    """The request has no valid credentials."""

    def __init__(self, node_def=None, op=None, message="", *args, **kwargs):
        super().__init__(node_def, op, message, UNAUTHENTICATED)


class ResourceExhaustedError(OpError):
    """A resource (memory, a queue's capacity, a message size limit) is exhausted."""

    def __init__(self, node_def=None, op=None, message="", *args, **kwargs):
        super().__init__(node_def, op, message, RESOURCE_EXHAUSTED)


class FailedPreconditionError(OpError):
    """The system is not in a state to run the op, e.g. reading an uninitialized variable."""

    def __init__(self, node_def=None, op=None, message="", *args, **kwargs):
        super().__init__(node_def, op, message, FAILED_PRECONDITION)


class AbortedError(OpError):
    """The step was aborted, typically because a peer restarted; recreate the session."""

    def __init__(self, node_def=None, op=None, message="", *args, **kwargs):
        super().__init__(node_def, op, message, ABORTED)


class OutOfRangeError(OpError):
    """Iteration went past the valid range, e.g. dequeue from a closed, empty queue."""

    def __init__(self, node_def=None, op=None, message="", *args, **kwargs):
        super().__init__(node_def, op, message, OUT_OF_RANGE)


class UnimplementedError(OpError):
    """The operation is not implemented or not supported."""

    def __init__(self, node_def=None, op=None, message="", *args, **kwargs):
        super().__init__(node_def, op, message, UNIMPLEMENTED)


class InternalError(OpError):
    """An invariant of the runtime was broken (a bug in tensorweave)."""

    def __init__(self, node_def=None, op=None, message="", *args, **kwargs):
        super().__init__(node_def, op, message, INTERNAL)


class UnavailableError(OpError):
    """A task could not be reached; retrying the same call may succeed."""

    def __init__(self, node_def=None, op=None, message="", *args, **kwargs):
        super().__init__(node_def, op, message, UNAVAILABLE)


class DataLossError(OpError):
    """Unrecoverable data loss or corruption, e.g. a truncated checkpoint file."""

    def __init__(self, node_def=None, op=None, message="", *args, **kwargs):
        super().__init__(node_def, op, message, DATA_LOSS)


_CODE_TO_EXCEPTION: dict[int, type[OpError]] = {
    CANCELLED: CancelledError,
    UNKNOWN: UnknownError,
    INVALID_ARGUMENT: InvalidArgumentError,
    DEADLINE_EXCEEDED: DeadlineExceededError,
    NOT_FOUND: NotFoundError,
    ALREADY_EXISTS: AlreadyExistsError,
    PERMISSION_DENIED: PermissionDeniedError,
    UNAUTHENTICATED: UnauthenticatedError,
    RESOURCE_EXHAUSTED: ResourceExhaustedError,
    FAILED_PRECONDITION: FailedPreconditionError,
    ABORTED: AbortedError,
    OUT_OF_RANGE: OutOfRangeError,
    UNIMPLEMENTED: UnimplementedError,
    INTERNAL: InternalError,
    UNAVAILABLE: UnavailableError,
    DATA_LOSS: DataLossError,
}
_EXCEPTION_TO_CODE = {cls: code for code, cls in _CODE_TO_EXCEPTION.items()}


def exception_type_from_error_code(error_code: int) -> type[OpError]:
    """Returns the `OpError` subclass for a status code (UnknownError if unknown)."""
    return _CODE_TO_EXCEPTION.get(error_code, UnknownError)


def error_code_from_exception_type(cls: type[OpError]) -> int:
    """Returns the status code of an `OpError` subclass.

    Raises:
      KeyError: if `cls` is not one of the 16 canonical classes.
    """
    return _EXCEPTION_TO_CODE[cls]


def make_error(error_code: int, message: str, node_def: Any = None, op: Any = None) -> OpError:
    """Builds the `OpError` subclass for `error_code` with `message`."""
    return exception_type_from_error_code(error_code)(node_def, op, message)


def with_node(error: OpError, node_name: str) -> OpError:
    """Returns `error` with TF's `[[{{node NAME}}]]` suffix added once (same class)."""
    suffix = "\n\t [[{{node " + node_name + "}}]]"
    if "{{node " in error.message:
        return error
    new = type(error)(error.node_def, error.op, error.message + suffix)
    new.__cause__ = error.__cause__ or error
    return new


__all__ = [
    "OpError",
    "CancelledError",
    "UnknownError",
    "InvalidArgumentError",
    "DeadlineExceededError",
    "NotFoundError",
    "AlreadyExistsError",
    "PermissionDeniedError",
    "UnauthenticatedError",
    "ResourceExhaustedError",
    "FailedPreconditionError",
    "AbortedError",
    "OutOfRangeError",
    "UnimplementedError",
    "InternalError",
    "UnavailableError",
    "DataLossError",
    "exception_type_from_error_code",
    "error_code_from_exception_type",
    "make_error",
]
