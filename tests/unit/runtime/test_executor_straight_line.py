"""The compiled straight-line executor and the per-run session fast paths.

Folded entries (NoOp, Identity, constants, dead stateless ops) must leave results, errors,
rollback and traces as they were.
"""

import collections

import numpy as np
import pytest

import tensorweave as tf


def _plan_steps(sess):
    """The steps of the session's one cached plan (`Plan.steps`)."""
    (cached,) = sess._backend._plans.values()
    return cached.plan.steps()


def _kernels(steps):
    return [s.nodes[0] for s in steps if s.kind == "kernel"]


def test_identity_and_noop_are_aliased_and_results_unchanged():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None], name="x")
        a = tf.identity(x, name="a")
        with tf.control_dependencies([tf.no_op(name="gate")]):
            b = tf.identity(a * 2.0, name="b")
        c = tf.stop_gradient(b, name="c")
    with tf.Session(graph=g) as sess:
        fed = np.array([1.0, 2.0], np.float32)
        out_a, out_c = sess.run([a, c], {x: fed})
        np.testing.assert_array_equal(out_a, fed)
        np.testing.assert_array_equal(out_c, [2.0, 4.0])
        # The fetched feed is the user's own copy: writable, not the caller's buffer.
        assert out_a is not fed and out_a.flags.writeable
        out_a[0] = 9.0
        assert fed[0] == 1.0
        assert _kernels(_plan_steps(sess)) == ["mul"]  # the rest is aliased or skipped


def test_constant_subgraphs_are_folded_and_fetches_stay_writable_copies():
    g = tf.Graph()
    with g.as_default():
        folded = tf.reshape(tf.fill([2, 2], 3.0), [4], name="folded")
    with tf.Session(graph=g) as sess:
        first = sess.run(folded)
        np.testing.assert_array_equal(first, [3.0] * 4)
        first[0] = -1.0  # must not change the folded constant
        np.testing.assert_array_equal(sess.run(folded), [3.0] * 4)
        assert _plan_steps(sess) == []  # folded: the fetch is a constant


def test_failing_constant_op_is_not_folded_and_fails_when_run():
    g = tf.Graph()
    with g.as_default():
        shape = tf.placeholder_with_default(tf.constant([2, 2]), [2])
        bad = tf.reshape(tf.constant([1, 2, 3]), shape, name="bad")
    with tf.Session(graph=g) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"node bad\b"):
            sess.run(bad)


def test_kernel_error_names_its_node_and_rolls_back():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(1.0, name="v")
        a = tf.placeholder(tf.float32, [None, None])
        b = tf.placeholder(tf.float32, [None, None])
        inc = tf.assign_add(v, 1.0)
        with tf.control_dependencies([inc]):
            mm = tf.matmul(a, b, name="mm")
    with tf.Session(graph=g) as sess:
        sess.run(v.initializer)
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"\{\{node mm\}\}"):
            sess.run(mm, {a: np.ones((2, 3)), b: np.ones((2, 3))})
        assert sess.run(v) == 1.0  # the assign_add of the failed step was undone
        np.testing.assert_array_equal(
            sess.run(mm, {a: np.ones((2, 3)), b: np.ones((3, 1))}), [[3.0], [3.0]]
        )
        assert sess.run(v) == 2.0


def test_uninitialized_read_names_the_read():
    g = tf.Graph()
    with g.as_default():
        w = tf.Variable(2.0, name="w")
        y = w + 1.0
    with tf.Session(graph=g) as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value w"):
            sess.run(y)


def test_unused_stateless_op_is_dropped_but_side_effects_run():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, None], name="x")
        v = tf.Variable(0.0, name="v")
        unused = tf.matmul(x, x, name="unused")  # shape error if it ran
        inc = tf.assign_add(v, 1.0, name="inc")
        with tf.control_dependencies([unused, inc]):
            out = tf.identity(x, name="out")
    with tf.Session(graph=g) as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(out, {x: np.ones((2, 3))}), np.ones((2, 3)))
        assert sess.run(v) == 1.0
        # Traced runs skip it too (as Grappler's NoOp), and still list it.
        meta = tf.RunMetadata()
        options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
        sess.run(out, {x: np.ones((2, 3))}, options=options, run_metadata=meta)
        assert sess.run(v) == 2.0
        names = {n.node_name for d in meta.step_stats.dev_stats for n in d.node_stats}
        assert {"unused", "inc", "out"} <= names


def test_full_trace_reports_folded_nodes():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        with tf.control_dependencies([tf.no_op(name="gate")]):
            y = tf.identity(x + tf.fill([], 1.0, name="one"), name="y")
    with tf.Session(graph=g) as sess:
        meta = tf.RunMetadata()
        options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
        assert sess.run(y, {x: 1.0}, options=options, run_metadata=meta) == 2.0
        names = {n.node_name for d in meta.step_stats.dev_stats for n in d.node_stats}
        assert {"gate", "one", "y"} <= names


def test_values_are_freed_after_last_use():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None], name="x")
        y = x
        for _ in range(5):
            y = y * 2.0
    with tf.Session(graph=g) as sess:
        np.testing.assert_array_equal(sess.run(y, {x: [1.0]}), [32.0])
        steps = _plan_steps(sess)
        assert [s.nodes[0] for s in steps] == ["mul", *[f"mul_{i}" for i in range(1, 5)]]
        # Each product but the fetched last is freed right after its only use.
        assert [len(s.frees) for s in steps] == [1, 1, 1, 1, 1]


def test_list_fetches_reuse_their_fetch_plan_and_keep_their_types():
    Pair = collections.namedtuple("Pair", ["a", "b"])
    g = tf.Graph()
    with g.as_default():
        a = tf.constant(1.0, name="a")
        b = tf.constant(2.0, name="b")
    with tf.Session(graph=g) as sess:
        assert sess.run([a, b]) == [1.0, 2.0]
        assert sess.run([a, b]) == [1.0, 2.0]
        assert sess.run((a, b)) == (1.0, 2.0)
        assert sess.run(Pair(a, b)) == Pair(1.0, 2.0)
        assert sess.run([[a], (b,)]) == [[1.0], (2.0,)]
        assert sess.run({"a": [a]}) == {"a": [1.0]}
        assert len(sess._fetch_cache) == 4


def test_feed_checks_follow_set_shape_and_dtype():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, None], name="x")
        y = x * 1.0
    with tf.Session(graph=g) as sess:
        np.testing.assert_array_equal(sess.run(y, {x: np.ones((1, 3), np.float32)}), [[1, 1, 1]])
        x.set_shape([None, 2])
        with pytest.raises(ValueError, match=r"Cannot feed value of shape \(1, 3\)"):
            sess.run(y, {x: np.ones((1, 3), np.float32)})
        with pytest.raises(ValueError, match="Cannot feed value of shape"):
            sess.run(y, {x: np.ones(2, np.float32)})
        out = sess.run(y, {x: np.ones((1, 2), np.float64)})  # converted to float32
        assert out.dtype == np.float32
        with pytest.raises(TypeError, match="cannot be a tf.Tensor"):
            sess.run(y, {x: y})


def test_fed_array_is_copied_and_frozen():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        v = tf.Variable(np.zeros(2, np.float32), name="v")
        assign = tf.assign(v, x)
    with tf.Session(graph=g) as sess:
        fed = np.array([1.0, 2.0], np.float32)
        sess.run(assign, {x: fed})
        fed[0] = 5.0
        np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])
        assert fed.flags.writeable
