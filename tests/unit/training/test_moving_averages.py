"""tf.train.ExponentialMovingAverage: shadow variables, num_updates, zero_debias on
tensors, variables_to_restore and average_name against TensorFlow 2.21 (results recorded
from the same graph, reference variables)."""

import json

import pytest

import tensorweave as tf

EXPECTED = {
    "names": [
        "other",
        "step",
        "tensor/Avg",
        "tensor/Avg/biased",
        "tensor/Avg/local_step",
        "v0",
        "v0/ExponentialMovingAverage",
        "v1",
        "v1/ExponentialMovingAverage",
    ],
    "ma_vars": ["v0", "v1"],
    "restore": [
        ["other", "other"],
        ["step", "step"],
        ["tensor/Avg", "tensor/Avg"],
        ["tensor/Avg/biased", "tensor/Avg/biased"],
        ["tensor/Avg/local_step", "tensor/Avg/local_step"],
        ["v0/ExponentialMovingAverage", "v0"],
        ["v1/ExponentialMovingAverage", "v1"],
    ],
    "avg_name": [
        "v0/ExponentialMovingAverage",
        "other/ExponentialMovingAverage",
        "ExponentialMovingAverage",
    ],
    "values": [
        [[1.0, 2.90000057220459], 7.5, [2.0, 0.0]],
        [[1.0, 1.3454546928405762], 6.272727012634277, [3.3333332538604736, -1.3333333730697632]],
        [[1.75, 0.33636367321014404], 6.818181991577148, [4.857142925262451, -2.857142925262451]],
    ],
}


def test_matches_tensorflow():
    res = {}
    g = tf.Graph()
    with g.as_default():
        step = tf.Variable(0, name="step", trainable=False)
        v0 = tf.Variable([10.0, 11.0], name="v0")
        v1 = tf.Variable(30.0, name="v1")
        other = tf.Variable(1.0, name="other", trainable=False)
        t = tf.placeholder(tf.float32, [2], name="t")
        tensor = tf.identity(t * 2.0, name="tensor")
        ema = tf.train.ExponentialMovingAverage(0.25, num_updates=step)
        up = ema.apply([v0, v1])
        ema2 = tf.train.ExponentialMovingAverage(0.5, zero_debias=True, name="Avg")
        up2 = ema2.apply([tensor])
        inc = tf.assign_add(step, 1)
        res["names"] = sorted(v.op.name for v in tf.global_variables())
        res["ma_vars"] = [v.op.name for v in tf.moving_average_variables()]
        res["restore"] = sorted((k, v.op.name) for k, v in ema.variables_to_restore().items())
        res["avg_name"] = [ema.average_name(v0), ema.average_name(other), up.name]
        with tf.Session() as s:
            s.run([v0.initializer, v1.initializer, step.initializer, other.initializer])
            s.run(tf.global_variables_initializer())
            out = []
            for i in range(3):
                s.run([tf.assign(v0, [1.0 * i, 2.0 - i]), tf.assign(v1, 5.0 + i)])
                s.run([up, up2], {t: [1.0 + i, -i]})
                s.run(inc)
                out.append(
                    [
                        s.run(ema.average(v0)).tolist(),
                        float(s.run(ema.average(v1))),
                        s.run(ema2.average(tensor)).tolist(),
                    ]
                )
            res["values"] = out
    assert json.loads(json.dumps(res)) == EXPECTED  # tuples as lists


def test_rejects_integer_variables():
    with tf.Graph().as_default():
        v = tf.Variable(1, name="i")
        with pytest.raises(TypeError, match="must be half, float, or double: i"):
            tf.train.ExponentialMovingAverage(0.9).apply([v])


def test_apply_defaults_to_trainable_variables():
    with tf.Graph().as_default():
        a = tf.Variable(2.0, name="a")
        tf.Variable(3.0, name="b", trainable=False)
        ema = tf.train.ExponentialMovingAverage(0.5)
        op = ema.apply()
        assert ema.average(a).op.name == "a/ExponentialMovingAverage"
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            s.run(tf.assign(a, 4.0))
            s.run(op)
            assert s.run(ema.average(a)) == 3.0
