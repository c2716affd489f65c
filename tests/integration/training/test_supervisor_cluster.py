"""`tf.train.Supervisor` on an in-process gRPC cluster: a chief and a non-chief worker
sharing variables on a ps; after the ps restarts (its state lost), the training loop starts
a new managed session (as `basic_train_loop` does), whose chief restores the latest
checkpoint of its logdir."""

from __future__ import annotations

import pytest

import tensorweave as tf
from tensorweave.distributed.server import Server
from tensorweave.testing.cluster import create_local_cluster
from tensorweave.training.summary_io import FileWriterCache

# NOTE: gRPC even in process, so a restarted ps is reached as a new server (the in-process
# path keeps calling the stopped one).
RPC = tf.ConfigProto(rpc_options=tf.RPCOptions(use_rpc_for_inprocess_master=True))


@pytest.fixture
def cluster():
    workers, ps = create_local_cluster(num_workers=2, num_ps=1, worker_config=RPC,
                                       ps_config=RPC)
    servers = {"workers": workers, "ps": ps}
    yield servers
    for server in servers["workers"] + servers["ps"]:
        server.stop()
    FileWriterCache.clear()


def _model():
    with tf.device("/job:ps/task:0"):
        gstep = tf.train.get_or_create_global_step()
        v = tf.Variable(10.0, name="v")
    with tf.device("/job:worker/task:0"):
        step = tf.group(tf.assign_add(gstep, 1), tf.assign_add(v, 1.0))
    return gstep, v, step


def _restart_ps(cluster):
    old = cluster["ps"][0]
    cluster_def, config = old.server_def.cluster, old.server_def.default_session_config
    old.stop()
    cluster["ps"] = [Server(cluster_def, job_name="ps", task_index=0, config=config)]


def test_chief_restores_logdir_after_ps_restart(cluster, tmp_path):
    chief_target = cluster["workers"][0].target
    seen = []
    with tf.Graph().as_default():
        gstep, v, step = _model()
        sv = tf.train.Supervisor(is_chief=True, logdir=str(tmp_path), save_model_secs=0,
                                 recovery_wait_secs=0.05)

        def train_step(sess):
            sess.run(step)
            g = int(sess.run(gstep))
            seen.append(g)
            if g == 5 and len(seen) == 5:
                sv.saver.save(sess, sv.save_path, global_step=gstep)
                _restart_ps(cluster)
            if g == 8:
                sv.request_stop()

        # basic_train_loop's retry, with the session config.
        while True:
            try:
                with sv.managed_session(chief_target, config=RPC) as sess:
                    while not sv.should_stop():
                        train_step(sess)
                break
            except tf.errors.AbortedError:
                continue
    # Steps 1..5, the restart (the 6th run is aborted), then 6..8 from the checkpoint.
    assert seen == [1, 2, 3, 4, 5, 6, 7, 8]

    with tf.Graph().as_default():
        gstep, v, _ = _model()
        worker = tf.train.Supervisor(is_chief=False, logdir=str(tmp_path),
                                     recovery_wait_secs=0.05)
        with worker.managed_session(cluster["workers"][1].target, config=RPC) as sess:
            assert sess.run([gstep, v]) == [8, 18.0]
            assert worker.summary_writer is None


def test_non_chief_waits_for_the_chief(cluster, tmp_path):
    with tf.Graph().as_default():
        gstep, v, step = _model()
        chief = tf.train.Supervisor(is_chief=True, logdir=str(tmp_path),
                                    recovery_wait_secs=0.05)
        with chief.managed_session(cluster["workers"][0].target) as chief_sess:
            chief_sess.run(step)
            with tf.Graph().as_default():
                w_gstep, w_v, _ = _model()
                worker = tf.train.Supervisor(is_chief=False, recovery_wait_secs=0.05)
                sess = worker.prepare_or_wait_for_session(cluster["workers"][1].target)
                assert sess.run([w_gstep, w_v]) == [1, 11.0]
                worker.stop()
                sess.close()
