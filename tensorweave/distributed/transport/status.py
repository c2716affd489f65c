"""The one place that converts between tensorweave errors and gRPC status codes."""

from __future__ import annotations

from typing import Any

import grpc

from tensorweave import errors
from tensorweave.framework.cancellation import derived, is_derived

_BY_INT = {code.value[0]: code for code in grpc.StatusCode}


def to_status_code(error: errors.OpError) -> grpc.StatusCode:
    """The gRPC status code of an `OpError`."""
    return _BY_INT.get(error.error_code, grpc.StatusCode.UNKNOWN)


# Trailing metadata marking an error status as derived from a step's cancellation.
DERIVED_METADATA = ("tensorweave-derived", "1")


def abort(context: Any, error: errors.OpError) -> None:
    """Ends a server-side RPC with `error` (raises inside the handler, as gRPC requires);
    an error derived from a cancellation says so in the trailing metadata."""
    if is_derived(error):
        context.set_trailing_metadata((DERIVED_METADATA,))
    context.abort(to_status_code(error), error.message[:16000])


def from_rpc_error(e: grpc.RpcError, task: str, address: str,
                   method: str = "") -> errors.OpError:
    """An `OpError` of the matching class for a failed call of `method` to `task`.

    Unavailable and deadline errors name the task and address, so a dead peer is easy to
    find (`UnavailableError: /job:ps/replica:0/task:0 at localhost:2222 is unreachable`).
    """
    code = e.code() if hasattr(e, "code") else grpc.StatusCode.UNKNOWN
    details = (e.details() if hasattr(e, "details") else str(e)) or ""
    number = code.value[0] if code is not None else errors.UNKNOWN
    trailing = e.trailing_metadata() if hasattr(e, "trailing_metadata") else None
    return error_from_status(number, details, task, address, method,
                             DERIVED_METADATA in tuple(trailing or ()))


def error_from_status(code: int, details: str, task: str, address: str,
                      method: str = "", is_derived_error: bool = False) -> errors.OpError:
    """An `OpError` for a call of `method` to `task` that ended with canonical status
    `code` (see `from_rpc_error`; also used by the same-host transport). The message names
    the method and the peer's address, unless the peer's own message already does."""
    if code == errors.UNAVAILABLE:
        message = f"{task} at {address} is unreachable: {details}"
    elif code == errors.DEADLINE_EXCEEDED and task not in details:
        message = f"Deadline exceeded in a call to {task} at {address}: {details}"
    elif code == errors.CANCELLED and not details:
        message = f"Call to {task} was cancelled"
    elif code == errors.UNIMPLEMENTED:
        message = (f"{task} at {address} does not implement {method or 'the method'}"
                   + (f": {details}" if details else ""))
    else:
        name = errors.exception_type_from_error_code(code).__name__
        message = details or f"{name} without a message"
    if method and method not in message:
        message = f"{message} (in {method} to {task} at {address})"
    err = errors.make_error(code, message)
    return derived(err) if is_derived_error else err


def error_from_response(resp: Any) -> errors.OpError | None:
    """The error a `RunGraphResponse` carries in its body (None for OK), marked derived
    when the worker said so (`tensorweave_derived`)."""
    err = error_from_code(resp.status_code, resp.status_error_message)
    if err is not None and resp.tensorweave_derived:
        derived(err)
    return err


def error_from_code(code: int, message: str) -> errors.OpError | None:
    """An error from a status carried in a response body (None for OK)."""
    if not code:
        return None
    return errors.make_error(code, message)
