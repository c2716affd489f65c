"""GraphDefs written by TensorFlow 2.x's `compat.v1` (resource variables by default) run in
tensorweave with the same values, and tensorweave's run in TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.protos import graph_pb2
from tests.interop.conftest import run_tf

pytestmark = pytest.mark.interop

RNG = np.random.default_rng(3)
X = RNG.normal(size=(16, 6)).astype(np.float32)
Y = RNG.integers(0, 3, size=16).astype(np.int64)

TF_TRAIN = """
import numpy as np
out_path, opt_name = sys.argv[1], sys.argv[2]
data = np.load(out_path + ".npz")
tf.set_random_seed(0)
x = tf.placeholder(tf.float32, [None, 6], name="x")
y = tf.placeholder(tf.int64, [None], name="y")
w1 = tf.get_variable("w1", initializer=tf.constant(data["w1"]))
b1 = tf.get_variable("b1", initializer=tf.zeros([8]))
w2 = tf.get_variable("w2", initializer=tf.constant(data["w2"]))
h = tf.nn.relu(tf.matmul(x, w1) + b1)
logits = tf.matmul(h, w2)
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits),
                      name="loss")
opt = {"sgd": tf.train.GradientDescentOptimizer(0.5), "adam": tf.train.AdamOptimizer(0.05),
       "momentum": tf.train.MomentumOptimizer(0.1, 0.9)}[opt_name]
step = tf.train.get_or_create_global_step()
train = opt.minimize(loss, global_step=step, name="train")
init = tf.global_variables_initializer()
assert w1.op.type == "VarHandleOp", w1.op.type
with open(out_path + ".pb", "wb") as f:
    f.write(tf.get_default_graph().as_graph_def().SerializeToString())
losses = []
with tf.Session() as sess:
    sess.run(init)
    for _ in range(5):
        losses.append(float(sess.run([loss, train], {x: data["x"], y: data["y"]})[0]))
    final = sess.run([w1, w2, step])
print(json.dumps({"init": init.name, "losses": losses, "w1": final[0].tolist(),
                  "w2": final[1].tolist(), "step": int(final[2])}))
"""


@pytest.mark.parametrize("opt", ["sgd", "adam", "momentum"])
def test_tensorflow_resource_variable_training_graph_runs_in_tensorweave(tf_python, tmp_path,
                                                                          opt):
    base = str(tmp_path / "g")
    w1 = RNG.normal(size=(6, 8)).astype(np.float32) * 0.5
    w2 = RNG.normal(size=(8, 3)).astype(np.float32) * 0.5
    np.savez(base + ".npz", x=X, y=Y, w1=w1, w2=w2)
    want = run_tf(tf_python, TF_TRAIN, base, opt)
    graph_def = graph_pb2.GraphDef()
    with open(base + ".pb", "rb") as f:
        graph_def.ParseFromString(f.read())
    with tf.Graph().as_default():
        tf.import_graph_def(graph_def, name="")
        with tf.Session() as sess:
            sess.run(want["init"])
            losses = [
                float(sess.run(["loss:0", "train"], {"x:0": X, "y:0": Y})[0]) for _ in range(5)
            ]
            got_w1, got_w2 = sess.run(["w1/Read/ReadVariableOp:0", "w2/Read/ReadVariableOp:0"])
    np.testing.assert_allclose(losses, want["losses"], rtol=2e-5)
    np.testing.assert_allclose(got_w1, want["w1"], rtol=2e-4, atol=1e-6)
    np.testing.assert_allclose(got_w2, want["w2"], rtol=2e-4, atol=1e-6)
