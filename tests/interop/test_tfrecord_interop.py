"""TFRecord files of `tf.train.Example`s exchanged with a real TensorFlow, both ways.

TensorFlow runs in its own process (`TENSORWEAVE_TF_PYTHON`, a Python with tensorflow);
the tests skip when it is not set or not usable.
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
from tensorweave.protos import example_pb2

pytestmark = pytest.mark.interop

TF_PYTHON = os.environ.get("TENSORWEAVE_TF_PYTHON", "")


def run_tf(code: str, timeout: float = 120.0) -> str:
    if not TF_PYTHON or not os.path.exists(TF_PYTHON):
        pytest.skip("TENSORWEAVE_TF_PYTHON does not name a Python with TensorFlow")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    proc = subprocess.run([TF_PYTHON, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout, env=env, check=False)
    if proc.returncode != 0:
        if "No module named 'tensorflow'" in proc.stderr:
            pytest.skip("TENSORWEAVE_TF_PYTHON has no tensorflow")
        raise AssertionError(proc.stderr[-3000:])
    return proc.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("compression", ["", "GZIP", "ZLIB"])
def test_tensorflow_reads_tensorweave_examples(tmp_path, compression):
    path = str(tmp_path / "tw.tfr")
    with tf.io.TFRecordWriter(path, tf.io.TFRecordOptions(compression)) as w:
        for i in range(5):
            e = example_pb2.Example()
            e.features.feature["x"].float_list.value.extend([i, i + 0.5])
            e.features.feature["id"].int64_list.value.append(i)
            e.features.feature["name"].bytes_list.value.append(f"n{i}".encode())
            w.write(e.SerializeToString())
    out = run_tf(f"""
        import json, tensorflow.compat.v1 as tf
        tf.disable_eager_execution()
        ds = tf.data.TFRecordDataset({path!r}, compression_type={compression!r})
        ds = ds.map(lambda r: tf.io.parse_single_example(r, {{
            "x": tf.io.FixedLenFeature([2], tf.float32),
            "id": tf.io.FixedLenFeature([], tf.int64),
            "name": tf.io.FixedLenFeature([], tf.string)}})).batch(5)
        with tf.Session() as s:
            v = s.run(tf.data.make_one_shot_iterator(ds).get_next())
        print(json.dumps({{"x": v["x"].tolist(), "id": v["id"].tolist(),
                          "name": [n.decode() for n in v["name"]]}}))
    """)
    got = json.loads(out)
    assert got["id"] == [0, 1, 2, 3, 4]
    assert got["x"] == [[i, i + 0.5] for i in range(5)]
    assert got["name"] == [f"n{i}" for i in range(5)]


@pytest.mark.parametrize("compression", ["", "GZIP"])
def test_tensorweave_reads_tensorflow_examples(tmp_path, compression):
    path = str(tmp_path / "tf.tfr")
    run_tf(f"""
        import tensorflow as tf
        opts = tf.io.TFRecordOptions(compression_type={compression!r})
        with tf.io.TFRecordWriter({path!r}, opts) as w:
            for i in range(4):
                f = {{"v": tf.train.Feature(int64_list=tf.train.Int64List(value=[i] * (i + 1))),
                      "s": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"r%d" % i]))}}
                w.write(tf.train.Example(features=tf.train.Features(feature=f))
                        .SerializeToString())
        print("ok")
    """)
    records = list(tf.python_io.tf_record_iterator(path, tf.io.TFRecordOptions(compression)))
    assert len(records) == 4
    g = tf.Graph()
    with g.as_default():
        parsed = tf.io.parse_example(records, {"v": tf.io.VarLenFeature(tf.int64),
                                               "s": tf.io.FixedLenFeature([], tf.string)})
        with tf.Session() as sess:
            out = sess.run(parsed)
    assert out["s"].tolist() == [b"r0", b"r1", b"r2", b"r3"]
    np.testing.assert_array_equal(out["v"].values, [0, 1, 1, 2, 2, 2, 3, 3, 3, 3])
    np.testing.assert_array_equal(out["v"].dense_shape, [4, 4])


_VARLEN_PROGRAM = """
import json
{imports}
def ex(**kw):
    e = tf.train.Example()
    for k, v in kw.items():
        f = e.features.feature[k]
        if isinstance(v[0], bytes):
            f.bytes_list.value.extend(v)
        else:
            f.int64_list.value.extend(v)
    return e.SerializeToString()
recs = [ex(b=[3], w=[b"x"]), ex(w=[b"y", b"z"]), ex(b=[6, 7, 8])]
p = tf.io.parse_example(recs, {{"b": tf.io.VarLenFeature(tf.int64),
                                "w": tf.io.VarLenFeature(tf.string)}})
s = tf.io.parse_single_example(ex(b=[4, 5]), {{"b": tf.io.VarLenFeature(tf.int64)}})
outs = {{"dense": tf.sparse.to_dense(p["b"], default_value=-1),
        "rsum": tf.sparse.reduce_sum(p["b"], axis=1),
        "w": tf.sparse.to_dense(p["w"], default_value=""),
        "single": tf.sparse.to_dense(s["b"])}}
with tf.Session() as sess:
    r, v = sess.run(outs), sess.run(p["b"])
print(json.dumps({{"kind": type(p["b"]).__name__, "fetched": type(v).__name__,
                  "indices": v.indices.tolist(), "shape": v.dense_shape.tolist(),
                  "dense": r["dense"].tolist(), "rsum": r["rsum"].tolist(),
                  "w": [[x.decode() for x in row] for row in r["w"].tolist()],
                  "single": r["single"].tolist()}}))
"""


def test_var_len_features_parse_to_sparse_tensors_like_tensorflow():
    expected = json.loads(run_tf(_VARLEN_PROGRAM.format(
        imports="import tensorflow.compat.v1 as tf\ntf.disable_eager_execution()")))
    ours = subprocess.run(
        [sys.executable, "-c", _VARLEN_PROGRAM.format(imports="import tensorweave as tf")],
        capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(ours.stdout.strip().splitlines()[-1]) == expected
