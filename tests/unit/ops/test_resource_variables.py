"""Resource variables (`use_resource=True`, TF 2.x compat.v1's default): graph structure,
read/assign semantics, errors, gradients, optimizers, checkpoints and meta graphs. Cases
follow TensorFlow's `resource_variable_ops_test.py` (graph mode)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops import resource_variable_ops as rvo


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g


def test_structure_matches_tensorflow(graph):
    v = tf.Variable([1.0, 2.0], name="v", use_resource=True)
    assert isinstance(v, tf.Variable) and rvo.is_resource_variable(v)
    assert v.op.type == "VarHandleOp" and v.op.name == "v" and v.name == "v:0"
    assert v.dtype == tf.float32 and v.shape.as_list() == [2]
    assert v.handle.dtype == tf.resource
    names = {op.name: op.type for op in graph.get_operations()}
    assert names["v/Assign"] == "AssignVariableOp"
    assert names["v/Read/ReadVariableOp"] == "ReadVariableOp"
    assert names["v/IsInitialized/VarIsInitializedOp"] == "VarIsInitializedOp"
    assert graph.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES) == [v]


def test_plain_variables_stay_reference_variables(graph):
    v = tf.Variable(1.0)
    assert not rvo.is_resource_variable(v) and v.op.type == "VariableV2"


def test_each_read_is_a_fresh_op_ordered_by_control_dependencies(graph):
    v = tf.Variable(1.0, use_resource=True)
    bump = v.assign_add(10.0, read_value=False)
    with tf.control_dependencies([bump]):
        after = v.value()
    assert after.op.type == "ReadVariableOp" and bump in after.op.control_inputs
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(after) == 11.0
        assert sess.run(v.assign(3.0)) == 3.0
        assert sess.run(v.assign_sub(1.0)) == 2.0
        assert sess.run(v) == 2.0


def test_uninitialized_read_and_initialization_reporting(graph):
    v = tf.Variable([1, 2], use_resource=True, name="u")
    with tf.Session() as sess:
        assert not sess.run(v.is_initialized())
        assert list(sess.run(tf.report_uninitialized_variables())) == [b"u"]
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized"):
            sess.run(v.value())
        sess.run(v.initializer)
        assert sess.run(tf.is_variable_initialized(v))
        assert sess.run(tf.report_uninitialized_variables()).size == 0


def test_read_with_the_wrong_dtype_is_invalid_argument(graph):
    v = tf.Variable(1.0, use_resource=True)
    wrong = rvo.read_variable_op(v.handle, tf.int32)
    with tf.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(tf.errors.InvalidArgumentError, match="wrong dtype"):
            sess.run(wrong)


def test_assign_shape_mismatch_is_a_graph_error(graph):
    v = tf.Variable([1.0, 2.0], use_resource=True)
    with pytest.raises(ValueError):
        v.assign([1.0, 2.0, 3.0])


@pytest.mark.parametrize(
    "kind, expected",
    [
        ("Add", [[1, 2], [13, 14], [5, 6]]),
        ("Sub", [[1, 2], [-7, -6], [5, 6]]),
        ("Mul", [[1, 2], [30, 40], [5, 6]]),
        ("Div", [[1, 2], [0.3, 0.4], [5, 6]]),
        ("Min", [[1, 2], [3, 4], [5, 6]]),
        ("Max", [[1, 2], [10, 10], [5, 6]]),
        ("Update", [[1, 2], [10, 10], [5, 6]]),
    ],
)
def test_scatter_ops(graph, kind, expected):
    v = tf.Variable(np.arange(1, 7, dtype=np.float64).reshape(3, 2), use_resource=True)
    op = rvo.resource_scatter(kind, v.handle, [1], np.full((1, 2), 10.0))
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run(op)
        np.testing.assert_allclose(sess.run(v), expected)


def test_sparse_read_and_state_ops_on_resource_variables(graph):
    v = tf.Variable(np.arange(6.0).reshape(3, 2), use_resource=True)
    rows = v.sparse_read([2, 0])
    upd = tf.scatter_update(v, [1], [[-1.0, -1.0]])
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(rows), [[4, 5], [0, 1]])
        np.testing.assert_array_equal(sess.run(upd)[1], [-1, -1])
        np.testing.assert_array_equal(sess.run(tf.assign_add(v, np.ones((3, 2))))[0], [1, 2])
        assert list(sess.run(rvo.variable_shape(v.handle))) == [3, 2]
    with pytest.raises(tf.errors.InvalidArgumentError, match="not in"):
        with tf.Session() as sess:
            sess.run(v.initializer)
            sess.run(v.sparse_read([3]))


def _central_difference(sess, v, loss, v0, eps=1e-6):
    out = np.zeros_like(v0)
    for i in np.ndindex(v0.shape):
        for sign in (1, -1):
            x = v0.copy()
            x[i] += sign * eps
            sess.run(v.assign(x))
            out[i] += sign * sess.run(loss) / (2 * eps)
    return out


@pytest.mark.parametrize("through", ["read", "gather"])
def test_gradients_by_central_differences(graph, through):
    rng = np.random.default_rng(7)
    v0 = rng.uniform(-1, 1, (4, 3))
    v = tf.Variable(v0, use_resource=True)
    if through == "read":
        loss = tf.reduce_sum(tf.sin(v) * v)
    else:
        loss = tf.reduce_sum(tf.square(v.sparse_read([3, 0, 3])))
    (grad,) = tf.gradients(loss, [v])
    dense = tf.convert_to_tensor(grad) if isinstance(grad, tf.IndexedSlices) else grad
    with tf.Session() as sess:
        sess.run(v.initializer)
        analytic = sess.run(dense)
        numeric = _central_difference(sess, v, loss, v0)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-8)


OPTIMIZERS = {
    "sgd": lambda: tf.train.GradientDescentOptimizer(0.1),
    "momentum": lambda: tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
    "adagrad": lambda: tf.train.AdagradOptimizer(0.1),
    "adam": lambda: tf.train.AdamOptimizer(0.05),
    "rmsprop": lambda: tf.train.RMSPropOptimizer(0.05, momentum=0.5, centered=True),
    "adadelta": lambda: tf.train.AdadeltaOptimizer(1.0),
    "ftrl": lambda: tf.train.FtrlOptimizer(0.1, l1_regularization_strength=0.01,
                                           l2_shrinkage_regularization_strength=0.01),
    "proximal_adagrad": lambda: tf.train.ProximalAdagradOptimizer(
        0.1, l1_regularization_strength=0.01),
    "proximal_sgd": lambda: tf.train.ProximalGradientDescentOptimizer(
        0.1, l2_regularization_strength=0.01),
    "adagrad_da": lambda: tf.train.AdagradDAOptimizer(0.1, tf.train.get_or_create_global_step()),
}


def _train(use_resource: bool, make_opt, sparse: bool) -> list[np.ndarray]:
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        w = tf.get_variable("w", initializer=np.linspace(-1, 1, 12).reshape(4, 3),
                            use_resource=use_resource)
        x = tf.constant(np.linspace(0, 1, 8).reshape(2, 4))
        if sparse:
            loss = tf.reduce_sum(tf.square(tf.nn.embedding_lookup(w, [0, 2, 2])))
        else:
            loss = tf.reduce_sum(tf.square(tf.matmul(x, w)))
        step = tf.train.get_or_create_global_step()
        train = make_opt().minimize(loss, global_step=step)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(train)
            return sess.run([w, step])


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizers_update_resource_variables_like_reference_ones(name, sparse):
    ref_w, ref_step = _train(False, OPTIMIZERS[name], sparse)
    res_w, res_step = _train(True, OPTIMIZERS[name], sparse)
    assert ref_step == res_step == 3
    np.testing.assert_allclose(res_w, ref_w, rtol=1e-12)
    assert not np.allclose(res_w, np.linspace(-1, 1, 12).reshape(4, 3))


def test_optimizer_uses_resource_apply_ops_and_resource_slots(graph):
    v = tf.get_variable("v", [2], use_resource=True)
    opt = tf.train.MomentumOptimizer(0.1, 0.9)
    opt.minimize(tf.reduce_sum(v))
    types = {op.type for op in graph.get_operations()}
    assert "ResourceApplyMomentum" in types and "ApplyMomentum" not in types
    assert rvo.is_resource_variable(opt.get_slot(v, "momentum"))


def test_variable_scope_and_global_switch():
    with tf.Graph().as_default():
        with tf.variable_scope("s", use_resource=True):
            assert rvo.is_resource_variable(tf.get_variable("a", [1]))
        assert not rvo.is_resource_variable(tf.get_variable("b", [1]))
        tf.enable_resource_variables()
        try:
            assert tf.resource_variables_enabled()
            assert rvo.is_resource_variable(tf.get_variable("c", [1]))
            assert rvo.is_resource_variable(tf.Variable(1.0))
            assert not rvo.is_resource_variable(tf.Variable(1.0, use_resource=False))
        finally:
            tf.disable_resource_variables()
        assert not tf.resource_variables_enabled()


def test_checkpoints_move_between_resource_and_reference_variables(tmp_path):
    prefix = str(tmp_path / "m")
    with tf.Graph().as_default():
        v = tf.get_variable("v", initializer=[1.5, 2.5], use_resource=True)
        p = tf.get_variable("p", initializer=tf.constant(np.arange(6.0).reshape(3, 2)),
                            use_resource=True,
                            partitioner=tf.fixed_size_partitioner(2))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            tf.train.Saver().save(sess, prefix)
    with tf.Graph().as_default():
        v = tf.get_variable("v", [2])
        p = tf.get_variable("p", [3, 2], tf.float64, partitioner=tf.fixed_size_partitioner(3))
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, prefix)
            np.testing.assert_array_equal(sess.run(v), [1.5, 2.5])
            np.testing.assert_array_equal(sess.run(tf.concat(list(p), 0)), np.arange(6.0)
                                          .reshape(3, 2))
    with tf.Graph().as_default():
        v = tf.get_variable("v", [2], use_resource=True)
        with tf.Session() as sess:
            tf.train.Saver([v]).restore(sess, prefix)
            np.testing.assert_array_equal(sess.run(v), [1.5, 2.5])


def test_meta_graph_round_trip_restores_resource_variables(tmp_path):
    with tf.Graph().as_default():
        tf.Variable([4.0], name="r", use_resource=True)
        tf.Variable([5.0], name="f")
        meta = tf.train.export_meta_graph()
    with tf.Graph().as_default():
        tf.train.import_meta_graph(meta)
        r, f = sorted(tf.global_variables(), key=lambda x: x.name)[::-1]
        assert rvo.is_resource_variable(r) and r.op.name == "r"
        assert not rvo.is_resource_variable(f)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(r.value()) == [4.0]


def test_replica_device_setter_puts_the_handle_and_its_updates_on_the_ps(graph):
    with tf.device(tf.train.replica_device_setter(ps_tasks=1)):
        v = tf.get_variable("v", [2], use_resource=True)
        opt = tf.train.GradientDescentOptimizer(0.1)
        train = opt.minimize(tf.reduce_sum(v * 2.0))
    assert v.device == "/job:ps/task:0"
    assert v.initializer.device == "/job:ps/task:0"
    apply = [op for op in graph.get_operations() if op.type == "ResourceApplyGradientDescent"]
    assert apply and train is not None
