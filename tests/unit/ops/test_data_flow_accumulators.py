"""Accumulators (mirrors parts of TF's conditional_accumulator_test.py).

Blocking is checked without sleeps: a test waits until the accumulator shows a pending
request (its observable state), with a bounded deadline.
"""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.kernels import data_flow_kernels  # noqa: F401  (registers the kernels)
from tensorweave.ops.data_flow_ops import ConditionalAccumulator, SparseConditionalAccumulator
from tensorweave.testing.threads import Runner, wait_until


@pytest.fixture
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


# -------------------------------------------------------------- accumulators
def test_accumulator_op_attrs(graph):
    acc = ConditionalAccumulator(tf.float32, shape=[2], name="Q", shared_name="s")
    op = acc.accumulator_ref.op
    assert op.type == "ConditionalAccumulator" and acc.name == "Q"
    assert acc.accumulator_ref.dtype == tf.string._as_ref
    assert op.get_attr("shape").as_list() == [2]
    assert op.get_attr("reduction_type") in ("MEAN", b"MEAN")
    assert acc.dtype == tf.float32


def test_accumulator_averages_and_resets(graph):
    acc = ConditionalAccumulator(tf.float32, shape=[2])
    g = tf.placeholder(tf.float32, [2])
    apply_op = acc.apply_grad(g, local_step=0)
    take = acc.take_grad(3)
    assert take.shape.as_list() == [2]
    with tf.Session(graph=graph) as sess:
        for v in ([1.0, 10.0], [2.0, 20.0], [6.0, 60.0]):
            sess.run(apply_op, {g: v})
        assert sess.run(acc.num_accumulated()) == 3
        np.testing.assert_allclose(sess.run(take), [3.0, 30.0])
        assert sess.run(acc.num_accumulated()) == 0


def test_accumulator_drops_stale_gradients_and_advances_global_step(graph):
    acc = ConditionalAccumulator(tf.float32, shape=[])
    g = tf.placeholder(tf.float32, [])
    step = tf.placeholder(tf.int64, [])
    apply_op = acc.apply_grad(g, local_step=step)
    with tf.Session(graph=graph) as sess:
        sess.run(apply_op, {g: 1.0, step: 0})
        assert sess.run(acc.take_grad(1)) == 1.0  # global step becomes 1
        sess.run(apply_op, {g: 100.0, step: 0})  # stale: dropped
        assert sess.run(acc.num_accumulated()) == 0
        sess.run(apply_op, {g: 4.0, step: 1})
        sess.run(apply_op, {g: 8.0, step: 5})
        assert sess.run(acc.take_grad(2)) == 6.0
        sess.run(acc.set_global_step(10))
        sess.run(apply_op, {g: 1.0, step: 9})
        assert sess.run(acc.num_accumulated()) == 0
        sess.run(apply_op, {g: 1.0, step: 10})
        assert sess.run(acc.num_accumulated()) == 1


def test_accumulator_take_blocks_until_num_required(graph):
    acc = ConditionalAccumulator(tf.float32, shape=[])
    g = tf.placeholder(tf.float32, [])
    apply_op = acc.apply_grad(g)
    with tf.Session(graph=graph) as sess:
        res = sess.run(acc.accumulator_ref)
        runner = Runner(sess, acc.take_grad(2))
        wait_until(lambda: res.pending_takes == 1)
        sess.run(apply_op, {g: 1.0})
        assert runner.thread.is_alive() and res.pending_takes == 1
        sess.run(apply_op, {g: 3.0})
        assert runner.join().result == 2.0


def test_accumulator_errors(graph):
    acc = ConditionalAccumulator(tf.float32, shape=[2])
    g = tf.placeholder(tf.float32)
    apply_op = acc.apply_grad(g)
    with pytest.raises(ValueError):
        acc.apply_grad([1.0, 2.0, 3.0])
    free = ConditionalAccumulator(tf.float32, name="free")
    g2 = tf.placeholder(tf.float32)
    apply_free = free.apply_grad(g2)
    with tf.Session(graph=graph) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Shape mismatch"):
            sess.run(apply_op, {g: [1.0, 2.0, 3.0]})
        sess.run(apply_free, {g2: [1.0, 2.0]})
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"expected \[2\], got \[3\]"):
            sess.run(apply_free, {g2: [1.0, 2.0, 3.0]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="must be positive"):
            sess.run(acc.take_grad(0))


def test_accumulator_sum_and_integer_mean(graph):
    total = ConditionalAccumulator(tf.float64, shape=[], reduction_type="SUM", name="sum")
    ints = ConditionalAccumulator(tf.int32, shape=[2], name="ints")
    with tf.Session(graph=graph) as sess:
        for v in (1.0, 2.0):
            sess.run(total.apply_grad(v))
        assert sess.run(total.take_grad(2)) == 3.0
        sess.run(ints.apply_grad([3, -3]))
        sess.run(ints.apply_grad([4, -4]))
        out = sess.run(ints.take_grad(2))
        assert out.dtype == np.int32
        np.testing.assert_array_equal(out, [3, -3])  # truncation toward zero


def test_sparse_accumulator(graph):
    acc = SparseConditionalAccumulator(tf.float32, shape=[4, 2])
    with tf.Session(graph=graph) as sess:
        sess.run(acc.apply_grad([0, 2], [[1.0, 1.0], [2.0, 2.0]], grad_shape=[4, 2]))
        sess.run(
            acc.apply_indexed_slices_grad(
                tf.IndexedSlices(
                    tf.constant([[3.0, 3.0], [5.0, 5.0]]), tf.constant([2, 3]), tf.constant([4, 2])
                )
            )
        )
        assert sess.run(acc.num_accumulated()) == 2
        indices, values, shape = sess.run(acc.take_grad(2))
        np.testing.assert_array_equal(indices, [0, 2, 3])
        np.testing.assert_allclose(values, [[1.0, 1.0], [2.5, 2.5], [5.0, 5.0]])
        np.testing.assert_array_equal(shape, [4, 2])
        sess.run(acc.apply_grad([1], [[7.0, 7.0]], local_step=1))
        slices = acc.take_indexed_slices_grad(1)
        assert isinstance(slices, tf.IndexedSlices)
        out_i, out_v = sess.run([slices.indices, slices.values])
        np.testing.assert_array_equal(out_i, [1])
        np.testing.assert_allclose(out_v, [[7.0, 7.0]])
        with pytest.raises(tf.errors.InvalidArgumentError, match="exceeded limits"):
            sess.run(acc.apply_grad([9], [[1.0, 1.0]], local_step=2))
        with pytest.raises(tf.errors.InvalidArgumentError, match="expected values dim 1"):
            sess.run(acc.apply_grad([1], [[1.0, 1.0, 1.0]], local_step=2))
        with pytest.raises(tf.errors.InvalidArgumentError, match="shape dim 1"):
            sess.run(acc.apply_grad([1], [[1.0, 1.0]], grad_shape=[4, 3], local_step=2))


def test_sparse_accumulator_drops_stale(graph):
    acc = SparseConditionalAccumulator(tf.float32)
    with tf.Session(graph=graph) as sess:
        sess.run(acc.set_global_step(3))
        sess.run(acc.apply_grad([0], [[1.0]], local_step=2))
        assert sess.run(acc.num_accumulated()) == 0
        sess.run(acc.apply_grad([0], [[1.0]], local_step=3))
        indices, values, shape = sess.run(acc.take_grad(1))
        np.testing.assert_array_equal(shape, [-1, 1])


def test_accumulator_shared_name(graph):
    a1 = ConditionalAccumulator(tf.float32, shape=[], shared_name="acc", name="a1")
    a2 = ConditionalAccumulator(tf.float32, shape=[], shared_name="acc", name="a2")
    with tf.Session(graph=graph) as sess:
        sess.run(a1.apply_grad(2.0))
        assert sess.run(a2.num_accumulated()) == 1
        assert sess.run(a2.take_grad(1)) == 2.0
