"""Checkpoints move between tensorweave and TensorFlow both ways (V2 tensor-bundle format).

Covers plain, string, int64 and partitioned (sliced) variables, sharded saves (one data file
per device, merged by MergeV2Checkpoints), `NewCheckpointReader` and `Saver.restore`.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tests.interop.conftest import run_tf

pytestmark = pytest.mark.interop

EMB = np.arange(40, dtype=np.float32).reshape(10, 4) / 8.0
W = np.array([[1.5, -2.0], [0.25, 3.0]], dtype=np.float64)
NAMES = [b"alpha", b"", b"g\x00mma"]

TF_WRITE = """
import numpy as np
prefix = sys.argv[1]
sharded = sys.argv[2] == "sharded"
with tf.device("/cpu:0"):
    emb = tf.get_variable("emb", initializer=tf.constant(np.arange(40, dtype=np.float32)
                          .reshape(10, 4) / 8.0), partitioner=tf.fixed_size_partitioner(2))
    w = tf.Variable(np.array([[1.5, -2.0], [0.25, 3.0]]), name="w")
    step = tf.Variable(7, dtype=tf.int64, name="global_step")
    names = tf.Variable([b"alpha", b"", b"g\\x00mma"], name="names")
saver = tf.train.Saver(sharded=sharded)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    saver.save(sess, prefix)
print(json.dumps({"ok": True}))
"""

TF_READ = """
import numpy as np
prefix = sys.argv[1]
reader = tf.train.load_checkpoint(prefix)
shapes = reader.get_variable_to_shape_map()
out = {"shapes": {k: list(v) for k, v in shapes.items()}}
out["emb"] = reader.get_tensor("emb").tolist()
out["w"] = reader.get_tensor("w").tolist()
out["step"] = int(reader.get_tensor("global_step"))
out["names"] = [x.hex() for x in reader.get_tensor("names")]
# A TF program restores the same variables, the partitioned one with another partitioning.
emb = tf.get_variable("emb", shape=[10, 4], partitioner=tf.fixed_size_partitioner(5))
w = tf.get_variable("w", shape=[2, 2], dtype=tf.float64)
with tf.Session() as sess:
    tf.train.Saver([w] + list(emb)).restore(sess, prefix)
    out["restored_emb"] = sess.run(tf.concat(list(emb), 0)).tolist()
    out["restored_w"] = sess.run(w).tolist()
print(json.dumps(out))
"""


def _tw_graph(partitions: int):
    emb = tf.get_variable(
        "emb", initializer=tf.constant(EMB), partitioner=tf.fixed_size_partitioner(partitions)
    )
    w = tf.Variable(W, name="w")
    step = tf.Variable(np.int64(7), name="global_step")
    names = tf.Variable(np.array(NAMES, dtype=object), name="names")
    return emb, w, step, names


@pytest.mark.parametrize("sharded", ["sharded", "single"])
def test_tensorflow_checkpoint_restores_in_tensorweave(tf_python, tmp_path, sharded):
    (tmp_path / "tf").mkdir()
    prefix = str(tmp_path / "tf" / "model.ckpt")
    run_tf(tf_python, TF_WRITE, prefix, sharded)
    reader = tf.train.NewCheckpointReader(prefix)
    assert reader.get_variable_to_shape_map() == {
        "emb": [10, 4], "w": [2, 2], "global_step": [], "names": [3]}
    np.testing.assert_array_equal(reader.get_tensor("emb"), EMB)
    assert list(reader.get_tensor("names")) == NAMES
    with tf.Graph().as_default():
        emb, w, step, names = _tw_graph(partitions=4)  # another partitioning than TF's
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, prefix)
            np.testing.assert_array_equal(sess.run(tf.concat(list(emb), 0)), EMB)
            np.testing.assert_array_equal(sess.run(w), W)
            assert sess.run(step) == 7
            assert list(sess.run(names)) == NAMES


@pytest.mark.parametrize("sharded", [True, False])
def test_tensorweave_checkpoint_restores_in_tensorflow(tf_python, tmp_path, sharded):
    prefix = str(tmp_path / "tw" / "model.ckpt")
    with tf.Graph().as_default():
        _tw_graph(partitions=2)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            tf.train.Saver(sharded=sharded).save(sess, prefix)
    out = run_tf(tf_python, TF_READ, prefix)
    assert out["shapes"] == {"emb": [10, 4], "w": [2, 2], "global_step": [], "names": [3]}
    np.testing.assert_array_equal(out["emb"], EMB)
    np.testing.assert_array_equal(out["w"], W)
    assert out["step"] == 7
    assert [bytes.fromhex(x) for x in out["names"]] == NAMES
    np.testing.assert_array_equal(out["restored_emb"], EMB)
    np.testing.assert_array_equal(out["restored_w"], W)
