"""QueueRunner, add_queue_runner and start_queue_runners (mirrors TF's queue_runner_test.py;
threads are synchronised through queue state, never with sleeps)."""


import numpy as np
import pytest

import tensorweave as tf
from tensorweave.kernels import data_flow_kernels  # noqa: F401  (registers the kernels)
from tensorweave.ops.data_flow_ops import FIFOQueue
from tensorweave.protos import queue_runner_pb2
from tensorweave.testing.threads import wait_until
from tensorweave.training import meta_graph
from tensorweave.training.coordinator import Coordinator
from tensorweave.training.queue_runner import (
    QueueRunner,
    add_queue_runner,
    start_queue_runners,
)


@pytest.fixture
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def _pipeline(n=5, capacity=10):
    """A closed source queue holding 0..n-1 and a runner moving them into `dst`."""
    src = FIFOQueue(n, tf.int32, shapes=[], name="src")
    fill = src.enqueue_many([np.arange(n, dtype=np.int32)])
    close_src = src.close()
    dst = FIFOQueue(capacity, tf.int32, shapes=[], name="dst")
    move = dst.enqueue(src.dequeue())
    return src, fill, close_src, dst, move


def _drain(sess, q):
    out = []
    deq = q.dequeue()
    while True:
        try:
            out.append(int(sess.run(deq)))
        except tf.errors.OutOfRangeError:
            return out


def test_basic_runner_moves_elements_then_closes(graph):
    _, fill, close_src, dst, move = _pipeline()
    qr = QueueRunner(dst, [move])
    assert qr.name == "dst" and qr.queue is dst and qr.enqueue_ops == [move]
    assert qr.close_op.type == "QueueCloseV2" and qr.cancel_op.type == "QueueCloseV2"
    assert qr.cancel_op.get_attr("cancel_pending_enqueues")
    assert qr.queue_closed_exception_types == (tf.errors.OutOfRangeError,)
    with tf.Session(graph=graph) as sess:
        sess.run(fill)
        sess.run(close_src)
        threads = qr.create_threads(sess)
        assert len(threads) == 1 and not threads[0].daemon
        for t in threads:
            t.start()
        for t in threads:
            t.join(10.0)
        assert not qr.exceptions_raised
        assert sess.run(dst.is_closed())
        assert _drain(sess, dst) == [0, 1, 2, 3, 4]


def test_two_enqueue_threads_close_after_the_last(graph):
    _, fill, close_src, dst, move = _pipeline(n=8)
    move2 = dst.enqueue(graph.get_operation_by_name("src_Dequeue").outputs[0] * 1)
    qr = QueueRunner(dst, [move, move2])
    with tf.Session(graph=graph) as sess:
        sess.run(fill)
        sess.run(close_src)
        threads = qr.create_threads(sess, start=True, daemon=True)
        assert all(t.daemon for t in threads)
        for t in threads:
            t.join(10.0)
        assert sorted(_drain(sess, dst)) == list(range(8))


def test_create_threads_twice_returns_nothing_while_running(graph):
    q = FIFOQueue(1, tf.int32, shapes=[])
    qr = QueueRunner(q, [q.enqueue(1)])
    coord = Coordinator()
    with tf.Session(graph=graph) as sess:
        res = sess.run(q.queue_ref)
        threads = qr.create_threads(sess, coord=coord, start=True)
        assert len(threads) == 2  # the enqueue thread and the close_on_stop thread
        wait_until(lambda: res.pending_enqueues == 1)
        assert qr.create_threads(sess, coord=coord) == []
        coord.request_stop()
        coord.join(stop_grace_period_secs=10)
        assert sess.run(q.is_closed())
        assert len(qr.create_threads(sess)) == 1  # all ended: can start again


def test_grace_period_with_blocked_enqueue(graph):
    q = FIFOQueue(2, tf.float32, shapes=[])
    qr = QueueRunner(q, [q.enqueue(1.0)])
    coord = Coordinator()
    with tf.Session(graph=graph) as sess:
        res = sess.run(q.queue_ref)
        threads = qr.create_threads(sess, coord, start=True)
        wait_until(lambda: res.size() == 2 and res.pending_enqueues == 1)
        coord.request_stop()
        coord.join(stop_grace_period_secs=10.0)  # the cancel_op unblocks the enqueue
        assert all(not t.is_alive() for t in threads)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_exception_without_coordinator_is_kept(graph):
    v = tf.Variable(1.0, name="never_initialized")
    q = FIFOQueue(10, tf.float32, shapes=[])
    qr = QueueRunner(q, [q.enqueue(v)])
    with tf.Session(graph=graph) as sess:
        threads = qr.create_threads(sess, start=True)
        for t in threads:
            t.join(10.0)
        assert len(qr.exceptions_raised) == 1
        assert isinstance(qr.exceptions_raised[0], tf.errors.FailedPreconditionError)
        assert len(qr.create_threads(sess)) == 1  # reset by create_threads
        assert qr.exceptions_raised == []


def test_exception_is_reported_to_the_coordinator(graph):
    v = tf.Variable(1.0, name="never_initialized")
    q = FIFOQueue(10, tf.float32, shapes=[])
    qr = QueueRunner(q, [q.enqueue(v)])
    coord = Coordinator()
    with tf.Session(graph=graph) as sess:
        qr.create_threads(sess, coord=coord, start=True)
        with pytest.raises(tf.errors.FailedPreconditionError):
            coord.join(stop_grace_period_secs=10)
        assert sess.run(q.is_closed())  # the close_on_stop thread ran the cancel op


def test_custom_queue_closed_exception_types(graph):
    q = FIFOQueue(10, tf.float32, shapes=[])
    dst = FIFOQueue(10, tf.float32, shapes=[], name="dst")
    qr = QueueRunner(
        dst,
        [dst.enqueue(q.dequeue())],
        queue_closed_exception_types=(tf.errors.OutOfRangeError, tf.errors.CancelledError),
    )
    with tf.Session(graph=graph) as sess:
        sess.run(q.close())
        coord = Coordinator()
        qr.create_threads(sess, coord=coord, start=True)
        wait_until(lambda: sess.run(dst.is_closed()))
        coord.request_stop()
        coord.join(stop_grace_period_secs=10)


def test_argument_errors(graph):
    q = FIFOQueue(10, tf.float32)
    with pytest.raises(ValueError, match="Must provide queue and enqueue_ops"):
        QueueRunner(q, [])
    with pytest.raises(ValueError, match="Must provide queue and enqueue_ops"):
        QueueRunner()
    enq = q.enqueue(1.0)
    for bad in ([tf.errors.OutOfRangeError], (), (ValueError,), "x"):
        with pytest.raises(TypeError, match="queue_closed_exception_types"):
            QueueRunner(q, [enq], queue_closed_exception_types=bad)
    with pytest.raises(ValueError, match="mutually exclusive"):
        QueueRunner(q, [enq], queue_runner_def=queue_runner_pb2.QueueRunnerDef())


def test_proto_round_trip(graph):
    with tf.name_scope("scope"):
        q = FIFOQueue(10, tf.float32, shapes=[])
        enq = q.enqueue(1.0)
        qr = QueueRunner(
            q,
            [enq],
            queue_closed_exception_types=(tf.errors.OutOfRangeError, tf.errors.CancelledError),
        )
    proto = qr.to_proto()
    assert proto.queue_name == "scope/fifo_queue"
    assert list(proto.enqueue_op_name) == ["scope/fifo_queue_enqueue"]
    assert proto.close_op_name == qr.close_op.name
    assert list(proto.queue_closed_exception_types) == [11, 1]
    scoped = qr.to_proto(export_scope="scope")
    assert scoped.queue_name == "fifo_queue"
    assert qr.to_proto(export_scope="other") is None
    again = QueueRunner.from_proto(proto)
    assert again.queue is q.queue_ref.op and again.enqueue_ops == [enq]
    assert again.close_op is qr.close_op and again.cancel_op is qr.cancel_op
    assert again.queue_closed_exception_types == qr.queue_closed_exception_types
    legacy = queue_runner_pb2.QueueRunnerDef()
    legacy.CopyFrom(proto)
    del legacy.queue_closed_exception_types[:]
    assert QueueRunner(queue_runner_def=legacy).queue_closed_exception_types == (
        tf.errors.OutOfRangeError,
    )


def test_meta_graph_export_and_import(graph):
    q = FIFOQueue(10, tf.float32, shapes=[])
    add_queue_runner(QueueRunner(q, [q.enqueue(2.0)]))
    meta = meta_graph.create_meta_graph_def(graph=graph)
    assert "queue_runners" in meta.collection_def
    g2 = tf.Graph()
    meta_graph.import_scoped_meta_graph(meta, graph=g2, import_scope="imported")
    (qr2,) = g2.get_collection(tf.GraphKeys.QUEUE_RUNNERS)
    assert qr2.name == "imported/fifo_queue"
    assert [op.name for op in qr2.enqueue_ops] == ["imported/fifo_queue_enqueue"]


def test_start_queue_runners(graph):
    _, fill, close_src, dst, move = _pipeline()
    add_queue_runner(QueueRunner(dst, [move]))
    with tf.Session(graph=graph) as sess:
        sess.run(fill)
        sess.run(close_src)
        threads = start_queue_runners(sess)
        assert len(threads) == 1 and threads[0].daemon
        threads[0].join(10.0)
        assert _drain(sess, dst) == list(range(5))


def test_start_queue_runners_default_session_and_coordinator(graph):
    _, fill, close_src, dst, move = _pipeline()
    add_queue_runner(QueueRunner(dst, [move]), collection="my_runners")
    coord = Coordinator()
    with tf.Session(graph=graph) as sess:
        sess.run(fill)
        sess.run(close_src)
        assert start_queue_runners(sess) == []  # nothing in the default collection
        with sess.as_default():
            threads = start_queue_runners(coord=coord, collection="my_runners")
        assert len(threads) == 2
        wait_until(lambda: sess.run(dst.is_closed()))
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)
        assert _drain(sess, dst) == list(range(5))


def test_start_queue_runners_errors():
    with pytest.raises(ValueError, match="No default session"):
        start_queue_runners()
    with pytest.raises(TypeError, match="tf.Session"):
        start_queue_runners(sess=object())
