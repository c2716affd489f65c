"""`tf.train.Supervisor`: TF1's training manager before `MonitoredSession` (follows
`tensorflow/python/training/supervisor.py`), and `tf.train.basic_train_loop`.

A Supervisor owns a `Coordinator`, a `SessionManager`, a `Saver` and (for the chief) a
summary `FileWriter` on `logdir`. `managed_session(master)` gives a session that the chief
restored from the latest checkpoint in `logdir` (or initialized with `init_op`), and that
the other workers waited for until `ready_op` passes; the chief then runs its services on
the Coordinator: a checkpoint thread every `save_model_secs`, a summary thread and a
steps-per-second thread every `save_summaries_secs`, and the queue runners of the graph.
Leaving the block stops the threads, re-raises what they or the block raised (except
`OutOfRangeError`, a normal end of input) and closes the session.

Defaults follow TensorFlow: arguments left at `Supervisor.USE_DEFAULT` take the first op
of their graph collection (`READY_OP`, `INIT_OP`, `LOCAL_INIT_OP`, `SAVERS`, `SUMMARY_OP`,
`GLOBAL_STEP`) or build one (`report_uninitialized_variables()`,
`global_variables_initializer()`, `local_variables_initializer()`, `Saver()` when there are
variables, `summary.merge_all()`, the tensor `global_step:0`). Only a chief writes:
`logdir` and the intervals are ignored on other tasks. The graph is finalized.

Difference from TensorFlow: a chief's `logdir` is created and checked for writing when
the Supervisor is built, so an unusable directory fails there with its path in the
message (TensorFlow fails later, from its event-writer thread or the first checkpoint).
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

from tensorweave import errors, gfile
from tensorweave import summary as summary_lib
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.graph_io import write_graph
from tensorweave.ops import control_flow_ops, variables
from tensorweave.ops.variables import GraphKeys
from tensorweave.protos.event_pb2 import SessionLog
from tensorweave.protos.summary_pb2 import Summary
from tensorweave.training import coordinator, meta_graph, training_util
from tensorweave.training.saver import Saver
from tensorweave.training.session_manager import SessionManager
from tensorweave.training.summary_io import FileWriter

_log = logging.getLogger(__name__)


def _first_in_collection(graph: Any, key: str) -> Any:
    found = graph.get_collection(key)
    if len(found) > 1:
        _log.info("Found %d %s operations. Returning the first one.", len(found), key)
    return found[0] if found else None


def _check_writable(logdir: str) -> None:
    """Creates `logdir` and checks that a file can be written there.

    Raises:
      PermissionDeniedError / FailedPreconditionError / NotFoundError: naming `logdir`.
    """
    try:
        gfile.MakeDirs(logdir)
        probe = os.path.join(logdir, f".supervisor_probe_{os.getpid()}")
        with open(probe, "wb"):
            pass
        os.remove(probe)
    except errors.OpError as e:
        raise type(e)(None, None, f"Supervisor logdir {logdir!r} cannot be written: "
                      f"{e.message}") from None
    except OSError as e:
        cls = (errors.PermissionDeniedError if isinstance(e, PermissionError)
               else errors.FailedPreconditionError)
        raise cls(None, None, f"Supervisor logdir {logdir!r} cannot be written: "
                  f"{e.strerror or e}") from None


class Supervisor:
    """A training helper that checkpoints models and computes summaries (follows
    `tf.train.Supervisor`; see the module docstring).

    Args:
      graph: the graph the model lives in (default: the default graph).
      ready_op: 1-D string tensor naming uninitialized variables, or None.
      ready_for_local_init_op: the same check gating `local_init_op`, or None.
      is_chief: whether this task initializes the model and writes checkpoints/summaries.
      init_op: op initializing the model when no checkpoint is restored, or None.
      init_feed_dict: feeds for `init_op`.
      local_init_op: op run in every new session (local variables), or None.
      logdir: the chief's checkpoint and event directory (None: neither).
      summary_op: scalar string tensor of a `Summary`, or None.
      saver: a `Saver`, or None (no checkpoints).
      global_step: integer scalar tensor used for checkpoint names and summaries, or None.
      save_summaries_secs: seconds between summaries (0: none).
      save_model_secs: seconds between checkpoints (0: none).
      recovery_wait_secs: seconds between readiness checks of non-chief tasks.
      stop_grace_secs: seconds threads get to end after `stop`.
      checkpoint_basename: checkpoint file name in `logdir`.
      session_manager: a `SessionManager` (default: one built from the arguments).
      summary_writer: a `FileWriter`, `USE_DEFAULT` (one on `logdir`) or None.
      init_fn: callable(sess) run after `init_op`.
      local_init_run_options: `RunOptions` for `local_init_op`.

    Raises:
      ValueError: a non-chief task's graph has a variable without a device.
      PermissionDeniedError / FailedPreconditionError / NotFoundError: the chief's
        `logdir` cannot be created or written (the message names it).
    """

    #: Marks an argument whose value comes from the graph's collections.
    USE_DEFAULT = 0

    def __init__(self, graph: Any = None, ready_op: Any = USE_DEFAULT,
                 ready_for_local_init_op: Any = USE_DEFAULT, is_chief: bool = True,
                 init_op: Any = USE_DEFAULT, init_feed_dict: dict | None = None,
                 local_init_op: Any = USE_DEFAULT, logdir: str | None = None,
                 summary_op: Any = USE_DEFAULT, saver: Any = USE_DEFAULT,
                 global_step: Any = USE_DEFAULT, save_summaries_secs: float = 120,
                 save_model_secs: float = 600, recovery_wait_secs: float = 30,
                 stop_grace_secs: float = 120, checkpoint_basename: str = "model.ckpt",
                 session_manager: Any = None, summary_writer: Any = USE_DEFAULT,
                 init_fn: Callable[[Any], Any] | None = None,
                 local_init_run_options: Any = None):
        graph = graph if graph is not None else graph_mod.get_default_graph()
        self._graph = graph
        with graph.as_default():
            self._init_ops(ready_op, ready_for_local_init_op, init_op, local_init_op)
            self._saver = self._default_saver(saver)
            self._summary_op = self._default_summary_op(summary_op)
            self._global_step = self._default_global_step(global_step)
        self._init_feed_dict = init_feed_dict
        self._meta_graph_def = meta_graph.create_meta_graph_def(
            graph_def=graph.as_graph_def(add_shapes=True),
            saver_def=self._saver.saver_def if self._saver else None)
        self._is_chief = is_chief
        self._coord = coordinator.Coordinator()
        self._recovery_wait_secs = recovery_wait_secs
        self._stop_grace_secs = stop_grace_secs
        self._init_fn = init_fn
        self._local_init_run_options = local_init_run_options
        self._logdir = self._save_path = self._summary_writer = None
        self._save_summaries_secs = self._save_model_secs = None
        self._graph_added_to_summary = False
        if is_chief:
            self._init_chief(logdir, save_summaries_secs, save_model_secs,
                             checkpoint_basename, summary_writer)
        self._session_manager = session_manager or SessionManager(
            local_init_op=self._local_init_op, ready_op=self._ready_op,
            ready_for_local_init_op=self._ready_for_local_init_op, graph=graph,
            recovery_wait_secs=recovery_wait_secs,
            local_init_run_options=local_init_run_options)
        self._verify_setup()
        graph.finalize()

    # ------------------------------------------------------------ construction
    def _init_ops(self, ready_op: Any, ready_for_local_init_op: Any, init_op: Any,
                  local_init_op: Any) -> None:
        g, default = self._graph, Supervisor.USE_DEFAULT
        if ready_op is default:
            ready_op = _first_in_collection(g, GraphKeys.READY_OP)
            if ready_op is None:
                ready_op = variables.report_uninitialized_variables()
                g.add_to_collection(GraphKeys.READY_OP, ready_op)
        if ready_for_local_init_op is default:
            ready_for_local_init_op = _first_in_collection(g, GraphKeys.READY_FOR_LOCAL_INIT_OP)
        if init_op is default:
            init_op = _first_in_collection(g, GraphKeys.INIT_OP)
            if init_op is None:
                init_op = variables.global_variables_initializer()
                g.add_to_collection(GraphKeys.INIT_OP, init_op)
        if local_init_op is default:
            local_init_op = _first_in_collection(g, GraphKeys.LOCAL_INIT_OP)
            if local_init_op is None:
                local_init_op = control_flow_ops.group(
                    variables.local_variables_initializer(),
                    *g.get_collection(GraphKeys.TABLE_INITIALIZERS))
                g.add_to_collection(GraphKeys.LOCAL_INIT_OP, local_init_op)
        self._ready_op, self._ready_for_local_init_op = ready_op, ready_for_local_init_op
        self._init_op, self._local_init_op = init_op, local_init_op

    def _default_saver(self, saver: Any) -> Any:
        if saver is not Supervisor.USE_DEFAULT:
            return saver
        saver = _first_in_collection(self._graph, GraphKeys.SAVERS)
        if saver is None and variables.global_variables():
            saver = Saver()
            self._graph.add_to_collection(GraphKeys.SAVERS, saver)
        return saver

    def _default_summary_op(self, summary_op: Any) -> Any:
        if summary_op is not Supervisor.USE_DEFAULT:
            return summary_op
        summary_op = _first_in_collection(self._graph, GraphKeys.SUMMARY_OP)
        if summary_op is None:
            summary_op = summary_lib.merge_all()
            if summary_op is not None:
                self._graph.add_to_collection(GraphKeys.SUMMARY_OP, summary_op)
        return summary_op

    def _default_global_step(self, global_step: Any) -> Any:
        if global_step is not Supervisor.USE_DEFAULT:
            return global_step
        global_step = _first_in_collection(self._graph, GraphKeys.GLOBAL_STEP)
        if global_step is None:
            try:
                global_step = self._graph.get_tensor_by_name("global_step:0")
            except (KeyError, ValueError):
                return None
            if global_step.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
                _log.warning("Found 'global_step' is not an int type: %s", global_step.dtype)
                return None
            self._graph.add_to_collection(GraphKeys.GLOBAL_STEP, global_step)
        return global_step

    def _init_chief(self, logdir: str | None, save_summaries_secs: float,
                    save_model_secs: float, checkpoint_basename: str,
                    summary_writer: Any) -> None:
        self._logdir = os.fspath(logdir) if logdir else None
        self._save_summaries_secs = save_summaries_secs
        self._save_model_secs = save_model_secs
        if self._logdir:
            _check_writable(self._logdir)
            self._save_path = os.path.join(self._logdir, checkpoint_basename)
        if summary_writer is Supervisor.USE_DEFAULT:
            self._summary_writer = FileWriter(self._logdir) if self._logdir else None
        else:
            self._summary_writer = summary_writer

    def _verify_setup(self) -> None:
        if self._is_chief:
            return
        for op in self._graph.get_operations():
            if op.type in ("Variable", "VariableV2") and not op.device:
                raise ValueError(
                    f"When using replicas, all Variables must have their device set: {op}")

    # -------------------------------------------------------------- properties
    is_chief = property(lambda self: self._is_chief, doc="Whether this is the chief.")
    session_manager = property(lambda self: self._session_manager, doc="The SessionManager.")
    coord = property(lambda self: self._coord, doc="The Coordinator of the threads.")
    init_op = property(lambda self: self._init_op, doc="The init op, or None.")
    init_feed_dict = property(lambda self: self._init_feed_dict, doc="Feeds for init_op.")
    ready_op = property(lambda self: self._ready_op, doc="The ready op, or None.")
    ready_for_local_init_op = property(lambda self: self._ready_for_local_init_op,
                                       doc="The op gating local_init_op, or None.")
    summary_writer = property(lambda self: self._summary_writer,
                              doc="The chief's FileWriter, or None.")
    summary_op = property(lambda self: self._summary_op, doc="The summary tensor, or None.")
    save_summaries_secs = property(lambda self: self._save_summaries_secs,
                                   doc="Seconds between summaries (None off the chief).")
    global_step = property(lambda self: self._global_step, doc="The global step, or None.")
    saver = property(lambda self: self._saver, doc="The Saver, or None.")
    save_model_secs = property(lambda self: self._save_model_secs,
                               doc="Seconds between checkpoints (None off the chief).")
    save_path = property(lambda self: self._save_path, doc="The checkpoint path, or None.")

    # ---------------------------------------------------------------- sessions
    def _write_graph(self) -> None:
        if self._logdir:
            write_graph(self._graph.as_graph_def(add_shapes=True), self._logdir, "graph.pbtxt")
        if self._summary_writer and not self._graph_added_to_summary:
            self._summary_writer.add_graph(self._graph)
            self._summary_writer.add_meta_graph(self._meta_graph_def)
            self._graph_added_to_summary = True

    def start_standard_services(self, sess: Any) -> list[Any] | None:
        """Starts the chief's checkpoint, summary and step-counter threads for `sess`.

        Returns:
          The started threads, or None without a `logdir` (a warning is logged).

        Raises:
          RuntimeError: on a non-chief Supervisor.
        """
        if not self._is_chief:
            raise RuntimeError("Only chief supervisor can start standard services. "
                               "Because only chief supervisors can write events.")
        if not self._logdir:
            _log.warning("Standard services need a 'logdir' passed to the SessionManager")
            return None
        if self._global_step is not None and self._summary_writer:
            step = training_util.global_step(sess, self._global_step)
            self._summary_writer.add_session_log(SessionLog(status=SessionLog.START), step)
        threads: list[Any] = []
        if self._save_summaries_secs and self._summary_writer:
            if self._summary_op is not None:
                threads.append(SVSummaryThread(self, sess))
            if self._global_step is not None:
                threads.append(SVStepCounterThread(self, sess))
        if self._saver and self._save_model_secs:
            threads.append(SVTimerCheckpointThread(self, sess))
        for t in threads:
            t.start()
        return threads

    def prepare_or_wait_for_session(self, master: str = "", config: Any = None,
                                    wait_for_checkpoint: bool = False,
                                    max_wait_secs: float = 7200,
                                    start_standard_services: bool = True) -> Any:
        """A session whose model is ready: the chief restores `logdir`'s latest checkpoint
        or runs `init_op` (then starts its services); other tasks wait until `ready_op`
        passes. With `start_standard_services`, the graph's queue runners start too.

        Raises:
          DeadlineExceededError: a non-chief task waited `max_wait_secs` in vain.
        """
        self._coord.clear_stop()
        if self._summary_writer:
            self._summary_writer.reopen()
        if self._is_chief:
            sess = self._session_manager.prepare_session(
                master, init_op=self._init_op, saver=self._saver,
                checkpoint_dir=self._logdir, wait_for_checkpoint=wait_for_checkpoint,
                max_wait_secs=max_wait_secs, config=config,
                init_feed_dict=self._init_feed_dict, init_fn=self._init_fn)
            self._write_graph()
            if start_standard_services:
                _log.info("Starting standard services.")
                self.start_standard_services(sess)
        else:
            sess = self._session_manager.wait_for_session(master, config=config,
                                                          max_wait_secs=max_wait_secs)
        if start_standard_services:
            _log.info("Starting queue runners.")
            self.start_queue_runners(sess)
        return sess

    def start_queue_runners(self, sess: Any, queue_runners: list | None = None) -> list[Any]:
        """Starts threads (daemons, on the Coordinator) for `queue_runners` (default: the
        graph's `QUEUE_RUNNERS` collection); returns them."""
        if queue_runners is None:
            queue_runners = self._graph.get_collection(GraphKeys.QUEUE_RUNNERS)
        threads = []
        for qr in queue_runners:
            threads.extend(qr.create_threads(sess, coord=self._coord, daemon=True, start=True))
        return threads

    def loop(self, timer_interval_secs: float | None, target: Callable[..., Any],
             args: Any = None, kwargs: dict | None = None) -> coordinator.LooperThread:
        """Starts a thread calling `target(*args, **kwargs)` every `timer_interval_secs`
        (back to back when None) until a stop; `stop()` joins it."""
        return coordinator.LooperThread.loop(self._coord, timer_interval_secs, target,
                                             args=args, kwargs=kwargs)

    def stop(self, threads: list | None = None, close_summary_writer: bool = True,
             ignore_live_threads: bool = False) -> None:
        """Requests a stop, joins the threads (`stop_grace_secs` grace) and closes the
        summary writer; re-raises the first exception a thread reported. The session
        stays open.

        Raises:
          RuntimeError: threads still alive after the grace period (unless
            `ignore_live_threads`); or what a thread reported.
        """
        self._coord.request_stop()
        try:
            self._coord.join(threads, stop_grace_period_secs=self._stop_grace_secs,
                             ignore_live_threads=ignore_live_threads)
        finally:
            if close_summary_writer and self._summary_writer:
                self._summary_writer.add_session_log(SessionLog(status=SessionLog.STOP))
                self._summary_writer.close()
                self._graph_added_to_summary = False

    def request_stop(self, ex: Any = None) -> None:
        """Asks the threads to stop; `ex` is re-raised by `stop` (see `Coordinator`)."""
        self._coord.request_stop(ex=ex)

    def should_stop(self) -> bool:
        """Whether a stop was requested."""
        return self._coord.should_stop()

    def stop_on_exception(self) -> Any:
        """A context that requests a stop when its block raises."""
        return self._coord.stop_on_exception()

    def wait_for_stop(self) -> None:
        """Blocks until a stop is requested."""
        self._coord.wait_for_stop()

    def summary_computed(self, sess: Any, summary: Any, global_step: Any = None) -> None:
        """Writes a computed `Summary` (proto or serialized) at `global_step` (default: the
        current global step).

        Raises:
          RuntimeError: without a summary writer (no `logdir`, or not the chief).
          TypeError: if `summary` is neither a `Summary` nor bytes.
        """
        if not self._summary_writer:
            raise RuntimeError("Writing a summary requires a summary writer.")
        if global_step is None and self._global_step is not None:
            global_step = training_util.global_step(sess, self._global_step)
        self._summary_writer.add_summary(summary, global_step)

    @contextlib.contextmanager
    def managed_session(self, master: str = "", config: Any = None,
                        start_standard_services: bool = True,
                        close_summary_writer: bool = True) -> Iterator[Any]:
        """A context yielding a prepared session (see `prepare_or_wait_for_session`).

        On exit it stops the threads and closes the session; an exception from the block
        or a thread is raised again then, except `OutOfRangeError` (end of input).
        """
        sess = None
        try:
            sess = self.prepare_or_wait_for_session(
                master=master, config=config, start_standard_services=start_standard_services)
            yield sess
        except Exception as e:  # noqa: BLE001  (re-raised by stop() unless a clean stop)
            self.request_stop(e)
        finally:
            try:
                self.stop(close_summary_writer=close_summary_writer)
            finally:
                if sess is not None:
                    with contextlib.suppress(Exception):
                        sess.close()

    # TensorFlow's CamelCase aliases.
    PrepareSession = prepare_or_wait_for_session
    StartQueueRunners = start_queue_runners
    StartStandardServices = start_standard_services
    Stop = stop
    RequestStop = request_stop
    Loop = loop
    ShouldStop = should_stop
    StopOnException = stop_on_exception
    WaitForStop = wait_for_stop
    SummaryComputed = summary_computed


class SVSummaryThread(coordinator.LooperThread):
    """Runs the summary op every `save_summaries_secs` and writes its result."""

    def __init__(self, sv: Supervisor, sess: Any):
        super().__init__(sv.coord, sv.save_summaries_secs)
        self._sv, self._sess = sv, sess

    def run_loop(self) -> None:
        """Computes and writes one summary."""
        if self._sv.global_step is not None:
            summary, step = self._sess.run([self._sv.summary_op, self._sv.global_step])
        else:
            summary, step = self._sess.run(self._sv.summary_op), None
        if self._sv.summary_writer:
            _log.info("Recording summary at step %s.", step)
            self._sv.summary_writer.add_summary(summary, step)


class SVStepCounterThread(coordinator.LooperThread):
    """Writes `<global step op>/sec` every `save_summaries_secs`."""

    def __init__(self, sv: Supervisor, sess: Any, step_counter: Any = None):
        super().__init__(sv.coord, sv.save_summaries_secs)
        self._sv, self._sess = sv, sess
        self._step_counter = sv.global_step if step_counter is None else step_counter
        self._summary_tag = f"{self._step_counter.op.name}/sec"
        self._last_time, self._last_step = 0.0, 0

    def start_loop(self) -> None:
        """Notes the starting step and time."""
        self._last_time = time.time()
        self._last_step = training_util.global_step(self._sess, self._step_counter)

    def run_loop(self) -> None:
        """Writes the steps per second since the last call."""
        step = training_util.global_step(self._sess, self._step_counter)
        now = time.time()
        elapsed, added = now - self._last_time, step - self._last_step
        self._last_time, self._last_step = now, step
        rate = added / elapsed if elapsed > 0 else float("inf")
        summary = Summary(value=[Summary.Value(tag=self._summary_tag, simple_value=rate)])
        if self._sv.summary_writer:
            self._sv.summary_writer.add_summary(summary, step)
        _log.debug("%s: %g", self._summary_tag, rate)


class SVTimerCheckpointThread(coordinator.LooperThread):
    """Saves a checkpoint every `save_model_secs`."""

    def __init__(self, sv: Supervisor, sess: Any):
        super().__init__(sv.coord, sv.save_model_secs)
        self._sv, self._sess = sv, sess

    def run_loop(self) -> None:
        """Saves one checkpoint and logs it as a `SessionLog.CHECKPOINT` event."""
        _log.info("Saving checkpoint to path %s", self._sv.save_path)
        self._sv.saver.save(self._sess, self._sv.save_path, global_step=self._sv.global_step)
        if self._sv.summary_writer and self._sv.global_step is not None:
            step = training_util.global_step(self._sess, self._sv.global_step)
            self._sv.summary_writer.add_session_log(
                SessionLog(status=SessionLog.CHECKPOINT, checkpoint_path=self._sv.save_path),
                step)


def basic_train_loop(supervisor: Supervisor, train_step_fn: Callable[..., Any],
                     args: Any = None, kwargs: dict | None = None, master: str = "") -> None:
    """Calls `train_step_fn(sess, *args, **kwargs)` in a managed session until the
    Supervisor stops; starts over in a new managed session after an `AbortedError` (a
    restarted server). Follows `tf.train.basic_train_loop`."""
    args, kwargs = list(args or []), dict(kwargs or {})
    should_retry = True
    while should_retry:
        try:
            should_retry = False
            with supervisor.managed_session(master) as sess:
                while not supervisor.should_stop():
                    train_step_fn(sess, *args, **kwargs)
        except errors.AbortedError:
            should_retry = True
