"""The `Apply*` / `SparseApply*` ops and kernels: formulas, TensorFlow's static and run-time
errors, dtypes, duplicate indices, copy-on-write and rollback."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.kernels import training_kernels  # noqa: F401  (registers the kernels)
from tensorweave.ops import training_ops
from tensorweave.ops.gradients_impl import gradient_registry


def _session_with(*variables):
    sess = tf.Session()
    sess.run([v.initializer for v in variables])
    return sess


def test_apply_ops_output_the_updated_ref():
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0])
        out = training_ops.apply_gradient_descent(v, 0.5, [2.0, 2.0])
        assert out.dtype.base_dtype == tf.float32 and out.dtype != tf.float32
        assert out.op.type == "ApplyGradientDescent"
        assert out.shape.as_list() == [2]
        with _session_with(v) as sess:
            np.testing.assert_allclose(sess.run(out), [0.0, 1.0])
            np.testing.assert_allclose(sess.run(v), [0.0, 1.0])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32])
def test_gradient_descent_keeps_dtype(dtype):
    with tf.Graph().as_default():
        v = tf.Variable(np.array([4, 8], dtype=dtype))
        out = training_ops.apply_gradient_descent(
            v, np.array(2, dtype=dtype), np.array([1, 2], dtype=dtype)
        )
        with _session_with(v) as sess:
            got = sess.run(out)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, np.array([2, 4], dtype=dtype))


def test_momentum_and_nesterov_formulas():
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0])
        acc = tf.Variable([0.5, 0.5])
        plain = training_ops.apply_momentum(v, acc, 0.1, [1.0, -1.0], 0.9)
        nest = training_ops.apply_momentum(v, acc, 0.1, [1.0, -1.0], 0.9, use_nesterov=True)
        with _session_with(v, acc) as sess:
            sess.run(plain)
            accum = np.array([0.5, 0.5]) * 0.9 + [1.0, -1.0]
            np.testing.assert_allclose(sess.run(acc), accum, rtol=1e-6)
            np.testing.assert_allclose(sess.run(v), np.array([1.0, 2.0]) - 0.1 * accum, rtol=1e-6)
            before = sess.run(v)
            sess.run(nest)
            accum2 = accum * 0.9 + [1.0, -1.0]
            want = before - (np.array([1.0, -1.0]) * 0.1 + accum2 * 0.9 * 0.1)
            np.testing.assert_allclose(sess.run(v), want, rtol=1e-6)


def test_adagrad_update_slots_false_keeps_the_accumulator():
    with tf.Graph().as_default():
        v = tf.Variable([1.0])
        acc = tf.Variable([4.0])
        out = training_ops.apply_adagrad(v, acc, 1.0, [2.0], update_slots=False)
        assert out.op.get_attr("update_slots") is False
        with _session_with(v, acc) as sess:
            sess.run(out)
            np.testing.assert_allclose(sess.run([v, acc]), [[0.0], [4.0]])


def test_adam_nesterov_formula():
    with tf.Graph().as_default():
        v, m, s = tf.Variable([1.0]), tf.Variable([0.2]), tf.Variable([0.3])
        out = training_ops.apply_adam(
            v, m, s, 0.9, 0.99, 0.1, 0.9, 0.99, 1e-7, [0.5], use_nesterov=True
        )
        with _session_with(v, m, s) as sess:
            sess.run(out)
            got = sess.run([v, m, s])
    alpha = 0.1 * np.sqrt(1 - 0.99) / (1 - 0.9)
    new_m = 0.2 + (0.5 - 0.2) * 0.1
    new_s = 0.3 + (0.25 - 0.3) * 0.01
    want_v = 1.0 - (0.5 * 0.1 + 0.9 * new_m) * alpha / (np.sqrt(new_s) + 1e-7)
    np.testing.assert_allclose(got, [[want_v], [new_m], [new_s]], rtol=1e-5)


def test_sparse_duplicate_indices_apply_one_after_the_other():
    # TensorFlow's CPU kernels process indices in order; a duplicate sees the first update.
    with tf.Graph().as_default():
        v = tf.Variable([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
        acc = tf.Variable(np.full((3, 2), 0.1, np.float32))
        out = training_ops.sparse_apply_adagrad(
            v, acc, 1.0, [[1.0, 2.0], [3.0, 4.0]], np.array([2, 2], np.int64)
        )
        with _session_with(v, acc) as sess:
            sess.run(out)
            got_v, got_acc = sess.run([v, acc])
    want_acc, want_v = np.full(2, 0.1), np.array([3.0, 3.0])
    for g in ([1.0, 2.0], [3.0, 4.0]):
        want_acc = want_acc + np.square(g)
        want_v = want_v - np.array(g) / np.sqrt(want_acc)
    np.testing.assert_allclose(got_acc[2], want_acc, rtol=1e-6)
    np.testing.assert_allclose(got_v[2], want_v, rtol=1e-6)
    np.testing.assert_array_equal(got_v[:2], [[1.0, 1.0], [2.0, 2.0]])


def test_sparse_rms_prop_touches_only_the_given_rows():
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0, 3.0])
        ms = tf.Variable([1.0, 1.0, 1.0])
        mom = tf.Variable([0.0, 0.0, 0.0])
        out = training_ops.sparse_apply_rms_prop(v, ms, mom, 0.1, 0.9, 0.5, 1e-10, [2.0], [1])
        with _session_with(v, ms, mom) as sess:
            sess.run(out)
            got = sess.run([v, ms, mom])
    new_ms = 0.9 + 0.1 * 4.0
    new_mom = 0.1 * 2.0 / np.sqrt(new_ms)
    np.testing.assert_allclose(got[0], [1.0, 2.0 - new_mom, 3.0], rtol=1e-6)
    np.testing.assert_allclose(got[1], [1.0, new_ms, 1.0], rtol=1e-6)
    np.testing.assert_allclose(got[2], [0.0, new_mom, 0.0], rtol=1e-6)


def test_static_shape_errors_name_the_op():
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0])
        acc = tf.Variable([1.0, 2.0, 3.0])
        with pytest.raises(ValueError, match="ApplyGradientDescent"):
            training_ops.apply_gradient_descent(v, 0.1, [1.0, 2.0, 3.0])
        with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
            training_ops.apply_gradient_descent(v, [0.1], [1.0, 2.0])
        with pytest.raises(ValueError, match="ApplyMomentum"):
            training_ops.apply_momentum(v, acc, 0.1, [1.0, 2.0], 0.9)
        with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
            training_ops.sparse_apply_adagrad(v, v, 0.1, [1.0], [[0]])
        with pytest.raises(TypeError):
            training_ops.sparse_apply_adagrad(v, v, 0.1, [1.0], [0.5])


def test_runtime_shape_errors_are_tensorflows():
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0])
        acc = tf.Variable([1.0, 2.0])
        g = tf.placeholder(tf.float32)
        lr = tf.placeholder(tf.float32)
        i = tf.placeholder(tf.int32)
        dense = training_ops.apply_adagrad(v, acc, lr, g)
        sparse = training_ops.sparse_apply_momentum(v, acc, lr, g, i, 0.9)
        cases = [
            (
                dense,
                {lr: 0.1, g: [1.0, 2.0, 3.0]},
                r"var and grad do not have the same shape\[2\] \[3\]",
            ),
            (dense, {lr: [0.1, 0.2], g: [1.0, 2.0]}, r"lr is not a scalar: \[2\]"),
            (sparse, {lr: 0.1, g: [1.0], i: [5]}, "Index 5 at offset 0 in indices is out of range"),
            (sparse, {lr: 0.1, g: [1.0, 2.0], i: [0]}, "grad must be the same size as indices"),
            (sparse, {lr: 0.1, g: [1.0], i: [[0]]}, "indices must be one-dimensional"),
        ]
        with _session_with(v, acc) as sess:
            for op, feed, message in cases:
                with pytest.raises(errors.InvalidArgumentError, match=message):
                    sess.run(op, feed)
            np.testing.assert_array_equal(sess.run([v, acc]), [[1.0, 2.0], [1.0, 2.0]])


def test_slot_shape_mismatch_and_uninitialized_slot():
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0])
        odd = tf.Variable(
            tf.placeholder_with_default([1.0, 2.0, 3.0], [None]), validate_shape=False
        )
        acc = tf.Variable([0.0, 0.0], name="acc")
        mismatch = training_ops.apply_momentum(v, odd, 0.1, [1.0, 1.0], 0.9)
        uninit = training_ops.apply_momentum(v, acc, 0.1, [1.0, 1.0], 0.9)
        with _session_with(v, odd) as sess:
            with pytest.raises(errors.InvalidArgumentError, match=r"var and accum do not have"):
                sess.run(mismatch)
            with pytest.raises(errors.FailedPreconditionError, match="acc"):
                sess.run(uninit)
            np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])


def test_failed_step_rolls_back_variable_and_slots():
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0])
        acc = tf.Variable([0.0, 0.0])
        update = training_ops.apply_momentum(v, acc, 0.1, [1.0, 1.0], 0.9)
        bad_index = tf.placeholder(tf.int32)
        with tf.control_dependencies([update]):
            failing = tf.gather(tf.constant([1.0]), bad_index)
        with _session_with(v, acc) as sess:
            with pytest.raises(errors.InvalidArgumentError):
                sess.run(failing, {bad_index: 3})
            np.testing.assert_array_equal(sess.run([v, acc]), [[1.0, 2.0], [0.0, 0.0]])


def test_updates_are_copy_on_write():
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0])
        grad = np.array([1.0, 1.0], np.float32)
        out = training_ops.apply_gradient_descent(v, 1.0, tf.placeholder_with_default(grad, [2]))
        with _session_with(v) as sess:
            before = sess.run(v)
            sess.run(out)
            np.testing.assert_array_equal(before, [1.0, 2.0])
            np.testing.assert_array_equal(grad, [1.0, 1.0])
            np.testing.assert_array_equal(sess.run(v), [0.0, 1.0])


def test_training_ops_are_not_differentiable():
    for op_type in ("ApplyGradientDescent", "ApplyMomentum", "ApplyAdam", "SparseApplyAdagrad"):
        assert op_type in gradient_registry
        assert gradient_registry.lookup(op_type) is None


def test_wrappers_take_refs_only_for_the_ops_ref_inputs():
    """`apply_training_op` reads the Ref inputs off the op definition: a variable given as
    the learning rate is read by value; a resource `var` selects the `Resource` op."""
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0])
        lr = tf.Variable(0.5)
        out = training_ops.apply_gradient_descent(v, lr, [2.0, 2.0])
        assert out.op.inputs[0].dtype != tf.float32 and out.op.inputs[1].dtype == tf.float32
        r = tf.Variable([1.0, 2.0], use_resource=True)
        acc = tf.Variable([0.0, 0.0], use_resource=True)
        update = training_ops.apply_momentum(r, acc, lr, [1.0, 1.0], 0.5)
        assert update.type == "ResourceApplyMomentum"
        with _session_with(v, lr, r, acc) as sess:
            np.testing.assert_allclose(sess.run(out), [0.0, 1.0])
            sess.run(update)
            np.testing.assert_allclose(sess.run(r), [0.5, 1.5])
