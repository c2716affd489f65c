"""The basic hooks (mirrors TF's basic_session_run_hooks_test.py)."""

from __future__ import annotations

import logging
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.training import basic_session_run_hooks as hooks_lib
from tensorweave.training import (
    checkpoint_management,
    hook_timers,
    monitored_session,
    training_util,
)
from tensorweave.training.scaffold import Scaffold
from tensorweave.training.session_run_hook import SessionRunArgs, SessionRunContext
from tensorweave.training.summary_io import FileWriterCache, summary_iterator


@pytest.fixture(autouse=True)
def _clear_writers():
    yield
    FileWriterCache.clear()


def _events(logdir):
    files = sorted(f for f in os.listdir(logdir) if "tfevents" in f)
    return [e for f in files for e in summary_iterator(os.path.join(logdir, f))]


# ----------------------------------------------------------------- SecondOrStepTimer
def test_timer_needs_exactly_one_interval():
    with pytest.raises(ValueError, match="Either every_secs or every_steps"):
        hooks_lib.SecondOrStepTimer()
    with pytest.raises(ValueError, match="Can not provide both"):
        hooks_lib.SecondOrStepTimer(every_secs=1, every_steps=1)


def test_timer_every_steps():
    timer = hooks_lib.SecondOrStepTimer(every_steps=3)
    assert timer.should_trigger_for_step(1)
    assert timer.update_last_triggered_step(1) == (None, None)
    assert not timer.should_trigger_for_step(1)
    assert not timer.should_trigger_for_step(3)
    assert timer.should_trigger_for_step(4)
    elapsed_secs, elapsed_steps = timer.update_last_triggered_step(4)
    assert elapsed_secs >= 0 and elapsed_steps == 3
    assert timer.last_triggered_step() == 4
    timer.reset()
    assert timer.last_triggered_step() is None
    assert timer.should_trigger_for_step(4)


def test_timer_every_secs(monkeypatch):
    now = [100.0]

    class FakeTime:
        @staticmethod
        def time():
            return now[0]

    monkeypatch.setattr(hook_timers, "time", FakeTime)
    timer = hooks_lib.SecondOrStepTimer(every_secs=2.0)
    timer.update_last_triggered_step(0)
    assert not timer.should_trigger_for_step(1)
    now[0] = 102.0
    assert timer.should_trigger_for_step(1)
    assert not timer.should_trigger_for_step(0)  # never twice for one step
    assert timer.update_last_triggered_step(1) == (2.0, 1)


# ------------------------------------------------------------------- StopAtStepHook
def test_stop_at_step_arguments():
    with pytest.raises(ValueError, match="One of num_steps or last_step"):
        hooks_lib.StopAtStepHook()
    with pytest.raises(ValueError, match="Only one of num_steps or last_step"):
        hooks_lib.StopAtStepHook(num_steps=10, last_step=20)


def test_stop_at_step_needs_global_step():
    with tf.Graph().as_default():
        with pytest.raises(
            RuntimeError, match="Global step should be created to use StopAtStepHook"
        ):
            hooks_lib.StopAtStepHook(last_step=1).begin()


def _run_stop_hook(hook, steps_and_expected, start=5):
    with tf.Graph().as_default():
        global_step = training_util.get_or_create_global_step()
        no_op = tf.no_op()
        hook.begin()
        new_value = tf.placeholder(tf.int64, [])
        assign = tf.assign(global_step, new_value)
        with tf.Session() as sess:
            mon_sess = monitored_session._HookedSession(sess, [hook])
            sess.run(assign, {new_value: start})
            hook.after_create_session(sess, None)
            for step, expected in steps_and_expected:
                if step is not None:
                    sess.run(assign, {new_value: step})
                mon_sess._should_stop = False
                mon_sess.run(no_op)
                assert mon_sess.should_stop() == expected, step


def test_stop_based_on_last_step():
    _run_stop_hook(
        hooks_lib.StopAtStepHook(last_step=10), [(None, False), (9, False), (10, True), (11, True)]
    )


def test_stop_based_on_num_steps():
    _run_stop_hook(
        hooks_lib.StopAtStepHook(num_steps=10),
        [(None, False), (13, False), (14, False), (15, True), (16, True)],
    )


def test_stop_based_with_multiple_steps():
    _run_stop_hook(hooks_lib.StopAtStepHook(num_steps=10), [(None, False), (15, True)])


# --------------------------------------------------------------- CheckpointSaverHook
class _Model:
    def __init__(self):
        self.graph = tf.Graph()
        with self.graph.as_default():
            self.scaffold = Scaffold()
            self.global_step = training_util.get_or_create_global_step()
            self.train_op = training_util._increment_global_step(1)


def _saved_step(model_dir):
    return checkpoint_management.load_variable(model_dir, "global_step:0")


def test_checkpoint_saver_hook_arguments(tmp_path):
    with tf.Graph().as_default():
        training_util.get_or_create_global_step()
        saver = tf.train.Saver()
        with pytest.raises(ValueError, match="both saver and scaffold"):
            hooks_lib.CheckpointSaverHook(
                str(tmp_path), save_secs=1, saver=saver, scaffold=Scaffold()
            )
        with pytest.raises(ValueError, match="Can not provide both"):
            hooks_lib.CheckpointSaverHook(str(tmp_path), save_secs=10, save_steps=20)
        with pytest.raises(ValueError, match="Either every_secs or every_steps"):
            hooks_lib.CheckpointSaverHook(str(tmp_path))


@pytest.mark.parametrize("kwargs", [{"save_secs": 2}, {"save_steps": 1}])
def test_checkpoint_saver_saves_in_first_step(tmp_path, kwargs):
    m = _Model()
    with m.graph.as_default():
        hook = hooks_lib.CheckpointSaverHook(str(tmp_path), scaffold=m.scaffold, **kwargs)
        hook.begin()
        m.scaffold.finalize()
        with tf.Session() as sess:
            sess.run(m.scaffold.init_op)
            mon_sess = monitored_session._HookedSession(sess, [hook])
            mon_sess.run(m.train_op)
            assert _saved_step(str(tmp_path)) == 1


def test_checkpoint_saver_saves_periodically(tmp_path):
    m = _Model()
    with m.graph.as_default():
        hook = hooks_lib.CheckpointSaverHook(str(tmp_path), save_steps=2, scaffold=m.scaffold)
        hook.begin()
        m.scaffold.finalize()
        with tf.Session() as sess:
            sess.run(m.scaffold.init_op)
            mon_sess = monitored_session._HookedSession(sess, [hook])
            saved = []
            for _ in range(5):
                mon_sess.run(m.train_op)
                saved.append(_saved_step(str(tmp_path)))
            assert saved == [1, 1, 3, 3, 5]


def test_checkpoint_saver_saves_at_end(tmp_path):
    m = _Model()
    with m.graph.as_default():
        hook = hooks_lib.CheckpointSaverHook(str(tmp_path), save_secs=3600, scaffold=m.scaffold)
        hook.begin()
        m.scaffold.finalize()
        with tf.Session() as sess:
            sess.run(m.scaffold.init_op)
            mon_sess = monitored_session._HookedSession(sess, [hook])
            mon_sess.run(m.train_op)
            mon_sess.run(m.train_op)
            hook.end(sess)
            assert _saved_step(str(tmp_path)) == 2


def test_checkpoint_saver_saves_before_first_train_step(tmp_path):
    m = _Model()
    with m.graph.as_default():
        hook = hooks_lib.CheckpointSaverHook(str(tmp_path), save_steps=2, scaffold=m.scaffold)
        hook.begin()
        m.scaffold.finalize()
        with tf.Session() as sess:
            mon_sess = monitored_session._HookedSession(sess, [hook])
            sess.run(m.scaffold.init_op)
            hook.after_create_session(sess, None)
            assert _saved_step(str(tmp_path)) == 0
            mon_sess.run(m.train_op)
            assert _saved_step(str(tmp_path)) == 0
            mon_sess.run(m.train_op)
            assert _saved_step(str(tmp_path)) == 2
    assert os.path.isfile(tmp_path / "graph.pbtxt")
    # The hook writes through the directory's shared FileWriter, which writes its events
    # file from a background thread: flush it before reading (as TF's hook leaves to the
    # writer's owner).
    FileWriterCache.get(str(tmp_path)).flush()
    events = _events(str(tmp_path))
    assert any(e.HasField("graph_def") for e in events)
    assert any(e.HasField("meta_graph_def") for e in events)
    logs = [(e.step, e.session_log.checkpoint_path) for e in events if e.HasField("session_log")]
    assert logs == [(0, str(tmp_path / "model.ckpt")), (2, str(tmp_path / "model.ckpt"))]


def test_checkpoint_saver_without_saver_fails(tmp_path):
    with tf.Graph().as_default():
        training_util.get_or_create_global_step()
        hook = hooks_lib.CheckpointSaverHook(str(tmp_path), save_steps=1)
        hook.begin()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            with pytest.raises(RuntimeError, match="No items in collection savers"):
                hook.after_create_session(sess, None)


class MockCheckpointSaverListener(hooks_lib.CheckpointSaverListener):
    def __init__(self):
        self.counts = {"begin": 0, "before_save": 0, "after_save": 0, "end": 0}
        self.ask_for_stop = False

    def begin(self):
        self.counts["begin"] += 1

    def before_save(self, session, global_step_value):
        self.counts["before_save"] += 1

    def after_save(self, session, global_step_value):
        self.counts["after_save"] += 1
        return self.ask_for_stop

    def end(self, session, global_step_value):
        self.counts["end"] += 1


def test_listener_with_monitored_session(tmp_path):
    with tf.Graph().as_default():
        scaffold = Scaffold()
        global_step = training_util.get_or_create_global_step()
        train_op = training_util._increment_global_step(1)
        listener = MockCheckpointSaverListener()
        hook = hooks_lib.CheckpointSaverHook(str(tmp_path), save_steps=1, listeners=[listener])
        with monitored_session.SingularMonitoredSession(
            hooks=[hook], scaffold=scaffold, checkpoint_dir=str(tmp_path)
        ) as sess:
            sess.run(train_op)
            sess.run(train_op)
            global_step_val = sess.raw_session().run(global_step)
    assert global_step_val == 2
    assert listener.counts == {"begin": 1, "before_save": 3, "after_save": 3, "end": 1}


def test_listener_stops_training_in_after_save(tmp_path):
    with tf.Graph().as_default():
        scaffold = Scaffold()
        training_util.get_or_create_global_step()
        train_op = training_util._increment_global_step(1)
        listener = MockCheckpointSaverListener()
        hook = hooks_lib.CheckpointSaverHook(str(tmp_path), save_steps=1, listeners=[listener])
        with monitored_session.SingularMonitoredSession(
            hooks=[hook], scaffold=scaffold, checkpoint_dir=str(tmp_path)
        ) as sess:
            sess.run(train_op)
            assert not sess.should_stop()
            sess.run(train_op)
            assert not sess.should_stop()
            listener.ask_for_stop = True
            sess.run(train_op)
            assert sess.should_stop()


# ------------------------------------------------------------- StepCounter, Summaries
def test_step_counter_writes_global_step_per_sec(tmp_path):
    with tf.Graph().as_default():
        training_util.get_or_create_global_step()
        train_op = training_util._increment_global_step(1)
        writer = tf.summary.FileWriter(str(tmp_path))
        hook = hooks_lib.StepCounterHook(every_n_steps=2, summary_writer=writer)
        hook.begin()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            mon_sess = monitored_session._HookedSession(sess, [hook])
            for _ in range(6):
                mon_sess.run(train_op)
        writer.close()
    values = [
        (e.step, v.tag)
        for e in _events(str(tmp_path))
        if e.HasField("summary")
        for v in e.summary.value
    ]
    assert values == [(3, "global_step/sec"), (5, "global_step/sec")]


def test_step_counter_arguments():
    with pytest.raises(ValueError, match="exactly one of every_n_steps and every_n_secs"):
        hooks_lib.StepCounterHook(every_n_steps=None)
    with pytest.raises(ValueError, match="exactly one of every_n_steps and every_n_secs"):
        hooks_lib.StepCounterHook(every_n_steps=1, every_n_secs=1)


def test_summary_saver_arguments():
    with pytest.raises(ValueError, match="Exactly one of scaffold or summary_op"):
        hooks_lib.SummarySaverHook(save_steps=1)
    with pytest.raises(ValueError, match="Exactly one of scaffold or summary_op"):
        hooks_lib.SummarySaverHook(save_steps=1, scaffold=Scaffold(), summary_op="x")


def test_summary_saver_every_two_steps(tmp_path):
    with tf.Graph().as_default():
        training_util.get_or_create_global_step()
        train_op = training_util._increment_global_step(1)
        var = tf.Variable(0.0)
        summary_op = tf.summary.scalar("my_summary", var)
        hook = hooks_lib.SummarySaverHook(
            save_steps=2, output_dir=str(tmp_path), summary_op=summary_op
        )
        hook.begin()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            mon_sess = monitored_session._HookedSession(sess, [hook])
            for _ in range(5):
                mon_sess.run(train_op)
            hook.end(sess)
    events = _events(str(tmp_path))
    steps = [e.step for e in events if e.HasField("summary")]
    assert steps == [1, 3, 5]
    starts = [e.step for e in events if e.HasField("session_log")]
    assert starts == [1]


# --------------------------------------------------------------- logging and others
def test_logging_tensor_hook_every_n_iter(caplog):
    with tf.Graph().as_default():
        t = tf.constant(42.0, name="foo")
        hook = hooks_lib.LoggingTensorHook(tensors=[t.name], every_n_iter=10)
        hook.begin()
        with tf.Session() as sess, caplog.at_level(logging.INFO, logger=hooks_lib.__name__):
            mon_sess = monitored_session._HookedSession(sess, [hook])
            mon_sess.run(tf.no_op())
            assert "foo:0 = 42.0" in caplog.text
            caplog.clear()
            for _ in range(9):
                mon_sess.run(tf.no_op())
            assert "foo" not in caplog.text
            mon_sess.run(tf.no_op())
            assert "foo:0 = 42.0" in caplog.text


def test_logging_tensor_hook_at_end_and_formatter(caplog):
    with tf.Graph().as_default():
        t = tf.constant(42.0, name="foo")
        hook = hooks_lib.LoggingTensorHook(
            tensors={"x": t}, at_end=True, formatter=lambda v: f"formatted {v['x']}"
        )
        hook.begin()
        with tf.Session() as sess, caplog.at_level(logging.INFO, logger=hooks_lib.__name__):
            mon_sess = monitored_session._HookedSession(sess, [hook])
            mon_sess.run(tf.no_op())
            assert "formatted" not in caplog.text
            hook.end(sess)
            assert "formatted 42.0" in caplog.text


def test_logging_tensor_hook_arguments():
    with pytest.raises(ValueError, match="exactly one of every_n_iter and every_n_secs"):
        hooks_lib.LoggingTensorHook(tensors=["t"])
    with pytest.raises(ValueError, match="invalid every_n_iter"):
        hooks_lib.LoggingTensorHook(tensors=["t"], every_n_iter=0)


def test_nan_tensor_hook():
    with tf.Graph().as_default():
        loss = tf.placeholder(tf.float32, [])
        no_op = tf.no_op()
        with tf.Session() as sess:
            fail = monitored_session._HookedSession(sess, [hooks_lib.NanTensorHook(loss)])
            fail.run(no_op, feed_dict={loss: 1.0})
            with pytest.raises(hooks_lib.NanLossDuringTrainingError, match="NaN loss"):
                fail.run(no_op, feed_dict={loss: np.nan})
            stop = monitored_session._HookedSession(
                sess, [hooks_lib.NanTensorHook(loss, fail_on_nan_loss=False)]
            )
            stop.run(no_op, feed_dict={loss: np.nan})
            assert stop.should_stop()


def test_global_step_waiter_does_not_wait_for_step_zero():
    with tf.Graph().as_default():
        training_util.get_or_create_global_step()
        hook = hooks_lib.GlobalStepWaiterHook(wait_until_step=0)
        hook.begin()
        hook._sleep = None  # would fail if called
        with tf.Session() as sess:
            assert hook.before_run(SessionRunContext(original_args=None, session=sess)) is None


def test_global_step_waiter_polls_until_step_is_reached():
    with tf.Graph().as_default():
        gstep = training_util.get_or_create_global_step()
        bump = tf.assign_add(gstep, 400)
        hook = hooks_lib.GlobalStepWaiterHook(wait_until_step=1000)
        hook.begin()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sleeps = []

            def fake_sleep(secs):  # another worker advances the step while we wait
                sleeps.append(secs)
                sess.run(bump)

            hook._sleep = fake_sleep
            ctx = SessionRunContext(original_args=None, session=sess)
            assert hook.before_run(ctx) is None
            assert sleeps == [0.5, 0.5, 0.5]
            assert sess.run(gstep) == 1200
            assert hook.before_run(ctx) is None  # started: no more waiting
            assert len(sleeps) == 3


def test_final_ops_hook():
    with tf.Graph().as_default():
        var = tf.Variable(3)
        hook = hooks_lib.FinalOpsHook({"v": var * 2})
        with tf.Session() as sess:
            sess.run(var.initializer)
            assert hook.final_ops_values is None
            hook.end(sess)
            assert hook.final_ops_values == {"v": 6}


def test_feed_fn_hook():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.int32, [])
        y = x + 1
        hook = hooks_lib.FeedFnHook(lambda: {x: 41})
        with tf.Session() as sess:
            mon_sess = monitored_session._HookedSession(sess, [hook])
            assert mon_sess.run(y) == 42
            assert hook.before_run(None) == SessionRunArgs(None, {x: 41})
