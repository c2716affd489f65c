"""GraphDefs of the issue-12 ops built by tensorweave import and run in a real TensorFlow
with the same results: op types, input order, attr names and kernels' semantics agree.

Needs a TensorFlow interpreter named by TENSORWEAVE_TF_PYTHON (skipped without it)."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import tensorweave as tf

pytestmark = pytest.mark.interop

_TF_PYTHON = os.environ.get("TENSORWEAVE_TF_PYTHON")

_RUNNER = r"""
import sys
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_eager_execution()
graph_def = tf.GraphDef.FromString(open(sys.argv[1], "rb").read())
names = sys.argv[3].split(",")
with tf.Graph().as_default() as g:
    tf.import_graph_def(graph_def, name="")
    with tf.Session() as sess:
        values = sess.run([g.get_tensor_by_name(n + ":0") for n in names])
np.savez(sys.argv[2], **{f"v{i}": np.asarray(v) for i, v in enumerate(values)})
"""


def _build() -> list[tuple[str, object]]:
    rng = np.random.default_rng(0)
    m = rng.normal(size=(3, 3))
    spd = m @ m.T + 3 * np.eye(3)
    x = np.array([0.3, 1.7, 2.2])
    st = tf.SparseTensor([[0, 1], [1, 0], [2, 2]], [1.0, 2.0, 3.0], [3, 4])
    cases = {
        "segment_sum": tf.math.segment_sum(m, [0, 0, 1]),
        "segment_max": tf.math.segment_max(m, [0, 1, 1]),
        "unsorted_prod": tf.math.unsorted_segment_prod(m, [1, 0, 1], 3),
        "sparse_segment_mean": tf.sparse.segment_mean(m, [0, 2], [0, 0]),
        "gather_nd": tf.gather_nd(m, [[0, 1], [2, 2]]),
        "scatter_nd": tf.scatter_nd([[1], [1], [3]], [1.0, 2.0, 3.0], [5]),
        "tensor_scatter": tf.tensor_scatter_nd_add(m, [[0, 0]], [5.0]),
        "reverse_sequence": tf.reverse_sequence(m, [2, 3, 1], seq_axis=1, batch_axis=0),
        "band_part": tf.linalg.band_part(m, 1, 0),
        "matrix_diag": tf.linalg.diag(x),
        "set_diag": tf.linalg.set_diag(m, x),
        "einsum": tf.einsum("ij,jk->ik", m, spd),
        "cholesky": tf.linalg.cholesky(spd),
        "inv": tf.linalg.inv(spd),
        "slogdet": tf.linalg.slogdet(spd)[1],
        "triangular_solve": tf.linalg.triangular_solve(np.tril(spd), m),
        "qr_r": tf.abs(tf.linalg.qr(m)[1]),
        "svd": tf.linalg.svd(m, compute_uv=False),
        "lgamma": tf.math.lgamma(x),
        "digamma": tf.math.digamma(x),
        "igamma": tf.math.igamma(x, x + 1),
        "betainc": tf.math.betainc(x / 3, x / 3 + 1, x / 3),
        "zeta": tf.math.zeta(x + 1, x),
        "erfinv": tf.math.erfinv(x / 3),
        "bessel_i1e": tf.math.bessel_i1e(x),
        "linspace": tf.linspace(0.0, 1.0, 5),
        "cumsum": tf.cumsum(x, exclusive=True, reverse=True),
        "to_dense": tf.sparse.to_dense(st),
        "sparse_matmul": tf.sparse.sparse_dense_matmul(st, np.ones((4, 2), np.float32)),
        "sparse_reduce": tf.sparse.reduce_sum(st, 1),
        "sparse_softmax": tf.sparse.softmax(st).values,
        "hash_fast": tf.string_to_hash_bucket_fast(["a", "hello world"], 1000),
        "hash_strong": tf.string_to_hash_bucket_strong(["a", "b"], 100, [3, 4]),
        "as_string": tf.as_string([1.5, 2.0]),
        "bincount": tf.math.bincount([1, 1, 4]),
        "fft": tf.fft(tf.complex(x, x)),
        "bitwise": tf.bitwise.bitwise_xor([5, 7], [3, 3]),
        "space_to_depth": tf.space_to_depth(np.arange(16.0).reshape(1, 4, 4, 1), 2),
        "where_v2": tf.where_v2([True, False, True], x, 0.0),
        "edit_distance": tf.edit_distance(
            tf.SparseTensor([[0, 0]], ["a"], [1, 1]),
            tf.SparseTensor([[0, 0], [0, 1]], ["a", "b"], [1, 2])),
    }
    return [(name, tf.identity(t, name=f"out_{name}")) for name, t in cases.items()]


@pytest.mark.skipif(not _TF_PYTHON or not pathlib.Path(_TF_PYTHON).exists(),
                    reason="TENSORWEAVE_TF_PYTHON does not name a TensorFlow interpreter")
def test_graphdef_runs_in_tensorflow_with_equal_results(tmp_path):
    with tf.Graph().as_default() as g:
        cases = _build()
        ours = tf.Session().run([t for _, t in cases])
        (tmp_path / "graph.pb").write_bytes(g.as_graph_def().SerializeToString())
    (tmp_path / "runner.py").write_text(_RUNNER)
    names = ",".join(t.op.name for _, t in cases)
    proc = subprocess.run([_TF_PYTHON, str(tmp_path / "runner.py"), str(tmp_path / "graph.pb"),
                           str(tmp_path / "out.npz"), names], timeout=300,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    theirs = np.load(tmp_path / "out.npz", allow_pickle=True)
    for i, (name, _) in enumerate(cases):
        mine, want = np.asarray(ours[i]), theirs[f"v{i}"]
        assert mine.shape == want.shape, name
        if mine.dtype.kind in "OSU":
            assert mine.tolist() == want.tolist(), name
        else:
            np.testing.assert_allclose(mine, want, rtol=2e-5, atol=1e-6, err_msg=name)


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
