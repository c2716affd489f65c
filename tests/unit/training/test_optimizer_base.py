"""`Optimizer` base class: slots, non-slot variables, naming, colocation, global step,
var_list handling, gating and errors (TF 1.x `optimizer_test.py`, `slot_creator_test.py`)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.kernels import training_kernels  # noqa: F401  (registers the kernels)
from tensorweave.training import slot_creator, training_util
from tensorweave.training.adagrad import AdagradOptimizer
from tensorweave.training.adam import AdamOptimizer
from tensorweave.training.gradient_descent import GradientDescentOptimizer
from tensorweave.training.momentum import MomentumOptimizer
from tensorweave.training.optimizer import Optimizer
from tensorweave.training.rmsprop import RMSPropOptimizer


def _graph():
    g = tf.Graph()
    return g, g.as_default()


def test_op_names_follow_tensorflow():
    g, ctx = _graph()
    with ctx:
        v = tf.Variable([1.0, 2.0], name="v")
        with tf.variable_scope("layer"):
            w = tf.get_variable("w", [2], initializer=tf.ones_initializer())
        loss = tf.reduce_sum(v * w)
        train = GradientDescentOptimizer(0.1).minimize(loss)
        train_1 = GradientDescentOptimizer(0.1).minimize(loss, name="second")
        names = {op.name for op in g.get_operations()}
    assert train.name == "GradientDescent" and train.type == "NoOp"
    assert train_1.name == "second"
    assert "GradientDescent/update_v/ApplyGradientDescent" in names
    assert "GradientDescent/update_layer/w/ApplyGradientDescent" in names
    assert "GradientDescent/learning_rate" in names
    assert "second/update_v/ApplyGradientDescent" in names
    assert g.get_collection(tf.GraphKeys.TRAIN_OP) == [train, train_1]


def test_update_ops_are_colocated_with_their_variable():
    g, ctx = _graph()
    with ctx:
        with tf.device("/job:ps/task:1"):
            v = tf.Variable([1.0, 2.0], name="v")
        with tf.device("/job:worker/task:0"):
            MomentumOptimizer(0.1, 0.9).minimize(tf.reduce_sum(v * v))
        op = g.get_operation_by_name("Momentum/update_v/ApplyMomentum")
    assert op.device == "/job:ps/task:1"
    assert op.colocation_groups() == [b"loc:@v"]


@pytest.mark.parametrize(
    "make, slots",
    [
        (lambda: MomentumOptimizer(0.1, 0.9), {"momentum": "v/Momentum"}),
        (lambda: AdagradOptimizer(0.1), {"accumulator": "v/Adagrad"}),
        (lambda: AdamOptimizer(), {"m": "v/Adam", "v": "v/Adam_1"}),
        (lambda: RMSPropOptimizer(0.1), {"rms": "v/RMSProp", "momentum": "v/RMSProp_1"}),
        (
            lambda: RMSPropOptimizer(0.1, centered=True),
            {"rms": "v/RMSProp", "mg": "v/RMSProp_1", "momentum": "v/RMSProp_2"},
        ),
    ],
)
def test_slots_names_shapes_collections_and_devices(make, slots):
    g, ctx = _graph()
    with ctx:
        with tf.device("/job:ps/task:1"):
            v = tf.Variable(np.ones((3, 2), np.float32), name="v")
        with tf.device("/job:worker/task:0"):
            opt = make()
            opt.minimize(tf.reduce_sum(v * v))
        assert opt.get_slot_names() == sorted(slots)
        global_vars = tf.global_variables()
        for slot_name, var_name in slots.items():
            slot = opt.get_slot(v, slot_name)
            assert slot.op.name == var_name
            assert slot.shape.as_list() == [3, 2]
            assert slot.dtype.base_dtype == tf.float32
            assert slot.device == v.device == "/job:ps/task:1"
            assert slot.initializer.device == "/job:ps/task:1"
            assert slot in global_vars
            assert slot not in tf.trainable_variables()
        assert opt.get_slot(v, "nope") is None
        assert tf.trainable_variables() == [v]


def test_slot_initial_values():
    g, ctx = _graph()
    with ctx:
        v = tf.Variable(np.ones((2, 2), np.float32), name="v")
        ada = AdagradOptimizer(0.1, initial_accumulator_value=0.25)
        rms = RMSPropOptimizer(0.1, centered=True)
        loss = tf.reduce_sum(v)
        ada.minimize(loss)
        rms.minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(ada.get_slot(v, "accumulator")), 0.25)
            np.testing.assert_array_equal(sess.run(rms.get_slot(v, "rms")), 1.0)
            np.testing.assert_array_equal(sess.run(rms.get_slot(v, "mg")), 0.0)


def test_adam_variables_include_beta_powers_colocated_with_first_variable():
    g, ctx = _graph()
    with ctx:
        with tf.device("/job:ps/task:0"):
            b = tf.Variable([1.0], name="b")
        with tf.device("/job:ps/task:1"):
            a = tf.Variable([1.0], name="a")
        opt = AdamOptimizer(0.1)
        opt.minimize(tf.reduce_sum(a * b))
        names = [v.op.name for v in opt.variables()]
        assert names == ["a/Adam", "a/Adam_1", "b/Adam", "b/Adam_1", "beta1_power", "beta2_power"]
        beta1_power, beta2_power = opt._get_beta_accumulators()
        assert beta1_power.device == beta2_power.device == "/job:ps/task:1"
        assert not beta1_power.trainable
        assert beta1_power in tf.global_variables()
    with tf.Graph().as_default():
        assert opt.variables() == []


def test_adam_beta_powers_advance_once_per_step():
    g, ctx = _graph()
    with ctx:
        a = tf.Variable([1.0], name="a")
        b = tf.Variable([1.0], name="b")
        opt = AdamOptimizer(0.1, beta1=0.8, beta2=0.7)
        train = opt.minimize(tf.reduce_sum(a * b))
        beta1_power, beta2_power = opt._get_beta_accumulators()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_allclose(sess.run([beta1_power, beta2_power]), [0.8, 0.7])
            sess.run(train)
            np.testing.assert_allclose(sess.run([beta1_power, beta2_power]), [0.64, 0.49])


def test_minimize_increments_global_step_after_updates():
    g, ctx = _graph()
    with ctx:
        v = tf.Variable([1.0, 2.0], name="v")
        step = training_util.get_or_create_global_step()
        train = GradientDescentOptimizer(0.5).minimize(tf.reduce_sum(v), global_step=step)
        assert train.name == "GradientDescent" and train.type == "AssignAdd"
        finish = g.get_operation_by_name("GradientDescent/update")
        # The increment runs after the updates (through its `value` input, as in TF).
        assert finish in train.control_inputs + train.inputs[1].op.control_inputs
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(train)
            assert sess.run(step) == 3
            np.testing.assert_allclose(sess.run(v), [-0.5, 0.5])


def test_var_list_filters_and_none_gradients_are_skipped():
    g, ctx = _graph()
    with ctx:
        a = tf.Variable(1.0, name="a")
        b = tf.Variable(2.0, name="b")
        unused = tf.Variable(3.0, name="unused")
        loss = a * b
        opt = GradientDescentOptimizer(1.0)
        pairs = opt.compute_gradients(loss, var_list=[a, unused])
        assert [v for _, v in pairs] == [a, unused]
        assert pairs[1][0] is None
        train = opt.apply_gradients(pairs)
        assert not any("update_unused" in op.name for op in g.get_operations())
        assert not any("update_b" in op.name for op in g.get_operations())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            assert sess.run([a, b, unused]) == [-1.0, 2.0, 3.0]


def test_default_var_list_is_trainable_variables():
    g, ctx = _graph()
    with ctx:
        a = tf.Variable(1.0, name="a")
        frozen = tf.Variable(2.0, name="frozen", trainable=False)
        pairs = GradientDescentOptimizer(1.0).compute_gradients(a * frozen)
        assert [v for _, v in pairs] == [a]


def test_errors():
    g, ctx = _graph()
    with ctx:
        with pytest.raises(ValueError, match="Must specify the optimizer name"):
            GradientDescentOptimizer(0.1, name="")
        with pytest.raises(ValueError, match="initial_accumulator_value must be positive"):
            AdagradOptimizer(0.1, initial_accumulator_value=0.0)
        opt = GradientDescentOptimizer(0.1)
        c = tf.constant(1.0)
        with pytest.raises(ValueError, match="No variables to optimize."):
            opt.minimize(c * 2.0)
        a = tf.Variable(1.0, name="a")
        b = tf.Variable(2.0, name="b")
        with pytest.raises(ValueError, match="No gradients provided for any variable, check"):
            opt.minimize(b * 2.0, var_list=[a])
        with pytest.raises(ValueError, match=r"No gradients provided for any variable: \["):
            opt.apply_gradients([(None, a), (None, b)])
        with pytest.raises(ValueError, match="No variables provided."):
            opt.apply_gradients([])
        with pytest.raises(ValueError, match="gate_gradients must be one of"):
            opt.compute_gradients(a * 2.0, gate_gradients=7)
        with pytest.raises(ValueError, match="Invalid type tf.int32"):
            opt.compute_gradients(tf.constant(1), var_list=[a])
        with pytest.raises(NotImplementedError, match="unsupported type"):
            opt.compute_gradients(a * 2.0, var_list=[a, "x"])
        with pytest.raises(TypeError, match="Gradient must be convertible"):
            opt.apply_gradients([(object(), a)])


def test_tensor_in_var_list_gets_a_gradient_but_cannot_be_updated():
    g, ctx = _graph()
    with ctx:
        x = tf.constant(3.0)
        pairs = GradientDescentOptimizer(1.0).compute_gradients(x * x, var_list=[x])
        with tf.Session() as sess:
            assert sess.run(pairs[0][0]) == 6.0
        with pytest.raises(NotImplementedError, match="Trying to update a Tensor"):
            GradientDescentOptimizer(1.0).apply_gradients(pairs)


@pytest.mark.parametrize("gate", [Optimizer.GATE_NONE, Optimizer.GATE_OP, Optimizer.GATE_GRAPH])
def test_gate_gradients_modes_give_the_same_result(gate):
    g, ctx = _graph()
    with ctx:
        w = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="w")
        e = tf.Variable([[1.0], [2.0], [3.0]], name="e")
        loss = tf.reduce_sum(tf.matmul(w, w)) + tf.reduce_sum(tf.gather(e, [0, 0, 2]))
        train = GradientDescentOptimizer(0.1).minimize(loss, gate_gradients=gate)
        types = [op.type for op in g.get_operations()]
        if gate == Optimizer.GATE_GRAPH:
            assert g.get_operation_by_name("tuple/group_deps").type == "NoOp"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            np.testing.assert_allclose(sess.run(w), [[0.3, 0.9], [2.1, 2.7]], rtol=1e-6)
            np.testing.assert_allclose(sess.run(e), [[0.8], [2.0], [2.9]], rtol=1e-6)
        assert "ScatterSub" in types


def test_constraint_is_applied_after_dense_updates():
    g, ctx = _graph()
    with ctx:
        v = tf.Variable([1.0, -1.0], name="v", constraint=lambda x: tf.maximum(x, 0.0))
        train = GradientDescentOptimizer(1.0).minimize(tf.reduce_sum(v * v))
        with tf.Session() as sess:
            sess.run(v.initializer)
            sess.run(train)
            np.testing.assert_allclose(sess.run(v), [0.0, 1.0])


def test_minimize_inside_variable_and_name_scopes():
    g, ctx = _graph()
    with ctx:
        with tf.variable_scope("model"):
            v = tf.get_variable("v", [2], initializer=tf.ones_initializer())
        with tf.name_scope("train"):
            opt = MomentumOptimizer(0.1, 0.9)
            train = opt.minimize(tf.reduce_sum(v))
        assert opt.get_slot(v, "momentum").op.name == "model/v/Momentum"
        assert train.name == "train/Momentum"


def test_one_optimizer_twice_reuses_its_slots():
    g, ctx = _graph()
    with ctx:
        v = tf.Variable([1.0], name="v")
        opt = MomentumOptimizer(0.1, 0.9)
        opt.minimize(tf.reduce_sum(v))
        opt.minimize(tf.reduce_sum(v * 2.0))
        assert [s.op.name for s in opt.variables()] == ["v/Momentum"]
        other = MomentumOptimizer(0.1, 0.9)
        other.minimize(tf.reduce_sum(v))
        assert other.get_slot(v, "momentum").op.name == "v/Momentum_1"


def test_slot_creator_functions():
    g, ctx = _graph()
    with ctx:
        with tf.device("/job:ps/task:2"):
            v = tf.Variable(np.zeros((2, 3), np.float64), name="v")
        with tf.device("/job:worker/task:0"):
            zeros = slot_creator.create_zeros_slot(v, "dummy")
            given = slot_creator.create_slot(v, tf.constant([1, 2], tf.int32), "ints")
            free = slot_creator.create_slot(
                v, tf.constant([1.0]), "free", colocate_with_primary=False
            )
        assert zeros.op.name == "v/dummy" and zeros.dtype.base_dtype == tf.float64
        assert zeros.device == "/job:ps/task:2"
        assert given.op.name == "v/ints" and given.dtype.base_dtype == tf.int32
        assert given.device == "/job:ps/task:2"
        assert free.device == "/job:worker/task:0"


def test_slot_values_and_unknown_shape_primary():
    g, ctx = _graph()
    with ctx:
        v = tf.Variable(np.ones((2, 3), np.float64), name="v")
        p = tf.placeholder_with_default(np.ones((4,), np.float32), shape=[None])
        free = tf.Variable(p, validate_shape=False, name="free")
        zeros = slot_creator.create_zeros_slot(v, "dummy")
        given = slot_creator.create_slot(v, tf.constant([1, 2], tf.int32), "ints")
        dynamic = slot_creator.create_zeros_slot(free, "dyn")
        assert dynamic.op.name == "free/dyn"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(zeros), np.zeros((2, 3)))
            np.testing.assert_array_equal(sess.run(given), [1, 2])
            np.testing.assert_array_equal(sess.run(dynamic), np.zeros(4, np.float32))
