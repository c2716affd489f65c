"""The thread-local default-session stack (one of the two pieces of ambient state)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any


class _SessionStack(threading.local):
    def __init__(self) -> None:
        self.stack: list[Any] = []


_STACK = _SessionStack()


def get_default_session() -> Any:
    """Returns the default session (follows `tf.get_default_session`).

    That is the innermost session entered with `as_default()` in this thread, or None.
    """
    return _STACK.stack[-1] if _STACK.stack else None


@contextlib.contextmanager
def default_session(session: Any) -> Iterator[Any]:
    """Makes `session` the default session of this thread inside the block."""
    _STACK.stack.append(session)
    try:
        yield session
    finally:
        if _STACK.stack and _STACK.stack[-1] is session:
            _STACK.stack.pop()
        elif session in _STACK.stack:
            _STACK.stack.remove(session)


def push(session: Any) -> None:
    """Pushes `session` (used by `InteractiveSession`, which stays default until closed)."""
    _STACK.stack.append(session)


def remove(session: Any) -> None:
    """Removes `session` from this thread's stack if present."""
    if session in _STACK.stack:
        _STACK.stack.remove(session)
