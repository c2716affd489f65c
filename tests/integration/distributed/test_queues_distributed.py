"""Queues and accumulators through servers (mirrors TF's server_lib_test.py
testCloseCancelsBlockingOperation, testTimeoutRaisesException and
testExtendAfterQueueRunners, plus sharing and ps placement).

Blocked steps are detected through the server's resource manager (a registered waiter on
the queue), with a bounded deadline; no test sleeps.
"""


import numpy as np
import pytest

import tensorweave as tf
from tensorweave.kernels import data_flow_kernels  # noqa: F401  (registers the kernels)
from tensorweave.ops.data_flow_ops import ConditionalAccumulator, FIFOQueue
from tensorweave.testing.cluster import create_local_cluster
from tensorweave.testing.threads import Runner, wait_until
from tensorweave.training.coordinator import Coordinator
from tensorweave.training.queue_runner import QueueRunner, add_queue_runner, start_queue_runners


def queue_resource(server, name, container=""):
    return server.worker.resource_mgr.lookup(container, name)


def has_waiter(server, name, attr="pending_dequeues"):
    res = queue_resource(server, name)
    return res is not None and getattr(res, attr) > 0


@pytest.fixture
def server():
    s = tf.train.Server.create_local_server()
    yield s
    s.stop()


def test_close_cancels_blocking_operation(server):
    g = tf.Graph()
    with g.as_default():
        q = FIFOQueue(10, [tf.float32])
        dequeue_t = q.dequeue()
    sess = tf.Session(server.target, graph=g)
    runner = Runner(sess, dequeue_t)
    wait_until(lambda: has_waiter(server, "fifo_queue"))
    assert runner.thread.is_alive()
    sess.close()
    runner.join(5.0)
    assert isinstance(runner.error, tf.errors.CancelledError)
    assert "Session::Close" in str(runner.error)
    assert queue_resource(server, "fifo_queue").pending_dequeues == 0


def test_timeout_raises_exception_local():
    g = tf.Graph()
    with g.as_default():
        q = FIFOQueue(1, [tf.float32])
        blocking_t = q.dequeue()
    with tf.Session(graph=g) as sess:
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(blocking_t, options=tf.RunOptions(timeout_in_ms=1000))


def test_timeout_raises_exception_server(server):
    g = tf.Graph()
    with g.as_default():
        q = FIFOQueue(1, [tf.float32])
        blocking_t = q.dequeue()
        enq = q.enqueue(5.0)
    with tf.Session(server.target, graph=g) as sess:
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(blocking_t, options=tf.RunOptions(timeout_in_ms=1000))
        assert queue_resource(server, "fifo_queue").pending_dequeues == 0
        sess.run(enq)
        assert sess.run(blocking_t) == 5.0  # the timed-out step consumed nothing


def test_timeout_raises_exception_over_rpc(server):
    g = tf.Graph()
    with g.as_default():
        q = FIFOQueue(1, [tf.float32])
        blocking_t = q.dequeue()
    config = tf.ConfigProto(rpc_options=tf.RPCOptions(use_rpc_for_inprocess_master=True))
    with tf.Session(server.target, graph=g, config=config) as sess:
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(blocking_t, options=tf.RunOptions(timeout_in_ms=1000))


def _shared_queue_graph(value):
    g = tf.Graph()
    with g.as_default():
        q = FIFOQueue(10, tf.int32, shapes=[], shared_name="shared_queue", name=f"q{value}")
        return g, q.enqueue(value), q.dequeue(), q.size()


def test_queue_shared_by_name_between_sessions_and_graphs(server):
    g1, enq1, deq1, size1 = _shared_queue_graph(1)
    g2, enq2, deq2, size2 = _shared_queue_graph(2)
    with tf.Session(server.target, graph=g1) as s1, tf.Session(server.target, graph=g2) as s2:
        s1.run(enq1)
        s2.run(enq2)
        assert s1.run(size1) == 2 and s2.run(size2) == 2
        assert s2.run(deq2) == 1 and s1.run(deq1) == 2
        # A dequeue blocked in one session is served by an enqueue from the other.
        runner = Runner(s1, deq1)
        wait_until(lambda: has_waiter(server, "shared_queue"))
        s2.run(enq2)
        assert runner.join().result == 2


def test_unshared_queue_is_shared_by_node_name_like_a_variable(server):
    def build():
        g = tf.Graph()
        with g.as_default():
            q = FIFOQueue(10, tf.int32, shapes=[])
            return g, q.enqueue(7), q.dequeue()

    g1, enq1, _ = build()
    g2, _, deq2 = build()
    with tf.Session(server.target, graph=g1) as s1:
        s1.run(enq1)
    with tf.Session(server.target, graph=g2) as s2:
        assert s2.run(deq2) == 7


def test_reset_fails_blocked_dequeue_and_clears_queue(server):
    g = tf.Graph()
    with g.as_default():
        with tf.container("queues"):
            q = FIFOQueue(10, tf.int32, shapes=[])
        deq, enq, size = q.dequeue(), q.enqueue(1), q.size()
    sess = tf.Session(server.target, graph=g)
    sess.run(enq)
    sess.run(deq)
    runner = Runner(sess, deq)
    wait_until(
        lambda: (
            queue_resource(server, "fifo_queue", "queues") is not None
            and queue_resource(server, "fifo_queue", "queues").pending_dequeues == 1
        )
    )
    tf.Session.reset(server.target, ["queues"])
    runner.join(5.0)
    assert isinstance(runner.error, tf.errors.AbortedError)
    sess.close()
    with tf.Session(server.target, graph=g) as sess2:
        assert sess2.run(size) == 0


def test_queue_on_ps_used_from_worker_session():
    workers, ps = create_local_cluster(1, 1)
    try:
        g = tf.Graph()
        with g.as_default():
            with tf.device("/job:ps/task:0"):
                q = FIFOQueue(10, tf.float32, shapes=[2])
            with tf.device("/job:worker/task:0"):
                value = tf.constant([1.0, 2.0]) * 3.0
                enq = q.enqueue(value)
                enq_many = q.enqueue_many(tf.ones([3, 2]))
                deq = q.dequeue() + 1.0
                batch = q.dequeue_many(2)
        with tf.Session(workers[0].target, graph=g) as sess:
            sess.run(enq)
            sess.run(enq_many)
            np.testing.assert_allclose(sess.run(deq), [4.0, 7.0])
            np.testing.assert_allclose(sess.run(batch), np.ones([2, 2]))
            assert sess.run(q.size()) == 1
            # The queue lives on the ps task, not on the worker.
            assert queue_resource(ps[0], "fifo_queue") is not None
            assert queue_resource(workers[0], "fifo_queue") is None
            # A dequeue on the ps blocked from the worker's session is woken by an enqueue.
            sess.run(q.dequeue())
            runner = Runner(sess, deq)
            wait_until(lambda: has_waiter(ps[0], "fifo_queue"))
            sess.run(enq)
            np.testing.assert_allclose(runner.join().result, [4.0, 7.0])
            # Closing the worker's session cancels a dequeue blocked on the ps.
            runner = Runner(sess, deq)
            wait_until(lambda: has_waiter(ps[0], "fifo_queue"))
        runner.join(5.0)
        assert isinstance(runner.error, tf.errors.CancelledError)
        assert queue_resource(ps[0], "fifo_queue").pending_dequeues == 0
    finally:
        for s in workers + ps:
            s.stop()


def test_accumulator_on_ps_shared_by_two_worker_sessions():
    workers, ps = create_local_cluster(2, 1)
    try:
        graphs = []
        for i in range(2):
            g = tf.Graph()
            with g.as_default():
                with tf.device("/job:ps/task:0"):
                    acc = ConditionalAccumulator(tf.float32, shape=[2], shared_name="grad_accum")
                with tf.device(f"/job:worker/task:{i}"):
                    grad = tf.constant([1.0, 2.0]) * float(i + 1)
                apply_op = acc.apply_grad(grad, local_step=0)
                graphs.append((g, apply_op, acc.take_grad(2)))
        sessions = [tf.Session(workers[i].target, graph=graphs[i][0]) for i in range(2)]
        try:
            taker = Runner(sessions[0], graphs[0][2])
            wait_until(
                lambda: (
                    queue_resource(ps[0], "grad_accum") is not None
                    and queue_resource(ps[0], "grad_accum").pending_takes == 1
                )
            )
            sessions[0].run(graphs[0][1])
            sessions[1].run(graphs[1][1])
            np.testing.assert_allclose(taker.join().result, [1.5, 3.0])
        finally:
            for s in sessions:
                s.close()
    finally:
        for s in workers + ps:
            s.stop()


def test_extend_after_queue_runners(server):
    g = tf.Graph()
    with g.as_default():
        q = FIFOQueue(32, tf.int32, shapes=[])
        add_queue_runner(QueueRunner(q, [q.enqueue_many([np.arange(4, dtype=np.int32)])]))
        coord = Coordinator()
        with tf.Session(server.target, graph=g) as sess:
            threads = start_queue_runners(sess, coord=coord)
            wait_until(lambda: has_waiter(server, "fifo_queue", "pending_enqueues"))
            # Extends the graph while the queue runner's enqueue is blocked in a step.
            var = tf.Variable(1.0, name="var")
            sess.run(var.initializer)
            sess.run(var.assign(3.0))
            assert sess.run(var) == 3.0
            assert sess.run(q.dequeue()) == 0
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
