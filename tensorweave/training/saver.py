"""`tf.train.Saver`: V2 checkpoints of variables, meta graph export and import.

Follows TF 1.x `python/training/saver.py`.

The save and restore ops run on the devices the graph places them on (see
`saver_builder`); this client only feeds the checkpoint prefix, writes the `.meta` file and
keeps the `checkpoint` state file. `save` order, chosen so a crash at any point leaves the
state file naming only complete checkpoints:

1. run the save op (data files, then the index, each via temporary file + `os.replace`);
2. write `<prefix>.meta` (atomically; TensorFlow writes it last, after step 3);
3. atomically rewrite the `checkpoint` state file;
4. delete the checkpoints that fell out of `max_to_keep`.
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any

from tensorweave import errors
from tensorweave.framework import graph as graph_mod
from tensorweave.kernels import checkpoint_format
from tensorweave.ops.variables import GraphKeys
from tensorweave.protos import saver_pb2
from tensorweave.training import checkpoint_management, meta_graph
from tensorweave.training.checkpoint_management import (
    checkpoint_exists,
    get_checkpoint_mtimes,
    get_checkpoint_state,
    latest_checkpoint,
    remove_checkpoint,
    update_checkpoint_state,
)
from tensorweave.training.saver_builder import BaseSaverBuilder, BulkSaverBuilder

_log = logging.getLogger(__name__)


def _all_saveable_objects(scope: str | None = None) -> list[Any]:
    g = graph_mod.get_default_graph()
    return g.get_collection(GraphKeys.GLOBAL_VARIABLES, scope) + g.get_collection(
        GraphKeys.SAVEABLE_OBJECTS, scope
    )


def _restore_error(err: errors.OpError, cause: str) -> errors.OpError:
    """`err` (same class, node and op) with a first paragraph naming the likely cause."""
    return type(err)(
        err.node_def, err.op,
        f"Restoring from checkpoint failed, most likely because {cause}. Was the graph "
        f"changed since the checkpoint was written?\n\nThe restore op's error:\n\n"
        f"{err.message}",
    )


def _is_empty(var_list: Any) -> bool:
    return isinstance(var_list, list | tuple | set | dict) and not var_list


class Saver:
    """Saves and restores variables (follows TF 1.x `tf.train.Saver`).

    Args:
      var_list: variables (or `SaveableObject`s) to save, as a list (checkpoint keys are
        the variables' op names) or a dict key -> variable. Default: all global variables
        and the `SAVEABLE_OBJECTS` collection.
      reshape: allow restoring a saved tensor of another shape with the same number of
        elements (the restored value is reshaped).
      sharded: one save op per variable device (on that device's CPU), merged into one
        checkpoint by `MergeV2Checkpoints`.
      max_to_keep: how many recent checkpoints to keep (None or 0: all).
      keep_checkpoint_every_n_hours: additionally keep one checkpoint per this many hours.
      name: name scope of the save/restore ops (default `save`); with `saver_def`, the
        import scope prepended to its names.
      restore_sequentially: accepted for compatibility (V2 restores are bulk reads).
      saver_def: a `SaverDef` naming existing ops (e.g. from a meta graph) to use instead
        of building new ones.
      builder: a `BaseSaverBuilder` (default `BulkSaverBuilder`).
      defer_build: build the ops in `build()` instead of now.
      allow_empty: allow an empty var_list (save and restore then do nothing).
      write_version: `SaverDef.V2` (the only format tensorweave writes).
      pad_step_number: format global steps as `%08d`.
      save_relative_paths: write paths relative to the directory in the state file.
      filename: default checkpoint prefix of the filename placeholder.

    Raises:
      TypeError: for a var_list that is not a list or dict of variables.
      ValueError: for duplicate names, an empty var_list without `allow_empty` ("No
        variables to save"), `defer_build` with a var_list, or an invalid `saver_def`.
    """

    def __init__(
        self,
        var_list: Any = None,
        reshape: bool = False,
        sharded: bool = False,
        max_to_keep: int | None = 5,
        keep_checkpoint_every_n_hours: float = 10000.0,
        name: str | None = None,
        restore_sequentially: bool = False,
        saver_def: Any = None,
        builder: Any = None,
        defer_build: bool = False,
        allow_empty: bool = False,
        write_version: int = saver_pb2.SaverDef.V2,
        pad_step_number: bool = False,
        save_relative_paths: bool = False,
        filename: str | None = None,
    ):
        if defer_build and var_list is not None and not _is_empty(var_list):
            raise ValueError(
                "If `var_list` is provided then build cannot be deferred. Either "
                "set defer_build=False or var_list=None."
            )
        self._var_list = var_list
        self._reshape = reshape
        self._sharded = sharded
        self._max_to_keep = max_to_keep
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._name = name
        self._restore_sequentially = restore_sequentially
        self.saver_def = saver_def
        self._builder = builder
        self._is_built = False
        self._allow_empty = allow_empty
        self._is_empty: bool | None = None
        self._write_version = write_version
        self._pad_step_number = pad_step_number
        self._filename = filename
        self._save_relative_paths = save_relative_paths
        self._last_checkpoints: list[tuple[str, float]] = []
        self._checkpoints_to_be_deleted: list[tuple[str, float]] = []
        self._next_checkpoint_time = 0.0
        if self.saver_def is not None:
            self._check_saver_def()
            self._write_version = self.saver_def.version
        if not defer_build:
            self.build()

    # ------------------------------------------------------------------ build
    def build(self) -> None:
        """Builds the save/restore ops (or adopts `saver_def`'s); idempotent.

        Raises:
          ValueError: "No variables to save" for an empty var_list without `allow_empty`.
        """
        if self._is_built:
            return
        self._is_built = True
        if self.saver_def is None:
            if self._builder is None:
                self._builder = BulkSaverBuilder(self._write_version)
            if self._var_list is None:
                self._var_list = _all_saveable_objects()
            if _is_empty(self._var_list):
                if self._allow_empty:
                    self._is_empty = True
                    return
                raise ValueError("No variables to save")
            self._is_empty = False
            self.saver_def = self._builder._build_internal(
                self._var_list,
                reshape=self._reshape,
                sharded=self._sharded,
                max_to_keep=self._max_to_keep,
                keep_checkpoint_every_n_hours=self._keep_checkpoint_every_n_hours,
                name=self._name,
                restore_sequentially=self._restore_sequentially,
                filename=self._filename or "model",
            )
        elif self._name:
            self.saver_def = meta_graph._scoped_saver_def(
                self.saver_def, self._name, meta_graph.prepend_name_scope
            )
        self._is_empty = False
        self._check_saver_def()
        self._next_checkpoint_time = (
            time.time() + self.saver_def.keep_checkpoint_every_n_hours * 3600
        )

    def _check_saver_def(self) -> None:
        if not isinstance(self.saver_def, saver_pb2.SaverDef):
            raise ValueError(f"saver_def must be a saver_pb2.SaverDef: {self.saver_def}")
        if not self.saver_def.save_tensor_name:
            raise ValueError(f"saver_def must specify the save_tensor_name: {self.saver_def}")
        if not self.saver_def.restore_op_name:
            raise ValueError(f"saver_def must specify the restore_op_name: {self.saver_def}")

    def as_saver_def(self) -> Any:
        """The `SaverDef` (names of the filename tensor, save tensor and restore op)."""
        return self.saver_def

    def to_proto(self, export_scope: str | None = None) -> Any:
        """The `SaverDef` with `export_scope` stripped (for the `SAVERS` collection).

        None when the saver is outside that scope.
        """
        if export_scope is None:
            return self.saver_def
        names = (
            self.saver_def.filename_tensor_name,
            self.saver_def.save_tensor_name,
            self.saver_def.restore_op_name,
        )
        if not all(n.startswith(export_scope) for n in names):
            return None
        return meta_graph._scoped_saver_def(
            self.saver_def, export_scope, meta_graph.strip_name_scope
        )

    @staticmethod
    def from_proto(saver_def: Any, import_scope: str | None = None) -> Saver:
        """A Saver using the ops named by `saver_def` (under `import_scope`)."""
        return Saver(saver_def=saver_def, name=import_scope)

    # ----------------------------------------------------- last checkpoints
    @property
    def last_checkpoints(self) -> list[str]:
        """The kept checkpoint prefixes, oldest first."""
        return [p for p, _ in self._last_checkpoints]

    def set_last_checkpoints(self, last_checkpoints: list[str]) -> None:
        """Deprecated: sets the kept checkpoints (without times).

        Raises:
          AssertionError: if `last_checkpoints` is not a list.
        """
        assert isinstance(last_checkpoints, list)
        self._last_checkpoints = [(p, None) for p in last_checkpoints]  # type: ignore[misc]

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time: list) -> None:
        """Sets the kept checkpoints as `(prefix, timestamp)` pairs, oldest first.

        Raises:
          AssertionError: if the argument is not a list.
        """
        assert isinstance(last_checkpoints_with_time, list)
        self._last_checkpoints = list(last_checkpoints_with_time)

    def recover_last_checkpoints(self, checkpoint_paths: list[str]) -> None:
        """Adopts the existing ones of `checkpoint_paths` as the kept checkpoints.

        Their file times become their save times, e.g. for
        `get_checkpoint_state(d).all_model_checkpoint_paths` after a restart.
        """
        recovered = []
        for path in checkpoint_paths:
            mtimes = get_checkpoint_mtimes([path])
            if mtimes:
                recovered.append((path, mtimes[0]))
        self.set_last_checkpoints_with_time(recovered)

    def _record_last_checkpoint(self, latest_save_path: str) -> None:
        if not self.saver_def.max_to_keep:
            return
        self._last_checkpoints = [p for p in self._last_checkpoints if p[0] != latest_save_path]
        self._last_checkpoints.append((latest_save_path, time.time()))
        while len(self._last_checkpoints) > self.saver_def.max_to_keep:
            self._checkpoints_to_be_deleted.append(self._last_checkpoints.pop(0))

    def _maybe_delete_old_checkpoints(self, meta_graph_suffix: str = "meta") -> None:
        while self._checkpoints_to_be_deleted:
            path, stamp = self._checkpoints_to_be_deleted.pop(0)
            if stamp is not None and stamp > self._next_checkpoint_time:
                self._next_checkpoint_time += self.saver_def.keep_checkpoint_every_n_hours * 3600
                continue
            try:
                remove_checkpoint(path, self.saver_def.version, meta_graph_suffix)
            except OSError as e:
                _log.warning("Ignoring: %s", e)

    # ------------------------------------------------------------ save/restore
    def save(
        self,
        sess: Any,
        save_path: str,
        global_step: Any = None,
        latest_filename: str | None = None,
        meta_graph_suffix: str = "meta",
        write_meta_graph: bool = True,
        write_state: bool = True,
        strip_default_attrs: bool = False,
        save_debug_info: bool = False,
    ) -> str | None:
        """Saves the variables as checkpoint `save_path` (or `save_path-<global_step>`).

        Args:
          sess: the Session that holds the variables.
          save_path: the checkpoint prefix, e.g. `/tmp/train/model.ckpt`.
          global_step: an int, or a Tensor/Variable/name whose value is fetched, appended
            as `-%d` (`-%08d` with `pad_step_number`).
          latest_filename: the state file's name in the prefix's directory (default
            `checkpoint`).
          meta_graph_suffix: suffix of the meta graph file (`<prefix>.meta`).
          write_meta_graph: also export the meta graph.
          write_state: update the state file and prune old checkpoints.
          strip_default_attrs: strip default-valued attrs from the exported graph.
          save_debug_info: accepted for compatibility; ignored.

        Returns:
          The checkpoint prefix written (for `restore`), or None for an empty Saver.

        Files written: `<prefix>.data-0000K-of-0000N`, `<prefix>.index`, `<prefix>.meta`,
        `<dir>/<latest_filename>`; checkpoints beyond `max_to_keep` are deleted.

        Raises:
          RuntimeError: if `defer_build` was set and `build()` not called.
          TypeError: if `sess` is not a session.
          ValueError: for a `latest_filename` with a directory part or colliding with
            `save_path`, or a parent directory that does not exist.
          errors.OpError: from the save ops (e.g. `PermissionDeniedError`).
        """
        if not self._is_built:
            raise RuntimeError("`build()` should be called before save if defer_build==True")
        latest_filename = latest_filename or "checkpoint"
        if os.path.split(latest_filename)[0]:
            raise ValueError("'latest_filename' must not contain path components")
        if not callable(getattr(sess, "run", None)):
            raise TypeError(f"'sess' must be a Session; {sess}")
        save_path = os.fspath(save_path)
        checkpoint_file = self._checkpoint_file(sess, save_path, global_step, latest_filename)
        parent = os.path.dirname(save_path)
        prefix = None
        if not self._is_empty:
            prefix = self._run_save(sess, checkpoint_file, save_path)
        if write_meta_graph:
            meta_file = checkpoint_management.meta_graph_filename(
                checkpoint_file, meta_graph_suffix
            )
            with sess.graph.as_default():
                self.export_meta_graph(meta_file, strip_default_attrs=strip_default_attrs)
        if write_state and prefix is not None:
            self._record_last_checkpoint(prefix)
            update_checkpoint_state(
                parent,
                prefix,
                all_model_checkpoint_paths=self.last_checkpoints,
                latest_filename=latest_filename,
                save_relative_paths=self._save_relative_paths,
            )
            self._maybe_delete_old_checkpoints(meta_graph_suffix=meta_graph_suffix)
        del save_debug_info
        return prefix

    def _checkpoint_file(
        self, sess: Any, save_path: str, global_step: Any, latest_filename: str
    ) -> str:
        if global_step is None:
            sharded = self.saver_def.sharded if self.saver_def is not None else self._sharded
            if os.path.basename(save_path) == latest_filename and not sharded:
                raise ValueError(
                    f"'latest_filename' collides with 'save_path': "
                    f"'{latest_filename}' and '{save_path}'"
                )
            return save_path
        if not isinstance(global_step, int) and not hasattr(global_step, "__index__"):
            global_step = sess.run(global_step)
        step = int(global_step)
        return f"{save_path}-{step:08d}" if self._pad_step_number else f"{save_path}-{step}"

    def _run_save(self, sess: Any, checkpoint_file: str, save_path: str) -> str:
        try:
            result = sess.run(
                self.saver_def.save_tensor_name,
                {self.saver_def.filename_tensor_name: checkpoint_file},
            )
        except (errors.FailedPreconditionError, errors.NotFoundError) as e:
            parent = os.path.dirname(save_path)
            if parent and not os.path.isdir(parent):
                raise ValueError(
                    f"Parent directory of {save_path} doesn't exist, can't save."
                ) from e
            raise
        return result.decode("utf-8") if isinstance(result, bytes) else str(result)

    def restore(self, sess: Any, save_path: str) -> None:
        """Restores the variables from checkpoint `save_path` by running the restore op.

        Raises:
          ValueError: if `save_path` is None.
          errors.NotFoundError: if the checkpoint does not exist ("Failed to find any
            matching files for <save_path>") or lacks a variable ("Key <name> not found in
            checkpoint", after a first paragraph saying that the graph's variable names
            differ from the checkpoint's, as TF 1.15 adds).
          errors.InvalidArgumentError: for a dtype or shape mismatch (naming the key and
            both shapes, after a first paragraph saying the graph differs from the one
            the checkpoint was written from, as TF 1.15 adds).
          errors.DataLossError: for corrupt or truncated checkpoint files.
        """
        if self._is_empty:
            return
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        _log.info("Restoring parameters from %s", save_path)
        save_path = os.fspath(save_path)
        try:
            sess.run(self.saver_def.restore_op_name,
                     {self.saver_def.filename_tensor_name: save_path})
        except (errors.NotFoundError, errors.InvalidArgumentError) as e:
            if not os.path.exists(checkpoint_format.index_path(save_path)):
                raise  # no checkpoint there; the kernel's message says so
            if isinstance(e, errors.NotFoundError):
                cause = "a variable of this graph has a key the checkpoint does not hold"
            else:
                cause = "a variable of this graph differs in dtype or shape from the checkpoint"
            raise _restore_error(e, cause) from e

    def export_meta_graph(
        self,
        filename: str | None = None,
        collection_list: list[str] | None = None,
        as_text: bool = False,
        export_scope: str | None = None,
        clear_devices: bool = False,
        clear_extraneous_savers: bool = False,
        strip_default_attrs: bool = False,
        save_debug_info: bool = False,
    ) -> Any:
        """Exports the default graph with this saver's `SaverDef` as a `MetaGraphDef`.

        Written to `filename` when given; see the module function.
        """
        return export_meta_graph(
            filename=filename,
            graph_def=graph_mod.get_default_graph().as_graph_def(add_shapes=True),
            saver_def=self.saver_def,
            collection_list=collection_list,
            as_text=as_text,
            export_scope=export_scope,
            clear_devices=clear_devices,
            clear_extraneous_savers=clear_extraneous_savers,
            strip_default_attrs=strip_default_attrs,
            save_debug_info=save_debug_info,
        )


meta_graph.register_proto_function(
    GraphKeys.SAVERS,
    proto_type=saver_pb2.SaverDef,
    to_proto=Saver.to_proto,
    from_proto=Saver.from_proto,
)


def export_meta_graph(
    filename: str | None = None,
    meta_info_def: Any = None,
    graph_def: Any = None,
    saver_def: Any = None,
    collection_list: list[str] | None = None,
    as_text: bool = False,
    graph: Any = None,
    export_scope: str | None = None,
    clear_devices: bool = False,
    clear_extraneous_savers: bool = False,
    strip_default_attrs: bool = False,
    save_debug_info: bool = False,
    **kwargs: Any,
) -> Any:
    """Exports a graph, its collections and a `SaverDef` (`tf.train.export_meta_graph`).

    Args:
      filename: where to write it (binary, or text format with `as_text`); None: don't.
      meta_info_def: a `MetaInfoDef` to start from.
      graph_def: the `GraphDef` (default: `graph`'s, with `_output_shapes`).
      saver_def: the `SaverDef` to record.
      collection_list: collection keys to export (default: all).
      as_text: write text format.
      graph: the graph (default: the default graph).
      export_scope: export only this name scope, with the scope stripped from names.
      clear_devices: drop device placements.
      clear_extraneous_savers: drop the ops and `SAVERS` entries of other savers.
      strip_default_attrs: drop attrs equal to their `OpDef` default.
      save_debug_info: accepted for compatibility; ignored.
      **kwargs: accepted for compatibility; ignored.

    Returns:
      The `MetaGraphDef`.

    Raises:
      OSError: if `filename` cannot be written.
      TypeError, ValueError: for invalid arguments.
    """
    del kwargs
    meta, _ = meta_graph.export_scoped_meta_graph(
        filename=filename,
        meta_info_def=meta_info_def,
        graph_def=graph_def,
        saver_def=saver_def,
        collection_list=collection_list,
        as_text=as_text,
        graph=graph,
        export_scope=export_scope,
        clear_devices=clear_devices,
        clear_extraneous_savers=clear_extraneous_savers,
        strip_default_attrs=strip_default_attrs,
        save_debug_info=save_debug_info,
    )
    return meta


def import_meta_graph(
    meta_graph_or_file: Any,
    clear_devices: bool = False,
    import_scope: str | None = None,
    **kwargs: Any,
) -> Saver | None:
    """Recreates a saved graph without the model code (`tf.train.import_meta_graph`).

    The graph and its collections are imported into the default graph, and a Saver for it
    is returned.

    Args:
      meta_graph_or_file: a `MetaGraphDef` or the path of a `.meta` file.
      clear_devices: drop device placements.
      import_scope: name scope to import under.
      **kwargs: `input_map`, `unbound_inputs_col_name`, `restore_collections_predicate`,
        `return_elements` of `import_scoped_meta_graph`.

    Returns:
      A Saver using the imported `SaverDef`; without one, a new Saver of the global
      variables, or None when there are none.

    Raises:
      OSError: for a missing or unreadable file.
      ValueError: from `import_graph_def` (e.g. unregistered op types).
    """
    meta = meta_graph_or_file
    if isinstance(meta, str | os.PathLike):
        meta = meta_graph.read_meta_graph_file(os.fspath(meta))
    result = meta_graph.import_scoped_meta_graph(
        meta, clear_devices=clear_devices, import_scope=import_scope, **kwargs
    )
    imported_vars = result[0] if kwargs.get("return_elements") is not None else result
    if meta.HasField("saver_def"):
        scope = import_scope
        if imported_vars:
            key, var = next(iter(imported_vars.items()))
            scope = var.name[: -len(key)]
        return Saver(saver_def=meta.saver_def, name=scope)
    if _all_saveable_objects(scope=import_scope):
        return Saver()
    return None


__all__ = [
    "BaseSaverBuilder",
    "BulkSaverBuilder",
    "Saver",
    "checkpoint_exists",
    "export_meta_graph",
    "get_checkpoint_mtimes",
    "get_checkpoint_state",
    "import_meta_graph",
    "latest_checkpoint",
    "remove_checkpoint",
    "update_checkpoint_state",
]
