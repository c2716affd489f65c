"""Run as `python <script> tf|tw`: builds the same graph with TensorFlow (tf.compat.v1) or
tensorweave and prints the fetched values as JSON (used by tests/interop)."""

import json
import sys

if sys.argv[1] == "tf":
    import tensorflow.compat.v1 as tf

    tf.disable_eager_execution()
    tf.disable_resource_variables()
else:
    import tensorweave as tf
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
print(json.dumps(res))
