"""Every behaviour of seed 004 ("Distributed TensorFlow: a gentle introduction") against real
`tensorweave server` subprocesses on 127.0.0.1, with the client (and its master) in the test
process.

Covered: shared variables across servers, graphs that are not shared, default and pinned
placement seen through `FULL_TRACE` step stats, a run blocking until the last server starts
(and its bounded form), a server leaving (ops elsewhere keep running; ops on it fail fast
with `UnavailableError` instead of the blog's hang), a server restarting (`AbortedError` for
old sessions, new sessions work, its variables are gone), waiting for another client's
initialization with `report_uninitialized_variables`, the blog's final ps + 2 workers
example, `device_filters` (the maintainers' answer to "CreateSession still waiting"), and
the `tensorweave server` CLI stopping cleanly on SIGTERM.

Every wait is bounded, every server process is ended by PID in fixture teardown, and every
port is picked free. Sessions get `operation_timeout_in_ms` so that no step can hang a
test; `test_cross_task_input_without_operation_timeout` covers sessions without one.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import tensorweave as tf
from tensorweave.testing.cluster import pick_unused_port
from tensorweave.testing.processes import ServerProcess, spec_string
from tensorweave.testing.threads import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

_WAIT_S = 30.0  # bound on every wait for a thread, a server or a condition
_TIMEOUT_MS = 30_000  # operation_timeout_in_ms of the sessions: no step can hang a test
_MASTER_LOGGER = "tensorweave.master"


def _task(job: str, index: int) -> str:
    return f"/job:{job}/replica:0/task:{index}"


def _device(job: str, index: int) -> str:
    return f"{_task(job, index)}/device:CPU:0"


def _config(**kwargs: Any) -> Any:
    kwargs.setdefault("operation_timeout_in_ms", _TIMEOUT_MS)
    return tf.ConfigProto(**kwargs)


class Cluster:
    """A cluster spec on free 127.0.0.1 ports whose tasks run as `tensorweave server`
    subprocesses, started and killed one by one.

    Args:
      jobs: job name -> number of tasks.
    """

    def __init__(self, jobs: dict[str, int]):
        self.jobs = {
            job: [f"127.0.0.1:{pick_unused_port()}" for _ in range(n)] for job, n in jobs.items()
        }
        self.spec = spec_string(self.jobs)
        self.servers: dict[tuple[str, int], ServerProcess] = {}
        self.every_process: list[ServerProcess] = []

    def start(self, job: str, index: int) -> ServerProcess:
        """Starts the task (again, on the same port, after `kill`) and waits until it serves."""
        server = ServerProcess(self.spec, job, index)
        self.every_process.append(server)
        self.servers[(job, index)] = server
        server.wait_ready(_WAIT_S)
        return server

    def start_all(self) -> None:
        """Starts every task."""
        procs = [
            ServerProcess(self.spec, job, i)
            for job, addresses in self.jobs.items()
            for i in range(len(addresses))
        ]
        self.every_process.extend(procs)
        for server in procs:
            self.servers[(server.job_name, server.task_index)] = server
        for server in procs:
            server.wait_ready(_WAIT_S)

    def kill(self, job: str, index: int) -> None:
        """SIGKILL by PID: the task dies as in a crash."""
        self.servers[(job, index)].kill()

    def target(self, job: str, index: int) -> str:
        """The session target of a task (as `server.target` would give it)."""
        return f"grpc://{self.jobs[job][index]}"

    def stop_all(self) -> None:
        """Kills every process this cluster started (by PID)."""
        for server in self.every_process:
            server.kill()


@pytest.fixture
def make_cluster() -> Iterator[Callable[[dict[str, int]], Cluster]]:
    clusters: list[Cluster] = []

    def make(jobs: dict[str, int]) -> Cluster:
        clusters.append(Cluster(jobs))
        return clusters[-1]

    yield make
    for cluster in clusters:
        cluster.stop_all()


@pytest.fixture
def open_session() -> Iterator[Callable[..., Any]]:
    """`open_session(target, graph, config=None)`; every session is closed at teardown (an
    open distributed session must not survive to interpreter exit)."""
    sessions: list[Any] = []

    def open_(target: str, graph: Any, config: Any = None) -> Any:
        sessions.append(tf.Session(target, graph=graph, config=config or _config()))
        return sessions[-1]

    yield open_
    for sess in sessions:
        sess.close()


class _LogEvent(logging.Handler):
    """Sets `seen` when a record containing `needle` is logged."""

    def __init__(self, needle: str):
        super().__init__(logging.DEBUG)
        self.needle = needle
        self.seen = threading.Event()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        self.messages.append(message)
        if self.needle in message:
            self.seen.set()


class _Run:
    """`sess.run(fetch)` on a thread, recording the result or the error."""

    def __init__(self, sess: Any, fetch: Any):
        self.result: Any = None
        self.error: BaseException | None = None
        self.finished = threading.Event()
        self.finished_at: float | None = None
        self._thread = threading.Thread(target=self._run, args=(sess, fetch), daemon=True)
        self._thread.start()

    def _run(self, sess: Any, fetch: Any) -> None:
        try:
            self.result = sess.run(fetch)
        except BaseException as e:  # noqa: BLE001  (reported by the test)
            self.error = e
        finally:
            self.finished_at = time.monotonic()
            self.finished.set()


def _trace(sess: Any, fetch: Any) -> list[tuple[str, set[str]]]:
    """The blog's `run_with_location_trace`, returning (device, node names) per device."""
    run_options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    run_metadata = tf.RunMetadata()
    sess.run(fetch, options=run_options, run_metadata=run_metadata)
    return [
        (d.device, {n.node_name for n in d.node_stats}) for d in run_metadata.step_stats.dev_stats
    ]


def _run_until_not_unavailable(sess: Any, fetch: Any) -> BaseException | None:
    """Runs `fetch`, retrying while it raises `UnavailableError` (the retry contract: a
    restarted peer's channel may still be reconnecting); returns the first other error, or
    None if the run succeeded."""
    outcome: list[BaseException | None] = []

    def attempt() -> bool:
        try:
            sess.run(fetch)
            outcome.append(None)
        except tf.errors.UnavailableError:
            return False
        except tf.errors.OpError as e:
            outcome.append(e)
        return True

    # The channel's reconnect backoff is at most 0.3 s.
    wait_until(attempt, _WAIT_S, poll_s=0.05, what="a run that is not UnavailableError")
    return outcome[0]


# ----------------------------------------------------------------- sharing and graphs
def test_shared_variable_across_two_servers(make_cluster, open_session):
    cluster = make_cluster({"local": 2})
    cluster.start_all()
    graph = tf.Graph()
    with graph.as_default():
        var = tf.Variable(initial_value=0.0, name="var")
        init = tf.global_variables_initializer()
        increment = var.assign_add(1.0)
    sess1 = open_session(cluster.target("local", 0), graph)
    sess2 = open_session(cluster.target("local", 1), graph)
    sess1.run(init)
    sess2.run(init)
    assert (sess1.run(var), sess2.run(var)) == (0.0, 0.0)
    sess1.run(increment)
    assert (sess1.run(var), sess2.run(var)) == (1.0, 1.0)
    sess2.run(increment)
    assert (sess1.run(var), sess2.run(var)) == (2.0, 2.0)


def test_graphs_are_not_shared_but_variables_are(make_cluster, open_session):
    cluster = make_cluster({"local": 2})
    cluster.start_all()
    graph1 = tf.Graph()
    with graph1.as_default():
        var1 = tf.Variable(0.0, name="var")
    sess1 = open_session(cluster.target("local", 0), graph1)
    assert [(op.name, op.type) for op in graph1.get_operations()] == [
        ("var/initial_value", "Const"),
        ("var", "VariableV2"),
        ("var/Assign", "Assign"),
        ("var/read", "Identity"),
    ]
    graph2 = tf.Graph()
    sess2 = open_session(cluster.target("local", 1), graph2)
    assert graph2.get_operations() == []
    with graph2.as_default():
        var2 = tf.Variable(0.0, name="var")
    sess1.run(var1.assign(1.0))
    assert sess2.run(var2) == 1.0


def test_placement_traces_default_and_pinned(make_cluster, open_session):
    cluster = make_cluster({"local": 2})
    cluster.start_all()
    dev0, dev1 = _device("local", 0), _device("local", 1)
    graph = tf.Graph()
    with graph.as_default():
        var = tf.Variable(initial_value=0.0, name="var")
        var.assign_add(1.0)  # the blog's earlier increment: the traced one is AssignAdd_1
        increment = var.assign_add(1.0)
        with tf.device("/job:local/task:0"):
            var1 = tf.Variable(0.0, name="var1")
        with tf.device("/job:local/task:1"):
            var2 = tf.Variable(0.0, name="var2")
        init = tf.global_variables_initializer()
    assert (increment.op.name, increment.op.inputs[1].op.name) == (
        "AssignAdd_1",
        "AssignAdd_1/value",
    )
    sess1 = open_session(cluster.target("local", 0), graph)
    sess2 = open_session(cluster.target("local", 1), graph)
    sess1.run(init)

    # Unpinned: everything runs on task 0, whichever session runs it; the client device of
    # a session on task 1 shows only its `_SOURCE`, listed first.
    assert _trace(sess1, var) == [(dev0, {"_SOURCE", "var"})]
    assert _trace(sess1, increment) == [
        (dev0, {"_SOURCE", "AssignAdd_1/value", "var", "AssignAdd_1"})
    ]
    assert _trace(sess2, var) == [(dev1, {"_SOURCE"}), (dev0, {"_SOURCE", "var"})]
    # Pinned with tf.device: var1 on task 0 and var2 on task 1, from either session.
    assert _trace(sess1, var1) == [(dev0, {"_SOURCE", "var1"})]
    assert _trace(sess1, var2) == [(dev0, {"_SOURCE"}), (dev1, {"_SOURCE", "var2"})]
    assert _trace(sess2, var2) == [(dev1, {"_SOURCE", "var2"})]
    assert _trace(sess2, var1) == [(dev1, {"_SOURCE"}), (dev0, {"_SOURCE", "var1"})]
    assert sess2.run(var) == 1.0  # the traced increment ran once


# ------------------------------------------------------- waiting for the cluster
def test_run_blocks_until_the_second_server_starts(make_cluster, open_session):
    cluster = make_cluster({"local": 2})
    cluster.start("local", 0)
    graph = tf.Graph()
    with graph.as_default():
        no_op = tf.no_op()
    sess1 = open_session(
        cluster.target("local", 0), graph, _config(operation_timeout_in_ms=120_000)
    )
    waiting = _LogEvent(
        "CreateSession still waiting for response from worker: /job:local/replica:0/task:1"
    )
    logger = logging.getLogger(_MASTER_LOGGER)
    old_level = logger.level
    logger.addHandler(waiting)
    if not logger.isEnabledFor(logging.WARNING):
        logger.setLevel(logging.WARNING)
    try:
        run = _Run(sess1, no_op)
        assert waiting.seen.wait(_WAIT_S), waiting.messages
        assert not run.finished.is_set(), run.error  # still blocked: task 1 is absent
        cluster.start("local", 1)
        up_at = time.monotonic()
        assert run.finished.wait(_WAIT_S), "the run did not finish after task 1 started"
    finally:
        logger.removeHandler(waiting)
        logger.setLevel(old_level)
    assert run.error is None
    assert run.finished_at - up_at < 10.0


def test_missing_server_gives_deadline_exceeded_within_the_operation_timeout(
    make_cluster, open_session
):
    cluster = make_cluster({"local": 2})
    cluster.start("local", 0)  # task 1 never starts
    graph = tf.Graph()
    with graph.as_default():
        no_op = tf.no_op()
    sess1 = open_session(cluster.target("local", 0), graph, _config(operation_timeout_in_ms=2000))
    start = time.monotonic()
    with pytest.raises(tf.errors.DeadlineExceededError) as info:
        sess1.run(no_op)
    elapsed = time.monotonic() - start
    assert _task("local", 1) in info.value.message
    assert _task("local", 0) not in info.value.message
    assert 1.9 <= elapsed <= 5.0, elapsed


# ------------------------------------------------------- servers leaving, coming back
def _two_task_graph() -> tuple[Any, Any, Any, Any]:
    """(graph, op on task 0 -> 2.0, no-op on task 1, initializer)."""
    graph = tf.Graph()
    with graph.as_default():
        with tf.device("/job:local/task:0"):
            on_task0 = tf.constant(1.0) + 1.0
        with tf.device("/job:local/task:1"):
            no_op_on_task1 = tf.no_op()
        init = tf.no_op()
    return graph, on_task0, no_op_on_task1, init


def test_server_leaving_ops_elsewhere_run_ops_on_it_fail_fast(make_cluster, open_session):
    cluster = make_cluster({"local": 2})
    cluster.start_all()
    graph, on_task0, no_op_on_task1, _ = _two_task_graph()
    sess1 = open_session(cluster.target("local", 0), graph)
    assert sess1.run(on_task0) == 2.0
    sess1.run(no_op_on_task1)

    cluster.kill("local", 1)
    for _ in range(3):
        assert sess1.run(on_task0) == 2.0
    start = time.monotonic()
    with pytest.raises(tf.errors.UnavailableError) as info:
        sess1.run(no_op_on_task1)
    elapsed = time.monotonic() - start
    assert elapsed < 2.0, elapsed
    assert _task("local", 1) in info.value.message
    with pytest.raises(tf.errors.UnavailableError):  # still fast, still Unavailable
        sess1.run(no_op_on_task1)
    assert sess1.run(on_task0) == 2.0


def test_step_blocked_on_a_leaving_server_fails_fast(make_cluster, open_session):
    cluster = make_cluster({"local": 2})
    cluster.start_all()
    graph = tf.Graph()
    with graph.as_default():
        with tf.device("/job:local/task:1"):
            queue = tf.FIFOQueue(10, tf.float32, shared_name="q")
            dequeued = queue.dequeue()  # blocks: nothing is ever enqueued
        with tf.device("/job:local/task:0"):
            plus_one = dequeued + 1.0
    sess1 = open_session(cluster.target("local", 0), graph)
    run = _Run(sess1, plus_one)
    # Give the step time to block in the dequeue (if it has not got there yet, it fails
    # to reach task 1 instead: the same error).
    assert not run.finished.wait(0.5), run.error
    killed_at = time.monotonic()
    cluster.kill("local", 1)
    assert run.finished.wait(_WAIT_S)
    assert isinstance(run.error, tf.errors.UnavailableError), run.error
    assert _task("local", 1) in run.error.message
    assert run.finished_at - killed_at < 2.0


def test_restarted_server_aborts_old_sessions_new_sessions_work(make_cluster, open_session):
    cluster = make_cluster({"local": 2})
    cluster.start_all()
    graph = tf.Graph()
    with graph.as_default():
        with tf.device("/job:local/task:0"):
            on_task0 = tf.constant(1.0) + 1.0
        with tf.device("/job:local/task:1"):
            no_op_on_task1 = tf.no_op()
            var2 = tf.Variable(3.0, name="var2")
    sess1 = open_session(cluster.target("local", 0), graph)
    sess1.run(var2.initializer)
    assert sess1.run(var2) == 3.0

    cluster.kill("local", 1)
    with pytest.raises(tf.errors.UnavailableError):
        sess1.run(no_op_on_task1)
    cluster.start("local", 1)  # the same port

    error = _run_until_not_unavailable(sess1, no_op_on_task1)
    assert isinstance(error, tf.errors.AbortedError), error
    assert _task("local", 1) in error.message
    with pytest.raises(tf.errors.AbortedError):  # the old session does not recover
        sess1.run(no_op_on_task1)
    assert sess1.run(on_task0) == 2.0  # its partitions on task 0 still run

    sess2 = open_session(cluster.target("local", 0), graph)
    sess2.run(no_op_on_task1)
    with pytest.raises(tf.errors.FailedPreconditionError):  # var2 died with the old task 1
        sess2.run(var2)
    sess2.run(var2.initializer)
    assert sess2.run(var2) == 3.0


# ------------------------------------------------------------ initialization
def test_second_client_waits_for_initialization(make_cluster, open_session):
    cluster = make_cluster({"local": 2})
    cluster.start_all()
    graph_init = tf.Graph()  # the blog's server 2: initializes
    with graph_init.as_default():
        tf.Variable(0.0, name="var")
        init = tf.global_variables_initializer()
    graph_wait = tf.Graph()  # the blog's server 1: waits
    with graph_wait.as_default():
        tf.Variable(0.0, name="var")
        report = tf.report_uninitialized_variables()
    sess_init = open_session(cluster.target("local", 1), graph_init)
    sess_wait = open_session(cluster.target("local", 0), graph_wait)

    polls: list[list[bytes]] = []
    polled = threading.Event()

    def poll_once() -> bool:
        polls.append(list(sess_wait.run(report)))
        polled.set()
        return not polls[-1]

    def poll() -> None:  # the blog's polling loop (1 s pace there); the test checks `polls`
        wait_until(poll_once, _WAIT_S, poll_s=0.02, what="report_uninitialized to be empty")

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    assert polled.wait(_WAIT_S)
    sess_init.run(init)
    poller.join(_WAIT_S)
    assert not poller.is_alive()
    assert polls[0] == [b"var"]
    assert polls[-1] == []
    assert all(p == [b"var"] for p in polls[:-1])


def test_ps_and_two_workers_increment_to_ten(make_cluster, open_session):
    cluster = make_cluster({"worker": 2, "ps": 1})
    cluster.start_all()

    def build() -> tuple[Any, Any, Any, Any, Any]:
        graph = tf.Graph()
        with graph.as_default():
            with tf.device("/job:ps/task:0"):
                var = tf.Variable(0.0, name="var")
            report = tf.report_uninitialized_variables()
            increment = var.assign_add(1.0)
            init = tf.global_variables_initializer()
        return graph, var, report, increment, init

    graph, var, report, _, init = build()
    ps_sess = open_session(cluster.target("ps", 0), graph)
    worker_errors: list[BaseException] = []

    def worker(worker_n: int) -> None:
        try:
            w_graph, _, w_report, w_increment, _ = build()
            sess = open_session(cluster.target("worker", worker_n), w_graph)
            sess.run(w_report)  # cluster ready
            wait_until(lambda: len(sess.run(w_report)) == 0, _WAIT_S, 0.02, "var to be initialized")
            for _ in range(5):
                sess.run(w_increment)
        except BaseException as e:  # noqa: BLE001  (reported by the test)
            worker_errors.append(e)

    assert list(ps_sess.run(report)) == [b"var"]  # the cluster is up; var is not initialized
    workers = [threading.Thread(target=worker, args=(n,), daemon=True) for n in range(2)]
    for t in workers:
        t.start()
    ps_sess.run(init)
    values = []
    while any(t.is_alive() for t in workers):
        values.append(float(ps_sess.run(var)))
        workers[0].join(0.05)
    for t in workers:
        t.join(_WAIT_S)
    assert not any(t.is_alive() for t in workers)
    assert worker_errors == []
    assert values == sorted(values) and all(0.0 <= v <= 10.0 for v in values)
    assert ps_sess.run(var) == 10.0


# ------------------------------------------------------------- device filters
def test_device_filters_skip_a_dead_task(make_cluster, open_session):
    cluster = make_cluster({"local": 2})
    cluster.start_all()
    cluster.kill("local", 1)
    graph = tf.Graph()
    with graph.as_default():
        with tf.device("/job:local/task:0"):
            var = tf.Variable(5.0, name="var")
            doubled = var * 2.0
        with tf.device("/job:local/task:1"):
            on_task1 = tf.constant(1.0)

    unfiltered = open_session(
        cluster.target("local", 0), graph, _config(operation_timeout_in_ms=1000)
    )
    with pytest.raises(tf.errors.DeadlineExceededError, match="task:1"):
        unfiltered.run(var.initializer)

    filtered = open_session(
        cluster.target("local", 0), graph, _config(device_filters=["/job:local/task:0"])
    )
    start = time.monotonic()
    filtered.run(var.initializer)
    assert filtered.run(doubled) == 10.0
    assert time.monotonic() - start < 2.0
    assert [d.name for d in filtered.list_devices()] == [_device("local", 0)]
    # Task 1 is not among the session's devices: as in TensorFlow, ops pinned there cannot
    # be placed.
    with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot assign a device"):
        filtered.run(on_task1)


# ------------------------------------------------------------------ the CLI
def test_server_cli_stops_cleanly_on_sigterm_and_frees_its_port(make_cluster, open_session):
    cluster = make_cluster({"local": 1})
    server = cluster.start("local", 0)
    address = cluster.jobs["local"][0]
    port = int(address.rpartition(":")[2])
    assert server.info["address"] == address
    assert server.info["target"] == f"grpc://localhost:{port}"
    assert f"Started server /job:local/replica:0/task:0 at grpc://localhost:{port}" in server.output
    graph = tf.Graph()
    with graph.as_default():
        hello = tf.constant("Hello, distributed TensorFlow!")
    sess = open_session(cluster.target("local", 0), graph)
    assert sess.run(hello) == b"Hello, distributed TensorFlow!"

    start = time.monotonic()
    assert server.terminate(timeout_s=_WAIT_S) == 0
    assert time.monotonic() - start < 10.0
    # The output reader thread may lag the exit by a moment.
    wait_until(lambda: "Received signal" in server.output, _WAIT_S, 0.02, "the signal line")
    assert "Received signal 15, stopping /job:local/replica:0/task:0" in server.output

    again = cluster.start("local", 0)  # binds the same port
    assert again.info["address"] == address
    sess2 = open_session(cluster.target("local", 0), graph)
    assert sess2.run(hello) == b"Hello, distributed TensorFlow!"


# ------------------------------------------------------------ regression
def test_cross_task_input_without_operation_timeout(make_cluster):
    """A remote partition that receives from another task, with no step deadline.

    Regression: RunGraph used gRPC's `context.time_remaining()` (~9.2e18 s when the caller
    set no deadline) as the step deadline, so the partition's RecvTensors to the other task
    failed at once with InternalError "OverflowError: timestamp out of range for platform
    time_t" (or DeadlineExceededError).
    """
    cluster = make_cluster({"local": 2})
    cluster.start_all()
    graph = tf.Graph()
    with graph.as_default():
        with tf.device("/job:local/task:1"):
            x = tf.constant(1.0)
            var2 = tf.Variable(0.0, name="var2")
        with tf.device("/job:local/task:0"):
            y = x + 1.0
            var1 = tf.Variable(0.0, name="var1")
        init = tf.global_variables_initializer()  # a control edge from task 1 into task 0
    with tf.Session(cluster.target("local", 0), graph=graph) as sess:  # no timeout
        assert sess.run(y) == 2.0
        sess.run(init)
        assert sess.run([var1, var2]) == [0.0, 0.0]
