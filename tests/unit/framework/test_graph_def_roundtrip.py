"""A graph using every core op survives GraphDef serialization: imported into a fresh graph
it computes the same values (and, where TensorFlow is installed, TensorFlow agrees)."""

import numpy as np
import pytest

import tensorweave as tf


def _build():
    """Builds a graph with every op of the core runtime; returns the fetch names."""
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    d = tf.placeholder_with_default(tf.constant([1.0, 2.0, 3.0]), [3], name="d")
    v = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="v")
    init = tf.global_variables_initializer()
    upd = tf.group(tf.assign_add(v, tf.ones([2, 3])), name="upd")
    a = tf.abs(x) + 1.0
    math = [a + d, a - d, a * d, a / d, tf.floordiv(a, d), -a, tf.square(a), tf.sqrt(a),
            tf.rsqrt(a), tf.exp(a / 10), tf.log(a), tf.sign(x), tf.pow(a, 2.0),
            tf.maximum(a, d), tf.minimum(a, d)]
    comp = [tf.less(a, d), tf.less_equal(a, d), tf.greater(a, d), tf.greater_equal(a, d),
            tf.equal(a, d), tf.not_equal(a, d)]
    logic = [tf.logical_and(comp[0], comp[1]), tf.logical_or(comp[0], comp[2]),
             tf.logical_not(comp[0])]
    red = [tf.reduce_sum(a, 1), tf.reduce_mean(a, 0, keepdims=True), tf.reduce_max(a),
           tf.reduce_min(a, 1), tf.reduce_prod(a, 0), tf.reduce_all(comp[0]),
           tf.reduce_any(comp[0], 1), tf.argmax(a, 1), tf.argmin(a, 0)]
    arr = [tf.reshape(a, [3, 2]), tf.shape(a), tf.size(a), tf.rank(a), tf.expand_dims(a, 0),
           tf.squeeze(tf.expand_dims(a, 0), [0]), tf.transpose(a), tf.concat([a, a], 0),
           tf.stack([a, a]), tf.unstack(a)[1], tf.fill([2, 2], 7.0), tf.zeros_like(a),
           tf.ones_like(a), tf.tile(a, [2, 1]), tf.slice(a, [0, 1], [2, 2]), a[:, ::-1],
           a[1], tf.gather(d, [2, 0]), tf.one_hot([0, 2], 3), tf.where(comp[0], a, -a),
           tf.where(comp[0]), tf.boolean_mask(d, [True, False, True]), tf.range(1, 7, 2),
           tf.cast(a, tf.int32), tf.matmul(a, tf.transpose(a)),
           tf.matmul(tf.stack([a, a]), tf.stack([tf.transpose(a)] * 2))]
    rand = [tf.random_uniform([2], seed=1), tf.random_normal([2], seed=2),
            tf.truncated_normal([2], seed=3), tf.random_shuffle(tf.range(5), seed=4)]
    checked = tf.Print(a, [a], message="value: ")
    with tf.control_dependencies([tf.Assert(tf.reduce_all(a > 0), [a])]):
        asserted = tf.identity(checked)
    w = tf.Variable(tf.zeros([4]), name="w")
    scat = [tf.scatter_update(w, [0], [1.0]), tf.scatter_add(w, [1], [2.0]),
            tf.scatter_sub(w, [2], [3.0])]
    state = [tf.assign(w, tf.ones([4])), tf.assign_sub(w, tf.ones([4])),
             tf.is_variable_initialized(w)]
    tensors = math + comp + logic + red + arr + rand + [asserted, tf.identity(v), d]
    names = {
        "values": [t.name for t in tensors],
        "init": [init.name, w.initializer.name],
        "updates": [upd.name] + [t.name for t in state[:1] + scat + state[1:2]],
        "state": [state[2].name, v.name, w.name],
    }
    return names


def _run(graph, names, sess):
    feed = {"x:0": np.array([[1.0, -2.0, 3.0], [-4.0, 5.0, 0.5]], np.float32)}
    sess.run(names["init"])
    values = sess.run(names["values"], feed)
    for u in names["updates"]:
        sess.run(u)
    return values + sess.run(names["state"])


def test_graph_def_round_trip_same_results():
    g1 = tf.Graph()
    with g1.as_default():
        names = _build()
    op_types = {op.type for op in g1.get_operations()}
    for t in ("Const", "Placeholder", "PlaceholderWithDefault", "VariableV2", "Assign",
              "AssignAdd", "AssignSub", "ScatterUpdate", "ScatterAdd", "ScatterSub",
              "IsVariableInitialized", "NoOp", "StridedSlice", "GatherV2", "OneHot", "Select",
              "Where", "Range", "BatchMatMulV2", "RandomUniform", "RandomStandardNormal",
              "TruncatedNormal", "RandomShuffle", "Print", "Assert", "Pack", "Unpack"):
        assert t in op_types, t
    data = g1.as_graph_def().SerializeToString()
    from tensorweave.protos import graph_pb2

    g2 = tf.Graph()
    with g2.as_default():
        tf.import_graph_def(graph_pb2.GraphDef.FromString(data), name="")
    with tf.Session(graph=g1) as s1, tf.Session(graph=g2) as s2:
        r1, r2 = _run(g1, names, s1), _run(g2, names, s2)
    assert len(r1) == len(r2)
    for i, (a, b) in enumerate(zip(r1, r2)):
        np.testing.assert_array_equal(a, b, err_msg=f"fetch {i}")


def test_graph_def_imports_into_tensorflow():
    tensorflow = pytest.importorskip("tensorflow")
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.reduce_sum(tf.matmul(x, tf.constant(np.eye(3, dtype=np.float32))) * 2.0, 1,
                          name="y")
    data = g.as_graph_def().SerializeToString()
    tf1 = tensorflow.compat.v1
    gd = tf1.GraphDef.FromString(data)
    with tf1.Graph().as_default() as tg:
        tf1.import_graph_def(gd, name="")
        with tf1.Session(graph=tg) as sess:
            out = sess.run("y:0", {"x:0": [[1.0, 2.0, 3.0]]})
    with tf.Session(graph=g) as sess:
        ours = sess.run(y, {x: [[1.0, 2.0, 3.0]]})
    np.testing.assert_allclose(out, ours)
