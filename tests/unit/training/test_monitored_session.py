"""MonitoredSession and SingularMonitoredSession (mirrors TF's monitored_session_test.py:
MonitoredSessionTest, SingularMonitoredSessionTest). Scaffold: test_scaffold.py; the
session wrappers: test_session_wrappers.py."""

from __future__ import annotations

import os

import pytest

import tensorweave as tf
from tensorweave.protos.debug_pb2 import DebugTensorWatch
from tensorweave.training import training_util
from tensorweave.training.basic_session_run_hooks import (
    CheckpointSaverHook,
    StopAtStepHook,
)
from tensorweave.training.monitored_session import (
    ChiefSessionCreator,
    MonitoredSession,
    Scaffold,
    SingularMonitoredSession,
)
from tensorweave.training.scaffold import _get_saver_or_default
from tensorweave.training.session_run_hook import SessionRunArgs, SessionRunHook
from tensorweave.training.summary_io import FileWriterCache


@pytest.fixture(autouse=True)
def _clear_writers():
    yield
    FileWriterCache.clear()


# ------------------------------------------------------------------ MonitoredSession
class RaiseOnceAtCountN(SessionRunHook):
    """Raises `ex` in the N-th `before_run`."""

    def __init__(self, n, ex):
        self.n = n
        self.ex = ex
        self.raised = False

    def before_run(self, run_context):
        self.n -= 1
        if self.n == 0 and not self.raised:
            self.raised = True
            raise self.ex
        return None


def _global_step_graph():
    gstep = training_util.get_or_create_global_step()
    do_step = tf.assign_add(gstep, 1)
    return gstep, do_step


def test_defaults():
    with tf.Graph().as_default():
        a_var = tf.Variable(0)
        with MonitoredSession() as session:
            assert session.run(a_var) == 0


def test_last_step(tmp_path):
    with tf.Graph().as_default():
        gstep, do_step = _global_step_graph()
        hooks = [StopAtStepHook(last_step=3)]
        with MonitoredSession(hooks=hooks) as session:
            assert session.run(gstep) == 0
            assert not session.should_stop()
            assert session.run(do_step) == 1
            assert not session.should_stop()
            assert session.run(do_step) == 2
            assert not session.should_stop()
            assert session.run(do_step) == 3
            assert session.should_stop()
            save_path = _get_saver_or_default().save(session._tf_sess(), str(tmp_path / "step-3"))

        def load_ckpt(scaffold, sess):
            scaffold.saver.restore(sess, save_path)

        creator = ChiefSessionCreator(Scaffold(init_fn=load_ckpt))
        with MonitoredSession(
            hooks=[StopAtStepHook(last_step=5)], session_creator=creator
        ) as session:
            assert session.run(gstep) == 3
            assert not session.should_stop()
            assert session.run(do_step) == 4
            assert not session.should_stop()
            assert session.run(do_step) == 5
            assert session.should_stop()


def test_num_steps(tmp_path):
    with tf.Graph().as_default():
        gstep, do_step = _global_step_graph()
        with MonitoredSession(hooks=[StopAtStepHook(num_steps=3)]) as session:
            for expected_stop in (False, False, True):
                session.run(do_step)
                assert session.should_stop() == expected_stop
            save_path = _get_saver_or_default().save(session._tf_sess(), str(tmp_path / "step-3"))

        def load_ckpt(scaffold, sess):
            scaffold.saver.restore(sess, save_path)

        creator = ChiefSessionCreator(scaffold=Scaffold(init_fn=load_ckpt))
        with MonitoredSession(
            hooks=[StopAtStepHook(num_steps=4)], session_creator=creator
        ) as session:
            assert session.run(do_step) == 4
            for expected_stop in (False, False, True):
                assert not session.should_stop()
                session.run(do_step)
                assert session.should_stop() == expected_stop


def test_recovery_from_checkpoint(tmp_path):
    logdir = str(tmp_path)
    with tf.Graph().as_default():
        gstep, do_step = _global_step_graph()
        scaffold = Scaffold()
        hooks = [CheckpointSaverHook(logdir, save_steps=1, scaffold=scaffold)]
        with MonitoredSession(
            session_creator=ChiefSessionCreator(scaffold, checkpoint_dir=logdir), hooks=hooks
        ) as session:
            assert session.run(gstep) == 0
            assert session.run(do_step) == 1
            assert session.run(do_step) == 2
        with MonitoredSession(
            session_creator=ChiefSessionCreator(scaffold, checkpoint_dir=logdir)
        ) as session:
            assert session.run(gstep) == 2
        with MonitoredSession(
            session_creator=ChiefSessionCreator(
                scaffold, checkpoint_filename_with_path=tf.train.latest_checkpoint(logdir)
            )
        ) as session:
            assert session.run(gstep) == 2


def test_retry_initialization_on_aborted_error():
    with tf.Graph().as_default():
        gstep, _ = _global_step_graph()
        calls = []

        def init_fn(scaffold, session):
            calls.append(1)
            if len(calls) == 1:
                raise tf.errors.AbortedError(None, None, "Abort")

        with MonitoredSession(
            session_creator=ChiefSessionCreator(Scaffold(init_fn=init_fn))
        ) as session:
            assert session.run(gstep) == 0
        assert len(calls) == 2


@pytest.mark.parametrize("error", [tf.errors.AbortedError, tf.errors.UnavailableError])
def test_retry_on_preemption_error(error):
    with tf.Graph().as_default():
        gstep, do_step = _global_step_graph()
        hook = RaiseOnceAtCountN(4, error(None, None, "Abort"))
        with MonitoredSession(hooks=[hook]) as session:
            assert session.run(gstep) == 0
            assert session.run(do_step) == 1
            assert session.run(do_step) == 2
            assert not session.should_stop()
            # The hook raises at the 4th run: a freshly initialized session takes over.
            assert session.run(do_step) == 1
            assert not session.should_stop()
            assert hook.raised
            assert session.run(do_step) == 2


def test_recover_and_retry_on_aborted_error(tmp_path):
    logdir = str(tmp_path)
    with tf.Graph().as_default():
        gstep, do_step = _global_step_graph()
        scaffold = Scaffold()
        abort_hook = RaiseOnceAtCountN(4, tf.errors.AbortedError(None, None, "Abort"))
        ckpt_hook = CheckpointSaverHook(logdir, save_steps=1, scaffold=scaffold)
        with MonitoredSession(
            session_creator=ChiefSessionCreator(scaffold, checkpoint_dir=logdir),
            hooks=[abort_hook, ckpt_hook],
        ) as session:
            assert session.run(gstep) == 0
            assert session.run(do_step) == 1
            assert session.run(do_step) == 2
            assert not session.should_stop()
            # The abort restores the checkpoint of step 2 and retries the run.
            assert session.run(do_step) == 3
            assert abort_hook.raised
            assert not session.should_stop()
            assert session.run(do_step) == 4


@pytest.mark.parametrize("error", [tf.errors.OutOfRangeError(None, None, "EOI"), StopIteration])
def test_exit_cleanly_on_end_of_input(error):
    with tf.Graph().as_default():
        gstep, do_step = _global_step_graph()
        hook = RaiseOnceAtCountN(2, error)
        session = MonitoredSession(hooks=[hook])
        reached = False
        with session:
            assert session.run(gstep) == 0
            assert not session.should_stop()
            session.run(do_step)
            reached = True
        assert not reached
        assert session.should_stop()


def test_regular_exception_pass_through_run():
    with tf.Graph().as_default():
        gstep, do_step = _global_step_graph()
        hook = RaiseOnceAtCountN(4, RuntimeError("regular exception"))
        session = MonitoredSession(hooks=[hook])
        with pytest.raises(RuntimeError, match="regular exception"):
            with session:
                assert session.run(gstep) == 0
                assert session.run(do_step) == 1
                assert session.run(do_step) == 2
                session.run(do_step)
        assert hook.raised
        assert session.should_stop()


def test_regular_exception_reported_to_coord_pass_through_run():
    with tf.Graph().as_default():
        gstep, _ = _global_step_graph()
        session = MonitoredSession()
        ran = False
        with pytest.raises(RuntimeError, match="a thread wants to stop"):
            with session:
                assert session.run(gstep) == 0
                session._coordinated_creator.coord.request_stop(
                    RuntimeError("a thread wants to stop")
                )
                assert session.run(gstep) == 0
                ran = True
        assert ran


def test_regular_exception_reported_to_coord_pass_through_return():
    with tf.Graph().as_default():
        gstep, _ = _global_step_graph()
        session = MonitoredSession()
        with pytest.raises(RuntimeError, match="a thread wants to stop"):
            with session:
                assert session.run(gstep) == 0
                session._coordinated_creator.coord.request_stop(
                    RuntimeError("a thread wants to stop")
                )
                assert session.should_stop()


def test_stop_cleanly_when_no_exception_in_with_body():
    with tf.Graph().as_default():
        _, do_step = _global_step_graph()
        session = MonitoredSession()
        with session:
            assert session.run(do_step) == 1
            assert session.run(do_step) == 2
            assert not session.should_stop()
        assert session.should_stop()
        assert session._is_closed()
        with pytest.raises(RuntimeError, match="Session is already closed"):
            session.close()


def test_raises_regular_exceptions_in_with_body():
    with tf.Graph().as_default():
        _, do_step = _global_step_graph()
        session = MonitoredSession()
        with pytest.raises(RuntimeError, match="regular exception"):
            with session:
                assert session.run(do_step) == 1
                raise RuntimeError("regular exception")
        assert session.should_stop()
        assert session._is_closed()


def test_hook_end_not_called_on_error_but_on_out_of_range():
    class EndHook(SessionRunHook):
        ended = 0

        def end(self, session):
            EndHook.ended += 1

    with tf.Graph().as_default():
        with pytest.raises(RuntimeError):
            with MonitoredSession(hooks=[EndHook()]):
                raise RuntimeError("boom")
        assert EndHook.ended == 0
        with MonitoredSession(hooks=[EndHook()]):
            raise tf.errors.OutOfRangeError(None, None, "EOI")
        assert EndHook.ended == 1


def test_graph():
    g = tf.Graph()
    with g.as_default():
        session = MonitoredSession()
        assert session.graph is g
        session.close()
        assert session.graph is None


def test_graph_finalized_during_run_unfinalized_after_exit():
    with tf.Graph().as_default() as g:
        a_var = tf.Variable(0)
        with MonitoredSession() as session:
            assert session.run(a_var) == 0
            assert g.finalized
        assert not g.finalized


def test_keep_finalized_graph_as_finalized():
    with tf.Graph().as_default() as g:
        a_var = tf.Variable(0)
        Scaffold().finalize()
        with MonitoredSession() as session:
            assert session.run(a_var) == 0
            assert g.finalized
        assert g.finalized


class RunOptionsMetadataHook(SessionRunHook):
    def __init__(self, trace_level, timeout_in_ms, output_partition_graphs, watch):
        self._options = tf.RunOptions(
            trace_level=trace_level,
            timeout_in_ms=timeout_in_ms,
            output_partition_graphs=output_partition_graphs,
        )
        self._options.debug_options.debug_tensor_watch_opts.extend([watch])
        self.run_options_list = []
        self.run_metadata_list = []

    def before_run(self, run_context):
        return SessionRunArgs(None, None, options=self._options)

    def after_run(self, run_context, run_values):
        self.run_options_list.append(run_values.options)
        self.run_metadata_list.append(run_values.run_metadata)


def _watch(name):
    return DebugTensorWatch(node_name=name, output_slot=0, debug_ops=["DebugIdentity"])


def _expected_options(trace_level, timeout_in_ms, watches):
    options = tf.RunOptions(
        trace_level=trace_level, timeout_in_ms=timeout_in_ms, output_partition_graphs=True
    )
    options.debug_options.debug_tensor_watch_opts.extend(watches)
    return options


def test_merge_run_options_from_hooks():
    with tf.Graph().as_default():
        my_const = tf.constant(42, name="my_const")
        tf.constant(24, name="my_const_2")
        watch_a, watch_b = _watch("my_const"), _watch("my_const_2")
        hook_a = RunOptionsMetadataHook(2, 30000, False, watch_a)
        hook_b = RunOptionsMetadataHook(3, 60000, True, watch_b)
        with MonitoredSession(hooks=[hook_a, hook_b]) as session:
            assert session.run(my_const) == 42
        assert hook_b.run_options_list == [_expected_options(3, 60000, [watch_a, watch_b])]
        assert len(hook_b.run_metadata_list) == 1
        assert isinstance(hook_b.run_metadata_list[0], tf.RunMetadata)
        assert len(hook_b.run_metadata_list[0].partition_graphs) > 0


def test_merge_caller_and_hook_run_options():
    with tf.Graph().as_default():
        my_const = tf.constant(42, name="my_const")
        tf.constant(24, name="my_const_2")
        hook_watch, caller_watch = _watch("my_const_2"), _watch("my_const")
        hook = RunOptionsMetadataHook(2, 60000, False, hook_watch)
        with MonitoredSession(hooks=[hook]) as session:
            caller_options = tf.RunOptions(
                trace_level=3, timeout_in_ms=30000, output_partition_graphs=True
            )
            caller_options.debug_options.debug_tensor_watch_opts.extend([caller_watch])
            assert session.run(my_const, options=caller_options) == 42
        assert hook.run_options_list == [_expected_options(3, 60000, [caller_watch, hook_watch])]
        assert len(hook.run_metadata_list[0].partition_graphs) > 0


# ----------------------------------------------------------------------- run_step_fn
def test_step_fn_arguments_are_checked():
    with tf.Graph().as_default():
        with MonitoredSession() as session:
            with pytest.raises(
                ValueError, match="`step_fn` may either have one `step_context` argument"
            ):
                session.run_step_fn(lambda: None)
            with pytest.raises(ValueError, match="Got \\('ctx',\\)"):
                session.run_step_fn(lambda ctx: None)

            class Model:
                def step_fn(self, step_context):
                    return 7

            assert session.run_step_fn(Model().step_fn) == 7


def test_step_fn_returns_value_and_runs_hooks():
    with tf.Graph().as_default():
        var = tf.Variable(0.0)
        stage_0 = tf.assign_add(var, 0.3)
        stage_1 = tf.assign_add(var, 0.5)
        with tf.control_dependencies([stage_1]):
            stage_2 = tf.assign_add(var, 1.1)
        seen = {}

        class Hook(SessionRunHook):
            def before_run(self, run_context):
                return SessionRunArgs(fetches=stage_2)

            def after_run(self, run_context, run_values):
                seen["hook"] = run_values.results
                seen["after"] = run_context.session.run(var)

        def step_fn(step_context):
            seen["raw"] = step_context.session.run(stage_0)
            return step_context.run_with_hooks(fetches=stage_1)

        with MonitoredSession(hooks=[Hook()]) as session:
            # A fetched ref is read when the step ends, after the hook's update.
            assert session.run_step_fn(step_fn) in (pytest.approx(0.8), pytest.approx(1.9))
            assert seen["raw"] == pytest.approx(0.3)
            assert seen["hook"] == pytest.approx(1.9)
            assert seen["after"] == pytest.approx(1.9)


def test_step_request_stop_without_a_with_block():
    with tf.Graph().as_default():
        session = MonitoredSession()
        with pytest.raises(StopIteration):
            session.run_step_fn(lambda step_context: step_context.request_stop())
        assert not session.should_stop()
        session.close()


def test_step_request_stop_in_a_loop():
    with tf.Graph().as_default():
        with MonitoredSession() as session:
            while not session.should_stop():
                session.run_step_fn(lambda step_context: step_context.request_stop())
                pytest.fail("request_stop should have raised")


def test_step_fn_with_hook_requesting_stop():
    with tf.Graph().as_default():
        c = tf.constant(5)

        class StopHook(SessionRunHook):
            def after_run(self, run_context, run_values):
                run_context.request_stop()

        with MonitoredSession(hooks=[StopHook()]) as session:
            assert session.run_step_fn(lambda step_context: step_context.run_with_hooks(c)) == 5
            assert session.should_stop()


def test_step_fn_recovers_from_aborted_error_in_hook():
    with tf.Graph().as_default():
        gstep, do_step = _global_step_graph()
        hook = RaiseOnceAtCountN(2, tf.errors.AbortedError(None, None, "Abort"))
        sessions = []

        def step_fn(step_context):
            sessions.append(step_context.session)
            return step_context.run_with_hooks(do_step)

        with MonitoredSession(hooks=[hook]) as session:
            assert session.run_step_fn(step_fn) == 1
            assert session.run_step_fn(step_fn) == 1  # new session, step_fn called again
            assert hook.raised
            assert len(sessions) == 3
            assert sessions[2] is session._tf_sess() and sessions[2] is not sessions[0]


# ------------------------------------------------------------ SingularMonitoredSession
def test_singular_does_not_handle_aborted_error():
    with tf.Graph().as_default():
        gstep, _ = _global_step_graph()
        hook = RaiseOnceAtCountN(2, tf.errors.AbortedError(None, None, "Abort"))
        with SingularMonitoredSession(hooks=[hook]) as session:
            assert session.run(gstep) == 0
            with pytest.raises(tf.errors.AbortedError, match="Abort"):
                session.run(gstep)


def test_singular_raw_session_and_checkpoint_restore(tmp_path):
    with tf.Graph().as_default():
        gstep, do_step = _global_step_graph()
        with SingularMonitoredSession(checkpoint_dir=str(tmp_path)) as session:
            assert session.run(do_step) == 1
            assert session.raw_session().run(gstep) == 1
            session.run(do_step)
            _get_saver_or_default().save(
                session.raw_session(), os.path.join(str(tmp_path), "m"), global_step=2
            )
        with SingularMonitoredSession(checkpoint_dir=str(tmp_path)) as session:
            assert session.run(gstep) == 2
