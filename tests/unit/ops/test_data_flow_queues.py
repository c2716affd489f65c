"""Queues (mirrors parts of TF's fifo_queue_test.py and random_shuffle_queue_test.py).

Blocking is checked without sleeps: a test waits until the queue shows a pending request
(its observable state), with a bounded deadline.
"""

import threading

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.kernels import data_flow_kernels  # noqa: F401  (registers the kernels)
from tensorweave.kernels.queue_resources import QueueResource
from tensorweave.ops import data_flow_ops
from tensorweave.ops.data_flow_ops import FIFOQueue, RandomShuffleQueue
from tensorweave.testing.threads import Runner, wait_until


@pytest.fixture
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


# ----------------------------------------------------------------- graph level
def test_fifo_queue_op_and_attrs(graph):
    q = FIFOQueue(5, (tf.int32, tf.float32), shapes=([1, 1, 2, 3], [5, 8]), name="Q")
    op = q.queue_ref.op
    assert op.type == "FIFOQueueV2" and q.queue_ref.dtype == tf.resource
    assert q.name == "Q"
    assert op.get_attr("capacity") == 5
    assert op.get_attr("component_types") == [tf.int32, tf.float32]
    assert [s.as_list() for s in op.get_attr("shapes")] == [[1, 1, 2, 3], [5, 8]]
    assert op.get_attr("shared_name") in ("", b"")
    assert q.dtypes == [tf.int32, tf.float32]


def test_static_shapes_of_dequeue_ops(graph):
    q = FIFOQueue(10, (tf.float32, tf.int32), shapes=([2], []))
    a, b = q.dequeue()
    assert a.shape.as_list() == [2] and b.shape.as_list() == []
    a, b = q.dequeue_many(4)
    assert a.shape.as_list() == [4, 2] and b.shape.as_list() == [4]
    a, _ = q.dequeue_many(tf.placeholder(tf.int32))
    assert a.shape.as_list() == [None, 2]
    a, _ = q.dequeue_up_to(4)
    assert a.shape.as_list() == [None, 2]
    assert q.size().dtype == tf.int32 and q.is_closed().dtype == tf.bool


def test_enqueue_static_checks(graph):
    q = FIFOQueue(10, tf.float32, shapes=[2])
    with pytest.raises(ValueError):
        q.enqueue([1.0, 2.0, 3.0])
    with pytest.raises(ValueError):
        q.enqueue_many([[1.0, 2.0, 3.0]])
    with pytest.raises(ValueError):
        q.enqueue_many(1.0)
    with pytest.raises(ValueError, match="names"):
        q.enqueue({"a": [1.0, 2.0]})
    with pytest.raises(ValueError, match="fully defined"):
        FIFOQueue(10, tf.float32, shapes=[None])
    with pytest.raises(ValueError):
        FIFOQueue(10, (tf.float32, tf.int32), names=["a"])
    named = FIFOQueue(10, (tf.float32, tf.int32), names=["x", "y"])
    with pytest.raises(ValueError, match="dictionary"):
        named.enqueue((1.0, 2))
    with pytest.raises(ValueError, match="do not match"):
        named.enqueue({"x": 1.0, "z": 2})


def test_queue_ops_are_colocated_with_the_queue(graph):
    with tf.device("/job:ps/task:0"):
        q = FIFOQueue(10, tf.float32)
    with tf.device("/job:worker/task:0"):
        deq = q.dequeue()
        enq = q.enqueue(1.0)
    for op in (deq.op, enq):
        assert op.colocation_groups() == [b"loc:@fifo_queue"]


def test_gradients_do_not_flow_through_a_queue(graph):
    q = FIFOQueue(10, tf.float32, shapes=[])
    x = tf.constant(2.0)
    enqueue = q.enqueue((x * 3.0,))
    dequeued = q.dequeue()
    # The queue ops are `no_gradient`: the dequeued value is a constant to tf.gradients.
    assert tf.gradients(dequeued, [x]) == [None]
    (g,) = tf.gradients(dequeued * x, [x])
    with tf.Session(graph=graph) as sess:
        sess.run(enqueue)
        # d(dequeued * x)/dx = dequeued = 6, not 2 * 6 as if the value kept its path to x.
        assert sess.run(g) == 6.0


# ------------------------------------------------------------------ running
def test_fifo_order_and_size(graph):
    q = FIFOQueue(10, tf.float32)
    elems = [10.0, 20.0, 30.0]
    enqueues = [q.enqueue((x,)) for x in elems]
    deq, size = q.dequeue(), q.size()
    with tf.Session(graph=graph) as sess:
        assert sess.run(size) == 0
        for e in enqueues:
            sess.run(e)
        assert sess.run(size) == 3
        assert [sess.run(deq) for _ in elems] == elems
        assert sess.run(size) == 0


def test_multiple_components_and_names(graph):
    q = FIFOQueue(10, (tf.int32, tf.string), names=("i", "s"))
    enq = q.enqueue({"i": 7, "s": b"seven"})
    deq = q.dequeue()
    assert set(deq) == {"i", "s"}
    with tf.Session(graph=graph) as sess:
        sess.run(enq)
        out = sess.run(deq)
    assert out["i"] == 7 and out["s"] == b"seven"


@pytest.mark.parametrize("dtype", [tf.float32, tf.int64, tf.string, tf.bool])
def test_enqueue_many_dequeue_many_roundtrip(graph, dtype):
    if dtype == tf.string:
        values = np.array([[b"%d" % (2 * i), b"%d" % (2 * i + 1)] for i in range(6)], object)
    else:
        values = np.arange(12).reshape(6, 2).astype(dtype.as_numpy_dtype)
    q = FIFOQueue(10, dtype, shapes=[2])
    enq = q.enqueue_many([values])
    deq2 = q.dequeue_many(2)
    deq0 = q.dequeue_many(0)
    with tf.Session(graph=graph) as sess:
        sess.run(enq)
        first = sess.run(deq2)
        rest = sess.run(q.dequeue_many(4))
        empty = sess.run(deq0)
    np.testing.assert_array_equal(first, values[:2])
    np.testing.assert_array_equal(rest, values[2:])
    assert empty.shape == (0, 2)


def test_enqueue_many_runtime_shape_errors(graph):
    q = FIFOQueue(10, (tf.float32, tf.int32), shapes=([2], []))
    a = tf.placeholder(tf.float32)
    b = tf.placeholder(tf.int32)
    enq = q.enqueue_many((a, b))
    unshaped = FIFOQueue(10, (tf.float32, tf.int32), name="unshaped")
    enq_unshaped = unshaped.enqueue_many((a, b))
    with tf.Session(graph=graph) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Shape mismatch in tuple"):
            sess.run(enq, {a: np.zeros((2, 3), np.float32), b: [1, 2]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="same size in the 0th"):
            sess.run(enq_unshaped, {a: np.zeros((2, 3), np.float32), b: [1, 2, 3]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="require the components"):
            sess.run(unshaped.dequeue_many(1))


def test_dequeue_up_to_at_close(graph):
    q = FIFOQueue(10, tf.int32, shapes=[])
    enq = q.enqueue_many([[1, 2, 3, 4, 5]])
    up_to = q.dequeue_up_to(3)
    with tf.Session(graph=graph) as sess:
        sess.run(enq)
        np.testing.assert_array_equal(sess.run(up_to), [1, 2, 3])
        sess.run(q.close())
        assert sess.run(q.is_closed())
        np.testing.assert_array_equal(sess.run(up_to), [4, 5])
        with pytest.raises(tf.errors.OutOfRangeError, match="requested 3, current size 0"):
            sess.run(up_to)


def test_dequeue_many_at_close_keeps_elements(graph):
    q = FIFOQueue(10, tf.int32, shapes=[])
    enq = q.enqueue_many([[1, 2]])
    with tf.Session(graph=graph) as sess:
        sess.run(enq)
        sess.run(q.close())
        with pytest.raises(tf.errors.OutOfRangeError, match="requested 3, current size 2"):
            sess.run(q.dequeue_many(3))
        np.testing.assert_array_equal(sess.run(q.dequeue_many(2)), [1, 2])


def test_close_semantics(graph):
    q = FIFOQueue(10, tf.float32, shapes=[])
    enq, deq, close = q.enqueue(1.0), q.dequeue(), q.close()
    with tf.Session(graph=graph) as sess:
        sess.run(enq)
        sess.run(close)
        assert sess.run(deq) == 1.0
        with pytest.raises(tf.errors.OutOfRangeError) as info:
            sess.run(deq)
        assert (
            "FIFOQueue 'fifo_queue' is closed and has insufficient elements (requested 1, "
            "current size 0)" in str(info.value)
        )
        with pytest.raises(tf.errors.CancelledError, match="is closed"):
            sess.run(enq)
        with pytest.raises(tf.errors.CancelledError, match="is already closed"):
            sess.run(close)


def test_blocking_dequeue_completed_by_enqueue(graph):
    q = FIFOQueue(10, tf.float32, shapes=[])
    deq, enq = q.dequeue(), q.enqueue(42.0)
    with tf.Session(graph=graph) as sess:
        res = sess.run(q.queue_ref)  # in-process: the handle is the queue object
        assert isinstance(res, QueueResource)
        runner = Runner(sess, deq)
        wait_until(lambda: res.pending_dequeues == 1)
        assert runner.thread.is_alive()
        sess.run(enq)
        assert runner.join().result == 42.0
        assert res.pending_dequeues == 0 and res.size() == 0


def test_blocking_dequeue_many_served_by_several_enqueues(graph):
    q = FIFOQueue(10, tf.int32, shapes=[])
    deq = q.dequeue_many(3)
    with tf.Session(graph=graph) as sess:
        res = sess.run(q.queue_ref)
        runner = Runner(sess, deq)
        wait_until(lambda: res.pending_dequeues == 1)
        for i in range(3):
            sess.run(q.enqueue(i))
        np.testing.assert_array_equal(runner.join().result, [0, 1, 2])


def test_blocking_enqueue_on_full_queue(graph):
    q = FIFOQueue(2, tf.int32, shapes=[])
    enq_many = q.enqueue_many([[1, 2, 3, 4]])  # batch larger than the capacity
    deq = q.dequeue()
    with tf.Session(graph=graph) as sess:
        res = sess.run(q.queue_ref)
        runner = Runner(sess, enq_many)
        wait_until(lambda: res.pending_enqueues == 1 and res.size() == 2)
        out = [sess.run(deq) for _ in range(4)]
        runner.join()
        assert runner.error is None and out == [1, 2, 3, 4]


def test_close_waits_for_pending_enqueues(graph):
    q = FIFOQueue(1, tf.int32, shapes=[])
    with tf.Session(graph=graph) as sess:
        res = sess.run(q.queue_ref)
        sess.run(q.enqueue(1))
        blocked = Runner(sess, q.enqueue(2))
        wait_until(lambda: res.pending_enqueues == 1)
        closer = Runner(sess, q.close())
        wait_until(lambda: res.pending_enqueues == 2)
        assert not res.is_closed()
        assert sess.run(q.dequeue()) == 1
        blocked.join()
        closer.join()
        assert blocked.error is None and closer.error is None
        assert sess.run(q.dequeue()) == 2
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(q.dequeue())


def test_close_with_cancel_pending_enqueues(graph):
    q = FIFOQueue(1, tf.int32, shapes=[])
    with tf.Session(graph=graph) as sess:
        res = sess.run(q.queue_ref)
        sess.run(q.enqueue(1))
        blocked = Runner(sess, q.enqueue(2))
        wait_until(lambda: res.pending_enqueues == 1)
        sess.run(q.close(cancel_pending_enqueues=True))
        blocked.join()
        assert isinstance(blocked.error, tf.errors.CancelledError)
        assert sess.run(q.dequeue()) == 1


def test_close_wakes_blocked_dequeue_with_out_of_range(graph):
    q = FIFOQueue(10, tf.int32, shapes=[])
    with tf.Session(graph=graph) as sess:
        res = sess.run(q.queue_ref)
        runner = Runner(sess, q.dequeue())
        wait_until(lambda: res.pending_dequeues == 1)
        sess.run(q.close())
        assert isinstance(runner.join().error, tf.errors.OutOfRangeError)


def test_timeout_ms_attr(graph):
    q = FIFOQueue(1, tf.int32, shapes=[])
    (deq,) = data_flow_ops.queue_dequeue_v2(q.queue_ref, [tf.int32], timeout_ms=20)
    enq = data_flow_ops.queue_enqueue_v2(q.queue_ref, [tf.constant(5)], timeout_ms=20)
    with tf.Session(graph=graph) as sess:
        res = sess.run(q.queue_ref)
        with pytest.raises(tf.errors.DeadlineExceededError, match="timeout_ms"):
            sess.run(deq)
        assert res.pending_dequeues == 0
        sess.run(enq)
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(enq)
        assert res.pending_enqueues == 0 and res.size() == 1
        assert sess.run(deq) == 5


def test_step_deadline_cancels_dequeue_without_losing_elements(graph):
    q = FIFOQueue(10, tf.int32, shapes=[])
    with tf.Session(graph=graph) as sess:
        res = sess.run(q.queue_ref)
        sess.run(q.enqueue_many([[1, 2]]))
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(q.dequeue_many(3), options=tf.RunOptions(timeout_in_ms=50))
        assert res.pending_dequeues == 0
        assert res.size() == 2
        np.testing.assert_array_equal(sess.run(q.dequeue_many(2)), [1, 2])


def test_session_close_cancels_blocked_dequeue(graph):
    q = FIFOQueue(10, tf.float32, shapes=[])
    sess = tf.Session(graph=graph)
    res = sess.run(q.queue_ref)
    runner = Runner(sess, q.dequeue())
    wait_until(lambda: res.pending_dequeues == 1)
    sess.close()
    runner.join(5.0)
    assert isinstance(runner.error, tf.errors.CancelledError)
    assert "Session::Close" in str(runner.error)
    assert res.pending_dequeues == 0


def test_shared_name_shares_one_queue(graph):
    q1 = FIFOQueue(10, tf.int32, shapes=[], shared_name="shared_q", name="q1")
    q2 = FIFOQueue(10, tf.int32, shapes=[], shared_name="shared_q", name="q2")
    bad = FIFOQueue(5, tf.int32, shapes=[], shared_name="shared_q", name="q3")
    with tf.Session(graph=graph) as sess:
        sess.run(q1.enqueue(3))
        assert sess.run(q2.size()) == 1
        assert sess.run(q2.dequeue()) == 3
        with pytest.raises(tf.errors.InvalidArgumentError, match="Shared queue 'shared_q'"):
            sess.run(bad.size())


def test_queue_in_container_is_deleted_by_close_on_delete(graph):
    with tf.container("c0"):
        q = FIFOQueue(10, tf.int32, shapes=[])
    with tf.Session(graph=graph) as sess:
        res = sess.run(q.queue_ref)
        runner = Runner(sess, q.dequeue())
        wait_until(lambda: res.pending_dequeues == 1)
        sess._backend.resource_mgr.cleanup("c0")
        assert isinstance(runner.join().error, tf.errors.AbortedError)
        assert sess.run(q.size()) == 0  # a fresh queue under the same name
        assert sess.run(q.queue_ref) is not res


def test_random_shuffle_queue(graph):
    q = RandomShuffleQueue(10, 2, tf.int32, shapes=[], seed=7)
    assert q.queue_ref.op.type == "RandomShuffleQueueV2"
    with tf.Session(graph=graph) as sess:
        res = sess.run(q.queue_ref)
        sess.run(q.enqueue_many([[1, 2, 3, 4]]))
        got = [sess.run(q.dequeue()), sess.run(q.dequeue())]
        runner = Runner(sess, q.dequeue())  # only min_after_dequeue remain: blocks
        wait_until(lambda: res.pending_dequeues == 1)
        sess.run(q.close())
        got.append(runner.join().result)
        got.extend(sess.run(q.dequeue_up_to(10)).tolist())
    assert sorted(got) == [1, 2, 3, 4]


# --------------------------------------------------------- resources directly
class Done:
    """A completion callback recording its single call."""

    def __init__(self):
        self.event = threading.Event()
        self.value = self.error = None
        self.calls = 0

    def __call__(self, value=None, error=None):
        self.calls += 1
        self.value, self.error = value, error
        self.event.set()

    def wait(self):
        assert self.event.wait(10.0), "request did not complete"
        return self


def test_cancelled_partial_dequeue_many_gives_elements_back_in_order():
    from tensorweave.framework.cancellation import CancellationManager

    q = QueueResource("q", [np.int32], [()], capacity=10)
    for v in (1, 2):
        q.enqueue([np.int32(v)], Done())
    cm = CancellationManager()
    done = Done()
    q.dequeue_many(3, done, cm)
    assert q.size() == 0 and q.pending_dequeues == 1  # holds two of the three
    cm.start_cancel(tf.errors.CancelledError(None, None, "cancelled"))
    assert isinstance(done.wait().error, tf.errors.CancelledError) and done.calls == 1
    assert q.size() == 2 and q.pending_dequeues == 0
    out = Done()
    q.dequeue_many(2, out)
    np.testing.assert_array_equal(out.wait().value[0], [1, 2])


def test_already_cancelled_request_never_waits():
    from tensorweave.framework.cancellation import CancellationManager

    q = QueueResource("q", [np.float32], [], capacity=-1)
    cm = CancellationManager()
    cm.start_cancel(tf.errors.CancelledError(None, None, "Session::Close"))
    done = Done()
    q.dequeue(done, cm)
    assert "Session::Close" in str(done.wait().error) and q.pending_dequeues == 0


def test_close_on_delete_fails_every_pending_request():
    q = QueueResource("q", [np.int32], [()], capacity=1)
    q.enqueue([np.int32(1)], Done())
    blocked_enqueue, blocked_dequeue = Done(), Done()
    q.enqueue([np.int32(2)], blocked_enqueue)
    q2 = QueueResource("q2", [np.int32], [()])
    q2.dequeue(blocked_dequeue)
    q.close_on_delete()
    q2.close_on_delete()
    assert isinstance(blocked_enqueue.wait().error, tf.errors.AbortedError)
    assert isinstance(blocked_dequeue.wait().error, tf.errors.AbortedError)
    late = Done()
    q.dequeue(late)
    assert isinstance(late.wait().error, tf.errors.AbortedError)


def test_many_producers_and_consumers_deliver_exactly_once():
    q = QueueResource("q", [np.int64], [()], capacity=3)
    received, lock = [], threading.Lock()

    def produce(base):
        for i in range(50):
            done = Done()
            q.enqueue([np.int64(base + i)], done)
            done.wait()

    def consume():
        while True:
            done = Done()
            q.dequeue_many(2, done, allow_small_batch=True)
            done.wait()
            if done.error is not None:
                assert isinstance(done.error, tf.errors.OutOfRangeError)
                return
            with lock:
                received.extend(done.value[0].tolist())

    producers = [threading.Thread(target=produce, args=(1000 * k,)) for k in range(4)]
    consumers = [threading.Thread(target=consume) for _ in range(3)]
    for t in producers + consumers:
        t.start()
    for t in producers:
        t.join(30.0)
    closed = Done()
    q.close(False, closed)
    closed.wait()
    for t in consumers:
        t.join(30.0)
    assert sorted(received) == sorted(1000 * k + i for k in range(4) for i in range(50))
