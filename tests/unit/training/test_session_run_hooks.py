"""SessionRunHook value types and `_HookedSession` (mirrors TF's HookedSessionTest and the
RunOptions-merging tests of monitored_session_test.py)."""

from __future__ import annotations

from collections import Counter

import pytest

import tensorweave as tf
from tensorweave.protos.debug_pb2 import DebugTensorWatch
from tensorweave.training import monitored_session
from tensorweave.training.session_run_hook import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)
from tensorweave.training.session_wrappers import _merge_run_options


class FakeSession(monitored_session._WrappedSession):
    """Records the keyword arguments of `run` and runs only the fetches."""

    def __init__(self, sess):
        super().__init__(sess)
        self.args_called = {}

    def run(self, fetches, **kwargs):
        self.args_called = dict(kwargs)
        return super().run(fetches)


class FakeHook(SessionRunHook):
    def __init__(self):
        self.should_stop = False
        self.request = None
        self.call_counter = Counter()
        self.last_run_context = None
        self.last_run_values = None

    def before_run(self, run_context):
        self.call_counter["before_run"] += 1
        self.last_run_context = run_context
        return self.request

    def after_run(self, run_context, run_values):
        self.call_counter["after_run"] += 1
        self.last_run_values = run_values
        if self.should_stop:
            run_context.request_stop()


def test_session_run_args_defaults_and_fields():
    args = SessionRunArgs("x")
    assert args == ("x", None, None)
    assert args.fetches == "x" and args.feed_dict is None and args.options is None
    args = SessionRunArgs(fetches=["a"], feed_dict={"p": 1}, options="o")
    assert args.feed_dict == {"p": 1} and args.options == "o"


def test_session_run_values_fields():
    values = SessionRunValues(results=1, options=2, run_metadata=3)
    assert (values.results, values.options, values.run_metadata) == (1, 2, 3)


def test_session_run_context():
    ctx = SessionRunContext(original_args=SessionRunArgs("f"), session="sess")
    assert ctx.original_args.fetches == "f"
    assert ctx.session == "sess"
    assert not ctx.stop_requested
    ctx.request_stop()
    assert ctx.stop_requested


def test_base_hook_does_nothing():
    hook = SessionRunHook()
    hook.begin()
    hook.after_create_session(None, None)
    assert hook.before_run(None) is None
    hook.after_run(None, None)
    hook.end(None)


def test_run_passes_all_arguments():
    with tf.Graph().as_default(), tf.Session() as sess:
        mock_run = FakeSession(sess)
        mon_sess = monitored_session._HookedSession(sess=mock_run, hooks=[])
        a_tensor = tf.constant([0], name="a_tensor")
        output = mon_sess.run(
            fetches=a_tensor, feed_dict="a_feed", options="an_option", run_metadata="a_metadata"
        )
        assert output == [0]
        assert mock_run.args_called == {
            "feed_dict": "a_feed",
            "options": "an_option",
            "run_metadata": "a_metadata",
        }


def test_calls_hooks_before_and_after_run():
    with tf.Graph().as_default(), tf.Session() as sess:
        hooks = [FakeHook(), FakeHook()]
        mon_sess = monitored_session._HookedSession(sess=sess, hooks=hooks)
        a_tensor = tf.constant([0], name="a_tensor")
        mon_sess.run(a_tensor)
        for hook in hooks:
            assert hook.last_run_values == SessionRunValues(
                results=None, options=tf.RunOptions(), run_metadata=tf.RunMetadata()
            )
            assert hook.last_run_context.original_args == SessionRunArgs(a_tensor)
            assert hook.last_run_context.session is sess
            assert hook.call_counter["before_run"] == 1
            assert hook.call_counter["after_run"] == 1


def test_should_stop_after_a_hook_requests_it():
    with tf.Graph().as_default(), tf.Session() as sess:
        hook, hook2 = FakeHook(), FakeHook()
        mon_sess = monitored_session._HookedSession(sess=sess, hooks=[hook, hook2])
        tf.constant([0], name="a_tensor")
        mon_sess.run(fetches="a_tensor:0")
        assert not mon_sess.should_stop()
        hook.should_stop = True
        mon_sess.run(fetches="a_tensor:0")
        assert mon_sess.should_stop()
        with pytest.raises(RuntimeError, match="Run called even after should_stop requested"):
            mon_sess.run(fetches="a_tensor:0")


def test_fetches_hook_requests():
    with tf.Graph().as_default(), tf.Session() as sess:
        hook, hook2 = FakeHook(), FakeHook()
        mon_sess = monitored_session._HookedSession(sess=sess, hooks=[hook, hook2])
        a_tensor = tf.constant([0], name="a_tensor")
        hook.request = SessionRunArgs([tf.constant([5], name="another_tensor")])
        hook2.request = SessionRunArgs({"t": tf.constant([10], name="third_tensor")})
        assert mon_sess.run(fetches=a_tensor) == [0]
        assert hook.last_run_values.results == [[5]]
        assert hook2.last_run_values.results == {"t": [10]}


def _feed_graph():
    a = tf.placeholder_with_default([0], shape=[1], name="a_tensor")
    b = tf.placeholder_with_default([0], shape=[1], name="b_tensor")
    c = tf.placeholder_with_default([0], shape=[1], name="c_tensor")
    return a, b, c


def test_only_hooks_have_feeds():
    with tf.Graph().as_default(), tf.Session() as sess:
        hook, hook2 = FakeHook(), FakeHook()
        mon_sess = monitored_session._HookedSession(sess=sess, hooks=[hook, hook2])
        a, b, _ = _feed_graph()
        hook.request = SessionRunArgs(None, feed_dict={a: [5]})
        hook2.request = SessionRunArgs(None, feed_dict={b: [10]})
        assert mon_sess.run(fetches=a + b) == [15]


def test_both_hooks_and_user_have_feeds():
    with tf.Graph().as_default(), tf.Session() as sess:
        hook, hook2 = FakeHook(), FakeHook()
        mon_sess = monitored_session._HookedSession(sess=sess, hooks=[hook, hook2])
        a, b, c = _feed_graph()
        hook.request = SessionRunArgs(None, feed_dict={a: [5]})
        hook2.request = SessionRunArgs(None, feed_dict={b: [10]})
        feed_dict = {c: [20]}
        assert mon_sess.run(fetches=a + b + c, feed_dict=feed_dict) == [35]
        assert len(feed_dict) == 1  # the caller's dict is not changed


def test_hooks_feed_conflicts():
    with tf.Graph().as_default(), tf.Session() as sess:
        hook, hook2 = FakeHook(), FakeHook()
        mon_sess = monitored_session._HookedSession(sess=sess, hooks=[hook, hook2])
        a, b, _ = _feed_graph()
        hook.request = SessionRunArgs(None, feed_dict={a: [5]})
        hook2.request = SessionRunArgs(None, feed_dict={a: [10]})
        with pytest.raises(RuntimeError, match="Same tensor is fed by two hooks"):
            mon_sess.run(fetches=a + b)


def test_hooks_and_user_feed_conflicts():
    with tf.Graph().as_default(), tf.Session() as sess:
        hook, hook2 = FakeHook(), FakeHook()
        mon_sess = monitored_session._HookedSession(sess=sess, hooks=[hook, hook2])
        a, b, _ = _feed_graph()
        hook.request = SessionRunArgs(None, feed_dict={a: [5]})
        hook2.request = SessionRunArgs(None, feed_dict={b: [10]})
        with pytest.raises(RuntimeError, match="Same tensor is fed by a SessionRunHook and user"):
            mon_sess.run(fetches=a + b, feed_dict={b: [10]})


def test_merge_run_options_takes_max_or_and_concatenates():
    watch_a = DebugTensorWatch(node_name="a", output_slot=0, debug_ops=["DebugIdentity"])
    watch_b = DebugTensorWatch(node_name="b", output_slot=0, debug_ops=["DebugIdentity"])
    options = tf.RunOptions(trace_level=3, timeout_in_ms=30000, inter_op_thread_pool=1)
    options.debug_options.debug_tensor_watch_opts.extend([watch_a])
    incoming = tf.RunOptions(
        trace_level=2,
        timeout_in_ms=60000,
        output_partition_graphs=True,
        report_tensor_allocations_upon_oom=True,
    )
    incoming.debug_options.debug_tensor_watch_opts.extend([watch_b])
    incoming.debug_options.reset_disk_byte_usage = True
    _merge_run_options(options, incoming)
    assert options.trace_level == 3
    assert options.timeout_in_ms == 60000
    assert options.inter_op_thread_pool == 1
    assert options.output_partition_graphs
    assert options.report_tensor_allocations_upon_oom
    assert options.debug_options.reset_disk_byte_usage
    assert list(options.debug_options.debug_tensor_watch_opts) == [watch_a, watch_b]


def test_hook_options_do_not_change_the_callers_options():
    class OptionsHook(SessionRunHook):
        def before_run(self, run_context):
            return SessionRunArgs(None, options=tf.RunOptions(timeout_in_ms=5000))

        def after_run(self, run_context, run_values):
            self.options = run_values.options

    with tf.Graph().as_default(), tf.Session() as sess:
        c = tf.constant(1)
        hook = OptionsHook()
        mon_sess = monitored_session._HookedSession(sess, [hook])
        caller_options = tf.RunOptions(trace_level=1)
        assert mon_sess.run(c, options=caller_options) == 1
        assert caller_options == tf.RunOptions(trace_level=1)
        assert (hook.options.trace_level, hook.options.timeout_in_ms) == (1, 5000)
