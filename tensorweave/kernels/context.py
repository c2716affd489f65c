"""`StepContext`: what a kernel can reach while a step runs.

A subset of TensorFlow's `OpKernelContext`: resources, rendezvous, cancellation, deadline,
undo log.
"""

from __future__ import annotations

import time
from typing import Any

from tensorweave import errors
from tensorweave.framework.cancellation import CancellationManager
from tensorweave.framework.resource_mgr import ResourceMgr, Var, freeze


class StepContext:
    """Per-step, per-device state shared by the kernels of one partition run."""

    __slots__ = (
        "resource_mgr",
        "step_id",
        "rendezvous",
        "cancellation",
        "deadline",
        "undo_log",
        "device",
        "extra",
        "file_sandbox",
        "fetch_remote",
    )

    def __init__(
        self,
        resource_mgr: ResourceMgr,
        step_id: int = 0,
        rendezvous: Any = None,
        cancellation: CancellationManager | None = None,
        deadline: float | None = None,
        device: str = "",
    ):
        self.resource_mgr = resource_mgr
        self.step_id = step_id
        self.rendezvous = rendezvous
        self.cancellation = cancellation or CancellationManager()
        self.deadline = deadline
        self.undo_log: list[tuple[Var, Any, Any]] = []
        self.device = device
        self.extra: dict[str, Any] = {}
        # NOTE: the server's `framework.file_sandbox.FileSandbox`, or None (no limits).
        self.file_sandbox: Any = None
        # NOTE: (rendezvous key, sender device) -> None: starts pulling a value another
        # task sends into this step's rendezvous (set by the worker; a receive inside a
        # loop frame has a key known only at run time).
        self.fetch_remote: Any = None

    def checked_path(self, op: str, path: str) -> str:
        """`path` if this step may touch it (see `framework.file_sandbox`).

        Raises:
          PermissionDeniedError: naming `op` and `path` when it is outside the sandbox.
        """
        if self.file_sandbox is None:
            return path
        return self.file_sandbox.check(op, path)

    def assign(self, var: Var, value: Any) -> Any:
        """Replaces the value of `var` (copy-on-write) and records the old one for rollback.

        Returns:
          The new (read-only) value.
        """
        new = freeze(value)
        with var.lock:
            old = var.value
            var.value = new
        self.undo_log.append((var, old, new))
        return new

    def update(self, var: Var, fn: Any) -> Any:
        """Atomically replaces `var`'s value with `fn(old_value)` (read-modify-write).

        Raises:
          FailedPreconditionError: if `var` is uninitialized.
        """
        with var.lock:
            old = var.value
            if old is None:
                var.read()  # raises FailedPreconditionError, naming the variable
            new = freeze(fn(old))
            var.value = new
        self.undo_log.append((var, old, new))
        return new

    def rollback(self) -> None:
        """Restores variables written by this step (see `rollback_undo_log`)."""
        rollback_undo_log(self.undo_log)
        self.undo_log.clear()

    def remaining_s(self) -> float | None:
        """Seconds left before the step deadline, or None without one."""
        if self.deadline is None:
            return None
        return self.deadline - time.monotonic()

    def check_deadline(self, what: str) -> None:
        """Raises DeadlineExceededError naming `what` if the deadline passed."""
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise errors.DeadlineExceededError(None, None, f"Timed out waiting for {what}")


def rollback_undo_log(undo_log: list[tuple[Var, Any, Any]]) -> None:
    """Restores the variables of an undo log, newest write first.

    A variable that another step has written since is left alone (that later write is kept).
    """
    for var, old, new in reversed(undo_log):
        with var.lock:
            if var.value is new:
                var.value = old
