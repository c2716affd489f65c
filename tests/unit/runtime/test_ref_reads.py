"""A read of a ref variable ordered after a write by a control dependency sees the write,
as TensorFlow's buffer-forwarding `v/read` does (issue: `import_graph_def` round trip gave
1.0 instead of 11.0)."""

from __future__ import annotations

import numpy as np

import tensorweave as tf
from tensorweave.runtime.node_spec import NodeSpec
from tensorweave.runtime.pruning import prune


def _bump_graph():
    v = tf.Variable(1.0, name="v")
    bump = tf.assign_add(v, 10.0, name="bump")
    with tf.control_dependencies([bump]):
        out = tf.identity(v, name="out")
    return v, out


def test_identity_after_assign_add_sees_the_update():
    with tf.Graph().as_default():
        v, out = _bump_graph()
        with tf.Session() as sess:
            sess.run(v.initializer)
            assert sess.run(out) == 11.0
            assert sess.run(out) == 21.0


def test_graph_def_round_trip_keeps_the_control_input_semantics():
    with tf.Graph().as_default() as g:
        _bump_graph()
    graph_def = g.as_graph_def()
    with tf.Graph().as_default():
        tf.import_graph_def(graph_def, name="")
        with tf.Session() as sess:
            sess.run("v/Assign")
            assert sess.run("out:0") == 11.0
            assert sess.run("out:0") == 21.0


def test_write_behind_a_group_is_seen_and_other_reads_are_unchanged():
    with tf.Graph().as_default():
        a = tf.Variable([1.0, 2.0], name="a")
        b = tf.Variable(5.0, name="b")
        update = tf.group(tf.assign(a, [3.0, 4.0]), tf.assign_add(b, 1.0))
        with tf.control_dependencies([update]):
            after = tf.identity(a) * 1.0
            b_after = tf.identity(b)
        plain = a.read_value() if hasattr(a, "read_value") else tf.identity(a)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got_after, got_b = sess.run([after, b_after])
            np.testing.assert_array_equal(got_after, [3.0, 4.0])
            assert got_b == 6.0
            np.testing.assert_array_equal(sess.run(plain), [3.0, 4.0])


def _pruned(graph, fetch):
    specs = {op.name: NodeSpec.from_operation(op) for op in graph.get_operations()}
    return [n.name for n in prune(specs, set(), [fetch], [])]


def test_private_read_only_where_an_ancestor_writes_the_variable():
    with tf.Graph().as_default() as g:
        v = tf.Variable(2.0, name="v")
        other = tf.Variable(0.0, name="other")
        touch = tf.assign_add(other, 1.0, name="touch")
        with tf.control_dependencies([touch]):
            unrelated = tf.identity(v, name="unrelated")
        bump = tf.assign_add(v, 1.0, name="bump")
        with tf.control_dependencies([bump]):
            related = tf.identity(v, name="related")
    assert not any("_after_" in n for n in _pruned(g, unrelated.name))
    names = _pruned(g, related.name)
    assert "v/read/_after_related" in names
    assert names.index("v/read/_after_related") < names.index("related")
