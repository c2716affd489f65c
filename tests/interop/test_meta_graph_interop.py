"""Meta graphs and checkpoints move between tensorweave and TensorFlow: a `.meta` written by
one side is imported by the other (`import_meta_graph`), its saver restores the checkpoint
and training goes on with the same values."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tests.interop.conftest import run_tf

pytestmark = pytest.mark.interop

TF_CONTINUE = """
import numpy as np
prefix = sys.argv[1]
saver = tf.train.import_meta_graph(prefix + ".meta")
with tf.Session() as sess:
    saver.restore(sess, prefix)
    w = sess.run("w:0")
    loss = [float(sess.run(["loss:0", "train"])[0]) for _ in range(3)]
print(json.dumps({"w": w.tolist(), "loss": loss}))
"""

TF_WRITE = """
import numpy as np
prefix = sys.argv[1]
w = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3) / 10, name="w",
                use_resource=False)
x = tf.constant(np.ones((4, 2), np.float32))
loss = tf.reduce_sum(tf.square(tf.matmul(x, w)), name="loss")
train = tf.train.GradientDescentOptimizer(0.01).minimize(loss, name="train")
saver = tf.train.Saver()
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    sess.run(train)
    saver.save(sess, prefix)
    loss_after = [float(sess.run([loss, train])[0]) for _ in range(3)]
print(json.dumps({"loss": loss_after}))
"""


def test_tensorweave_meta_graph_and_checkpoint_continue_in_tensorflow(tf_python, tmp_path):
    prefix = str(tmp_path / "tw" / "model")
    with tf.Graph().as_default():
        w = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3) / 10, name="w")
        x = tf.constant(np.ones((4, 2), np.float32))
        loss = tf.reduce_sum(tf.square(tf.matmul(x, w)), name="loss")
        train = tf.train.GradientDescentOptimizer(0.01).minimize(loss, name="train")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            saved_w = sess.run(w)
            saver.save(sess, prefix)
            want = [float(sess.run([loss, train])[0]) for _ in range(3)]
    got = run_tf(tf_python, TF_CONTINUE, prefix)
    np.testing.assert_allclose(got["w"], saved_w)
    np.testing.assert_allclose(got["loss"], want, rtol=1e-6)


def test_tensorflow_meta_graph_and_checkpoint_continue_in_tensorweave(tf_python, tmp_path):
    (tmp_path / "tf").mkdir()
    prefix = str(tmp_path / "tf" / "model")
    want = run_tf(tf_python, TF_WRITE, prefix)
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(prefix + ".meta")
        with tf.Session() as sess:
            saver.restore(sess, prefix)
            got = [float(sess.run(["loss:0", "train"])[0]) for _ in range(3)]
    np.testing.assert_allclose(got, want["loss"], rtol=1e-6)
