"""The session wrappers under MonitoredSession (mirrors TF's monitored_session_test.py:
WrappedSessionTest, CoordinatedSessionTest, RecoverableSessionTest).
"""

from __future__ import annotations

import pytest

import tensorweave as tf
from tensorweave.training import monitored_session
from tensorweave.training.coordinator import Coordinator
from tensorweave.training.summary_io import FileWriterCache


@pytest.fixture(autouse=True)
def _clear_writers():
    yield
    FileWriterCache.clear()


# --------------------------------------------------------------- wrapped sessions
class StopAtNSession(monitored_session._WrappedSession):
    """Stops at the N-th call to `_check_stop`."""

    def __init__(self, sess, n):
        super().__init__(sess)
        self._count = n

    def _check_stop(self):
        if self._count == 0:
            return True
        self._count -= 1
        return False


def test_wrapped_session_properties_and_run():
    with tf.Graph().as_default(), tf.Session() as sess:
        c = tf.constant(0)
        v = tf.identity(c)
        wrapped = monitored_session._WrappedSession(sess)
        assert wrapped.graph is sess.graph
        assert wrapped.sess_str == sess.sess_str
        assert wrapped.run(v, feed_dict={c: 51}) == 51


def test_wrapped_session_should_stop_on_close_and_close_twice():
    with tf.Graph().as_default(), tf.Session() as sess:
        wrapped = monitored_session._WrappedSession(sess)
        assert not wrapped.should_stop()
        wrapped.close()
        assert wrapped.should_stop()
        wrapped.close()
        assert wrapped.should_stop()


def test_wrapped_session_uses_and_delegates_check_stop():
    with tf.Graph().as_default(), tf.Session() as sess:
        wrapped = StopAtNSession(sess, 3)
        assert [wrapped.should_stop() for _ in range(4)] == [False, False, False, True]
        outer = monitored_session._WrappedSession(StopAtNSession(sess, 4))
        assert [outer.should_stop() for _ in range(5)] == [False] * 4 + [True]


def test_coordinated_session_run_and_stop():
    with tf.Graph().as_default(), tf.Session() as sess:
        c = tf.constant(0)
        v = tf.identity(c)
        coord = Coordinator()
        coord_sess = monitored_session._CoordinatedSession(sess, coord)
        assert coord_sess.graph is sess.graph
        assert coord_sess.run(v, feed_dict={c: 42}) == 42
        with pytest.raises(TypeError, match="None has invalid type"):
            coord_sess.run([None], feed_dict={c: 2})
        assert not coord.should_stop() and not coord_sess.should_stop()
        coord.request_stop()
        assert coord_sess.should_stop()
        coord_sess.close()
        assert coord_sess.should_stop()


class AbortAtNSession:
    """A session that aborts at the N-th run call."""

    def __init__(self, sess, n):
        self._sess = sess
        self._count = n

    def close(self):
        pass

    def run(self, *args, **kwargs):
        if self._count == 0:
            raise tf.errors.AbortedError(None, None, "Aborted at N")
        self._count -= 1
        return self._sess.run(*args, **kwargs)


class _SessionReturner:
    def __init__(self, sess):
        self._sess = sess

    def create_session(self):
        return self._sess


def test_recoverable_session_properties_and_run():
    with tf.Graph().as_default(), tf.Session() as sess:
        c = tf.constant(0)
        v = tf.identity(c)
        recoverable = monitored_session._RecoverableSession(_SessionReturner(sess))
        assert recoverable.graph is sess.graph
        assert recoverable.sess_str == sess.sess_str
        assert recoverable.run(v, feed_dict={c: 51}) == 51


def test_recoverable_session_recovery():
    with tf.Graph().as_default(), tf.Session() as sess:

        class StackSessionCreator:
            def __init__(self, sess):
                self.sessions_to_use = [AbortAtNSession(sess, x + 1) for x in range(3)]

            def create_session(self):
                return self.sessions_to_use.pop(0)

        c = tf.constant(0)
        v = tf.identity(c)
        creator = StackSessionCreator(sess)
        recoverable = monitored_session._RecoverableSession(creator)
        assert len(creator.sessions_to_use) == 2
        assert recoverable.run(v, feed_dict={c: 51}) == 51
        assert len(creator.sessions_to_use) == 2
        assert recoverable.run(v, feed_dict={c: 42}) == 42  # aborts, uses the 2nd session
        assert len(creator.sessions_to_use) == 1
        assert recoverable.run(v, feed_dict={c: 33}) == 33
        assert recoverable.run(v, feed_dict={c: 24}) == 24  # aborts, uses the 3rd session
        assert len(creator.sessions_to_use) == 0
        assert recoverable.run(v, feed_dict={c: 11}) == 11
        assert recoverable.run(v, feed_dict={c: 0}) == 0
        with pytest.raises(IndexError, match="pop from empty list"):
            recoverable.run(v, feed_dict={c: -12})


class _CountingCreator:
    """Wraps each raw session in a `_CoordinatedSession` with a fresh Coordinator."""

    def __init__(self, sess):
        self._sess = sess
        self.number_of_sessions_created = 0
        self.coord = None

    def create_session(self):
        self.number_of_sessions_created += 1
        self.coord = Coordinator(clean_stop_exception_types=[])
        return monitored_session._CoordinatedSession(
            monitored_session._HookedSession(self._sess, []), self.coord
        )


def test_recovery_from_coordinator_exception():
    with tf.Graph().as_default(), tf.Session() as sess:
        creator = _CountingCreator(sess)
        session = monitored_session._RecoverableSession(creator)
        assert creator.number_of_sessions_created == 1
        assert not session.should_stop()
        creator.coord.request_stop(tf.errors.AbortedError(None, None, "preempted"))
        assert not session.should_stop()  # recovered with a new session
        assert creator.number_of_sessions_created == 2


def test_recovery_from_non_preemption_in_coordinator():
    with tf.Graph().as_default(), tf.Session() as sess:
        creator = _CountingCreator(sess)
        session = monitored_session._RecoverableSession(creator)
        creator.coord.request_stop(tf.errors.UnknownError(None, None, "Some fatal error"))
        assert session.should_stop()
        assert creator.number_of_sessions_created == 1
        with pytest.raises(tf.errors.UnknownError, match="Some fatal error"):
            session.close()


class _CancelledSession:
    def __init__(self, sess):
        self._sess = sess
        self.graph = sess.graph

    def run(self, *args, **kwargs):
        raise tf.errors.CancelledError(None, None, "stuck: step cancelled")

    def close(self):
        pass


class _StuckThenGoodCreator(_CountingCreator):
    """The first session's steps get cancelled while a thread reports a preemption."""

    def create_session(self):
        self.number_of_sessions_created += 1
        self.coord = Coordinator(clean_stop_exception_types=[])
        raw = self._sess
        if self.number_of_sessions_created == 1:
            raw = _CancelledSession(self._sess)
            self.coord.request_stop(tf.errors.AbortedError(None, None, "preempted"))
        return monitored_session._CoordinatedSession(
            monitored_session._HookedSession(raw, []), self.coord
        )


def test_recovery_from_session_getting_stuck():
    with tf.Graph().as_default(), tf.Session() as sess:
        c = tf.constant(3)
        creator = _StuckThenGoodCreator(sess)
        session = monitored_session._RecoverableSession(creator)
        assert session.run(c) == 3
        assert creator.number_of_sessions_created == 2


def test_step_fn_recovery_from_session_getting_stuck():
    with tf.Graph().as_default(), tf.Session() as sess:
        c = tf.constant(3)
        creator = _StuckThenGoodCreator(sess)
        session = monitored_session._RecoverableSession(creator)
        calls = []

        def step_fn(step_context):
            calls.append(step_context.session)
            return step_context.run_with_hooks(c)

        assert session.run_step_fn(step_fn, lambda: sess, None) == 3
        assert creator.number_of_sessions_created == 2
        assert calls == [sess, sess]
