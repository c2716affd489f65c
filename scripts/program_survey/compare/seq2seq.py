"""The model shape of golbin/TensorFlow-Tutorials' ChatBot and Seq2Seq (rebuilt here):
encoder `dynamic_rnn`, its final state as the decoder's initial state, `tf.layers.dense`,
sparse softmax cross entropy, Adam; CELL=lstm (3-layer MultiRNNCell of
DropoutWrapper(BasicLSTMCell), keep 1) or CELL=rnn (BasicRNNCell). The weights come from
seeded NumPy; prints 8 step costs and the accuracy.
"""

import os

import numpy as np
from backend import tf

V, H, B, TE, TD = 30, 16, 6, 5, 7
rng = np.random.RandomState(1)
enc = np.eye(V, dtype=np.float32)[rng.randint(0, V, (B, TE))]
dec = np.eye(V, dtype=np.float32)[rng.randint(0, V, (B, TD))]
tgt = rng.randint(0, V, (B, TD)).astype(np.int64)
enc_in = tf.placeholder(tf.float32, [None, None, V])
dec_in = tf.placeholder(tf.float32, [None, None, V])
targets = tf.placeholder(tf.int64, [None, None])


def cell():
    if os.environ.get("CELL", "lstm") == "rnn":
        return tf.nn.rnn_cell.BasicRNNCell(H)
    return tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.DropoutWrapper(
        tf.nn.rnn_cell.BasicLSTMCell(H), output_keep_prob=1.0) for _ in range(3)])


with tf.variable_scope("encode"):
    _, state = tf.nn.dynamic_rnn(cell(), enc_in, dtype=tf.float32)
with tf.variable_scope("decode"):
    outputs, _ = tf.nn.dynamic_rnn(cell(), dec_in, initial_state=state, dtype=tf.float32)
logits = tf.layers.dense(outputs, V)
cost = tf.reduce_mean(
    tf.nn.sparse_softmax_cross_entropy_with_logits(logits=logits, labels=targets))
train = tf.train.AdamOptimizer(0.01).minimize(cost)
accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 2), targets), tf.float32))
feed = {enc_in: enc, dec_in: dec, targets: tgt}
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for v in sorted(tf.trainable_variables(), key=lambda v: v.name):
        v.load((rng.randn(*v.get_shape().as_list()) * 0.3).astype(np.float32), sess)
    for i in range(8):
        _, c = sess.run([train, cost], feed)
        print(i, f"{c:.7f}")
    print("accuracy", sess.run(accuracy, feed))
