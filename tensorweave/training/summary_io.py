"""Event files for TensorBoard: `FileWriter`, `FileWriterCache` and `summary_iterator`.

Follows TF 1.x `tensorflow/python/summary/writer/writer.py`, `writer_cache.py` and
`summary_iterator.py`. Records are written by the `tensorboard` package's `EventFileWriter` (an
`events.out.tfevents.<secs>.<host>.<pid>.<uid><suffix>` file with TFRecord framing and masked
CRC32C checksums, written from a background thread, starting with a `file_version:
"brain.Event:2"` event) and read back with its `RawEventFileLoader`. Our `Event`/`Summary`
protos are wire-compatible with the `tensorboard.compat.proto` copies, so they cross that
boundary as serialized bytes. Note that `tensorboard.compat.tf` resolves to the real
TensorFlow when that happens to be installed (for `gfile`), and to its stub otherwise.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def import op_def_registry
from tensorweave.protos import (
    config_pb2,
    event_pb2,
    graph_pb2,
    meta_graph_pb2,
    summary_pb2,
)

_log = logging.getLogger(__name__)


def _coerce_proto(value: Any, cls: type, what: str) -> Any:
    """`value` as an instance of our proto class `cls`.

    Wire-compatible messages of the same name from another package (TensorFlow's,
    TensorBoard's) are converted through bytes.

    Raises:
      TypeError: if `value` is not such a message.
    """
    if isinstance(value, cls):
        return value
    descriptor = getattr(value, "DESCRIPTOR", None)
    if descriptor is not None and getattr(descriptor, "name", None) == cls.DESCRIPTOR.name:
        return cls.FromString(value.SerializeToString())
    raise TypeError(f"{what} must be a {cls.DESCRIPTOR.name} proto, saw type: {type(value)}")


def _meta_graph_def(graph_def: Any) -> Any:
    """A minimal `MetaGraphDef` of `graph_def`.

    It holds the graph and the definitions of the registered ops it uses; collections and
    the saver are not exported here.
    """
    meta = meta_graph_pb2.MetaGraphDef()
    meta.graph_def.CopyFrom(graph_def)
    op_list = meta.meta_info_def.stripped_op_list
    for op_type in sorted({node.op for node in graph_def.node}):
        op_def = op_def_registry.get(op_type)
        if op_def is not None:
            op_list.op.add().CopyFrom(op_def.to_proto())
    return meta


def _graph_def_of(graph: Any, graph_def: Any) -> Any:
    """The `GraphDef` to write for `add_graph(graph, graph_def=...)` (TF's precedence).

    Raises:
      TypeError: if neither argument is a `Graph` or `GraphDef`.
    """
    if isinstance(graph, graph_mod.Graph) or isinstance(graph_def, graph_mod.Graph):
        if graph is not None and graph_def is not None:
            _log.warning("Please pass only graph or graph_def (deprecated)")
        source = graph if isinstance(graph, graph_mod.Graph) else graph_def
        return source.as_graph_def(add_shapes=True)
    candidate = graph if graph is not None else graph_def
    try:
        return _coerce_proto(candidate, graph_pb2.GraphDef, "graph")
    except TypeError:
        raise TypeError(
            "The passed graph must be an instance of `Graph` or the deprecated `GraphDef`"
        ) from None


class FileWriter:
    """Writes summary, graph, run-metadata and session-log events for TensorBoard.

    Follows TF 1.x `tf.summary.FileWriter`: one event file in `logdir`. Events are queued
    and written asynchronously; `flush()` forces them to disk. After `close()` every write
    is dropped with a warning until `reopen()`, which starts a new event file in the same
    directory. Safe to use from several threads.

    Args:
      logdir: directory for the event file (created if missing).
      graph: a `Graph` (or, deprecated, a `GraphDef`) to write at once as the graph event
        and inside a `MetaGraphDef` event, so TensorBoard's graph tab draws it.
      max_queue: number of events queued before `add_*` calls block on the writer thread.
      flush_secs: the writer thread flushes pending events every `flush_secs` seconds.
      graph_def: deprecated alias of `graph` taking a `GraphDef`.
      filename_suffix: appended to the event file name.
      session: accepted for API compatibility. TensorFlow then writes through summary ops
        run in that session; tensorweave always writes from this process, which for a local
        session is the same file.

    Raises:
      TypeError: if `graph` is neither a `Graph` nor a `GraphDef`.
    """

    def __init__(
        self,
        logdir: str | os.PathLike,
        graph: Any = None,
        max_queue: int = 10,
        flush_secs: float = 120,
        graph_def: Any = None,
        filename_suffix: str | None = None,
        session: Any = None,
    ) -> None:
        self._logdir = os.fspath(logdir)
        self._max_queue = max_queue
        self._flush_secs = flush_secs
        self._filename_suffix = filename_suffix or ""
        self._session = session
        self._lock = threading.Lock()  # guards the two tag sets
        # Guards `_writer`/`_closed`, so that no write races with `close()`/`reopen()`.
        self._io_lock = threading.RLock()
        self._seen_summary_tags: set[str] = set()
        self._session_run_tags: set[str] = set()
        self._writer = self._open()
        self._closed = False
        if graph is not None or graph_def is not None:
            try:
                true_graph_def = _graph_def_of(graph, graph_def)
            except TypeError:
                self.close()
                raise
            self._add_event(event_pb2.Event(graph_def=true_graph_def.SerializeToString()), None)
            self.add_meta_graph(_meta_graph_def(true_graph_def))

    def _open(self) -> Any:
        from tensorboard.summary.writer.event_file_writer import EventFileWriter

        return EventFileWriter(
            self._logdir, self._max_queue, self._flush_secs, self._filename_suffix
        )

    # ------------------------------------------------------------------ events
    def get_logdir(self) -> str:
        """The directory the event files are written to."""
        return self._logdir

    def add_event(self, event: Any) -> None:
        """Writes an `Event` proto as it is (no wall time or step is filled in).

        Raises:
          TypeError: if `event` is not an `Event` proto.
        """
        from tensorboard.compat.proto import event_pb2 as tb_event_pb2

        event = _coerce_proto(event, event_pb2.Event, "event")
        converted = tb_event_pb2.Event.FromString(event.SerializeToString())
        with self._io_lock:
            if not self._warn_if_closed():
                self._writer.add_event(converted)

    def _add_event(self, event: Any, global_step: Any) -> None:
        event.wall_time = time.time()
        if global_step is not None:
            event.step = int(global_step)
        self.add_event(event)

    def add_summary(self, summary: Any, global_step: Any = None) -> None:
        """Writes a summary event (follows `FileWriter.add_summary`).

        Only the first value of each tag keeps its `SummaryMetadata`; later ones are written
        without it, as TensorFlow does to save space (TensorBoard keeps the first).

        Args:
          summary: a `Summary` proto, or its serialization (`bytes`, e.g. the value of a
            `tf.summary.*` op fetched with `Session.run`).
          global_step: the step recorded with the event (an integer), or None.

        Raises:
          TypeError: for other types of `summary`.
          google.protobuf.message.DecodeError: for bytes that are not a `Summary`.
        """
        if isinstance(summary, np.ndarray) and summary.ndim == 0:
            summary = summary.item()
        if isinstance(summary, bytes | bytearray | memoryview):
            summary = summary_pb2.Summary.FromString(bytes(summary))
        else:
            summary = summary_pb2.Summary.FromString(
                _coerce_proto(summary, summary_pb2.Summary, "summary").SerializeToString()
            )
        with self._lock:
            for value in summary.value:
                if not value.HasField("metadata"):
                    continue
                if value.tag in self._seen_summary_tags:
                    value.ClearField("metadata")
                else:
                    self._seen_summary_tags.add(value.tag)
        self._add_event(event_pb2.Event(summary=summary), global_step)

    def add_session_log(self, session_log: Any, global_step: Any = None) -> None:
        """Writes a `SessionLog` event (START/STOP/CHECKPOINT markers).

        Raises:
          TypeError: if `session_log` is not a `SessionLog` proto.
        """
        session_log = _coerce_proto(session_log, event_pb2.SessionLog, "session_log")
        self._add_event(event_pb2.Event(session_log=session_log), global_step)

    def add_graph(self, graph: Any, global_step: Any = None, graph_def: Any = None) -> None:
        """Writes a graph event that TensorBoard's graph tab draws.

        Follows `FileWriter.add_graph`; a `Graph` is written with `_output_shapes` attrs.

        Args:
          graph: a `Graph`, or (deprecated) a `GraphDef`.
          global_step: the step recorded with the event, or None.
          graph_def: deprecated alias of `graph` for a `GraphDef`.

        Raises:
          TypeError: if neither argument is a `Graph` or `GraphDef`.
        """
        true_graph_def = _graph_def_of(graph, graph_def)
        event = event_pb2.Event(graph_def=true_graph_def.SerializeToString())
        self._add_event(event, global_step)

    def add_meta_graph(self, meta_graph_def: Any, global_step: Any = None) -> None:
        """Writes a `MetaGraphDef` event (TensorBoard draws it when there is no graph event).

        Raises:
          TypeError: if `meta_graph_def` is not a `MetaGraphDef` proto.
        """
        meta = _coerce_proto(meta_graph_def, meta_graph_pb2.MetaGraphDef, "meta_graph_def")
        self._add_event(event_pb2.Event(meta_graph_def=meta.SerializeToString()), global_step)

    def add_run_metadata(self, run_metadata: Any, tag: str, global_step: Any = None) -> None:
        """Writes the `RunMetadata` of one step (step stats, partition graphs) under `tag`.

        TensorBoard's graph tab shows it as the per-run compute time and memory.

        Raises:
          TypeError: if `run_metadata` is not a `RunMetadata` proto.
          ValueError: if `tag` was already used by this writer.
        """
        run_metadata = _coerce_proto(run_metadata, config_pb2.RunMetadata, "run_metadata")
        with self._lock:
            if tag in self._session_run_tags:
                raise ValueError("The provided tag was already used for this event type")
            self._session_run_tags.add(tag)
        tagged = event_pb2.TaggedRunMetadata(tag=tag, run_metadata=run_metadata.SerializeToString())
        self._add_event(event_pb2.Event(tagged_run_metadata=tagged), global_step)

    # -------------------------------------------------------------- lifecycle
    def _warn_if_closed(self) -> bool:
        if self._closed:
            warnings.warn(
                "Attempting to use a closed FileWriter. The operation will be a noop unless "
                "the FileWriter is explicitly reopened.",
                stacklevel=3,
            )
        return self._closed

    def flush(self) -> None:
        """Blocks until every queued event is written to disk."""
        with self._io_lock:
            if not self._warn_if_closed():
                self._writer.flush()

    def close(self) -> None:
        """Flushes and closes the event file; later writes are dropped until `reopen()`."""
        with self._io_lock:
            if not self._closed:
                self._closed = True
                self._writer.close()

    def reopen(self) -> None:
        """After `close()`, starts a new event file in the same directory; otherwise a no-op."""
        with self._io_lock:
            if self._closed:
                self._writer = self._open()
                self._closed = False

    def __enter__(self) -> FileWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class FileWriterCache:
    """One shared `FileWriter` per log directory (follows `tf.summary.FileWriterCache`).

    Used by hooks and `MonitoredTrainingSession`, so that they append to one event file.

    NOTE: this is tensorweave's only process-wide mutable state besides the default graph
    and session stacks. TensorFlow keeps the same cache at module level; here it lives on
    the class, guarded by a lock, and `clear()` closes and forgets every writer (call it
    between tests).
    """

    _cache: dict[str, FileWriter] = {}
    _lock = threading.RLock()

    @staticmethod
    def get(logdir: str | os.PathLike) -> FileWriter:
        """The writer of `logdir`, created on first use with the default graph written.

        Returns:
          A `FileWriter` shared by every caller that passes the same `logdir`.
        """
        key = os.fspath(logdir)
        with FileWriterCache._lock:
            writer = FileWriterCache._cache.get(key)
            if writer is None:
                writer = FileWriter(key, graph=graph_mod.get_default_graph())
                FileWriterCache._cache[key] = writer
            return writer

    @staticmethod
    def clear() -> None:
        """Closes every cached writer and empties the cache."""
        with FileWriterCache._lock:
            writers = list(FileWriterCache._cache.values())
            FileWriterCache._cache = {}
        for writer in writers:
            writer.close()


def summary_iterator(path: str | os.PathLike) -> Iterator[Any]:
    """Yields the `Event` protos of one event file, in order, `file_version` event first.

    Follows `tf.compat.v1.train.summary_iterator`.

    A truncated last record (a file still being written) ends the iteration quietly, as in
    TensorBoard's loader.

    Raises:
      OSError: if the file cannot be opened.
    """
    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader

    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"No event file at {path!r}")
    for record in RawEventFileLoader(path).Load():
        yield event_pb2.Event.FromString(record)
