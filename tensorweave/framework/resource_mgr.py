"""Per-device resource managers, as TensorFlow's `ResourceMgr`.

A manager holds containers of named, shared state (variables, queues, accumulators).

Resources outlive sessions. The default container of a device is its job name, so
`Session.reset(target, ["ps"])` clears what was created on `/job:ps` without `tf.container`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave import errors


class Var:
    """The state of one variable: a read-only ndarray, replaced (never mutated) on update.

    Copy-on-write keeps every value handed out by `read` consistent: a reader in another
    step never sees a half-written update, and a failed step can restore the old array.
    """

    __slots__ = ("name", "value", "lock", "shape")

    def __init__(self, name: str, shape: Any = None):
        self.name = name
        self.value: Any = None
        self.lock = threading.Lock()
        self.shape = shape

    @property
    def is_initialized(self) -> bool:
        """True once a value was assigned."""
        return self.value is not None

    def read(self) -> Any:
        """The current value.

        Raises:
          FailedPreconditionError: if the variable was never assigned, naming it.
        """
        v = self.value
        if v is None:
            raise errors.FailedPreconditionError(
                None, None, f"Attempting to use uninitialized value {self.name}"
            )
        return v


def freeze(value: Any) -> Any:
    """Returns `value` as a read-only ndarray (no copy when it already is one).

    A writable array that owns its buffer is frozen in place; a writable view is copied
    first (its base may still be written through).
    """
    arr = value if isinstance(value, np.ndarray) else np.asarray(value)
    flags = arr.flags
    if flags.writeable:
        if arr.base is not None or not flags.owndata:
            arr = arr.copy()
            flags = arr.flags
        flags.writeable = False
    return arr


class ResourceMgr:
    """Containers -> names -> resources, shared by every session that uses the device."""

    def __init__(self, default_container: str):
        self._default = default_container
        self._containers: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        # NOTE: bumped whenever a resource may disappear, so kernels may cache lookups.
        self.generation = 0

    @property
    def default_container(self) -> str:
        """The container used when an op's `container` attr is empty (the job name)."""
        return self._default

    def lookup(self, container: str, name: str) -> Any:
        """The resource, or None."""
        container = container or self._default
        with self._lock:
            return self._containers.get(container, {}).get(name)

    def lookup_or_create(self, container: str, name: str, creator: Callable[[], Any]) -> Any:
        """The resource, created with `creator()` under the lock when missing.

        Raises:
          InvalidArgumentError: if an existing resource has another type than a new one would.
        """
        container = container or self._default
        with self._lock:
            bucket = self._containers.setdefault(container, {})
            res = bucket.get(name)
            if res is None:
                res = bucket[name] = creator()
            return res

    def create(self, container: str, name: str, resource: Any) -> None:
        """Adds a resource.

        Raises:
          AlreadyExistsError: if the name is taken in that container.
        """
        container = container or self._default
        with self._lock:
            bucket = self._containers.setdefault(container, {})
            if name in bucket:
                raise errors.AlreadyExistsError(
                    None, None, f"Resource {container}/{name} already exists"
                )
            bucket[name] = resource

    def delete(self, container: str, name: str) -> None:
        """Removes a resource.

        Raises:
          NotFoundError: if it does not exist.
        """
        container = container or self._default
        with self._lock:
            bucket = self._containers.get(container, {})
            if name not in bucket:
                raise errors.NotFoundError(None, None, f"Resource {container}/{name} not found")
            res = bucket.pop(name)
            self.generation += 1
        _close(res)

    def cleanup(self, container: str) -> None:
        """Removes a whole container (a no-op when it does not exist)."""
        with self._lock:
            bucket = self._containers.pop(container or self._default, {})
            self.generation += 1
        for res in bucket.values():
            _close(res)

    def clear(self) -> None:
        """Removes every container."""
        with self._lock:
            buckets, self._containers = self._containers, {}
            self.generation += 1
        for bucket in buckets.values():
            for res in bucket.values():
                _close(res)

    def containers(self) -> list[str]:
        """The names of the existing containers."""
        with self._lock:
            return list(self._containers)


def _close(resource: Any) -> None:
    # NOTE: queues and accumulators wake their blocked callers when removed.
    close = getattr(resource, "close_on_delete", None)
    if close is not None:
        close()
