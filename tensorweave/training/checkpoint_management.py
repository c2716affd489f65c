"""The `checkpoint` state file and checkpoint files on disk.

Follows TF 1.x `checkpoint_management` and the reader helpers of `checkpoint_utils`.

The state file `<dir>/checkpoint` is a text-format `CheckpointState`; it is written by the
client (never by the save ops), atomically (temporary file + fsync + `os.replace`), and only
after the checkpoint it names is complete. Paths inside it follow TensorFlow: relative to
the directory when `save_relative_paths` is set or the directory itself is relative, else
as given; readers resolve relative entries against the directory.
"""

from __future__ import annotations

import glob
import logging
import os
import re
from typing import Any

from google.protobuf import text_format

from tensorweave.kernels import checkpoint_format
from tensorweave.protos import saver_pb2
from tensorweave.protos.checkpoint_state_pb2 import CheckpointState

_log = logging.getLogger(__name__)


def _state_filename(save_dir: str, latest_filename: str | None) -> str:
    return os.path.join(save_dir, latest_filename or "checkpoint")


def atomic_write_string_to_file(filename: str, contents: str) -> None:
    """Writes `contents` atomically (follows `file_io.atomic_write_string_to_file`).

    Readers see the old file or the whole new one.

    Raises:
      OSError: from the file system (the temporary file is removed).
    """

    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(contents)

    checkpoint_format.atomic_write(filename, write)


def generate_checkpoint_state_proto(
    save_dir: str,
    model_checkpoint_path: str,
    all_model_checkpoint_paths: list[str] | None = None,
    all_model_checkpoint_timestamps: list[float] | None = None,
    last_preserved_timestamp: float | None = None,
) -> Any:
    """A `CheckpointState` ending with `model_checkpoint_path` (TF's function of that name).

    Raises:
      ValueError: if the timestamps do not pair up with the paths.
    """
    paths = list(all_model_checkpoint_paths or [])
    if not paths or paths[-1] != model_checkpoint_path:
        paths.append(model_checkpoint_path)
    stamps = list(all_model_checkpoint_timestamps or [])
    if stamps and len(stamps) != len(paths):
        raise ValueError(
            f"Checkpoint timestamps, if provided, must match checkpoint paths (got paths "
            f"{paths} and timestamps {stamps})"
        )
    if not os.path.isabs(save_dir):
        if not os.path.isabs(model_checkpoint_path):
            model_checkpoint_path = os.path.relpath(model_checkpoint_path, save_dir)
        paths = [p if os.path.isabs(p) else os.path.relpath(p, save_dir) for p in paths]
    return CheckpointState(
        model_checkpoint_path=model_checkpoint_path,
        all_model_checkpoint_paths=paths,
        all_model_checkpoint_timestamps=stamps,
        last_preserved_timestamp=last_preserved_timestamp or 0.0,
    )


def update_checkpoint_state(
    save_dir: str,
    model_checkpoint_path: str,
    all_model_checkpoint_paths: list[str] | None = None,
    latest_filename: str | None = None,
    all_model_checkpoint_timestamps: list[float] | None = None,
    last_preserved_timestamp: float | None = None,
    save_relative_paths: bool = False,
) -> None:
    """Atomically rewrites the state file (follows `tf.train.update_checkpoint_state`).

    The file is `<save_dir>/<latest_filename or "checkpoint">`.

    Raises:
      RuntimeError: if the state file would be the checkpoint itself.
      OSError: from the file system.
    """
    filename = _state_filename(save_dir, latest_filename)
    paths = list(all_model_checkpoint_paths or [])
    if save_relative_paths:
        model_checkpoint_path = _relative(model_checkpoint_path, save_dir)
        paths = [_relative(p, save_dir) for p in paths]
    ckpt = generate_checkpoint_state_proto(
        save_dir,
        model_checkpoint_path,
        all_model_checkpoint_paths=paths,
        all_model_checkpoint_timestamps=all_model_checkpoint_timestamps,
        last_preserved_timestamp=last_preserved_timestamp,
    )
    if filename == ckpt.model_checkpoint_path:
        raise RuntimeError(
            f"Save path '{model_checkpoint_path}' conflicts with path used for checkpoint "
            "state.  Please use a different save path."
        )
    atomic_write_string_to_file(filename, text_format.MessageToString(ckpt))


def _relative(path: str, save_dir: str) -> str:
    return os.path.relpath(path, save_dir) if os.path.isabs(path) else path


def get_checkpoint_state(checkpoint_dir: str, latest_filename: str | None = None) -> Any:
    """The `CheckpointState` of a directory (follows `tf.train.get_checkpoint_state`).

    Relative paths are resolved against `checkpoint_dir`; None when there is no readable
    state file.
    """
    filename = _state_filename(checkpoint_dir, latest_filename)
    try:
        with open(filename, encoding="utf-8") as f:
            contents = f.read()
    except FileNotFoundError:
        return None
    except OSError as e:
        _log.warning("%s: Checkpoint ignored", e)
        return None
    ckpt = CheckpointState()
    try:
        text_format.Merge(contents, ckpt)
    except text_format.ParseError as e:
        _log.warning("%s: Checkpoint ignored", e)
        return None
    if not ckpt.model_checkpoint_path:
        _log.warning("Invalid checkpoint state loaded from %s", checkpoint_dir)
        return None
    if not os.path.isabs(ckpt.model_checkpoint_path):
        ckpt.model_checkpoint_path = os.path.join(checkpoint_dir, ckpt.model_checkpoint_path)
    for i, p in enumerate(ckpt.all_model_checkpoint_paths):
        if not os.path.isabs(p):
            ckpt.all_model_checkpoint_paths[i] = os.path.join(checkpoint_dir, p)
    return ckpt


def latest_checkpoint(checkpoint_dir: str, latest_filename: str | None = None) -> str | None:
    """The newest complete checkpoint of the state file, or None (`tf.train.latest_checkpoint`)."""
    ckpt = get_checkpoint_state(checkpoint_dir, latest_filename)
    if ckpt and ckpt.model_checkpoint_path:
        if checkpoint_exists(ckpt.model_checkpoint_path):
            return ckpt.model_checkpoint_path
        _log.error("Couldn't match files for checkpoint %s", ckpt.model_checkpoint_path)
    return None


def checkpoint_exists(checkpoint_prefix: str) -> bool:
    """True if `<prefix>.index` exists, i.e. a complete V2 checkpoint.

    Follows `tf.train.checkpoint_exists`; a V1 file at `prefix` also counts.
    """
    if os.path.exists(checkpoint_format.index_path(checkpoint_prefix)):
        return True
    return os.path.isfile(checkpoint_prefix) and not checkpoint_prefix.endswith(".meta")


def get_checkpoint_mtimes(checkpoint_prefixes: list[str]) -> list[float]:
    """Modification times of the existing checkpoints (`tf.train.get_checkpoint_mtimes`).

    In seconds since the epoch; missing checkpoints are left out.
    """
    mtimes = []
    for prefix in checkpoint_prefixes:
        for path in (checkpoint_format.index_path(prefix), prefix):
            if os.path.isfile(path):
                mtimes.append(os.stat(path).st_mtime_ns / 1e9)
                break
    return mtimes


def meta_graph_filename(checkpoint_filename: str, meta_graph_suffix: str = "meta") -> str:
    """`<prefix>.meta` for a checkpoint prefix (follows `meta_graph_filename`).

    A V1 shard suffix `-00001-of-00002` or `-?????-of-00002` is dropped first.
    """
    basename = re.sub(r"-[\d\?]+-of-\d+$", "", checkpoint_filename)
    return f"{basename}.{meta_graph_suffix}"


def remove_checkpoint(
    checkpoint_prefix: str,
    checkpoint_format_version: int = saver_pb2.SaverDef.V2,
    meta_graph_suffix: str = "meta",
) -> None:
    """Deletes a checkpoint's index, data and meta files (`tf.train.remove_checkpoint`).

    Missing files are ignored; the index goes first so a half-deleted checkpoint is never
    taken for a complete one.
    """
    if checkpoint_format_version == saver_pb2.SaverDef.V2:
        _delete_if_exists(checkpoint_format.index_path(checkpoint_prefix))
        for path in glob.glob(glob.escape(checkpoint_prefix) + ".data-?????-of-?????"):
            _delete_if_exists(path)
    else:
        _delete_if_exists(checkpoint_prefix)
    _delete_if_exists(meta_graph_filename(checkpoint_prefix, meta_graph_suffix))


def _delete_if_exists(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


# ------------------------------------------------------------------ readers
def NewCheckpointReader(filepattern: str) -> checkpoint_format.CheckpointReader:  # noqa: N802
    """A reader of checkpoint `filepattern` (follows `tf.train.NewCheckpointReader`).

    It has `has_tensor`, `get_tensor`, `get_variable_to_shape_map` and
    `get_variable_to_dtype_map`.

    Raises:
      errors.NotFoundError: if there is no such checkpoint.
      errors.DataLossError: if its index is corrupt.
    """
    return checkpoint_format.CheckpointReader(filepattern)


def _checkpoint_prefix(ckpt_dir_or_file: str) -> str:
    if os.path.isdir(ckpt_dir_or_file):
        prefix = latest_checkpoint(ckpt_dir_or_file)
        if prefix is None:
            raise ValueError(
                f"Couldn't find 'checkpoint' file or checkpoints in given "
                f"directory {ckpt_dir_or_file}"
            )
        return prefix
    return ckpt_dir_or_file


def load_checkpoint(ckpt_dir_or_file: str) -> checkpoint_format.CheckpointReader:
    """A reader of a directory's latest checkpoint, or of a prefix (`tf.train.load_checkpoint`).

    Raises:
      ValueError: for a directory without checkpoints.
      errors.NotFoundError: for a missing checkpoint.
    """
    return NewCheckpointReader(_checkpoint_prefix(ckpt_dir_or_file))


def list_variables(ckpt_dir_or_file: str) -> list[tuple[str, list[int]]]:
    """Sorted `(key, shape)` pairs of a checkpoint (follows `tf.train.list_variables`)."""
    shapes = load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map()
    return sorted(shapes.items())


def load_variable(ckpt_dir_or_file: str, name: str) -> Any:
    """The saved value of `name`, a `:0` suffix ignored (follows `tf.train.load_variable`).

    Raises:
      errors.NotFoundError: if the checkpoint or key is missing.
    """
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)


__all__ = [
    "NewCheckpointReader",
    "checkpoint_exists",
    "generate_checkpoint_state_proto",
    "get_checkpoint_mtimes",
    "get_checkpoint_state",
    "latest_checkpoint",
    "list_variables",
    "load_checkpoint",
    "load_variable",
    "remove_checkpoint",
    "update_checkpoint_state",
]
