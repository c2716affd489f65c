"""The conv net of nlintz/TensorFlow-Tutorials' `05_convolutional_net.py` (rebuilt here)
with its weights drawn from seeded NumPy and keep probability 1, trained STEPS (default 12)
RMSProp steps on the digits stand-in; prints the cost of each step.

    PYTHONPATH=../shim STEPS=80 python conv_nlintz.py
"""

import os

import input_data
import numpy as np
from backend import tf

rng = np.random.RandomState(0)
mnist = input_data.read_data_sets("MNIST_data/", one_hot=True)
images, labels = mnist.train.images.reshape(-1, 28, 28, 1), mnist.train.labels
shapes = [[3, 3, 1, 32], [3, 3, 32, 64], [3, 3, 64, 128], [2048, 625], [625, 10]]
W = [tf.Variable((rng.randn(*s) * 0.01).astype(np.float32)) for s in shapes]
X = tf.placeholder("float", [None, 28, 28, 1])
Y = tf.placeholder("float", [None, 10])
keep = tf.placeholder("float")


def conv_pool(x, w):
    y = tf.nn.relu(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"))
    return tf.nn.max_pool(y, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")


h = tf.nn.dropout(conv_pool(X, W[0]), keep)
h = tf.nn.dropout(conv_pool(h, W[1]), keep)
h = tf.nn.dropout(tf.reshape(conv_pool(h, W[2]), [-1, 2048]), keep)
h = tf.nn.dropout(tf.nn.relu(tf.matmul(h, W[3])), keep)
logits = tf.matmul(h, W[4])
cost = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=logits, labels=Y))
train = tf.train.RMSPropOptimizer(0.001, 0.9).minimize(cost)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(int(os.environ.get("STEPS", 12))):
        a = (i * 128) % 5120
        _, c = sess.run([train, cost], {X: images[a:a + 128], Y: labels[a:a + 128], keep: 1.0})
        print(i, f"{c:.7f}")
