"""GraphDefs with `while_loop`, `cond`, TensorArrays and loop gradients cross between
tensorweave and a real TensorFlow (TF 1.x control flow: Switch/Merge/Enter/Exit/...).

TensorFlow runs in its own process, found through TENSORWEAVE_TF_PYTHON (a Python with
tensorflow installed); without it these tests are skipped.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.protos import graph_pb2

pytestmark = pytest.mark.interop

TF_PYTHON = os.environ.get("TENSORWEAVE_TF_PYTHON", "")

_PRELUDE = """
import json, os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_eager_execution()
tf.disable_control_flow_v2()
tf.disable_resource_variables()
"""


def _run_tf(script: str, tmp_path) -> dict:
    if not TF_PYTHON or not os.access(TF_PYTHON, os.X_OK):
        pytest.skip("TENSORWEAVE_TF_PYTHON does not name a Python with tensorflow")
    path = tmp_path / "tf_side.py"
    path.write_text(_PRELUDE + textwrap.dedent(script))
    proc = subprocess.run([TF_PYTHON, str(path)], capture_output=True, text=True,
                          timeout=240, cwd=tmp_path)
    if proc.returncode != 0:
        raise AssertionError(f"TensorFlow side failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _build_loop_and_cond():
    x = tf.placeholder(tf.float32, [3], name="x")
    n = tf.placeholder(tf.int32, [], name="n")

    def body(i, acc):
        step = tf.cond(tf.equal(i % 2, 0), lambda: acc * 1.5, lambda: acc - x)
        return i + 1, step

    _, acc = tf.while_loop(lambda i, a: i < n, body, [tf.constant(0), x])
    tf.identity(acc, name="out")
    tf.identity(tf.cond(n > 3, lambda: tf.reduce_sum(acc), lambda: -1.0), name="total")


def test_tensorweave_graphdef_runs_in_tensorflow(tmp_path):
    g = tf.Graph()
    with g.as_default():
        _build_loop_and_cond()
    (tmp_path / "tw.pb").write_bytes(g.as_graph_def().SerializeToString())
    feeds = {"x:0": [1.0, -2.0, 0.5], "n:0": 5}
    with tf.Session(graph=g) as sess:
        ours = sess.run(["out:0", "total:0"], feeds)
        ours_short = sess.run(["out:0", "total:0"], {**feeds, "n:0": 2})
    theirs = _run_tf("""
        gd = tf.GraphDef()
        gd.ParseFromString(open("tw.pb", "rb").read())
        tf.import_graph_def(gd, name="")
        with tf.Session() as sess:
            res = []
            for n in (5, 2):
                out, total = sess.run(["out:0", "total:0"],
                                      {"x:0": [1.0, -2.0, 0.5], "n:0": n})
                res.append([out.tolist(), float(total)])
        print(json.dumps(res))
    """, tmp_path)
    np.testing.assert_allclose(ours[0], theirs[0][0], rtol=1e-6)
    assert ours[1] == pytest.approx(theirs[0][1])
    np.testing.assert_allclose(ours_short[0], theirs[1][0], rtol=1e-6)
    assert ours_short[1] == theirs[1][1] == -1.0


def test_tensorflow_graphdef_runs_in_tensorweave(tmp_path):
    theirs = _run_tf("""
        x = tf.placeholder(tf.float32, [3], name="x")
        n = tf.placeholder(tf.int32, [], name="n")
        def body(i, acc):
            step = tf.cond(tf.equal(i % 2, 0), lambda: acc * 1.5, lambda: acc - x)
            return i + 1, step
        _, acc = tf.while_loop(lambda i, a: i < n, body, [tf.constant(0), x])
        tf.identity(acc, name="out")
        tf.identity(tf.cond(n > 3, lambda: tf.reduce_sum(acc), lambda: -1.0), name="total")
        seq = tf.placeholder(tf.float32, [4, 3], name="seq")
        w = tf.Variable([0.1, 0.2, 0.3], name="w")
        inputs = tf.TensorArray(tf.float32, size=4).unstack(seq)
        def rnn_body(i, h, o):
            h = tf.tanh(h * w + inputs.read(i))
            return i + 1, h, o.write(i, h)
        _, _, o = tf.while_loop(lambda i, h, o: i < 4, rnn_body,
                                [tf.constant(0), tf.zeros([3]),
                                 tf.TensorArray(tf.float32, size=4)])
        rnn_out = tf.identity(o.stack(), name="rnn_out")
        gs, gw = tf.gradients(tf.reduce_sum(rnn_out * rnn_out), [seq, w])
        tf.identity(gs, name="grad_seq")
        tf.identity(gw, name="grad_w")
        ops = sorted({op.type for op in tf.get_default_graph().get_operations()})
        open("tf.pb", "wb").write(tf.get_default_graph().as_graph_def().SerializeToString())
        seq_v = np.linspace(-1, 1, 12).reshape(4, 3)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            res = {}
            for nv in (5, 2):
                o, t = sess.run(["out:0", "total:0"], {"x:0": [1.0, -2.0, 0.5], "n:0": nv})
                res[str(nv)] = [o.tolist(), float(t)]
            res["rnn"] = [v.tolist() for v in sess.run(
                ["rnn_out:0", "grad_seq:0", "grad_w:0"], {"seq:0": seq_v})]
            res["init"] = [v.op.name for v in tf.global_variables()]
            res["ops"] = ops
        print(json.dumps(res))
    """, tmp_path)
    assert {"Enter", "Exit", "Merge", "Switch", "NextIteration", "LoopCond", "StackPushV2",
            "TensorArrayV3", "TensorArrayGradV3"} <= set(theirs["ops"])
    gd = graph_pb2.GraphDef()
    gd.ParseFromString((tmp_path / "tf.pb").read_bytes())
    with tf.Graph().as_default() as g:
        tf.import_graph_def(gd, name="")
        inits = [g.get_operation_by_name(name + "/Assign") for name in theirs["init"]]
        with tf.Session(graph=g) as sess:
            sess.run(inits)
            for nv in (5, 2):
                o, t = sess.run(["out:0", "total:0"], {"x:0": [1.0, -2.0, 0.5], "n:0": nv})
                np.testing.assert_allclose(o, theirs[str(nv)][0], rtol=1e-6)
                assert t == pytest.approx(theirs[str(nv)][1])
            rnn = sess.run(["rnn_out:0", "grad_seq:0", "grad_w:0"],
                           {"seq:0": np.linspace(-1, 1, 12).reshape(4, 3)})
            for ours, ref in zip(rnn, theirs["rnn"]):
                np.testing.assert_allclose(ours, ref, atol=1e-5)


_STRUCTURE_PROGRAM = """
x = tf.placeholder(tf.float32, [3], name="x")
def body(i, acc):
    return i + 1, tf.cond(tf.equal(i % 2, 0), lambda: acc * 1.5, lambda: acc - x)
r = tf.while_loop(lambda i, a: i < 4, body, [tf.constant(0), x])
g = tf.gradients(tf.reduce_sum(r[1]), x)
ops = sorted([op.name, op.type, [t.name for t in op.inputs],
              sorted(c.name for c in op.control_inputs)]
             for op in tf.get_default_graph().get_operations())
"""

_CONTROL_FLOW_TYPES = {"Enter", "Exit", "Merge", "Switch", "NextIteration", "LoopCond",
                       "StackV2", "StackPushV2", "StackPopV2", "ControlTrigger"}


def test_graphs_are_built_as_tensorflow_builds_them(tmp_path):
    theirs = _run_tf(_STRUCTURE_PROGRAM + "\nprint(json.dumps(ops))\n", tmp_path)
    scope: dict = {"tf": tf}
    with tf.Graph().as_default():
        exec(_STRUCTURE_PROGRAM, scope)  # noqa: S102  (the same program text as TensorFlow's)
    ours = scope["ops"]
    forward_theirs = [op for op in theirs if not op[0].startswith("gradients")]
    forward_ours = [op for op in ours if not op[0].startswith("gradients")]
    assert forward_ours == forward_theirs
    cf_theirs = [op for op in theirs if op[1] in _CONTROL_FLOW_TYPES]
    cf_ours = [op for op in ours if op[1] in _CONTROL_FLOW_TYPES]
    assert len(cf_ours) > 40
    assert cf_ours == cf_theirs
