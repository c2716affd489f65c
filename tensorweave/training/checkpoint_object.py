"""Basic `tf.train.Checkpoint`, `CheckpointManager` and `CheckpointOptions` over the
name-based `Saver` (follows the graph-mode use of TF's object-based checkpoints).

A `Checkpoint(**objects)` saves each variable attribute under the key
`<attr>/.ATTRIBUTES/VARIABLE_VALUE` (TensorFlow's key for a variable attribute), and the
variables of other attributes (layers' `variables`, optimizers' `variables()`) under
`<attr>/<variable name>/.ATTRIBUTES/VARIABLE_VALUE`, with `save_counter` alongside.

Deviation: no `_CHECKPOINTABLE_OBJECT_GRAPH` entry is written and restoring matches keys
only (no object-graph matching of nested dependencies); async options have no effect.
"""

from __future__ import annotations

import os
from typing import Any

from tensorweave.client.session import get_default_session
from tensorweave.framework import dtypes
from tensorweave.ops import state_ops, variables
from tensorweave.ops.variables import Variable
from tensorweave.training import checkpoint_management as cm
from tensorweave.training.saver import Saver

_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"


class CheckpointOptions:
    """Options of `Checkpoint.save`/`write`/`restore` (follows `tf.train.CheckpointOptions`).

    The values are kept; tensorweave always writes synchronously on the local device.
    """

    def __init__(
        self,
        experimental_io_device=None,
        experimental_enable_async_checkpoint=False,
        experimental_write_callbacks=None,
        enable_async=False,
        experimental_skip_slot_variables=False,
        experimental_sharding_callback=None,
    ):
        self.experimental_io_device = experimental_io_device
        self.experimental_enable_async_checkpoint = experimental_enable_async_checkpoint
        self.experimental_write_callbacks = experimental_write_callbacks
        self.enable_async = enable_async
        self.experimental_skip_slot_variables = experimental_skip_slot_variables
        self.experimental_sharding_callback = experimental_sharding_callback


def _session(session: Any) -> Any:
    session = session or get_default_session()
    if session is None:
        raise ValueError(
            "Checkpoint in graph mode needs a session: pass `session=` or use "
            "it inside `with tf.Session():`"
        )
    return session


def _variables_of(obj: Any) -> list[Variable]:
    found = getattr(obj, "variables", None)
    found = found() if callable(found) else found
    if found is None:
        raise ValueError(
            f"Checkpoint cannot save an object of type {type(obj).__name__}: "
            "expected a Variable or an object with `variables`"
        )
    return list(found)


class _RestoreStatus:
    """What `Checkpoint.restore` returns (`assert_consumed`, `run_restore_ops`, ...)."""

    def __init__(self, checkpoint: Checkpoint, save_path: str | None, keys: set[str]):
        self._checkpoint, self._path, self._keys = checkpoint, save_path, keys

    def run_restore_ops(self, session: Any = None) -> None:
        """Loads the matching variables from the checkpoint."""
        mapping = {k: v for k, v in self._checkpoint._var_map().items() if k in self._keys}
        if self._path is not None and mapping:
            Saver(var_list=mapping).restore(_session(session), self._path)

    def initialize_or_restore(self, session: Any = None) -> None:
        """Restores from the checkpoint, or initializes everything without one."""
        session = _session(session)
        if self._path is None:
            session.run(variables.variables_initializer(list(self._checkpoint._var_map().values())))
        else:
            self.run_restore_ops(session)

    def assert_consumed(self) -> _RestoreStatus:
        """Checks that every object variable and every checkpoint value was matched.

        Raises:
          AssertionError: otherwise, naming the unmatched keys.
        """
        ours = set(self._checkpoint._var_map())
        if self._path is not None and ours != self._keys:
            raise AssertionError(
                f"Unmatched checkpoint values {sorted(self._keys - ours)} or "
                f"objects {sorted(ours - self._keys)}"
            )
        return self

    def assert_existing_objects_matched(self) -> _RestoreStatus:
        """Checks that every object variable has a checkpoint value.

        Raises:
          AssertionError: naming the objects without one.
        """
        missing = set(self._checkpoint._var_map()) - self._keys
        if self._path is not None and missing:
            raise AssertionError(f"Objects not found in the checkpoint: {sorted(missing)}")
        return self

    def assert_nontrivial_match(self) -> _RestoreStatus:
        """Checks that something besides `save_counter` matched.

        Raises:
          AssertionError: otherwise.
        """
        matched = set(self._checkpoint._var_map()) & self._keys
        if not matched - {"save_counter" + _SUFFIX}:
            raise AssertionError("Nothing except the root object matched a checkpointed value.")
        return self

    def expect_partial(self) -> _RestoreStatus:
        """Silences warnings about unmatched values (there are none here)."""
        return self


class Checkpoint:
    """Saves and restores a set of variables and objects (follows `tf.train.Checkpoint`).

    Args:
      **kwargs: named `Variable`s, or objects with `variables` (layers, optimizers).
    """

    def __init__(self, **kwargs: Any):
        for name, obj in kwargs.items():
            setattr(self, name, obj)
        self._objects = dict(kwargs)
        self._save_counter: Variable | None = None
        self._counter_ops: tuple[Any, Any] | None = None
        self._savers: dict[tuple[str, ...], Saver] = {}

    @property
    def save_counter(self) -> Variable:
        """int64 variable counting `save` calls (created on first use)."""
        if self._save_counter is None:
            self._save_counter = Variable(
                0, dtype=dtypes.int64, trainable=False, name="save_counter"
            )
        return self._save_counter

    def _ready_counter(self, session: Any) -> Any:
        """Initializes `save_counter` if needed; returns its (cached) increment op."""
        if self._counter_ops is None:
            counter = self.save_counter
            self._counter_ops = (
                state_ops.is_variable_initialized(counter),
                state_ops.assign_add(counter, 1),
            )
        if not session.run(self._counter_ops[0]):
            session.run(self.save_counter.initializer)
        return self._counter_ops[1]

    def _saver(self) -> Saver:
        mapping = self._var_map()
        key = tuple(sorted(mapping))
        if key not in self._savers:
            self._savers[key] = Saver(var_list=mapping)
        return self._savers[key]

    def _var_map(self) -> dict[str, Variable]:
        mapping: dict[str, Variable] = {"save_counter" + _SUFFIX: self.save_counter}
        for attr, obj in self._objects.items():
            if isinstance(obj, Variable):
                mapping[attr + _SUFFIX] = obj
            else:
                for v in _variables_of(obj):
                    mapping[f"{attr}/{v.op.name}{_SUFFIX}"] = v
        return mapping

    def write(self, file_prefix: str, session: Any = None, options: Any = None) -> str:
        """Writes the checkpoint `file_prefix` without counting; returns its path."""
        session = _session(session)
        self._ready_counter(session)
        return self._saver().save(session, file_prefix, write_meta_graph=False, write_state=False)

    def save(self, file_prefix: str, session: Any = None, options: Any = None) -> str:
        """Increments `save_counter` and writes `<file_prefix>-<save_counter>`."""
        session = _session(session)
        number = session.run(self._ready_counter(session))
        return self.write(f"{file_prefix}-{int(number)}", session)

    def restore(self, save_path: str | None, options: Any = None) -> _RestoreStatus:
        """A status whose `run_restore_ops`/`initialize_or_restore` loads `save_path`.

        `save_path` None means "nothing to restore" (`initialize_or_restore` initializes).
        """
        keys = set() if save_path is None else {k for k, _ in cm.list_variables(save_path)}
        return _RestoreStatus(self, save_path, keys)

    def read(self, save_path: str, options: Any = None) -> _RestoreStatus:
        """The same as `restore`."""
        return self.restore(save_path, options)


class CheckpointManager:
    """Keeps the last `max_to_keep` checkpoints of a `Checkpoint` in `directory`.

    Follows `tf.train.CheckpointManager`: paths are `<directory>/<checkpoint_name>-<n>` and
    the `checkpoint` state file lists them (readable by `tf.train.latest_checkpoint`).

    Args:
      checkpoint: the `Checkpoint` to save.
      directory: where to write.
      max_to_keep: how many to keep (None: all).
      keep_checkpoint_every_n_hours: accepted; not applied.
      checkpoint_name: the file prefix.
      step_counter: a variable whose value numbers the checkpoints (default:
        `save_counter`).
      checkpoint_interval: minimum steps between saves (needs `step_counter`).
      init_fn: called by `restore_or_initialize` when there is no checkpoint.
      last_checkpoint_step: accepted for compatibility.

    Raises:
      ValueError: for `checkpoint_interval` without `step_counter`.
    """

    def __init__(
        self,
        checkpoint,
        directory,
        max_to_keep,
        keep_checkpoint_every_n_hours=None,
        checkpoint_name="ckpt",
        step_counter=None,
        checkpoint_interval=None,
        init_fn=None,
        last_checkpoint_step=None,
    ):
        if checkpoint_interval is not None and step_counter is None:
            raise ValueError(
                "`step_counter` should be passed if `checkpoint_interval` is not None."
            )
        self._checkpoint = checkpoint
        self._directory = directory
        self._max_to_keep = max_to_keep
        self._prefix = os.path.join(directory, checkpoint_name)
        self._step_counter = step_counter
        self._interval = checkpoint_interval
        self._init_fn = init_fn
        self._last_step = last_checkpoint_step
        state = cm.get_checkpoint_state(directory)
        self._checkpoints = list(state.all_model_checkpoint_paths) if state is not None else []

    @property
    def directory(self) -> str:
        """The checkpoint directory."""
        return self._directory

    @property
    def checkpoints(self) -> list[str]:
        """The kept checkpoint paths, oldest first."""
        return list(self._checkpoints)

    @property
    def latest_checkpoint(self) -> str | None:
        """The newest checkpoint path, or None."""
        return self._checkpoints[-1] if self._checkpoints else None

    def save(self, checkpoint_number=None, check_interval=True, options=None, session=None):
        """Saves `<prefix>-<n>`, deletes checkpoints beyond `max_to_keep`; returns the path
        (None when `checkpoint_interval` says it is too early)."""
        session = _session(session)
        if self._interval is not None and check_interval:
            step = int(session.run(self._step_counter))
            if self._last_step is not None and step < self._last_step + self._interval:
                return None
            self._last_step = step
        count = int(session.run(self._checkpoint._ready_counter(session)))
        if checkpoint_number is None:
            step = self._step_counter
            checkpoint_number = int(session.run(step)) if step is not None else count
        path = self._checkpoint.write(f"{self._prefix}-{int(checkpoint_number)}", session)
        if path in self._checkpoints:
            self._checkpoints.remove(path)
        self._checkpoints.append(path)
        if self._max_to_keep is not None:
            while len(self._checkpoints) > self._max_to_keep:
                cm.remove_checkpoint(self._checkpoints.pop(0))
        cm.update_checkpoint_state(self._directory, path, self._checkpoints)
        return path

    def restore_or_initialize(self, session: Any = None) -> str | None:
        """Restores the latest checkpoint (returns its path), else calls `init_fn`."""
        if self.latest_checkpoint is not None:
            self._checkpoint.restore(self.latest_checkpoint).run_restore_ops(session)
            return self.latest_checkpoint
        if self._init_fn is not None:
            self._init_fn()
        return None


__all__ = ["Checkpoint", "CheckpointManager", "CheckpointOptions"]
