"""tf.train.ProfilerHook (Chrome traces of traced steps), sdca_shrink_l1 (values recorded
from TensorFlow 2.21) and the names that raise NotImplementedError."""

import json
import os

import numpy as np
import pytest

import tensorweave as tf


def test_profiler_hook_writes_traces(tmp_path):
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        x = tf.Variable(1.0)
        train = tf.group(tf.assign_add(x, 1.0), tf.assign_add(step, 1))
        hook = tf.train.ProfilerHook(save_steps=2, output_dir=str(tmp_path))
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            for _ in range(5):
                sess.run(train)
    traces = sorted(f for f in os.listdir(tmp_path) if f.startswith("timeline-"))
    assert traces == ["timeline-2.json", "timeline-4.json"]
    with open(tmp_path / traces[0]) as f:
        assert "traceEvents" in json.load(f)
    with pytest.raises(ValueError, match="exactly one"):
        tf.train.ProfilerHook()


def test_sdca_shrink_l1_matches_tensorflow():
    with tf.Graph().as_default():
        v = tf.Variable(np.array([3.0, -0.5, 0.2, -4.0], np.float32))
        w = tf.Variable(np.array([[1.5, -2.5]], np.float32))
        op = tf.train.sdca_shrink_l1([v, w], l1=1.0, l2=0.5)
        op2 = tf.train.sdca_shrink_l1([v], l1=1.0, l2=4.0)
        assert op.type == "SdcaShrinkL1" and op.get_attr("num_features") == 2
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            s.run(op)
            got = s.run([v, w])
            s.run(op2)
            got2 = s.run(v)
    np.testing.assert_array_equal(got[0], [1.0, 0.0, 0.0, -2.0])
    np.testing.assert_array_equal(got[1], [[0.0, -0.5]])
    np.testing.assert_array_equal(got2, [0.75, 0.0, 0.0, -1.75])


def test_unimplemented_names_say_so():
    with pytest.raises(NotImplementedError, match="sdca_fprint"):
        tf.train.sdca_fprint(["a"])
    with pytest.raises(NotImplementedError, match="SdcaOptimizer"):
        tf.train.sdca_optimizer()
    with pytest.raises(NotImplementedError, match="do_quantize_training_on_graphdef"):
        tf.train.do_quantize_training_on_graphdef(None, 8)
