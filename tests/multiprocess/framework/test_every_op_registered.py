"""Every op, kernel and gradient is known to any process that imports `tensorweave`.

(a) A GraphDef built by one fresh process (a relu/softmax MLP, its sparse softmax
cross-entropy loss and a `GradientDescentOptimizer` step) is imported and run by another
fresh process that imports only `tensorweave` (never `tf.nn` or `tf.train`), including
`tf.gradients` over the imported graph.
(b) A client session with `use_remote_master=True` trains the same kind of MLP through a
bare `tensorweave server` (its master, workers and kernels), step for step like a local
session.

Before op definitions moved to `framework/op_defs`, both failed with "Op type not
registered 'Relu'" (the definitions were registered only by the lazily imported `tf.nn`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.cluster import pick_unused_port
from tensorweave.testing.processes import ServerProcess, spec_string

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

_WAIT_S = 60.0

_X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [-1.0, 1.0, 1.0], [0.0, 2.0, -2.0]])
_Y = np.array([0, 2, 1, 2])
_W1 = np.array([[0.2, -0.3, 0.5, 0.1], [0.4, 0.1, -0.2, 0.3], [-0.1, 0.2, 0.3, -0.4]])
_W2 = np.array([[0.3, -0.2, 0.1], [-0.5, 0.4, 0.2], [0.1, 0.1, -0.3], [0.2, -0.1, 0.4]])
_LR = 0.5

_BUILD = """
import sys
import numpy as np
import tensorweave as tf

w1_init, w2_init, lr = np.array({w1}), np.array({w2}), {lr}
x = tf.placeholder(tf.float32, [None, 3], name="x")
y = tf.placeholder(tf.int64, [None], name="y")
w1 = tf.Variable(w1_init.astype(np.float32), name="w1")
w2 = tf.Variable(w2_init.astype(np.float32), name="w2")
logits = tf.matmul(tf.nn.relu(tf.matmul(x, w1)), w2, name="logits")
probs = tf.nn.softmax(logits, name="probs")
loss = tf.reduce_mean(
    tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits), name="loss"
)
tf.train.GradientDescentOptimizer(lr).minimize(loss, name="train")
tf.variables_initializer([w1, w2], name="init")
with open(sys.argv[1], "wb") as f:
    f.write(tf.get_default_graph().as_graph_def().SerializeToString())
"""

_RUN = """
import json
import sys
import numpy as np
import tensorweave as tf
from tensorweave.protos import graph_pb2

graph_def = graph_pb2.GraphDef()
with open(sys.argv[1], "rb") as f:
    graph_def.ParseFromString(f.read())
x, y = np.array({x}, dtype=np.float32), np.array({y}, dtype=np.int64)
with tf.Graph().as_default() as g:
    tf.import_graph_def(graph_def, name="")
    ops = {{op.type for op in g.get_operations()}}
    loss = g.get_tensor_by_name("loss:0")
    w1, w2 = g.get_tensor_by_name("w1:0"), g.get_tensor_by_name("w2:0")
    grads = tf.gradients(loss, [w1, w2])
    feed = {{"x:0": x, "y:0": y}}
    with tf.Session(graph=g) as sess:
        sess.run("init")
        probs, loss0, g1, g2 = sess.run(["probs:0", loss, *grads], feed)
        sess.run("train", feed)
        new_w1, new_w2 = sess.run([w1, w2])
print(json.dumps({{
    "ops": sorted(ops),
    "lazy_namespaces_loaded": [m for m in ("tensorweave.nn", "tensorweave.train")
                               if m in sys.modules],
    "probs": probs.tolist(), "loss": float(loss0), "g1": g1.tolist(), "g2": g2.tolist(),
    "w1": new_w1.tolist(), "w2": new_w2.tolist(),
}}))
"""


def _reference() -> dict[str, np.ndarray]:
    """Forward pass, loss, gradients and one SGD step of the MLP in NumPy (float64)."""
    h_pre = _X @ _W1
    h = np.maximum(h_pre, 0)
    logits = h @ _W2
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs = e / e.sum(axis=1, keepdims=True)
    n = len(_Y)
    loss = -np.log(probs[np.arange(n), _Y]).mean()
    dlogits = probs.copy()
    dlogits[np.arange(n), _Y] -= 1
    dlogits /= n
    g2 = h.T @ dlogits
    g1 = _X.T @ ((dlogits @ _W2.T) * (h_pre > 0))
    return {
        "probs": probs, "loss": loss, "g1": g1, "g2": g2,
        "w1": _W1 - _LR * g1, "w2": _W2 - _LR * g2,
    }  # fmt: skip


def _python(script: str, *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script), *args],
        capture_output=True,
        text=True,
        timeout=_WAIT_S,
        env=dict(os.environ),
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_fresh_process_imports_and_runs_a_training_graph_def(tmp_path):
    path = str(tmp_path / "mlp.pb")
    _python(_BUILD.format(w1=_W1.tolist(), w2=_W2.tolist(), lr=_LR), path)
    out = json.loads(
        _python(_RUN.format(x=_X.tolist(), y=_Y.tolist()), path).strip().splitlines()[-1]
    )
    assert {
        "Relu", "Softmax", "SparseSoftmaxCrossEntropyWithLogits", "ApplyGradientDescent",
    } <= set(out["ops"])  # fmt: skip
    assert out["lazy_namespaces_loaded"] == []
    ref = _reference()
    for key in ("probs", "loss", "g1", "g2", "w1", "w2"):
        np.testing.assert_allclose(out[key], ref[key], rtol=1e-5, atol=1e-6, err_msg=key)


def _mlp_graph() -> tuple[tf.Graph, dict]:
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(_X.astype(np.float32))
        y = tf.constant(_Y.astype(np.int64))
        w1 = tf.Variable(_W1.astype(np.float32), name="w1")
        w2 = tf.Variable(_W2.astype(np.float32), name="w2")
        logits = tf.matmul(tf.nn.relu(tf.matmul(x, w1)), w2)
        probs = tf.nn.softmax(logits)
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
        )
        train = tf.train.GradientDescentOptimizer(_LR).minimize(loss)
        init = tf.global_variables_initializer()
    return g, {"init": init, "train": train, "loss": loss, "probs": probs, "w": [w1, w2]}


def _train(target: str, config: tf.ConfigProto | None, steps: int) -> dict:
    g, t = _mlp_graph()
    with tf.Session(target, graph=g, config=config) as sess:
        sess.run(t["init"])
        losses = []
        for _ in range(steps):
            losses.append(sess.run([t["train"], t["loss"]])[1])
        probs, w = sess.run([t["probs"], t["w"]])
    return {"losses": losses, "probs": probs, "w": w}


def test_remote_master_on_a_tensorweave_server_trains_a_relu_softmax_mlp():
    cluster = {"worker": [f"127.0.0.1:{pick_unused_port()}"]}
    config = tf.ConfigProto(
        operation_timeout_in_ms=int(_WAIT_S * 1000),
        tensorweave=tf.TensorweaveOptions(use_remote_master=True),
    )
    with ServerProcess(spec_string(cluster), "worker", 0) as server:  # killed by PID on exit
        server.wait_ready(_WAIT_S)
        remote = _train("grpc://" + cluster["worker"][0], config, steps=20)
    local = _train("", None, steps=20)
    assert remote["losses"][-1] < 0.5 * remote["losses"][0]
    np.testing.assert_allclose(remote["losses"], local["losses"], rtol=1e-5)
    np.testing.assert_allclose(remote["probs"], local["probs"], rtol=1e-5, atol=1e-6)
    for a, b in zip(remote["w"], local["w"]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
