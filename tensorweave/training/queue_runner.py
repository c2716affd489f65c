"""`tf.train.QueueRunner`, `add_queue_runner` and `start_queue_runners`.

Follows TF 1.x `python/training/queue_runner_impl.py`.

A runner starts one thread per enqueue op. A thread ends quietly when its enqueue raises
one of `queue_closed_exception_types` (the queue was closed); the last thread of a session
to end then runs `close_op`, so consumers see the end of the data. Any other error is
reported to the Coordinator (or kept in `exceptions_raised` and re-raised in the thread).
With a Coordinator, one more thread waits for the stop request and runs `cancel_op`
(close and cancel pending enqueues) to unblock the others.
"""

from __future__ import annotations

import logging
import threading
import weakref
from typing import Any

from tensorweave import errors
from tensorweave.client.session import get_default_session
from tensorweave.framework import graph as graph_mod
from tensorweave.ops.variables import GraphKeys
from tensorweave.protos import queue_runner_pb2
from tensorweave.training import meta_graph

_log = logging.getLogger("tensorweave.queue_runner")


class QueueRunner:
    """Holds a queue and the ops that fill it (follows `tf.train.QueueRunner`).

    Args:
      queue: a `QueueBase` (or, when rebuilt from a proto, the queue op).
      enqueue_ops: enqueue ops to run in parallel threads, one thread each.
      close_op: op that closes the queue, pending enqueues kept (default `queue.close()`).
      cancel_op: op that closes the queue and cancels pending enqueues (default
        `queue.close(cancel_pending_enqueues=True)`).
      queue_closed_exception_types: a non-empty tuple of `OpError` subclasses meaning
        "the queue is closed" when raised by an enqueue (default `(OutOfRangeError,)`).
      queue_runner_def: a `QueueRunnerDef` to rebuild the runner from (with ops looked up
        in the default graph); exclusive with `queue`/`enqueue_ops`.
      import_scope: name scope prepended to the names in `queue_runner_def`.

    Raises:
      ValueError: if neither (queue and enqueue_ops) nor queue_runner_def are given, or both.
      TypeError: if `queue_closed_exception_types` is not a non-empty tuple of OpError types.
    """

    def __init__(
        self,
        queue: Any = None,
        enqueue_ops: Any = None,
        close_op: Any = None,
        cancel_op: Any = None,
        queue_closed_exception_types: Any = None,
        queue_runner_def: Any = None,
        import_scope: str | None = None,
    ):
        if queue_runner_def is not None:
            if queue is not None or enqueue_ops:
                raise ValueError("queue_runner_def and queue are mutually exclusive.")
            self._init_from_proto(queue_runner_def, import_scope)
        else:
            self._init_from_args(
                queue, enqueue_ops, close_op, cancel_op, queue_closed_exception_types
            )
        self._lock = threading.Lock()
        # NOTE: session -> number of its enqueue threads still running.
        self._runs_per_session: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._exceptions_raised: list[BaseException] = []

    def _init_from_args(
        self, queue: Any, enqueue_ops: Any, close_op: Any, cancel_op: Any, exception_types: Any
    ) -> None:
        if queue is None or not enqueue_ops:
            raise ValueError("Must provide queue and enqueue_ops.")
        if exception_types is not None and not (
            isinstance(exception_types, tuple)
            and exception_types
            and all(isinstance(t, type) and issubclass(t, errors.OpError) for t in exception_types)
        ):
            raise TypeError(
                "queue_closed_exception_types, when provided, must be a tuple of tf.error "
                f"types, but saw: {exception_types!r}"
            )
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = (
            cancel_op if cancel_op is not None else queue.close(cancel_pending_enqueues=True)
        )
        self._queue_closed_exception_types = exception_types or (errors.OutOfRangeError,)

    def _init_from_proto(self, proto: Any, import_scope: str | None) -> None:
        g = graph_mod.get_default_graph()

        def element(name: str) -> Any:
            return g.as_graph_element(meta_graph.prepend_name_scope(name, import_scope))

        self._queue = element(proto.queue_name)
        self._enqueue_ops = [element(name) for name in proto.enqueue_op_name]
        self._close_op = element(proto.close_op_name)
        self._cancel_op = element(proto.cancel_op_name)
        types = tuple(
            errors.exception_type_from_error_code(code)
            for code in proto.queue_closed_exception_types
        )
        # NOTE: QueueRunnerDefs written before the field existed mean OutOfRangeError.
        self._queue_closed_exception_types = types or (errors.OutOfRangeError,)

    # ---------------------------------------------------------------- accessors
    @property
    def queue(self) -> Any:
        """The queue (a `QueueBase`, or the queue op when rebuilt from a proto)."""
        return self._queue

    @property
    def enqueue_ops(self) -> list[Any]:
        """The enqueue ops, one thread each."""
        return self._enqueue_ops

    @property
    def close_op(self) -> Any:
        """The op closing the queue (pending enqueues kept)."""
        return self._close_op

    @property
    def cancel_op(self) -> Any:
        """The op closing the queue and cancelling pending enqueues."""
        return self._cancel_op

    @property
    def queue_closed_exception_types(self) -> tuple[type[errors.OpError], ...]:
        """Exception types that mean the queue was closed."""
        return self._queue_closed_exception_types

    @property
    def exceptions_raised(self) -> list[BaseException]:
        """Exceptions raised by threads without a Coordinator (reset by `create_threads`)."""
        return self._exceptions_raised

    @property
    def name(self) -> str:
        """The name of the queue op."""
        return self._queue.name

    # ------------------------------------------------------------------ threads
    def _run(self, sess: Any, enqueue_op: Any, coord: Any = None) -> None:
        """Thread body: runs `enqueue_op` until the queue closes, a stop or an error."""
        counted = True
        try:
            make_callable = getattr(sess, "make_callable", None)
            step = make_callable(enqueue_op) if make_callable else lambda: sess.run(enqueue_op)
            while not (coord is not None and coord.should_stop()):
                try:
                    step()
                except self._queue_closed_exception_types:
                    counted = False
                    self._finish_run(sess, close=True)
                    return
        except Exception as e:  # noqa: BLE001  (report every failure of an enqueue thread)
            if coord is not None:
                coord.request_stop(e)
            else:
                _log.error("Exception in QueueRunner: %s", e)
                with self._lock:
                    self._exceptions_raised.append(e)
                raise
        finally:
            if counted:
                self._finish_run(sess, close=False)

    def _finish_run(self, sess: Any, close: bool) -> None:
        """Counts one ended thread; with `close`, the last one runs `close_op`."""
        with self._lock:
            self._runs_per_session[sess] -= 1
            if not close or self._runs_per_session[sess] > 0:
                return
            try:
                sess.run(self._close_op)
            except Exception as e:  # noqa: BLE001  (a failed close changes nothing)
                _log.debug("Ignored exception from close_op: %s", e)

    def _close_on_stop(self, sess: Any, cancel_op: Any, coord: Any) -> None:
        """Thread body: waits for the stop request, then runs `cancel_op`."""
        coord.wait_for_stop()
        try:
            sess.run(cancel_op)
        except Exception as e:  # noqa: BLE001  (the session may be closed already)
            _log.debug("Ignored exception from cancel_op: %s", e)

    def create_threads(
        self, sess: Any, coord: Any = None, daemon: bool = False, start: bool = False
    ) -> list[threading.Thread]:
        """Creates (and with `start`, starts) the threads for `sess`.

        Args:
          sess: the Session the enqueue ops run in.
          coord: optional Coordinator; the threads register with it and report errors to
            it, and one more thread runs `cancel_op` once it stops.
          daemon: make the threads daemons.
          start: start the threads.

        Returns:
          The new threads, or `[]` when threads of this runner still run for `sess`.
        """
        with self._lock:
            if self._runs_per_session.get(sess, 0) > 0:
                return []
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        threads = [
            threading.Thread(
                target=self._run,
                args=(sess, op, coord),
                name=f"QueueRunnerThread-{self.name}-{op.name}",
            )
            for op in self._enqueue_ops
        ]
        if coord is not None:
            threads.append(
                threading.Thread(
                    target=self._close_on_stop,
                    args=(sess, self._cancel_op, coord),
                    name=f"QueueRunnerThread-{self.name}-close_on_stop",
                )
            )
        for t in threads:
            if coord is not None:
                coord.register_thread(t)
            if daemon:
                t.daemon = True
            if start:
                t.start()
        return threads

    # ------------------------------------------------------------------- protos
    def to_proto(self, export_scope: str | None = None) -> Any:
        """This runner as a `QueueRunnerDef` (None when the queue is outside `export_scope`)."""
        if export_scope is not None and not self.queue.name.startswith(export_scope):
            return None
        strip = meta_graph.strip_name_scope
        proto = queue_runner_pb2.QueueRunnerDef(
            queue_name=strip(self.queue.name, export_scope),
            close_op_name=strip(self.close_op.name, export_scope),
            cancel_op_name=strip(self.cancel_op.name, export_scope),
        )
        proto.enqueue_op_name.extend(strip(op.name, export_scope) for op in self.enqueue_ops)
        proto.queue_closed_exception_types.extend(
            errors.error_code_from_exception_type(cls) for cls in self._queue_closed_exception_types
        )
        return proto

    @staticmethod
    def from_proto(queue_runner_def: Any, import_scope: str | None = None) -> QueueRunner:
        """A QueueRunner rebuilt from a `QueueRunnerDef` in the default graph."""
        return QueueRunner(queue_runner_def=queue_runner_def, import_scope=import_scope)


def add_queue_runner(qr: QueueRunner, collection: str = GraphKeys.QUEUE_RUNNERS) -> None:
    """Adds `qr` to a collection of the default graph (follows `tf.train.add_queue_runner`)."""
    graph_mod.get_default_graph().add_to_collection(collection, qr)


def start_queue_runners(
    sess: Any = None,
    coord: Any = None,
    daemon: bool = True,
    start: bool = True,
    collection: str = GraphKeys.QUEUE_RUNNERS,
) -> list[threading.Thread]:
    """Starts the threads of every QueueRunner in a collection of the session's graph.

    Follows `tf.train.start_queue_runners`.

    Args:
      sess: the Session (default: the default session).
      coord: optional Coordinator for the threads.
      daemon: make the threads daemons.
      start: start the threads.
      collection: the collection of QueueRunners.

    Returns:
      The threads.

    Raises:
      ValueError: without `sess` and without a default session.
      TypeError: if `sess` is not a Session (a MonitoredSession gives `[]`, as in TF: it
        starts its queue runners itself).
    """
    if sess is None:
        sess = get_default_session()
        if sess is None:
            raise ValueError(
                "Cannot start queue runners: No default session is registered. Use `with "
                "sess.as_default()` or pass an explicit session to "
                "tf.start_queue_runners(sess=sess)"
            )
    if type(sess).__name__ in ("MonitoredSession", "SingularMonitoredSession"):
        return []
    if not (hasattr(sess, "run") and hasattr(sess, "graph")):
        raise TypeError(f"sess must be a `tf.Session` object. Given class: {type(sess)}")
    runners = sess.graph.get_collection(collection)
    if not runners:
        _log.warning(
            "`tf.train.start_queue_runners()` was called when no queue runners were "
            "defined. You can safely remove the call to this deprecated function."
        )
    threads: list[threading.Thread] = []
    with sess.graph.as_default():
        for qr in runners:
            threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads


meta_graph.register_proto_function(
    GraphKeys.QUEUE_RUNNERS,
    proto_type=queue_runner_pb2.QueueRunnerDef,
    to_proto=QueueRunner.to_proto,
    from_proto=QueueRunner.from_proto,
)

__all__ = ["QueueRunner", "add_queue_runner", "start_queue_runners"]
