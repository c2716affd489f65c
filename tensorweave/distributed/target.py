"""Checks a session target (`grpc://host:port`) before waiting for it.

TensorFlow waits for any target that does not answer, logging "Still waiting…"; a target
that can never answer (no port, a port out of range, a host name that does not resolve)
then hangs forever. tensorweave fails those at once and keeps TF's wait for a reachable
host whose task is not up yet.
"""

from __future__ import annotations

import socket

from tensorweave import errors

MAX_PORT = 65535


def split_target(target: str) -> tuple[str, int]:
    """`grpc://host:port` (or `host:port`, `[v6]:port`) -> (host, port).

    Raises:
      InvalidArgumentError: the target has no port, or a port that is not 1..65535.
    """
    address = target[len("grpc://"):] if target.startswith("grpc://") else target
    host, sep, port_text = address.rpartition(":")
    if not sep or not host or not port_text.isdigit():
        raise errors.InvalidArgumentError(
            None, None, f"Malformed session target {target!r}: expected grpc://host:port")
    port = int(port_text)
    if not 1 <= port <= MAX_PORT:
        raise errors.InvalidArgumentError(
            None, None, f"Invalid port {port} in session target {target!r}: a port is in "
            f"1..{MAX_PORT}")
    return host.strip("[]"), port


def check_target(target: str) -> None:
    """Fails fast for a target that can never answer.

    Raises:
      InvalidArgumentError: malformed target (see `split_target`).
      UnavailableError: the host name does not resolve (retryable: DNS may catch up).
    """
    host, port = split_target(target)
    if host.startswith("unix"):
        return
    try:
        socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as e:
        raise errors.UnavailableError(
            None, None, f"Cannot resolve the host of session target {target!r}: {e}") from None
