"""`tf.train.SyncReplicasOptimizer`: synchronous data parallelism on parameter servers.

Follows TF 1.x `python/training/sync_replicas_optimizer.py` (the "V2" mechanism).

Every worker builds the same graph (between-graph replication) and runs the returned
`train_op` in its own loop. What one step does:

* On each variable's device, a `ConditionalAccumulator` (dense gradient) or
  `SparseConditionalAccumulator` (`IndexedSlices`) shared by every worker under
  `<var.name>/grad_accum` receives the worker's gradient with `apply_grad(grad,
  local_step)`. A gradient whose `local_step` is below the accumulator's global step is
  stale and silently dropped.
* The worker then dequeues a *token* from the FIFO queue `sync_token_q` on the global
  step's device and assigns it to its local variable `sync_rep_local_step` (in
  `LOCAL_VARIABLES`, colocated with a worker-side `no_op` so it stays off the ps). The
  dequeue is the barrier: the worker cannot start its next step without a token.
* The chief runs the *chief queue runner* (a thread driving `sync_op`): `take_grad
  (replicas_to_aggregate)` waits on every accumulator until enough fresh gradients have
  arrived, the wrapped optimizer applies their average and increments `global_step`, and
  `tokens_per_step = max(total_num_replicas, replicas_to_aggregate)` tokens carrying the
  new global step are enqueued. Optional `variable_averages.apply(variables_to_average)`
  runs after that.

With `total_num_replicas > replicas_to_aggregate`, the extra workers are *backups*: the
first `replicas_to_aggregate` gradients of a step are used and a late one is stale by the
time it arrives (dropped). The initial tokens (`get_init_tokens_op`, run by the chief's
hook) carry global step 0, so the gradients every worker computes right after the first
update are stale and dropped once; TensorFlow accepts this so that a restarted chief stays
consistent.

Hangs and how they surface (TensorFlow issue #5022 and friends): a worker waiting for a
token (too few gradients arrived: workers died, ran out of data, or the chief's sync
thread is not running) blocks in `sync_token_q_Dequeue`. Give the worker's runs a step
timeout, either `RunOptions(timeout_in_ms=...)` (e.g. from a hook's `SessionRunArgs`, which
`MonitoredSession` merges into every run) or `ConfigProto(operation_timeout_in_ms=...)`;
the run then fails with `DeadlineExceededError` whose message names the token queue's
dequeue node (`sync_token_q_Dequeue`). The worker's gradient already applied to the
accumulators stays there (as in TensorFlow), and no token is consumed. On the chief, a
config-wide `operation_timeout_in_ms` also bounds the chief queue runner's `sync_op`,
which blocks in `take_grad` between steps: a chief timeout stops the chief with
`DeadlineExceededError` rather than waiting forever; prefer per-run `RunOptions` on the
chief. Closing a chief session whose sync thread is blocked in `take_grad` waits
`stop_grace_period_secs` (the coordinator's grace period), then closing the session
cancels that step; the thread then ends quietly (its runner counts `CancelledError` as
"closed", TensorFlow's would raise it in the thread).

Deviation: the returned `train_op` (the assign of the token to the local step) is created
colocated with the local step instead of on the global step's device; TensorFlow's placer
moves it there anyway (a reference edge), tensorweave's placer refuses the conflict.
"""

from __future__ import annotations

import logging
from typing import Any

from tensorweave import errors
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.ops import array_ops, control_flow_ops, data_flow_ops, state_ops
from tensorweave.ops.variables import (
    GraphKeys,
    Variable,
    global_variables,
    report_uninitialized_variables,
)
from tensorweave.training import queue_runner, session_run_hook
from tensorweave.training.optimizer import Optimizer
from tensorweave.training.session_manager import SessionManager

_log = logging.getLogger(__name__)


class SyncReplicasOptimizer(Optimizer):
    """Aggregates the gradients of the replicas, then applies them once per global step.

    Follows `tf.train.SyncReplicasOptimizer` (see the module docstring for the mechanism).
    Gradients are averaged, not summed: scale the learning rate with the number of
    replicas if needed.

    Args:
      opt: the `Optimizer` that computes and applies the (aggregated) gradients.
      replicas_to_aggregate: int, gradients averaged per variable update.
      total_num_replicas: int, workers taking part (default `replicas_to_aggregate`).
        Larger: the extra ones are backups; smaller: workers compute several batches per
        update (give the chief enough initial tokens, see `get_init_tokens_op`).
      variable_averages: optional `ExponentialMovingAverage`-like object whose
        `apply(variables_to_average)` op runs after each update.
      variables_to_average: the variables given to `variable_averages.apply`.
      use_locking: passed to the base class (updates are atomic in tensorweave anyway).
      name: name scope of the accumulators and the sync ops.
    """

    def __init__(
        self,
        opt: Optimizer,
        replicas_to_aggregate: int,
        total_num_replicas: int | None = None,
        variable_averages: Any = None,
        variables_to_average: Any = None,
        use_locking: bool = False,
        name: str = "sync_replicas",
    ):
        if total_num_replicas is None:
            total_num_replicas = replicas_to_aggregate
        super().__init__(use_locking, name)
        _log.info(
            "SyncReplicasV2: replicas_to_aggregate=%s; total_num_replicas=%s",
            replicas_to_aggregate,
            total_num_replicas,
        )
        self._opt = opt
        self._replicas_to_aggregate = replicas_to_aggregate
        self._gradients_applied = False
        self._variable_averages = variable_averages
        self._variables_to_average = variables_to_average
        self._total_num_replicas = total_num_replicas
        self._tokens_per_step = max(total_num_replicas, replicas_to_aggregate)
        self._global_step: Any = None
        self._sync_token_queue: data_flow_ops.FIFOQueue | None = None
        self._chief_queue_runner: queue_runner.QueueRunner | None = None
        self._local_step: Variable | None = None
        # (accumulator, device of its variable), to set the accumulators' global step.
        self._accumulator_list: list[tuple[Any, str]] = []
        self.local_step_init_op: Any = None
        self.ready_for_local_init_op: Any = None
        self.chief_init_op: Any = None

    def compute_gradients(self, *args: Any, **kwargs: Any) -> list[tuple[Any, Any]]:
        """Forwards to the wrapped optimizer's `compute_gradients`.

        Gradients are aggregated in `apply_gradients`, so per-replica processing (e.g.
        clipping) can happen in between.
        """
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(
        self, grads_and_vars: Any, global_step: Any = None, name: str | None = None
    ) -> Any:
        """Adds the synchronization ops and returns the per-worker `train_op`.

        Follows `SyncReplicasOptimizer.apply_gradients`.

        Args:
          grads_and_vars: `(gradient, variable)` pairs (gradients: Tensor, `IndexedSlices`
            or None).
          global_step: the global step variable (required: it checks staleness).
          name: unused, as in TensorFlow (the wrapped optimizer names its update).

        Returns:
          The `train_op`: a Tensor assigning the dequeued token to the local step, run
          after this worker's gradients went into the accumulators.

        Raises:
          ValueError: "Must supply at least one variable", "Global step is required to
            check staleness", or "Unknown grad type!".
        """
        grads_and_vars = tuple(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("Must supply at least one variable")
        if global_step is None:
            raise ValueError("Global step is required to check staleness")
        self._global_step = global_step
        self._create_local_step(global_step)
        chief_init_ops = [self.local_step_init_op]
        with graph_mod.name_scope(None, self._name):
            apply_ops, aggregated, var_list = self._accumulate(grads_and_vars)
            train_op = self._build_sync_ops(apply_ops, aggregated, var_list, global_step)
            for accum, dev in self._accumulator_list:
                with graph_mod.device(dev):
                    chief_init_ops.append(accum.set_global_step(global_step, name="SetGlobalStep"))
            self.chief_init_op = control_flow_ops.group(*chief_init_ops)
            self._gradients_applied = True
            return train_op

    def _create_local_step(self, global_step: Any) -> None:
        """The local step (on this worker), its init op and the local-init readiness check."""
        # The anchor lands on this worker by default; the local step is colocated with it
        # so that a device function (replica_device_setter) cannot move it to a ps.
        local_anchor = control_flow_ops.no_op()
        with graph_mod.colocate_with(local_anchor):
            self._local_step = Variable(
                initial_value=0,
                trainable=False,
                collections=[GraphKeys.LOCAL_VARIABLES],
                dtype=global_step.dtype.base_dtype,
                name="sync_rep_local_step",
            )
        self.local_step_init_op = state_ops.assign(self._local_step, global_step)
        self.ready_for_local_init_op = report_uninitialized_variables(global_variables())

    def _accumulate(self, grads_and_vars: tuple[Any, ...]) -> tuple[list, list, list]:
        """One accumulator per gradient on its variable's device.

        Returns:
          (apply_grad ops, aggregated gradients (None passes through), variables).
        """
        apply_ops: list[Any] = []
        aggregated: list[Any] = []
        var_list: list[Any] = []
        for grad, var in grads_and_vars:
            var_list.append(var)
            with graph_mod.device(var.device):
                if grad is None:
                    aggregated.append(None)
                    continue
                if isinstance(grad, Tensor):
                    accum = data_flow_ops.ConditionalAccumulator(
                        grad.dtype, shape=var.get_shape(), shared_name=var.name + "/grad_accum"
                    )
                    apply_ops.append(accum.apply_grad(grad, local_step=self._local_step))
                    aggregated.append(accum.take_grad(self._replicas_to_aggregate))
                else:
                    if not isinstance(grad, IndexedSlices):
                        raise ValueError("Unknown grad type!")
                    accum = data_flow_ops.SparseConditionalAccumulator(
                        grad.dtype, shape=(), shared_name=var.name + "/grad_accum"
                    )
                    apply_ops.append(
                        accum.apply_indexed_slices_grad(grad, local_step=self._local_step)
                    )
                    aggregated.append(accum.take_indexed_slices_grad(self._replicas_to_aggregate))
                self._accumulator_list.append((accum, var.device))
        return apply_ops, aggregated, var_list

    def _build_sync_ops(
        self, apply_ops: list[Any], aggregated: list[Any], var_list: list[Any], global_step: Any
    ) -> Any:
        """The update, the token queue, the chief's `sync_op` runner and the `train_op`."""
        device = global_step.device
        with graph_mod.device(device), graph_mod.name_scope(""):
            update_op = self._opt.apply_gradients(list(zip(aggregated, var_list)), global_step)
        with graph_mod.device(device), graph_mod.name_scope(""):
            token_queue = data_flow_ops.FIFOQueue(
                -1,
                global_step.dtype.base_dtype,
                shapes=(),
                name="sync_token_q",
                shared_name="sync_token_q",
            )
            self._sync_token_queue = token_queue
            # The runner gets its own queue: the runner closes its queue when stopped, and
            # a closed token queue on a ps would never reopen.
            dummy_queue = data_flow_ops.FIFOQueue(
                1, dtypes.int32, shapes=(), name="dummy_queue", shared_name="dummy_queue"
            )
        with graph_mod.device(device), graph_mod.name_scope(""):
            with graph_mod.control_dependencies(apply_ops):
                token = token_queue.dequeue()
            # NOTE: colocated (not only under the ps device scope): a reference edge binds
            # the assign to the worker-side local step.
            with graph_mod.colocate_with(self._local_step.op):
                train_op = state_ops.assign(self._local_step, token)
            with graph_mod.control_dependencies([update_op]):
                # NOTE: a fresh read after the update: the variable's `read` snapshot may
                # predate it (values are copy-on-write here, TensorFlow shares the buffer).
                tokens = array_ops.fill([self._tokens_per_step], _read_after(global_step))
                sync_op = token_queue.enqueue_many((tokens,))
            if self._variable_averages is not None:
                with graph_mod.control_dependencies([sync_op]), graph_mod.name_scope(""):
                    sync_op = self._variable_averages.apply(self._variables_to_average)
            # Deviation: a cancelled sync step (the chief's session closing while the step
            # waits in take_grad) ends the thread quietly instead of raising in it.
            self._chief_queue_runner = queue_runner.QueueRunner(
                dummy_queue,
                [sync_op],
                queue_closed_exception_types=(errors.OutOfRangeError, errors.CancelledError),
            )
        return train_op

    # ------------------------------------------------------------------ chief helpers
    def get_chief_queue_runner(self) -> queue_runner.QueueRunner:
        """The `QueueRunner` whose thread runs `sync_op` (aggregate, apply, enqueue tokens).

        Only the chief runs it (its hook starts it).

        Raises:
          ValueError: if called before `apply_gradients`.
        """
        if not self._gradients_applied:
            raise ValueError("Should be called after apply_gradients().")
        return self._chief_queue_runner

    def get_init_tokens_op(self, num_tokens: int = -1) -> Operation:
        """The op filling the token queue with `num_tokens` tokens of the global step.

        Follows `SyncReplicasOptimizer.get_init_tokens_op`; the chief runs it at start.

        Args:
          num_tokens: tokens to enqueue; -1 means `replicas_to_aggregate`. At least
            `replicas_to_aggregate - total_num_replicas` are needed for the first step.

        Returns:
          The enqueue op, or a `no_op` named `no_init_tokens` for 0 tokens.

        Raises:
          ValueError: if called before `apply_gradients`, or "Too few tokens to finish the
            first step: N (given) vs M (needed)".
        """
        if not self._gradients_applied:
            raise ValueError("get_init_tokens_op() should be called after apply_gradients().")
        tokens_needed = self._replicas_to_aggregate - self._total_num_replicas
        if num_tokens == -1:
            num_tokens = self._replicas_to_aggregate
        elif num_tokens < tokens_needed:
            raise ValueError(
                f"Too few tokens to finish the first step: {num_tokens} (given) vs "
                f"{tokens_needed} (needed)"
            )
        if num_tokens > 0:
            with graph_mod.device(self._global_step.device), graph_mod.name_scope(""):
                tokens = array_ops.fill([num_tokens], self._global_step)
                return self._sync_token_queue.enqueue_many((tokens,))
        return control_flow_ops.no_op(name="no_init_tokens")

    def make_session_run_hook(
        self, is_chief: bool, num_tokens: int = -1
    ) -> _SyncReplicasOptimizerHook:
        """A hook running the local init, and on the chief the init tokens and sync thread.

        It may be created before `apply_gradients`; its `begin()` needs it done.
        """
        return _SyncReplicasOptimizerHook(self, is_chief, num_tokens)

    # ------------------------------------------------------------------ forwarding
    def get_slot(self, *args: Any, **kwargs: Any) -> Variable | None:
        """Forwards to the wrapped optimizer's `get_slot`."""
        return self._opt.get_slot(*args, **kwargs)

    def get_slot_names(self, *args: Any, **kwargs: Any) -> list[str]:
        """Forwards to the wrapped optimizer's `get_slot_names`."""
        return self._opt.get_slot_names(*args, **kwargs)

    def variables(self) -> list[Variable]:
        """The wrapped optimizer's variables in the default graph (not the local step)."""
        return self._opt.variables()


def _read_after(global_step: Any) -> Tensor:
    """A read of `global_step` made in the current control-dependency scope."""
    if isinstance(global_step, Variable):
        return global_step.read_value()
    return array_ops.identity(global_step)


class _SyncReplicasOptimizerHook(session_run_hook.SessionRunHook):
    """Runs the `SyncReplicasOptimizer` initialization (follows TensorFlow's hook).

    Args:
      sync_optimizer: the `SyncReplicasOptimizer`.
      is_chief: whether this worker is the chief (initial tokens, sync thread).
      num_tokens: initial tokens, as `get_init_tokens_op`.
    """

    def __init__(self, sync_optimizer: SyncReplicasOptimizer, is_chief: bool, num_tokens: int):
        self._sync_optimizer = sync_optimizer
        self._is_chief = is_chief
        self._num_tokens = num_tokens
        self._local_init_op: Any = None
        self._ready_for_local_init_op: Any = None
        self._q_runner: queue_runner.QueueRunner | None = None
        self._init_tokens_op: Any = None

    def begin(self) -> None:
        """Picks the ops to run (the graph is still mutable: builds the init-tokens op).

        Raises:
          ValueError: "SyncReplicasOptimizer.apply_gradient should be called before using
            the hook.", or from `get_init_tokens_op`.
        """
        opt = self._sync_optimizer
        if not opt._gradients_applied:
            raise ValueError(
                "SyncReplicasOptimizer.apply_gradient should be called before using the hook."
            )
        self._ready_for_local_init_op = opt.ready_for_local_init_op
        if self._is_chief:
            self._local_init_op = opt.chief_init_op
            self._q_runner = opt.get_chief_queue_runner()
            self._init_tokens_op = opt.get_init_tokens_op(self._num_tokens)
        else:
            self._local_init_op = opt.local_step_init_op
            self._q_runner = None
            self._init_tokens_op = None

    def after_create_session(self, session: Any, coord: Any) -> None:
        """Runs the local init; the chief also fills the token queue and starts `sync_op`.

        Raises:
          RuntimeError: "Init operations did not make model ready for SyncReplicasOptimizer
            local_init. Init op: ..., error: ..." if global variables are uninitialized.
        """
        ready, msg = SessionManager._ready(
            self._ready_for_local_init_op,
            session,
            "Model is not ready for SyncReplicasOptimizer local init.",
        )
        if not ready:
            raise RuntimeError(
                "Init operations did not make model ready for SyncReplicasOptimizer "
                f"local_init. Init op: {self._local_init_op.name}, error: {msg}"
            )
        session.run(self._local_init_op)
        if self._init_tokens_op is not None:
            session.run(self._init_tokens_op)
        if self._q_runner is not None:
            self._q_runner.create_threads(session, coord=coord, daemon=True, start=True)


__all__ = ["SyncReplicasOptimizer"]
