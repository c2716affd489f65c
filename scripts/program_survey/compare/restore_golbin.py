"""Restores the TensorFlow-written checkpoint that golbin/TensorFlow-Tutorials ships in
`05 - TensorBoard, Saver/model/` into the model of its `02 - TensorBoard.py` (rebuilt
here), prints the cost and 3 Adam steps. Same output expected from both backends.

    python restore_golbin.py "$SURVEY_DIR/golbin/05 - TensorBoard, Saver"
"""

import os
import sys

import numpy as np
from backend import tf

folder = sys.argv[1]
data = np.loadtxt(os.path.join(folder, "data.csv"), delimiter=",", unpack=True, dtype="float32")
x_data, y_data = data[0:2].T, data[2:].T
global_step = tf.Variable(0, trainable=False, name="global_step")
X = tf.placeholder(tf.float32)
Y = tf.placeholder(tf.float32)
h = X
for scope, name, shape in [("layer1", "W1", [2, 10]), ("layer2", "W2", [10, 20]),
                           ("output", "W3", [20, 3])]:
    with tf.name_scope(scope):
        w = tf.Variable(tf.random_uniform(shape, -1.0, 1.0), name=name)
        h = tf.matmul(h, w) if scope == "output" else tf.nn.relu(tf.matmul(h, w))
with tf.name_scope("optimizer"):
    cost = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=Y, logits=h))
    train_op = tf.train.AdamOptimizer(learning_rate=0.01).minimize(cost, global_step=global_step)
sess = tf.Session()
tf.train.Saver(tf.global_variables()).restore(sess, os.path.join(folder, "model", "dnn.ckpt-100"))
feed = {X: x_data, Y: y_data}
print("step", sess.run(global_step), f"cost {sess.run(cost, feed):.9f}")
for _ in range(3):
    sess.run(train_op, feed)
    print("step", sess.run(global_step), f"cost {sess.run(cost, feed):.9f}")
print("W1[0]", np.array2string(sess.run(tf.global_variables()[1])[0], precision=9))
