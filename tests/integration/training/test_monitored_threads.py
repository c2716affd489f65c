"""MonitoredSession with threads: the coordinator joins them on close, and queue runners
from QUEUE_RUNNERS are started and stopped (mirrors TF's CoordinatedSessionTest)."""

from __future__ import annotations

import threading

import pytest

import tensorweave as tf
from tensorweave.kernels import data_flow_kernels  # noqa: F401  (registers the queue kernels)
from tensorweave.ops.data_flow_ops import FIFOQueue
from tensorweave.training import monitored_session
from tensorweave.training.coordinator import Coordinator
from tensorweave.training.monitored_session import (
    ChiefSessionCreator,
    MonitoredSession,
    Scaffold,
)
from tensorweave.training.queue_runner import QueueRunner, add_queue_runner


def _wait_for_stop(coord):
    coord.wait_for_stop()


def _start_threads(coord, n=3):
    threads = [threading.Thread(target=_wait_for_stop, args=(coord,)) for _ in range(n)]
    for t in threads:
        coord.register_thread(t)
        t.start()
    return threads


def test_stop_threads_on_close_after_exception():
    with tf.Graph().as_default(), tf.Session() as sess:
        c = tf.constant(0)
        v = tf.identity(c)
        coord = Coordinator()
        threads = _start_threads(coord)
        coord_sess = monitored_session._CoordinatedSession(sess, coord)
        assert not coord_sess.should_stop()
        assert coord_sess.run(c) == 0
        assert coord_sess.run(v, feed_dict={c: 1}) == 1
        with pytest.raises(TypeError, match="None has invalid type"):
            coord_sess.run([None], feed_dict={c: 2})
        assert all(t.is_alive() for t in threads)  # a main-thread error stops nothing
        coord_sess.close()
        assert not any(t.is_alive() for t in threads)
        assert coord.should_stop() and coord_sess.should_stop()


def test_stop_threads_on_close():
    with tf.Graph().as_default(), tf.Session() as sess:
        coord = Coordinator()
        threads = _start_threads(coord)
        coord_sess = monitored_session._CoordinatedSession(sess, coord)
        coord_sess.close()
        assert not any(t.is_alive() for t in threads)
        assert coord.should_stop() and coord_sess.should_stop()


def test_queue_runners_are_started_and_joined():
    with tf.Graph().as_default():
        queue = FIFOQueue(10, [tf.int32], shapes=[[]])
        add_queue_runner(QueueRunner(queue, [queue.enqueue(tf.constant(7))] * 2))
        value = queue.dequeue()
        session = MonitoredSession()
        coord = session._coordinated_creator.coord
        threads = list(coord._registered_threads)
        assert threads and all(t.is_alive() for t in threads)
        with session:
            assert [session.run(value) for _ in range(5)] == [7] * 5
        assert not any(t.is_alive() for t in threads)


def test_out_of_range_from_exhausted_queue_ends_with_block():
    with tf.Graph().as_default():
        queue = FIFOQueue(10, [tf.int32], shapes=[[]])
        fill = queue.enqueue_many([[1, 2, 3]])
        close = queue.close()
        value = queue.dequeue()

        def init_fn(scaffold, sess):
            sess.run(fill)
            sess.run(close)

        seen = []
        session = MonitoredSession(ChiefSessionCreator(Scaffold(init_fn=init_fn)))
        with session:
            while not session.should_stop():
                seen.append(session.run(value))
        assert seen == [1, 2, 3]
        assert session.should_stop()
