"""Bounded-staleness (stale synchronous parallel, SSP) training. New in tensorweave.

Asynchronous between-graph training lets a fast worker run arbitrarily far ahead of a slow
one, so its gradients are computed from parameters missing many of the slow worker's
updates. `BoundedStalenessOptimizer` bounds that gap with one switch, `max_staleness`:

* `None`: plain asynchronous training (the wrapped optimizer's updates; the steps are only
  counted).
* `s >= 0`: a worker may begin its step `c` (0-based) only once every active worker has
  completed at least `c - s` steps. So the step a worker computes is at most `s` steps
  ahead of the step the slowest worker computes, and it reads parameters containing every
  update of every worker's first `c - s` steps. `s = 0` is lock-step: no worker begins
  step `k + 1` before all have finished step `k` (each worker still applies its own
  gradient; nothing is averaged, unlike `SyncReplicasOptimizer`).

Usage (every worker, between-graph replication)::

    opt = BoundedStalenessOptimizer(tf.train.GradientDescentOptimizer(0.1),
                                    max_staleness=2, num_workers=4, worker_index=task)
    train_op = opt.minimize(loss, global_step=global_step)
    hooks = [opt.make_session_run_hook(), tf.train.StopAtStepHook(last_step=10000)]
    with tf.train.MonitoredTrainingSession(master, is_chief=(task == 0),
                                           hooks=hooks) as sess:
        while not sess.should_stop():
            sess.run(train_op)

How it works: a `StepClock` (`tensorweave/ops/staleness_ops.py`) on the global step's
device (the first variable's device without a global step) counts each worker's completed
steps; every worker's graph shares it under `shared_name="<name>/step_clock"`. The
returned `train_op` applies the update, ticks this worker's clock, then runs
`StepClockWait(worker, max_staleness)`, which blocks (a blocking op: no polling, no
thread held) until `min(active clocks) >= clock[worker] - max_staleness`. Waiting at the end
of step `c - 1` is waiting at the beginning of step `c`: the next run reads the variables
after the wait. So while a fast worker is held, its clock shows `s + 1` more completed
steps than the slowest worker and its run of the last of them has not returned yet
(`StepClock.read()` also reports which workers are `waiting`).

Why an optimizer wrapper rather than only a hook: the wait has to happen inside the step,
after this worker's update and tick, to order them; in the same run it costs no extra round
trip to the ps (a hook running the wait in `before_run` would add one `Session.run` per
step), and it works without `MonitoredSession`. The hook from `make_session_run_hook()`
handles the lifecycle only: `after_create_session` runs the join op (a retired worker takes
part again, entering at the slowest active worker's clock; a no-op otherwise) and `end()`
runs the retire op.

Finishing and failures:

* A worker that finished (its monitored session closed cleanly, e.g. by `StopAtStepHook`)
  is retired by the hook and no longer holds the others back.
* A worker that died (or whose session ended with an error, which skips `end()`) is not
  retired: the others get at most `s + 1` steps past it, then wait. With a step deadline
  (`RunOptions.timeout_in_ms` or `ConfigProto.operation_timeout_in_ms`) their runs fail
  with `DeadlineExceededError` naming the clock's wait (`<name>/step_clock_Wait`), in
  general with the waiting worker and the workers it waits for (see
  `kernels/staleness_kernels.py`); without one they wait until the worker restarts (its
  clock is kept: it carries on) or someone runs `opt.step_clock.retire(index)` for it.
* A step that fails (deadline, cancellation) counts as not done: tensorweave rolls back
  its variable updates and the clock takes its tick back, so retrying it is consistent.
* A retired worker's tick or wait fails with `FailedPreconditionError` until it joins.

Call `apply_gradients` (or `minimize`) once per graph: each call ticks the same clock.
"""

from __future__ import annotations

import numbers
from typing import Any

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.operation import Operation
from tensorweave.ops.staleness_ops import StepClock
from tensorweave.training import session_run_hook
from tensorweave.training.optimizer import Optimizer


class BoundedStalenessOptimizer(Optimizer):
    """Wraps an optimizer so that a worker runs at most `max_staleness` steps ahead.

    New in tensorweave (see the module docstring for the semantics).

    Args:
      opt: the `Optimizer` computing and applying this worker's gradients.
      max_staleness: int >= 0, how many steps this worker may run ahead of the slowest
        active worker (0: lock-step), or None for plain asynchronous training.
      num_workers: int >= 1, the number of workers sharing the clock (the same on all).
      worker_index: int in `[0, num_workers)`, this worker (usually its task index).
      name: name scope of the clock ops; also the clock's shared name prefix, so it must
        be the same on every worker.

    Raises:
      ValueError: for a negative or non-integer `max_staleness`, `num_workers < 1`, or a
        `worker_index` outside `[0, num_workers)`.
    """

    def __init__(
        self,
        opt: Optimizer,
        max_staleness: int | None,
        num_workers: int,
        worker_index: int,
        name: str = "bounded_staleness",
    ):
        super().__init__(False, name)
        if max_staleness is not None and (
            isinstance(max_staleness, bool)
            or not isinstance(max_staleness, numbers.Integral)
            or max_staleness < 0
        ):
            raise ValueError(f"max_staleness must be None or an int >= 0, got {max_staleness!r}")
        max_staleness = None if max_staleness is None else int(max_staleness)
        if num_workers < 1:
            raise ValueError(f"num_workers must be at least 1, got {num_workers}")
        if not 0 <= worker_index < num_workers:
            raise ValueError(f"worker_index must be in [0, {num_workers}), got {worker_index}")
        self._opt = opt
        self._max_staleness = max_staleness
        self._num_workers = num_workers
        self._worker_index = worker_index
        self._step_clock: StepClock | None = None
        self._join_op: Any = None
        self._retire_op: Any = None

    @property
    def max_staleness(self) -> int | None:
        """Steps this worker may run ahead of the slowest one (None: unbounded)."""
        return self._max_staleness

    @property
    def num_workers(self) -> int:
        """The number of workers sharing the clock."""
        return self._num_workers

    @property
    def worker_index(self) -> int:
        """This worker's index in the clock."""
        return self._worker_index

    @property
    def step_clock(self) -> StepClock:
        """The shared `StepClock` (e.g. `step_clock.read()`, `step_clock.retire(i)`).

        Raises:
          ValueError: if called before `apply_gradients`.
        """
        self._check_applied("step_clock")
        return self._step_clock

    def compute_gradients(self, *args: Any, **kwargs: Any) -> list[tuple[Any, Any]]:
        """Forwards to the wrapped optimizer's `compute_gradients`."""
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(
        self, grads_and_vars: Any, global_step: Any = None, name: str | None = None
    ) -> Operation:
        """Applies the gradients, counts the step and waits while too far ahead.

        Args:
          grads_and_vars: `(gradient, variable)` pairs, as from `compute_gradients`.
          global_step: optional global step, incremented by the wrapped optimizer; the
            clock is placed on its device.
          name: name of the wrapped optimizer's update op.

        Returns:
          The train `Operation`: the `StepClockWait` after the update and tick (the tick
          alone when `max_staleness` is None).

        Raises:
          ValueError: from the wrapped optimizer (e.g. "No variables provided.").
        """
        grads_and_vars = tuple(grads_and_vars)
        update_op = self._opt.apply_gradients(grads_and_vars, global_step=global_step, name=name)
        anchor = global_step if global_step is not None else _first_variable(grads_and_vars)
        graph = update_op.graph
        with graph.as_default(), graph_mod.name_scope(None, self._name):
            with graph.device(anchor.device):
                self._step_clock = StepClock(
                    self._num_workers, shared_name=self._name + "/step_clock", name="step_clock"
                )
            clock, worker = self._step_clock, self._worker_index
            with graph.control_dependencies([update_op]):
                tick = clock.tick(worker)
            if self._max_staleness is None:
                train_op = tick.op
            else:
                with graph.control_dependencies([tick]):
                    train_op = clock.wait(worker, self._max_staleness)
            with graph.control_dependencies(None):
                self._join_op = clock.join(worker).op
                self._retire_op = clock.retire(worker)
        return train_op

    def get_join_op(self) -> Operation:
        """The op (re)joining this worker to the clock (run by the hook's session start).

        Raises:
          ValueError: if called before `apply_gradients`.
        """
        self._check_applied("get_join_op")
        return self._join_op

    def get_retire_op(self) -> Operation:
        """The op retiring this worker (run by the hook's `end()`).

        Raises:
          ValueError: if called before `apply_gradients`.
        """
        self._check_applied("get_retire_op")
        return self._retire_op

    def make_session_run_hook(self) -> _BoundedStalenessHook:
        """A hook joining this worker when a session starts and retiring it at the end.

        It may be created before `apply_gradients`; its `begin()` needs it done.
        """
        return _BoundedStalenessHook(self)

    def _check_applied(self, what: str) -> None:
        if self._step_clock is None:
            raise ValueError(f"{what} should be called after apply_gradients().")

    # ------------------------------------------------------------------ forwarding
    def get_slot(self, *args: Any, **kwargs: Any) -> Any:
        """Forwards to the wrapped optimizer's `get_slot`."""
        return self._opt.get_slot(*args, **kwargs)

    def get_slot_names(self, *args: Any, **kwargs: Any) -> list[str]:
        """Forwards to the wrapped optimizer's `get_slot_names`."""
        return self._opt.get_slot_names(*args, **kwargs)

    def variables(self) -> list[Any]:
        """The wrapped optimizer's variables in the default graph."""
        return self._opt.variables()


def _first_variable(grads_and_vars: tuple[Any, ...]) -> Any:
    return next(v for g, v in grads_and_vars if g is not None)


class _BoundedStalenessHook(session_run_hook.SessionRunHook):
    """Joins the worker to the step clock per session and retires it at the end."""

    def __init__(self, optimizer: BoundedStalenessOptimizer):
        self._optimizer = optimizer

    def begin(self) -> None:
        """Checks that the train op exists.

        Raises:
          ValueError: "BoundedStalenessOptimizer.apply_gradients should be called before
            using the hook."
        """
        if self._optimizer._step_clock is None:
            raise ValueError(
                "BoundedStalenessOptimizer.apply_gradients should be called before using the hook."
            )

    def after_create_session(self, session: Any, coord: Any) -> None:
        """Runs the join op (a no-op unless this worker was retired)."""
        session.run(self._optimizer.get_join_op())

    def end(self, session: Any) -> None:
        """Retires this worker, so that it no longer holds the others back."""
        session.run(self._optimizer.get_retire_op())


__all__ = ["BoundedStalenessOptimizer"]
