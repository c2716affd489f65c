"""Event files move between tensorweave and TensorFlow: scalars, histograms and graphs that one
side writes with `tf.summary.*` + `FileWriter` are read back by the other's
`summary_iterator` with identical values."""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.protos import graph_pb2
from tests.interop.conftest import run_tf

pytestmark = pytest.mark.interop

TF_READ = """
import glob
path = glob.glob(sys.argv[1] + "/events.out.tfevents.*")[0]
out = {"scalars": [], "histo": None, "graph_ops": []}
for event in tf.train.summary_iterator(path):
    if event.HasField("graph_def"):
        g = tf.GraphDef()
        g.ParseFromString(event.graph_def)
        out["graph_ops"] = sorted(n.op for n in g.node)
    for v in event.summary.value:
        if v.HasField("simple_value"):
            out["scalars"].append([event.step, v.tag, v.simple_value])
        if v.HasField("histo"):
            out["histo"] = [v.histo.min, v.histo.max, v.histo.num, v.histo.sum]
print(json.dumps(out))
"""

TF_WRITE = """
import numpy as np
logdir = sys.argv[1]
x = tf.placeholder(tf.float32, [], name="x")
s = tf.summary.scalar("loss", x)
h = tf.summary.histogram("w", tf.constant([1.0, 2.0, 4.0]))
merged = tf.summary.merge_all()
writer = tf.summary.FileWriter(logdir, tf.get_default_graph())
with tf.Session() as sess:
    for step in range(3):
        writer.add_summary(sess.run(merged, {x: 0.5 * step}), step)
writer.close()
print(json.dumps({"ok": True}))
"""


def test_tensorweave_events_read_in_tensorflow(tf_python, tmp_path):
    logdir = str(tmp_path / "tw")
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [], name="x")
        tf.summary.scalar("loss", x)
        tf.summary.histogram("w", tf.constant([1.0, 2.0, 4.0]))
        merged = tf.summary.merge_all()
        writer = tf.summary.FileWriter(logdir, g)
        with tf.Session() as sess:
            for step in range(3):
                writer.add_summary(sess.run(merged, {x: 0.5 * step}), step)
        writer.close()
    got = run_tf(tf_python, TF_READ, logdir)
    assert got["scalars"] == [[0, "loss", 0.0], [1, "loss", 0.5], [2, "loss", 1.0]]
    assert got["histo"] == [1.0, 4.0, 3.0, 7.0]
    assert "Placeholder" in got["graph_ops"] and "HistogramSummary" in got["graph_ops"]


def test_tensorflow_events_read_in_tensorweave(tf_python, tmp_path):
    logdir = str(tmp_path / "tf")
    run_tf(tf_python, TF_WRITE, logdir)
    (path,) = glob.glob(os.path.join(logdir, "events.out.tfevents.*"))
    scalars, histo, graph_ops = [], None, []
    for event in tf.train.summary_iterator(path):
        if event.HasField("graph_def"):
            g = graph_pb2.GraphDef.FromString(event.graph_def)
            graph_ops = sorted(n.op for n in g.node)
        for v in event.summary.value:
            if v.HasField("simple_value"):
                scalars.append((event.step, v.tag, v.simple_value))
            if v.HasField("histo"):
                histo = (v.histo.min, v.histo.max, v.histo.num, v.histo.sum)
    assert scalars == [(0, "loss", 0.0), (1, "loss", 0.5), (2, "loss", 1.0)]
    assert histo == (1.0, 4.0, 3.0, 7.0)
    assert "ScalarSummary" in graph_ops
    # The graph TF wrote imports and runs here.
    with tf.Graph().as_default():
        tf.import_graph_def(g, name="")
        with tf.Session() as sess:
            assert sess.run("Const:0").tolist() == [1.0, 2.0, 4.0]
    np.testing.assert_allclose([s[2] for s in scalars], [0.0, 0.5, 1.0])
