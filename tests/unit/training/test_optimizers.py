"""Each optimizer's updates against a NumPy reimplementation of TensorFlow's formulas, over
several steps, for dense gradients and for sparse ones (`tf.gather` with duplicate indices);
plus linear regression converging with every optimizer."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.kernels import training_kernels  # noqa: F401  (registers the kernels)
from tensorweave.training import training_util
from tensorweave.training.adagrad import AdagradOptimizer
from tensorweave.training.adam import AdamOptimizer
from tensorweave.training.gradient_descent import GradientDescentOptimizer
from tensorweave.training.momentum import MomentumOptimizer
from tensorweave.training.rmsprop import RMSPropOptimizer

STEPS = 4
VAR0 = np.array([[1.0, -2.0], [0.5, 3.0], [-1.5, 0.25], [2.0, -0.75]])
INDICES = np.array([2, 0, 2, 3], dtype=np.int32)  # row 2 twice, row 1 never


# ----------------------------------------------------------------- NumPy references
class GDRef:
    slots: tuple = ()

    def __init__(self, lr=0.3):
        self.lr = lr

    def make(self):
        return GradientDescentOptimizer(self.lr)

    def init(self, var):
        return []

    def update(self, var, slots, g, t):
        return var - self.lr * g, []


class MomentumRef:
    slots = ("momentum",)

    def __init__(self, lr=0.2, momentum=0.9, nesterov=False):
        self.lr, self.m, self.nesterov = lr, momentum, nesterov

    def make(self):
        return MomentumOptimizer(self.lr, self.m, use_nesterov=self.nesterov)

    def init(self, var):
        return [np.zeros_like(var)]

    def update(self, var, slots, g, t):
        accum = slots[0] * self.m + g
        if self.nesterov:
            return var - (g * self.lr + accum * self.m * self.lr), [accum]
        return var - self.lr * accum, [accum]


class AdagradRef:
    slots = ("accumulator",)

    def __init__(self, lr=0.5, init=0.1):
        self.lr, self.init_value = lr, init

    def make(self):
        return AdagradOptimizer(self.lr, initial_accumulator_value=self.init_value)

    def init(self, var):
        return [np.full_like(var, self.init_value)]

    def update(self, var, slots, g, t):
        accum = slots[0] + g * g
        return var - self.lr * g / np.sqrt(accum), [accum]


class AdamRef:
    slots = ("m", "v")

    def __init__(self, lr=0.1, beta1=0.9, beta2=0.999, eps=1e-8):
        self.lr, self.b1, self.b2, self.eps = lr, beta1, beta2, eps

    def make(self):
        return AdamOptimizer(self.lr, self.b1, self.b2, self.eps)

    def init(self, var):
        return [np.zeros_like(var), np.zeros_like(var)]

    def lr_t(self, t):
        return self.lr * np.sqrt(1 - self.b2**t) / (1 - self.b1**t)

    def update(self, var, slots, g, t):
        m = self.b1 * slots[0] + (1 - self.b1) * g
        v = self.b2 * slots[1] + (1 - self.b2) * g * g
        return var - self.lr_t(t) * m / (np.sqrt(v) + self.eps), [m, v]


class RMSPropRef:
    def __init__(self, lr=0.05, decay=0.9, momentum=0.5, eps=1e-10, centered=False):
        self.lr, self.rho, self.mom, self.eps, self.centered = lr, decay, momentum, eps, centered
        self.slots = ("rms", "mg", "momentum") if centered else ("rms", "momentum")

    def make(self):
        return RMSPropOptimizer(
            self.lr, decay=self.rho, momentum=self.mom, epsilon=self.eps, centered=self.centered
        )

    def init(self, var):
        slots = [np.ones_like(var), np.zeros_like(var)]
        return slots + [np.zeros_like(var)] if self.centered else slots

    def update(self, var, slots, g, t):
        ms = self.rho * slots[0] + (1 - self.rho) * g * g
        if self.centered:
            mg = self.rho * slots[1] + (1 - self.rho) * g
            mom = self.mom * slots[2] + self.lr * g / np.sqrt(ms - mg * mg + self.eps)
            return var - mom, [ms, mg, mom]
        mom = self.mom * slots[1] + self.lr * g / np.sqrt(ms + self.eps)
        return var - mom, [ms, mom]


REFS = {
    "sgd": GDRef(),
    "momentum": MomentumRef(),
    "nesterov": MomentumRef(nesterov=True),
    "adagrad": AdagradRef(),
    "adam": AdamRef(),
    "rmsprop": RMSPropRef(),
    "rmsprop_centered": RMSPropRef(centered=True),
}


def _sparse_reference(ref, var, slots, weights, t):
    """TF's sparse semantics: duplicate indices summed, only those rows change (Adam: the
    moments decay everywhere and `var` moves everywhere, as TF's `_apply_sparse`)."""
    unique = np.unique(INDICES)
    summed = np.stack([weights[INDICES == i].sum(axis=0) for i in unique])
    if isinstance(ref, AdamRef):
        m = ref.b1 * slots[0]
        v = ref.b2 * slots[1]
        m[unique] += (1 - ref.b1) * summed
        v[unique] += (1 - ref.b2) * summed * summed
        return var - ref.lr_t(t) * m / (np.sqrt(v) + ref.eps), [m, v]
    new_rows, new_slot_rows = ref.update(var[unique], [s[unique] for s in slots], summed, t)
    var, slots = var.copy(), [s.copy() for s in slots]
    var[unique] = new_rows
    for s, rows in zip(slots, new_slot_rows):
        s[unique] = rows
    return var, slots


def _run(ref, dtype, sparse):
    rng = np.random.RandomState(7)
    weights = rng.uniform(-1, 1, size=(len(INDICES) if sparse else VAR0.shape[0], 2))
    g = tf.Graph()
    with g.as_default():
        var = tf.Variable(VAR0.astype(dtype), name="var")
        w = tf.constant(weights.astype(dtype))
        x = tf.gather(var, INDICES) if sparse else var
        loss = tf.reduce_sum(x * w)
        opt = ref.make()
        train = opt.minimize(loss)
        slot_vars = [opt.get_slot(var, name) for name in ref.slots]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            want_var, want_slots = VAR0.copy(), ref.init(VAR0)
            dense_grad = weights
            for t in range(1, STEPS + 1):
                sess.run(train)
                if sparse:
                    want_var, want_slots = _sparse_reference(ref, want_var, want_slots, weights, t)
                else:
                    want_var, want_slots = ref.update(want_var, want_slots, dense_grad, t)
                got_var, got_slots = sess.run([var, slot_vars])
                tol = 1e-5  # hyper-parameters are float32 tensors, as in TensorFlow
                np.testing.assert_allclose(got_var, want_var, rtol=tol, atol=tol)
                for got, want in zip(got_slots, want_slots):
                    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
                assert got_var.dtype == dtype


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(REFS))
def test_dense_updates_match_numpy(name, dtype):
    _run(REFS[name], dtype, sparse=False)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(REFS))
def test_sparse_updates_with_duplicate_indices_match_numpy(name, dtype):
    _run(REFS[name], dtype, sparse=True)


def test_sparse_gradient_ops_are_the_sparse_kernels():
    want = {
        "sgd": "ScatterSub",
        "momentum": "SparseApplyMomentum",
        "adagrad": "SparseApplyAdagrad",
        "rmsprop": "SparseApplyRMSProp",
        "rmsprop_centered": "SparseApplyCenteredRMSProp",
        "adam": "ScatterAdd",
    }
    for name, op_type in want.items():
        g = tf.Graph()
        with g.as_default():
            var = tf.Variable(VAR0, name="var")
            REFS[name].make().minimize(tf.reduce_sum(tf.gather(var, INDICES)))
            types = {op.type for op in g.get_operations() if "update_var" in op.name}
            assert op_type in types, (name, types)


def test_learning_rate_tensor_and_callable():
    for lr in (lambda: 0.3, lambda: tf.constant(0.3), None):
        g = tf.Graph()
        with g.as_default():
            var = tf.Variable([1.0, 2.0])
            rate = tf.placeholder(tf.float32, []) if lr is None else lr
            train = GradientDescentOptimizer(rate).minimize(tf.reduce_sum(var * var))
            with tf.Session() as sess:
                sess.run(var.initializer)
                sess.run(train, {rate: 0.3} if lr is None else None)
                np.testing.assert_allclose(sess.run(var), [0.4, 0.8], rtol=1e-6)


def test_float64_variable_with_float32_learning_rate_tensor_casts():
    g = tf.Graph()
    with g.as_default():
        var = tf.Variable(np.array([1.0, 2.0]))
        train = MomentumOptimizer(tf.constant(0.5), 0.9).minimize(tf.reduce_sum(var))
        assert any(op.type == "Cast" for op in g.get_operations())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            np.testing.assert_allclose(sess.run(var), [0.5, 1.5])


@pytest.mark.parametrize(
    "make",
    [
        lambda: GradientDescentOptimizer(0.1),
        lambda: MomentumOptimizer(0.05, 0.9),
        lambda: MomentumOptimizer(0.05, 0.9, use_nesterov=True),
        lambda: AdagradOptimizer(0.5),
        lambda: AdamOptimizer(0.1),
        lambda: RMSPropOptimizer(0.02),
        lambda: RMSPropOptimizer(0.02, momentum=0.5, centered=True),
    ],
)
def test_linear_regression_converges(make):
    rng = np.random.RandomState(0)
    xs = rng.uniform(-1, 1, size=(64, 3)).astype(np.float32)
    true_w = np.array([[2.0], [-3.0], [0.5]], dtype=np.float32)
    ys = xs @ true_w + 1.0
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        y = tf.placeholder(tf.float32, [None, 1])
        w = tf.Variable(tf.zeros([3, 1]), name="w")
        b = tf.Variable(0.0, name="b")
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        step = training_util.get_or_create_global_step()
        train = make().minimize(loss, global_step=step)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            first = sess.run(loss, {x: xs, y: ys})
            for _ in range(400):
                sess.run(train, {x: xs, y: ys})
            last = sess.run(loss, {x: xs, y: ys})
            assert sess.run(step) == 400
    assert last < 1e-2 * first, (first, last)
