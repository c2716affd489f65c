"""MonitoredTrainingSession on an in-process gRPC cluster: a chief and a non-chief worker
sharing variables on a ps, and recovery after the cluster loses its state."""

from __future__ import annotations

import logging
import threading

import pytest

import tensorweave as tf
from tensorweave.distributed.server import Server
from tensorweave.testing.cluster import create_local_cluster
from tensorweave.training import session_manager, training_util
from tensorweave.training.monitored_session import MonitoredTrainingSession
from tensorweave.training.session_manager import SessionManager
from tensorweave.training.summary_io import FileWriterCache

# Non-chief workers poll for the chief's initialization this often (TF: every 30 s).
POLL_S = 0.05


@pytest.fixture
def cluster():
    workers, ps = create_local_cluster(num_workers=2, num_ps=1)
    servers = {"workers": workers, "ps": ps}
    yield servers
    for server in servers["workers"] + servers["ps"]:
        server.stop()
    FileWriterCache.clear()


class _LogEvent(logging.Handler):
    """Sets `event` when a record containing `text` is logged."""

    def __init__(self, text):
        super().__init__()
        self.text = text
        self.event = threading.Event()

    def emit(self, record):
        if self.text in record.getMessage():
            self.event.set()


def _model():
    """Between-graph replication: each task builds the same graph; state lives on the ps."""
    with tf.device("/job:ps/task:0"):
        gstep = training_util.get_or_create_global_step()
        v = tf.Variable(10.0, name="v")
    do_step = tf.assign_add(gstep, 1)
    return gstep, v, do_step


def test_non_chief_waits_until_chief_initialized(cluster, tmp_path):
    workers = cluster["workers"]
    waiting = _LogEvent("Waiting for model to be ready")
    sm_log = logging.getLogger(session_manager.__name__)
    sm_log.addHandler(waiting)
    sm_log.setLevel(logging.INFO)
    results = {}

    def non_chief():
        try:
            with tf.Graph().as_default():
                gstep, v, do_step = _model()
                with MonitoredTrainingSession(
                    recovery_wait_secs=POLL_S,
                    master=workers[1].target,
                    is_chief=False,
                    checkpoint_dir=str(tmp_path),
                    max_wait_secs=60,
                ) as session:
                    results["hooks"] = list(session._hooks)
                    results["v"] = session.run(v)
                    results["steps"] = [session.run(do_step) for _ in range(5)]
        except BaseException as e:  # noqa: BLE001  (reported by the main thread)
            results["error"] = e

    thread = threading.Thread(target=non_chief, name="non-chief")
    thread.start()
    try:
        assert waiting.event.wait(60), "the non-chief never polled for readiness"
        assert thread.is_alive()
        with tf.Graph().as_default():
            gstep, v, do_step = _model()
            with MonitoredTrainingSession(
                recovery_wait_secs=POLL_S,
                master=workers[0].target, is_chief=True, checkpoint_dir=str(tmp_path)
            ) as session:
                chief_steps = [session.run(do_step) for _ in range(5)]
                thread.join(60)
                assert not thread.is_alive()
                assert "error" not in results, results.get("error")
                assert session.run(gstep) == 10
    finally:
        sm_log.removeHandler(waiting)
        thread.join(60)
    assert results["v"] == 10.0
    assert results["hooks"] == []  # no saving hooks on a non-chief
    assert sorted(chief_steps + results["steps"]) == list(range(1, 11))
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-10")


def test_chief_recovers_from_reset_by_restoring_checkpoint(cluster, tmp_path):
    target = cluster["workers"][0].target
    with tf.Graph().as_default():
        gstep, v, do_step = _model()
        set_v = v.assign(42.0)
        with MonitoredTrainingSession(
            recovery_wait_secs=POLL_S,
            master=target, is_chief=True, checkpoint_dir=str(tmp_path), save_checkpoint_steps=1
        ) as session:
            session.run(set_v)
            assert [session.run(do_step) for _ in range(3)] == [1, 2, 3]
            first_raw = session._tf_sess()
            # Clears every task's default container and aborts this master's sessions.
            tf.Session.reset(target)
            # The run meets AbortedError, recovers (restoring step 3) and is retried.
            assert session.run(do_step) == 4
            assert session._tf_sess() is not first_raw
            assert session.run(v) == 42.0


def _chief_and_worker(workers, tmp_path):
    chief_graph, worker_graph = tf.Graph(), tf.Graph()
    with chief_graph.as_default():
        chief_ops = _model()
        chief = MonitoredTrainingSession(
            recovery_wait_secs=POLL_S,
            master=workers[0].target,
            is_chief=True,
            checkpoint_dir=str(tmp_path),
            save_checkpoint_steps=1,
        )
    with worker_graph.as_default():
        worker_ops = _model()
        worker = MonitoredTrainingSession(
            recovery_wait_secs=POLL_S,
            master=workers[1].target, is_chief=False, max_wait_secs=60
        )
    return (chief_graph, chief, chief_ops), (worker_graph, worker, worker_ops)


def _close(*graph_and_sessions):
    for graph, session in graph_and_sessions:
        with graph.as_default():
            session.close()


def _check_recovery(chief_side, worker_side, lose_state):
    (c_graph, chief, (_, _, c_step)), (w_graph, worker, (w_gstep, _, w_step)) = (
        chief_side,
        worker_side,
    )
    with c_graph.as_default():
        assert [chief.run(c_step) for _ in range(2)] == [1, 2]
    with w_graph.as_default():
        assert worker.run(w_step) == 3
    with c_graph.as_default():
        assert chief.run(c_step) == 4  # saved at 4
    old_raw = chief._tf_sess(), worker._tf_sess()
    lose_state()
    with c_graph.as_default():
        assert chief.run(c_step) == 5  # recovered from the step-4 checkpoint, then stepped
    with w_graph.as_default():
        assert worker.run(w_step) == 6  # a new session, once the chief made the model ready
        assert worker.run(w_gstep) == 6
    assert chief._tf_sess() is not old_raw[0] and worker._tf_sess() is not old_raw[1]


def test_chief_and_worker_recover_after_all_sessions_reset(cluster, tmp_path):
    workers = cluster["workers"]
    chief_side, worker_side = _chief_and_worker(workers, tmp_path)

    def lose_state():
        # Every container is cleared and both masters abort their sessions.
        tf.Session.reset(workers[0].target)
        tf.Session.reset(workers[1].target)

    try:
        _check_recovery(chief_side, worker_side, lose_state)
    finally:
        _close(worker_side[:2], chief_side[:2])


@pytest.fixture
def rpc_cluster():
    config = tf.ConfigProto(rpc_options=tf.RPCOptions(use_rpc_for_inprocess_master=True))
    workers, ps = create_local_cluster(
        num_workers=2, num_ps=1, worker_config=config, ps_config=config
    )
    servers = {"workers": workers, "ps": ps}
    yield servers
    for server in servers["workers"] + servers["ps"]:
        server.stop()
    FileWriterCache.clear()


def test_chief_and_worker_recover_after_ps_restart(rpc_cluster, tmp_path):
    cluster = rpc_cluster
    chief_side, worker_side = _chief_and_worker(cluster["workers"], tmp_path)

    def lose_state():
        old = cluster["ps"][0]
        cluster_def, config = old.server_def.cluster, old.server_def.default_session_config
        old.stop()
        cluster["ps"] = [Server(cluster_def, job_name="ps", task_index=0, config=config)]

    try:
        _check_recovery(chief_side, worker_side, lose_state)
    finally:
        _close(worker_side[:2], chief_side[:2])


def test_wait_for_session_runs_local_init(tmp_path):
    server = tf.train.Server.create_local_server()
    try:
        with tf.Graph().as_default() as graph:
            v = tf.Variable(1, name="v")
            w = tf.Variable(
                v, trainable=False, collections=[tf.GraphKeys.LOCAL_VARIABLES], name="w"
            )
            sm = SessionManager(
                graph=graph,
                ready_op=tf.report_uninitialized_variables(),
                ready_for_local_init_op=tf.report_uninitialized_variables(tf.global_variables()),
                local_init_op=w.initializer,
                recovery_wait_secs=0.05,
            )
            # Another session initializes v (but not w).
            with tf.Session(server.target, graph=graph) as other:
                other.run(v.initializer)
            sess = sm.wait_for_session(server.target, max_wait_secs=3)
            assert sess.run(tf.is_variable_initialized(v))
            assert sess.run(tf.is_variable_initialized(w))
            assert sess.run(v) == 1 and sess.run(w) == 1
            sess.close()
    finally:
        server.stop()
