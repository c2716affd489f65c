"""`tf.train.ProfilerHook` (cases follow TensorFlow's ProfilerHookTest) and
`tf.train.checkpoints_iterator`."""

from __future__ import annotations

import json
import os

import pytest

import tensorweave as tf


def _timelines(output_dir):
    return sorted(f for f in os.listdir(output_dir) if f.startswith("timeline-"))


def _train_op():
    gs = tf.train.get_or_create_global_step()
    v = tf.Variable(1.0)
    return tf.group(v.assign_add(1.0), gs.assign_add(1))


def test_needs_exactly_one_trigger():
    with pytest.raises(ValueError):
        tf.train.ProfilerHook(save_steps=1, save_secs=1)
    with pytest.raises(ValueError):
        tf.train.ProfilerHook()


def test_needs_a_global_step(tmp_path):
    with tf.Graph().as_default():
        hook = tf.train.ProfilerHook(save_steps=1, output_dir=str(tmp_path))
        with pytest.raises(RuntimeError, match="Global step should be created"):
            hook.begin()


def test_save_steps_writes_chrome_traces(tmp_path):
    out = str(tmp_path)
    with tf.Graph().as_default():
        train_op = _train_op()
        hook = tf.train.ProfilerHook(save_steps=2, output_dir=out, show_memory=True)
        with tf.train.SingularMonitoredSession(hooks=[hook]) as sess:
            sess.run(train_op)
            assert _timelines(out) == []
            sess.run(train_op)
            assert _timelines(out) == ["timeline-2.json"]
            sess.run(train_op)
            assert _timelines(out) == ["timeline-2.json"]
            sess.run(train_op)
            assert _timelines(out) == ["timeline-2.json", "timeline-4.json"]
    trace = json.loads((tmp_path / "timeline-4.json").read_text())
    names = {e.get("args", {}).get("name") for e in trace["traceEvents"]}
    assert any(n and "AssignAdd" in n for n in names)
    tf.summary.FileWriterCache.get(out).flush()
    events = [e for f in os.listdir(out) if f.startswith("events")
              for e in tf.train.summary_iterator(os.path.join(out, f))]
    assert sorted(e.tagged_run_metadata.tag for e in events
                  if e.HasField("tagged_run_metadata")) == ["step_2", "step_4"]


def test_checkpoints_iterator(tmp_path):
    ckpt_dir = str(tmp_path)
    assert list(tf.train.checkpoints_iterator(ckpt_dir, timeout=0)) == []
    with tf.Graph().as_default():
        v = tf.Variable(1.0)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(v.initializer)
            first = saver.save(sess, os.path.join(ckpt_dir, "model"), global_step=1)
            it = tf.train.checkpoints_iterator(ckpt_dir, timeout=0)
            assert next(it) == first
            assert list(it) == []
            calls = []

            def timeout_fn():
                calls.append(1)
                if len(calls) == 1:
                    saver.save(sess, os.path.join(ckpt_dir, "model"), global_step=2)
                    return False
                return True

            found = list(tf.train.checkpoints_iterator(ckpt_dir, timeout=0,
                                                       timeout_fn=timeout_fn))
    assert found == [first, os.path.join(ckpt_dir, "model-2")]
    assert len(calls) == 2
