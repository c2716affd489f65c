"""Timers deciding when hooks act, and the shared read of the global step used by hooks.

Follows `_HookTimer`, `SecondOrStepTimer` and `NeverTriggerTimer` of TF 1.x
`tensorflow/python/training/basic_session_run_hooks.py`; the hooks find the global step
through `training_util`.

The global-step read runs in the same step as the train op, so it may see the value before
or after that step's increment; hooks that act on a step boundary re-read the global step
before acting, as TensorFlow's do.
"""

from __future__ import annotations

import time
from typing import Any

from tensorweave.training import training_util


def require_global_step_read(hook_name: str) -> Any:
    """The shared read of the default graph's global step, created on first use.

    See `training_util._get_or_create_global_step_read`: one Tensor per graph, cached in
    the collection `global_step_read_op_cache`.

    Raises:
      RuntimeError: "Global step should be created to use <hook_name>." without one.
    """
    tensor = training_util._get_or_create_global_step_read()
    if tensor is None:
        raise RuntimeError(f"Global step should be created to use {hook_name}.")
    return tensor


class HookTimer:
    """Decides on which global steps a hook acts (follows TF's `_HookTimer`)."""

    def reset(self) -> None:
        """Forgets the last trigger."""

    def should_trigger_for_step(self, step: int) -> bool:
        """Whether the hook should act at global step `step`."""
        raise NotImplementedError

    def update_last_triggered_step(self, step: int) -> tuple[float | None, int | None]:
        """Records a trigger at `step`.

        Returns:
          (seconds, steps) since the previous trigger; (None, None) on the first.
        """
        raise NotImplementedError

    def last_triggered_step(self) -> int | None:
        """The step of the last trigger, or None."""
        raise NotImplementedError


class SecondOrStepTimer(HookTimer):
    """Triggers at most once every `every_secs` seconds or every `every_steps` steps.

    Follows `tf.train.SecondOrStepTimer`: the first check always triggers, and a step never
    triggers twice.

    Args:
      every_secs: minimum wall-clock seconds between triggers.
      every_steps: minimum global steps between triggers.

    Raises:
      ValueError: if neither or both of `every_secs` and `every_steps` are given.
    """

    def __init__(self, every_secs: float | None = None, every_steps: int | None = None):
        self.reset()
        self._every_secs = every_secs
        self._every_steps = every_steps
        if every_secs is None and every_steps is None:
            raise ValueError("Either every_secs or every_steps should be provided.")
        if every_secs is not None and every_steps is not None:
            raise ValueError("Can not provide both every_secs and every_steps.")

    def reset(self) -> None:
        """Forgets the last trigger, so that the next check triggers."""
        self._last_triggered_step: int | None = None
        self._last_triggered_time: float | None = None

    def should_trigger_for_step(self, step: int) -> bool:
        """True on the first check, or once the interval passed; never for the same step."""
        if self._last_triggered_step is None:
            return True
        if self._last_triggered_step == step:
            return False
        if self._every_secs is not None and time.time() >= (
            self._last_triggered_time + self._every_secs
        ):
            return True
        return self._every_steps is not None and step >= (
            self._last_triggered_step + self._every_steps
        )

    def update_last_triggered_step(self, step: int) -> tuple[float | None, int | None]:
        """Records a trigger at `step`.

        Returns:
          (elapsed seconds, elapsed steps) since the previous trigger; (None, None) on the
          first.
        """
        now = time.time()
        if self._last_triggered_time is None:
            elapsed: tuple[float | None, int | None] = (None, None)
        else:
            elapsed = (now - self._last_triggered_time, step - self._last_triggered_step)
        self._last_triggered_time = now
        self._last_triggered_step = step
        return elapsed

    def last_triggered_step(self) -> int | None:
        """The step of the last trigger, or None."""
        return self._last_triggered_step


class NeverTriggerTimer(HookTimer):
    """A timer that never triggers (follows TF's `NeverTriggerTimer`)."""

    def should_trigger_for_step(self, step: int) -> bool:
        """Always False."""
        return False

    def update_last_triggered_step(self, step: int) -> tuple[None, None]:
        """Records nothing; returns (None, None)."""
        return (None, None)

    def last_triggered_step(self) -> None:
        """Always None."""
        return None


__all__ = [
    "HookTimer",
    "NeverTriggerTimer",
    "SecondOrStepTimer",
    "require_global_step_read",
]
