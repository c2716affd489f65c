"""`tf.train.replica_device_setter` and the ps placement strategies.

Follows TensorFlow 1.15's `python/training/device_setter.py` (`replica_device_setter`,
`_RoundRobinStrategy`, `STANDARD_PS_OPS`) and `contrib/training/python/training/
device_setter.py` (`GreedyLoadBalancingStrategy`, `byte_size_load_fn`, `RandomStrategy`,
exported as `tf.contrib.training.*`).

The setter is a device *function*: `with tf.device(replica_device_setter(...)):` calls it
for every new op, after the inner (string) scopes have set `op.device`. Fields already set
on the op win; ps-op types (variables, queues, accumulators) get the ps device and a task
from the strategy, every other op gets the worker device. The strategy is called only for
ops that actually receive a ps task, so a variable pinned to another job (`/job:moon`) does
not use up a round-robin slot.

Deviation (colocation): TensorFlow's `_apply_op_helper` builds an op that takes a
reference input (`Assign`, `ScatterSub`, `ApplyGradientDescent`, ...) inside
`colocate_with(ref)`, so device functions never see it and it gets its variable's device.
tensorweave's `apply_op` does not (yet) do this, so the setter itself gives such ops the
device of their first reference input; otherwise `v.initializer` would be placed on the
worker and conflict with its variable on the ps when the graph is placed.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave.distributed.cluster_spec import ClusterSpec
from tensorweave.framework.device_spec import DeviceSpec
from tensorweave.framework.tensor_shape import TensorShape

_log = logging.getLogger(__name__)

# TensorFlow 1.15's list, plus tensorweave's queue and accumulator resource ops (which in
# TensorFlow only `ResourceConditionalAccumulator` covered).
STANDARD_PS_OPS = (
    "Variable",
    "VariableV2",
    "AutoReloadVariable",
    "MutableHashTable",
    "MutableHashTableV2",
    "MutableHashTableOfTensors",
    "MutableHashTableOfTensorsV2",
    "MutableDenseHashTable",
    "MutableDenseHashTableV2",
    "VarHandleOp",
    "BoostedTreesEnsembleResourceHandleOp",
    "BoostedTreesQuantileStreamResourceHandleOp",
    "ResourceConditionalAccumulator",
    "FIFOQueueV2",
    "ConditionalAccumulator",
    "SparseConditionalAccumulator",
)


class _RoundRobinStrategy:
    """Ps task indices 0, 1, ..., num_tasks - 1, 0, ... (TF's `_RoundRobinStrategy`).

    Args:
      num_tasks: int, the number of ps tasks to cycle over.
    """

    def __init__(self, num_tasks: int):
        self._num_tasks = num_tasks
        self._next_task = 0

    def __call__(self, unused_op: Any) -> int:
        """The next task index (int); advances the counter."""
        task = self._next_task
        self._next_task = (self._next_task + 1) % self._num_tasks
        return task


def _op_type(op: Any) -> str:
    # An `Operation` has `type`; a `NodeDef` proto (TF passes those too) has `op`.
    return op.type if hasattr(op, "type") else op.op


def _ref_input_device(op: Any) -> str | None:
    """The device of `op`'s first reference input, or None (see the module docstring)."""
    for t in getattr(op, "inputs", ()):
        if t.dtype._is_ref_dtype:
            return t.op.device
    return None


class _ReplicaDeviceChooser:
    """The device function behind `replica_device_setter` (TF's `_ReplicaDeviceChooser`)."""

    def __init__(
        self,
        ps_tasks: int,
        ps_device: str,
        worker_device: str,
        merge_devices: bool,
        ps_ops: Any,
        ps_strategy: Callable[[Any], int],
    ):
        self._ps_tasks = ps_tasks
        self._ps_device = ps_device
        self._worker_device = worker_device
        self._merge_devices = merge_devices
        self._ps_ops = frozenset(ps_ops)
        self._ps_strategy = ps_strategy

    def device_function(self, op: Any) -> str:
        """The device string for `op` (an `Operation` or `NodeDef`).

        Raises:
          ValueError: if `op.device` or one of the configured devices does not parse.
        """
        if not self._merge_devices and op.device:
            return op.device
        ref_device = _ref_input_device(op)
        if ref_device is not None:
            return ref_device
        current = DeviceSpec.from_string(op.device or "")
        if self._ps_tasks and self._ps_device and _op_type(op) in self._ps_ops:
            ps_spec = DeviceSpec.from_string(self._ps_device)
            if ps_spec.job and (not current.job or current.job == ps_spec.job):
                ps_spec.task = self._ps_strategy(op)
            return ps_spec.make_merged_spec(current).to_string()
        worker_spec = DeviceSpec.from_string(self._worker_device or "")
        return worker_spec.make_merged_spec(current).to_string()


def replica_device_setter(
    ps_tasks: int = 0,
    ps_device: str = "/job:ps",
    worker_device: str = "/job:worker",
    merge_devices: bool = True,
    cluster: Any = None,
    ps_ops: Any = None,
    ps_strategy: Callable[[Any], int] | None = None,
) -> Callable[[Any], str] | None:
    """A device function for between-graph replication (follows `tf.train.replica_device_setter`).

    Use as `with tf.device(replica_device_setter(cluster=spec)):`. Ops whose type is in
    `ps_ops` go to `ps_device` with `task = ps_strategy(op)` (round robin by default);
    every other op goes to `worker_device`. Device fields set by inner scopes win
    (`merge_devices=True`), e.g. a `/cpu:0` scope gives `/job:ps/task:0/device:CPU:0` for
    a variable and `/job:worker/device:CPU:0` for a computation. The task is set only when
    `ps_device` names a job and the op's own job is unset or that same job.

    Args:
      ps_tasks: int, the number of ps tasks; ignored (recomputed) when `cluster` is given.
      ps_device: str, the ps device (e.g. "/job:ps" or "/job:moon/cpu:0"); "" disables ps
        placement.
      worker_device: str, the device of non-ps ops (e.g. "/job:worker/task:3").
      merge_devices: bool; False keeps any device already set on an op unchanged (and logs
        a deprecation warning, as TensorFlow does).
      cluster: a `ClusterSpec`, a dict of job -> addresses, or a `ClusterDef`; `ps_tasks`
        becomes the number of tasks of `ps_device`'s job.
      ps_ops: op type names placed on ps tasks (default `STANDARD_PS_OPS`).
      ps_strategy: `fn(op) -> task index`, called once per ps-placed op (default
        `_RoundRobinStrategy(ps_tasks)`).

    Returns:
      The device function `fn(op) -> str`, or None when `cluster` has no job of
      `ps_device`'s name or `ps_tasks` is 0 (`tf.device(None)` then clears outer scopes).

    Raises:
      TypeError: if `cluster` is not a valid cluster description, or "ps_strategy must
        be callable".
      ValueError: if `ps_device` does not parse.
    """
    if cluster is not None:
        cluster_dict = ClusterSpec(cluster).as_dict()
        ps_job_name = DeviceSpec.from_string(ps_device).job
        if ps_job_name not in cluster_dict or cluster_dict[ps_job_name] is None:
            return None
        ps_tasks = len(cluster_dict[ps_job_name])
    if ps_tasks == 0:
        return None
    if ps_ops is None:
        ps_ops = list(STANDARD_PS_OPS)
    if not merge_devices:
        _log.warning(
            "DEPRECATION: It is recommended to set merge_devices=true in replica_device_setter"
        )
    if ps_strategy is None:
        ps_strategy = _RoundRobinStrategy(ps_tasks)
    if not callable(ps_strategy):
        raise TypeError("ps_strategy must be callable")
    chooser = _ReplicaDeviceChooser(
        ps_tasks, ps_device, worker_device, merge_devices, ps_ops, ps_strategy
    )
    return chooser.device_function


# ------------------------------------------------------------------ contrib strategies
class GreedyLoadBalancingStrategy:
    """Each ps op to the least-loaded ps task so far (`contrib.training` greedy strategy).

    Follows `tf.contrib.training.GreedyLoadBalancingStrategy`.

    The result depends on the order in which ps ops are created. Ties go to the lowest
    task index, so a constant load reproduces round robin.

    Args:
      num_tasks: int, the number of ps tasks.
      load_fn: `fn(op) -> number`, the load an op adds (e.g. `byte_size_load_fn`).
    """

    def __init__(self, num_tasks: int, load_fn: Callable[[Any], float]):
        self._num_tasks = num_tasks
        self._load_fn = load_fn
        self._ps_loads = np.zeros(num_tasks)

    def __call__(self, op: Any) -> int:
        """The least-loaded task index (int); adds `load_fn(op)` to its load."""
        task = int(np.argmin(self._ps_loads))
        self._ps_loads[task] += self._load_fn(op)
        return task


def byte_size_load_fn(op: Any) -> int:
    """The byte size of `op`'s single output (`tf.contrib.training.byte_size_load_fn`).

    That is its number of elements times the dtype's size.

    A variable op's output shape is not known yet while device functions run, so the
    op's `shape` attr is used then.

    Args:
      op: an `Operation` with one output, typically a `VariableV2`.

    Returns:
      int, the number of bytes.

    Raises:
      ValueError: if `op` does not have exactly one output, or its shape is not fully
        defined.
    """
    if len(op.outputs) != 1:
        raise ValueError(f"Op {op} must have a single output")
    output = op.outputs[0]
    elem_size = output.dtype.size
    shape = output.shape
    if not shape.is_fully_defined():
        shape = TensorShape(op.get_attr("shape"))
    shape.assert_is_fully_defined()
    return shape.num_elements() * elem_size


class RandomStrategy:
    """A deterministic pseudo-random ps task per op name (`tf.contrib.training.RandomStrategy`).

    The task is `int(md5("<op name>_<seed>"), 16) % num_ps_tasks`, so it is stable across
    runs and processes (unlike Python's `hash`).

    Args:
      num_ps_tasks: int, the number of ps tasks.
      seed: int, mixed into the hashed key.
    """

    def __init__(self, num_ps_tasks: int, seed: int = 0):
        self._num_ps_tasks = num_ps_tasks
        self._seed = seed

    def __call__(self, op: Any) -> int:
        """The task index (int) for `op` (anything with a `name`)."""
        key = f"{op.name}_{int(self._seed)}".encode()
        return int(int(hashlib.md5(key).hexdigest(), 16) % self._num_ps_tasks)


__all__ = [
    "GreedyLoadBalancingStrategy",
    "RandomStrategy",
    "STANDARD_PS_OPS",
    "byte_size_load_fn",
    "replica_device_setter",
]
