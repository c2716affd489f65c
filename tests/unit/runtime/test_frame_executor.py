"""The control-flow executor (`runtime/frame_executor.py`): deadness, frames, iterations,
`parallel_iterations`, plans chosen by graph content, and hand-built primitive graphs."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops import control_flow_util as cfu
from tensorweave.runtime import executor, frame_executor
from tensorweave.runtime.direct_session import DirectSession


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default() as g:
        yield g


def _plans(sess):
    return [c.plan for c in sess._backend._plans.values()]


def test_plain_graphs_keep_the_straight_line_executor_and_loops_get_frames():
    a = tf.constant(1.0) + 2.0
    r = tf.while_loop(lambda i: i < 3, lambda i: i + 1, [tf.constant(0)])
    with tf.Session() as sess:
        if not isinstance(sess._backend, DirectSession):
            pytest.skip("not the in-process backend")
        sess.run(a)
        assert isinstance(_plans(sess)[0], executor.Plan)
        sess.run(r)
        assert any(isinstance(p, frame_executor.FramePlan) for p in _plans(sess))


def test_switch_merge_by_hand_deadness():
    x = tf.placeholder(tf.float32, [])
    p = tf.placeholder(tf.bool, [])
    f, t = cfu.switch(x, p)
    out, index = cfu.merge([f * 10.0, t + 1.0])
    with tf.Session() as sess:
        assert sess.run([out, index], {x: 2.0, p: True}) == [3.0, 1]
        assert sess.run([out, index], {x: 2.0, p: False}) == [20.0, 0]
        with pytest.raises(tf.errors.InvalidArgumentError, match="does not have value"):
            sess.run(t, {x: 2.0, p: False})


def test_control_trigger_runs_with_dead_control_inputs():
    v = tf.Variable(0.0)
    p = tf.placeholder(tf.bool, [])
    f, t = cfu.switch(tf.constant(1.0), p)
    dead_side = tf.identity(t)
    trigger = cfu.control_trigger()
    trigger._add_control_input(dead_side.op)
    with tf.get_default_graph().control_dependencies([trigger]):
        bump = tf.assign_add(v, 1.0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(bump, {p: False})
        assert sess.run(v) == 1.0


def test_merge_of_only_dead_inputs_is_dead():
    p = tf.placeholder(tf.bool, [])
    f, t = cfu.switch(tf.constant(1.0), p)
    f2, t2 = cfu.switch(tf.constant(2.0), p)
    out, _ = cfu.merge([t, t2])
    with tf.Session() as sess:
        assert sess.run(out, {p: True}) in (1.0, 2.0)
        with pytest.raises(tf.errors.InvalidArgumentError, match="does not have value"):
            sess.run(out, {p: False})


@pytest.mark.parametrize("parallel_iterations", [1, 2, 5])
def test_parallel_iterations_bounds_live_iterations(parallel_iterations):
    # NOTE: the cond keeps the loop on the general path (not `frame_loops`).
    def body(i, acc):
        step = tf.reduce_sum(tf.ones([4]) * tf.cast(i, tf.float32))
        return i + 1, acc + tf.cond(i >= 0, lambda: step, lambda: -step)

    r = tf.while_loop(lambda i, a: i < 40, body, [tf.constant(0), tf.constant(0.0)],
                      parallel_iterations=parallel_iterations)
    with tf.Session() as sess:
        assert sess.run(r) == (40, 4.0 * sum(range(40)))
        plan = [p for p in _plans(sess) if isinstance(p, frame_executor.FramePlan)][0]
        assert 1 <= plan.last_peak_iterations <= parallel_iterations


def test_iterations_run_ahead_when_allowed():
    # NOTE: the counter does not wait for the slow accumulation chain, so iteration i+1
    # starts while iteration i is still busy.
    def body(i, acc):
        slow = acc
        for _ in range(5):
            slow = tf.tanh(slow)
        return i + 1, tf.cond(i >= 0, lambda: slow, lambda: acc)

    r = tf.while_loop(lambda i, a: i < 20, body, [tf.constant(0), tf.constant(0.5)],
                      parallel_iterations=8)
    with tf.Session() as sess:
        sess.run(r)
        plan = [p for p in _plans(sess) if isinstance(p, frame_executor.FramePlan)][0]
        assert plan.last_peak_iterations > 1


def test_kernel_error_inside_a_loop_names_the_node_and_the_next_step_works():
    x = tf.placeholder(tf.int32, [])
    r = tf.while_loop(lambda i: i < 5,
                      lambda i: i + tf.gather(tf.constant([1, 1, 1]), x), [tf.constant(0)])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"not in \[0, 3\)\n\t \[\[\{\{node while/GatherV2\}\}\]\]$"):
            sess.run(r, {x: 7})
        assert sess.run(r, {x: 1}) == 5


def test_compiled_loop_reads_refs_where_a_kernel_takes_values():
    # A loop-invariant reference variable reaches the compiled loop's kernels as a `Var`;
    # the generated code reads it where a kernel or pass-through takes its value.
    v = tf.Variable(2.0)
    r = tf.while_loop(lambda i, a: i < 3,
                      lambda i, a: (i + 1, a * tf.identity(v._ref()) + v._ref()),
                      [tf.constant(0), tf.constant(1.0)])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(r) == (3, 22.0)
        plan = [p for p in _plans(sess) if isinstance(p, frame_executor.FramePlan)][-1]
        loop = next(f.compiled for f in {n.frame for n in plan._nodes} if f.compiled)
        assert re.search(r"s\d+ = _read\(s\d+\)\n", loop.source)  # the Identity
        assert re.search(r"= k\d+\(ctx, .*_read\(s\d+\)\)\n", loop.source)  # the add


def test_step_deadline_ends_a_long_loop():
    r = tf.while_loop(lambda i: i < 10**9, lambda i: i + 1, [tf.constant(0)])
    opts = tf.RunOptions(timeout_in_ms=200)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(r, options=opts)


def test_enter_exit_nextiteration_by_hand():
    # A TensorFlow-style loop written with the primitives: sum of 0..4.
    frame = "loop"
    i0 = apply_op("Enter", data=tf.constant(0), frame_name=frame)
    s0 = apply_op("Enter", data=tf.constant(0), frame_name=frame)
    five = apply_op("Enter", data=tf.constant(5), frame_name=frame, is_constant=True)
    mi, _ = cfu.merge([i0, i0])
    ms, _ = cfu.merge([s0, s0])
    c = cfu.loop_cond(mi < five)
    fi, ti = cfu.switch(mi, c)
    fs, ts = cfu.switch(ms, c)
    one = apply_op("Enter", data=tf.constant(1), frame_name=frame, is_constant=True)
    mi.op._update_input(1, cfu.next_iteration(ti + one))
    ms.op._update_input(1, cfu.next_iteration(ts + ti))
    out = cfu.exit(fs)
    with tf.Session() as sess:
        assert sess.run(out) == 10
        assert np.asarray(sess.run(cfu.exit(fi))) == 5


def test_simple_loops_run_sequentially_with_the_same_results():
    x = tf.placeholder(tf.float32, [3])
    v = tf.Variable(0.0)

    def body(i, a):
        with tf.control_dependencies([tf.assign_add(v, 1.0)]):
            return i + 1, a * 0.5 + tf.reduce_sum(x) + tf.cast(i, tf.float32)

    r = tf.while_loop(lambda i, a: i < 7, body, [tf.constant(0), tf.constant(1.0)])
    ref = 1.0
    for i in range(7):
        ref = ref * 0.5 + 6.0 + i
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        fast = sess.run(r, {x: [1.0, 2.0, 3.0]})
        plan = [p for p in _plans(sess) if isinstance(p, frame_executor.FramePlan)][0]
        assert plan._nodes[0].frame is not None
        assert any(f.compiled is not None for f in {n.frame for n in plan._nodes})
        traced = sess.run(r, {x: [1.0, 2.0, 3.0]},
                          options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                          run_metadata=tf.RunMetadata())
        assert fast == traced == (7, pytest.approx(ref))
        assert sess.run(v) == 14.0


def test_a_fed_tensor_fetched_with_a_loop_result_returns_the_fed_value():
    # TensorFlow returns a fed tensor's fed value when it is fetched, also from a step
    # whose plan has a while loop (the control-flow executor).
    t = tf.placeholder(tf.int64, [None, None])
    x = tf.placeholder(tf.float32, [])
    r = tf.while_loop(lambda i: i < 5.0, lambda i: i + x, [tf.constant(0.0)])
    fed = np.array([[1, 2], [3, 4]], np.int64)
    with tf.Session() as sess:
        got_t, got_r, got_x = sess.run([t, r, x], {x: 2.0, t: fed})
        assert isinstance(got_t, np.ndarray) and got_t.dtype == np.int64
        np.testing.assert_array_equal(got_t, fed)
        assert got_r == 6.0 and got_x == 2.0
