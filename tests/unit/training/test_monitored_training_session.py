"""MonitoredTrainingSession (mirrors TF's MonitoredTrainingSessionTest)."""

from __future__ import annotations

import os

import pytest

import tensorweave as tf
from tensorweave.testing.threads import wait_until
from tensorweave.training import basic_session_run_hooks as hooks_lib
from tensorweave.training import training_util
from tensorweave.training.monitored_session import MonitoredTrainingSession
from tensorweave.training.session_run_hook import SessionRunHook
from tensorweave.training.summary_io import FileWriterCache, summary_iterator


@pytest.fixture(autouse=True)
def _clear_writers():
    yield
    FileWriterCache.clear()


class CountingHook(SessionRunHook):
    def __init__(self):
        self.counts = {"begin": 0, "after_create_session": 0, "end": 0}

    def begin(self):
        self.counts["begin"] += 1

    def after_create_session(self, session, coord):
        self.counts["after_create_session"] += 1

    def end(self, session):
        self.counts["end"] += 1


def _summary_tags(logdir):
    FileWriterCache.clear()  # flush and close the writers
    tags = []
    for name in sorted(os.listdir(logdir)):
        if "tfevents" in name:
            for event in summary_iterator(os.path.join(logdir, name)):
                tags += [(event.step, v.tag) for v in event.summary.value]
    return tags


def _hook_of(session, cls):
    (hook,) = [h for h in session._hooks if isinstance(h, cls)]
    return hook


def _run_until(session, op, condition, timeout_s=30.0):
    """Runs `op` until `condition()` holds (a hook's timer fired); bounded by `timeout_s`."""

    def step() -> bool:
        if condition():
            return True
        session.run(op)
        return False

    wait_until(step, timeout_s, poll_s=0, what="the hook's condition")


def test_saving_restoring_checkpoint(tmp_path):
    logdir = str(tmp_path)
    with tf.Graph().as_default():
        gstep = training_util.get_or_create_global_step()
        do_step = tf.assign_add(gstep, 1)
        with MonitoredTrainingSession(is_chief=True, checkpoint_dir=logdir) as session:
            assert session.run(gstep) == 0
            assert session.run(do_step) == 1
            assert session.run(do_step) == 2
        with MonitoredTrainingSession(is_chief=True, checkpoint_dir=logdir) as session:
            assert session.run(gstep) == 2


def test_save_checkpoint_steps(tmp_path):
    logdir = str(tmp_path)
    with tf.Graph().as_default():
        gstep = training_util.get_or_create_global_step()
        new_gstep = tf.assign_add(gstep, 1)
        with MonitoredTrainingSession(
            is_chief=True, checkpoint_dir=logdir, save_checkpoint_steps=100, log_step_count_steps=10
        ) as session:
            for _ in range(100):
                session.run(new_gstep)
            assert tf.train.latest_checkpoint(logdir).endswith("model.ckpt-100")
        with MonitoredTrainingSession(is_chief=True, checkpoint_dir=logdir) as session:
            assert session.run(gstep) == 100


def test_save_checkpoint_secs(tmp_path):
    logdir = str(tmp_path)
    with tf.Graph().as_default():
        gstep = training_util.get_or_create_global_step()
        new_gstep = tf.assign_add(gstep, 1)
        with MonitoredTrainingSession(
            is_chief=True, checkpoint_dir=logdir, save_checkpoint_secs=0.01, log_step_count_steps=10
        ) as session:
            saver_hook = _hook_of(session, hooks_lib.CheckpointSaverHook)
            session.run(new_gstep)
            _run_until(session, new_gstep, lambda: saver_hook._timer.last_triggered_step() > 0)
            periodic = saver_hook._timer.last_triggered_step()
            assert tf.train.latest_checkpoint(logdir).endswith(f"model.ckpt-{periodic}")
            for _ in range(10):
                session.run(new_gstep)
            last = session.run(gstep)
        # end() saved the last step.
        with MonitoredTrainingSession(is_chief=True, checkpoint_dir=logdir) as session:
            assert session.run(gstep) == last


def test_summaries_steps(tmp_path):
    logdir = str(tmp_path)
    with tf.Graph().as_default():
        gstep = training_util.get_or_create_global_step()
        new_gstep = tf.assign_add(gstep, 1)
        tf.summary.scalar("my_summary_tag", tf.cast(new_gstep, tf.float32) * 2)
        with MonitoredTrainingSession(
            is_chief=True, checkpoint_dir=logdir, save_summaries_steps=100, log_step_count_steps=10
        ) as session:
            for _ in range(101):
                session.run(new_gstep)
    tags = _summary_tags(logdir)
    assert "my_summary_tag" in {t for _, t in tags}
    assert "global_step/sec" in {t for _, t in tags}
    assert sorted(s for s, t in tags if t == "my_summary_tag") == [1, 101]


def test_summaries_secs(tmp_path):
    logdir = str(tmp_path)
    with tf.Graph().as_default():
        gstep = training_util.get_or_create_global_step()
        new_gstep = tf.assign_add(gstep, 1)
        tf.summary.scalar("my_summary_tag", tf.cast(new_gstep, tf.float32) * 2)
        with MonitoredTrainingSession(
            is_chief=True,
            checkpoint_dir=logdir,
            save_summaries_steps=None,
            save_summaries_secs=0.01,
            log_step_count_steps=10,
        ) as session:
            summary_hook = _hook_of(session, hooks_lib.SummarySaverHook)
            session.run(new_gstep)
            _run_until(session, new_gstep, lambda: summary_hook._timer.last_triggered_step() > 1)
            for _ in range(10):
                session.run(new_gstep)
    tags = {t for _, t in _summary_tags(logdir)}
    assert {"my_summary_tag", "global_step/sec"} <= tags


def test_custom_saving(tmp_path):
    logdir = str(tmp_path)
    fake_hook = CountingHook()
    with tf.Graph().as_default():
        gstep = training_util.get_or_create_global_step()
        do_step = tf.assign_add(gstep, 1)
        with MonitoredTrainingSession(
            is_chief=True,
            checkpoint_dir=logdir,
            chief_only_hooks=[fake_hook],
            save_checkpoint_secs=0,
        ) as session:
            assert session.run(gstep) == 0
            assert session.run(do_step) == 1
            assert session.run(do_step) == 2
        assert fake_hook.counts == {"begin": 1, "after_create_session": 1, "end": 1}
        # Nothing was saved, so a restart starts from scratch.
        with MonitoredTrainingSession(is_chief=True, checkpoint_dir=logdir) as session:
            assert session.run(gstep) == 0


def test_chief_hook_order_and_defaults(tmp_path):
    chief_hook, user_hook = CountingHook(), CountingHook()
    with tf.Graph().as_default():
        training_util.get_or_create_global_step()
        with MonitoredTrainingSession(
            is_chief=True,
            checkpoint_dir=str(tmp_path),
            hooks=[user_hook],
            chief_only_hooks=[chief_hook],
        ) as session:
            hooks = session._hooks
            assert [type(h) for h in hooks] == [
                CountingHook,
                hooks_lib.StepCounterHook,
                hooks_lib.SummarySaverHook,
                hooks_lib.CheckpointSaverHook,
                CountingHook,
            ]
            assert hooks[0] is chief_hook and hooks[-1] is user_hook
            assert hooks[2]._timer._every_steps == 100  # summaries every 100 steps
            assert hooks[3]._timer._every_secs == 600  # checkpoints every 600 s
            assert hooks[1]._timer._every_steps == 100


def test_checkpoint_seconds_win_over_steps(tmp_path):
    with tf.Graph().as_default():
        training_util.get_or_create_global_step()
        with MonitoredTrainingSession(
            checkpoint_dir=str(tmp_path), save_checkpoint_secs=30, save_checkpoint_steps=7
        ) as session:
            timer = _hook_of(session, hooks_lib.CheckpointSaverHook)._timer
            assert (timer._every_secs, timer._every_steps) == (30, None)


def test_no_saving_hooks_without_directories():
    with tf.Graph().as_default():
        gstep = training_util.get_or_create_global_step()
        with MonitoredTrainingSession() as session:
            assert session._hooks == []
            assert session.run(gstep) == 0


def test_summary_dir_without_checkpoint_dir(tmp_path):
    with tf.Graph().as_default():
        training_util.get_or_create_global_step()
        with MonitoredTrainingSession(
            summary_dir=str(tmp_path), log_step_count_steps=None
        ) as session:
            assert [type(h) for h in session._hooks] == [hooks_lib.SummarySaverHook]


def test_non_chief_ignores_chief_only_hooks_and_times_out():
    chief_hook, user_hook = CountingHook(), CountingHook()
    with tf.Graph().as_default() as g:
        training_util.get_or_create_global_step()
        # Nobody initializes the in-process model: the worker gives up (without sleeping,
        # as the 30 s poll interval exceeds max_wait_secs).
        with pytest.raises(
            tf.errors.DeadlineExceededError, match="Session was not ready after waiting 1 secs"
        ):
            MonitoredTrainingSession(
                is_chief=False,
                checkpoint_dir="/nonexistent",
                hooks=[user_hook],
                chief_only_hooks=[chief_hook],
                max_wait_secs=1,
            )
        assert chief_hook.counts["begin"] == 0
        assert user_hook.counts["begin"] == 1
        assert not g.finalized
