"""Run as `python <script> tf|tw`: builds the same graph with TensorFlow (tf.compat.v1) or
tensorweave and prints the fetched values as JSON (used by tests/interop)."""

import json
import sys

import numpy as np

if sys.argv[1] == "tf":
    import tensorflow.compat.v1 as tf

    tf.disable_eager_execution()
    tf.disable_resource_variables()
else:
    import tensorweave as tf
res = {}


def run(name, make, sparse=False, steps=3, dtype=np.float32):
    g = tf.Graph()
    with g.as_default():
        gs = tf.train.get_or_create_global_step()
        v = tf.Variable(np.array([[1.0, -2.0], [0.5, 0.1], [-0.3, 3.0]], dtype), name="w")
        x = tf.constant(np.array([[0.2, -0.7], [1.5, 0.4]], dtype))
        if sparse:
            loss = tf.reduce_sum(tf.square(tf.gather(v, [2, 0]) * x) + tf.gather(v, [2, 0]))
        else:
            loss = tf.reduce_sum(tf.square(tf.matmul(x, v[:2]))) + tf.reduce_sum(v * v[::-1])
        opt = make(gs)
        train = opt.minimize(loss, global_step=gs)
        names = sorted(vv.op.name for vv in tf.global_variables())
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            for _ in range(steps):
                s.run(train)
            res[name] = {
                "w": s.run(v).tolist(),
                "vars": names,
                "slots": {n: s.run(opt.get_slot(v, n)).tolist() for n in opt.get_slot_names()},
            }


T = tf.train
cases = {
    "adadelta": lambda gs: T.AdadeltaOptimizer(1.0, rho=0.9, epsilon=1e-3),
    "pgd": lambda gs: T.ProximalGradientDescentOptimizer(0.1),
    "pgd_l1l2": lambda gs: T.ProximalGradientDescentOptimizer(
        0.1, l1_regularization_strength=0.3, l2_regularization_strength=0.2
    ),
    "padagrad": lambda gs: T.ProximalAdagradOptimizer(0.5, initial_accumulator_value=0.2),
    "padagrad_l1l2": lambda gs: T.ProximalAdagradOptimizer(
        0.5, l1_regularization_strength=0.1, l2_regularization_strength=0.4
    ),
    "da": lambda gs: T.AdagradDAOptimizer(0.5, gs),
    "da_l1l2": lambda gs: T.AdagradDAOptimizer(
        0.5, gs, l1_regularization_strength=0.05, l2_regularization_strength=0.1
    ),
    "ftrl": lambda gs: T.FtrlOptimizer(0.3),
    "ftrl_l1l2": lambda gs: T.FtrlOptimizer(
        0.3,
        learning_rate_power=-0.7,
        l1_regularization_strength=0.2,
        l2_regularization_strength=0.1,
    ),
    "ftrl_shrink": lambda gs: T.FtrlOptimizer(
        0.3, l1_regularization_strength=0.1, l2_shrinkage_regularization_strength=0.5, beta=0.2
    ),
    "ftrl_names": lambda gs: T.FtrlOptimizer(0.3, accum_name="acc", linear_name="lin"),
}
for k, mk in cases.items():
    run(k, mk)
    run(k + "_sparse", mk, sparse=True)
run("ftrl_f32", cases["ftrl_l1l2"], dtype=np.float32)
print(json.dumps(res))
