"""`tf.train.init_from_checkpoint`, `warm_start`, `VocabInfo` and `checkpoints_iterator`
(follows TF 1.x `training/checkpoint_utils.py` and `warm_starting_util.py`).

`init_from_checkpoint` replaces the initializers of existing variables with `RestoreV2`
reads of a checkpoint (TensorFlow's mechanism: nothing runs until the variables are
initialized). The assignment map names checkpoint tensors or scopes (keys) and current
variables, variable names or scopes (values), as TensorFlow's.
"""

from __future__ import annotations

import collections
import os
import re
import time
from collections.abc import Iterator
from typing import Any

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops import io_ops, state_ops
from tensorweave.ops import variable_scope as vs
from tensorweave.ops.variables import GraphKeys, Variable
from tensorweave.training import checkpoint_management as cm


def _checkpoint_file(ckpt_dir_or_file: str) -> str:
    if os.path.isdir(ckpt_dir_or_file):
        path = cm.latest_checkpoint(ckpt_dir_or_file)
        if path is None:
            raise ValueError(
                f"Couldn't find 'checkpoint' file or checkpoints in given "
                f"directory {ckpt_dir_or_file}"
            )
        return path
    return ckpt_dir_or_file


def _slice_spec(variable: Variable) -> str:
    info = variable._get_save_slice_info()
    return info.spec if info is not None else ""


def _set_initializer(variable: Variable, ckpt_file: str, tensor_name: str) -> None:
    """Makes `variable`'s initializer read `tensor_name` from `ckpt_file`."""
    with graph_mod.device(variable.device), graph_mod.device("/cpu:0"):
        restore = io_ops.restore_v2(
            ckpt_file,
            [tensor_name],
            [_slice_spec(variable)],
            [variable.dtype.base_dtype],
            name="checkpoint_initializer",
        )[0]
        restore.set_shape(variable.get_shape())
        variable._initializer_op = state_ops.assign(variable, restore)
        variable._initial_value = restore


def _set_initializers(var: Any, ckpt_file: str, tensor_name: str) -> None:
    for v in var if isinstance(var, list) else [var]:
        _set_initializer(v, ckpt_file, tensor_name)


def _partitioned(name: str, store_vars: dict[str, Variable]) -> list[Variable] | None:
    parts = [v for key, v in store_vars.items() if re.match(re.escape(name) + r"/part_\d+$", key)]
    return sorted(parts, key=lambda v: v.op.name) or None


def _is_variable(x: Any) -> bool:
    return isinstance(x, Variable)


def _init_one(
    ckpt: str, ckpt_file: str, tensor: str, target: Any, shapes: dict, store_vars: dict
) -> bool:
    """One-to-one mapping; False when `target` names no variable (a scope mapping)."""
    var = target
    if not (_is_variable(target) or (isinstance(target, list) and all(map(_is_variable, target)))):
        var = store_vars.get(target)
        if var is None:
            var = _partitioned(target, store_vars)
    if var is None:
        return False
    if tensor not in shapes:
        raise ValueError(f"Tensor {tensor} is not found in {ckpt} checkpoint {shapes}")
    if _is_variable(var) and not var.get_shape().is_compatible_with(TensorShape(shapes[tensor])):
        raise ValueError(
            f"Shape of variable {var.name} ({var.get_shape()}) doesn't match with shape of "
            f"tensor {tensor} ({shapes[tensor]}) from checkpoint reader."
        )
    _set_initializers(var, ckpt_file, tensor)
    return True


def _init_scope(
    ckpt: str, ckpt_file: str, tensor: str, target: str, shapes: dict, store_vars: dict
) -> None:
    scopes = target[: target.rindex("/")] if "/" in target else ""
    if not tensor.endswith("/"):
        raise ValueError(
            f"Assignment map with scope only name {scopes} should map to scope only {tensor}. "
            "Should be 'scope/': 'other_scope/'."
        )
    names = set()
    for name in store_vars:
        if not scopes or name.startswith(scopes + "/"):
            names.add(name[: name.index("/part_")] if "/part_" in name else name)
    for name in sorted(names):
        full = name[len(scopes) :]
        if target != "/":
            full = full[1:]
        if tensor != "/":
            full = tensor + full
        full = full[:-1] if full.endswith("/") else full
        if full not in shapes:
            raise ValueError(
                f"Tensor {full} ({name[len(scopes) + 1 :]} in {tensor}) is not "
                f"found in {ckpt} checkpoint"
            )
        var = store_vars.get(name)
        if var is None:
            var = _partitioned(name, store_vars)
        _set_initializers(var, ckpt_file, full)


def init_from_checkpoint(ckpt_dir_or_file: str, assignment_map: Any) -> None:
    """Initializes variables from a checkpoint (follows `tf.train.init_from_checkpoint`).

    Args:
      ckpt_dir_or_file: a checkpoint prefix, or a directory (its latest checkpoint).
      assignment_map: `{checkpoint name: variable, variable name or list of partitions}`
        or `{"ckpt_scope/": "scope/"}` (every `get_variable` variable under `scope/` from
        the same names under `ckpt_scope/`; `"/"` is the root). A list of pairs works too.

    Raises:
      ValueError: for a missing tensor, a shape mismatch or a malformed scope mapping.
    """
    ckpt_file = _checkpoint_file(ckpt_dir_or_file)
    shapes = {name: shape for name, shape in cm.list_variables(ckpt_file)}
    store_vars = vs._get_default_variable_store()._vars
    items = assignment_map.items() if isinstance(assignment_map, dict) else assignment_map
    for tensor, target in sorted(items, key=lambda kv: kv[0]):
        if not _init_one(ckpt_dir_or_file, ckpt_file, tensor, target, shapes, store_vars):
            _init_scope(ckpt_dir_or_file, ckpt_file, tensor, target, shapes, store_vars)


class VocabInfo(
    collections.namedtuple(
        "VocabInfo",
        [
            "new_vocab",
            "new_vocab_size",
            "num_oov_buckets",
            "old_vocab",
            "old_vocab_size",
            "backup_initializer",
            "axis",
        ],
    )
):
    """How to remap a vocabulary-keyed variable when warm-starting (`tf.train.VocabInfo`)."""

    def __new__(
        cls,
        new_vocab,
        new_vocab_size,
        num_oov_buckets,
        old_vocab,
        old_vocab_size=-1,
        backup_initializer=None,
        axis=0,
    ):
        """Validates `axis`.

        Raises:
          ValueError: for an axis other than 0 or 1.
        """
        if axis not in (0, 1):
            raise ValueError(
                f"The only supported values for the axis argument are 0 and 1.  "
                f"Provided axis: {axis}"
            )
        return super().__new__(
            cls,
            new_vocab,
            new_vocab_size,
            num_oov_buckets,
            old_vocab,
            old_vocab_size,
            backup_initializer,
            axis,
        )


def warm_start(
    ckpt_to_initialize_from: str,
    vars_to_warm_start: Any = ".*",
    var_name_to_vocab_info: Any = None,
    var_name_to_prev_var_name: Any = None,
):
    """Initializes trainable variables from a checkpoint (follows `tf.train.warm_start`).

    Args:
      ckpt_to_initialize_from: a checkpoint prefix or directory.
      vars_to_warm_start: a regex over trainable variable names, a list of regexes or of
        variables, or None (nothing).
      var_name_to_vocab_info: vocabulary remapping; not supported (must be empty).
      var_name_to_prev_var_name: `{current name: name in the checkpoint}`.

    Raises:
      NotImplementedError: for vocabulary remapping.
      ValueError: for a variable missing from the checkpoint.
    """
    if var_name_to_vocab_info:
        raise NotImplementedError(
            "tf.train.warm_start with var_name_to_vocab_info (vocabulary remapping)"
        )
    if vars_to_warm_start is None:
        return
    prev = var_name_to_prev_var_name or {}
    candidates = graph_mod.get_collection(GraphKeys.TRAINABLE_VARIABLES)
    if isinstance(vars_to_warm_start, str):
        chosen = [v for v in candidates if re.match(vars_to_warm_start, v.op.name)]
    elif all(isinstance(v, str) for v in vars_to_warm_start):
        chosen = [v for v in candidates if any(re.match(p, v.op.name) for p in vars_to_warm_start)]
    else:
        chosen = list(vars_to_warm_start)
    mapping = {}
    for v in chosen:
        info = v._get_save_slice_info()
        name = info.full_name if info is not None else v.op.name
        mapping.setdefault(prev.get(name, name), []).append(v)
    targets = {k: parts[0] if len(parts) == 1 else parts for k, parts in mapping.items()}
    init_from_checkpoint(ckpt_to_initialize_from, targets)


def checkpoints_iterator(
    checkpoint_dir: str,
    min_interval_secs: float = 0,
    timeout: float | None = None,
    timeout_fn: Any = None,
) -> Iterator[str]:
    """Yields each new checkpoint of `checkpoint_dir` as it appears (`checkpoints_iterator`).

    Waits at most `timeout` seconds for the next one (None: forever); then calls
    `timeout_fn` (if any) and continues only if it returns False. Yields at most one
    checkpoint per `min_interval_secs`.
    """
    last = None
    while True:
        start = time.monotonic()
        path = _wait_for_new_checkpoint(checkpoint_dir, last, timeout=timeout)
        if path is None:
            if timeout_fn is None or timeout_fn():
                return
            continue
        last = path
        yield path
        remaining = min_interval_secs - (time.monotonic() - start)
        if remaining > 0:
            time.sleep(remaining)


def _wait_for_new_checkpoint(
    checkpoint_dir: str, last: str | None, seconds_to_sleep: float = 1, timeout: float | None = None
) -> str | None:
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        path = cm.latest_checkpoint(checkpoint_dir)
        if path is not None and path != last:
            return path
        if deadline is not None and time.monotonic() + seconds_to_sleep > deadline:
            return None
        time.sleep(seconds_to_sleep)


__all__ = ["VocabInfo", "checkpoints_iterator", "init_from_checkpoint", "warm_start"]
