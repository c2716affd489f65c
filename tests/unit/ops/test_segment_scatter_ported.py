"""Cases ported from TensorFlow's segment_reduction_ops_test.py and scatter_nd_ops_test.py:
values against NumPy references over dtypes and inner sizes, TensorFlow's error messages,
NaN propagation, and scatter_nd duplicates, ranks and bounds."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors


def _run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default():
        yield


def _input(shape, dtype):
    return np.arange(1, int(np.prod(shape)) + 1).reshape(shape).astype(dtype)


def _np_segment(ids, x, kind, num=None):
    ids = np.asarray(ids)
    num = int(ids.max()) + 1 if num is None else num
    rows = x.reshape((ids.size,) + x.shape[ids.ndim:])
    out = []
    for s in range(num):
        members = rows[ids.reshape(-1) == s]
        if not len(members):
            out.append(None)
            continue
        out.append({"sum": members.sum(0), "mean": members.mean(0), "prod": members.prod(0),
                    "min": members.min(0), "max": members.max(0),
                    "sqrt_n": members.sum(0) / np.sqrt(len(members))}[kind])
    return out


_SORTED = {"sum": tf.math.segment_sum, "mean": tf.math.segment_mean,
           "prod": tf.math.segment_prod, "min": tf.math.segment_min, "max": tf.math.segment_max}


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("inner", [1, 2, 3, 32])
def test_sorted_segment_values(dtype, inner):
    n = 10
    ids = [i // 3 for i in range(n)]
    x = _input((n, inner), dtype)
    got = _run([op(x, ids) for op in _SORTED.values()])
    for kind, value in zip(_SORTED, got):
        want = np.stack(_np_segment(ids, x, kind))
        if kind == "mean" and np.dtype(dtype).kind == "i":  # integer division, as TF
            want = np.stack(_np_segment(ids, x, "sum")) // np.array([[3], [3], [3], [1]])
        np.testing.assert_allclose(value, want.astype(dtype), rtol=1e-6)
        assert value.dtype == dtype and value.shape == (4, inner)


def test_sorted_segment_errors_match_tensorflow():
    x = _input((4, 4), np.float32)
    with pytest.raises(ValueError):
        tf.segment_sum(x, tf.constant([0, 1, 2, 2], shape=[2, 2]))
    cases = [([0, 1], "segment_ids should be the same size"),
             ([-1, -1, 0, 0], r"Segment id -1 out of range \[0, 1\), possibly because "
                              "'segment_ids' input is not sorted."),
             ([0, 1, 0, 1], "segment ids are not increasing"),
             ([0, 1, 2, 0], r"Segment id 1 out of range \[0, 1\), possibly because "),
             ([0, 0, 0, -1], "segment ids must be >= 0"),
             ([0, 0, 0, -2], "segment ids must be >= 0")]
    for ids, message in cases:
        with pytest.raises(errors.InvalidArgumentError, match=message):
            _run(tf.segment_sum(x, ids))
    assert _run(tf.segment_sum(x, [0, 0, 0, 1])).tolist() == [[15, 18, 21, 24],
                                                              [13, 14, 15, 16]]
    hole = _run([tf.segment_sum(x, [0, 0, 3, 3]), tf.segment_max(x, [0, 0, 3, 3])])
    assert hole[0][1:3].tolist() == [[0] * 4] * 2 and hole[1][1:3].tolist() == [[0] * 4] * 2
    with pytest.raises(ValueError, match="must be at least rank 1"):
        tf.segment_mean(np.uint16(10), np.array([], np.int64))
    with pytest.raises((ValueError, errors.InvalidArgumentError)):
        _run(tf.segment_max(np.ones((1, 10, 1)), np.array([1676240524292489355])))


def test_segment_nan_propagation():
    out = _run([tf.segment_min([1.0, np.nan, 3.0], [0, 0, 0]),
                tf.segment_max([3.0, np.nan, 1.0], [0, 0, 0]),
                tf.segment_min([[1.0, 2.0], [np.nan, 3.0], [3.0, 1.0]], [0, 0, 0]),
                tf.segment_max([[1.0, 2.0], [np.nan, 3.0], [3.0, 1.0]], [0, 0, 0])])
    assert np.isnan(out[0][0]) and np.isnan(out[1][0])
    assert np.isnan(out[2][0][0]) and out[2][0][1] == 1.0
    assert np.isnan(out[3][0][0]) and out[3][0][1] == 3.0


_UNSORTED = {"sum": tf.math.unsorted_segment_sum, "mean": tf.math.unsorted_segment_mean,
             "sqrt_n": tf.math.unsorted_segment_sqrt_n, "prod": tf.math.unsorted_segment_prod,
             "min": tf.math.unsorted_segment_min, "max": tf.math.unsorted_segment_max}


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("inner", [1, 3])
@pytest.mark.parametrize("rank", [1, 2])
def test_unsorted_segment_values(dtype, inner, rank):
    flat = np.array([0, 4, 0, 8, 3, 8, 4, 7, 7, 3])
    ids = flat if rank == 1 else flat.reshape(5, 2)
    x = _input(ids.shape + (inner,), dtype)
    kinds = [k for k in _UNSORTED if not (k in ("mean", "sqrt_n") and dtype == np.int32)]
    got = _run([_UNSORTED[k](x, ids, 12) for k in kinds])
    info = np.finfo(dtype) if np.dtype(dtype).kind == "f" else np.iinfo(dtype)
    empty = {"sum": 0, "mean": 0, "sqrt_n": 0, "prod": 1, "min": info.max, "max": info.min}
    for kind, value in zip(kinds, got):
        want = [np.full(inner, empty[kind]) if v is None else v
                for v in _np_segment(ids, x, kind, 12)]
        np.testing.assert_allclose(value, np.stack(want).astype(dtype), rtol=1e-6)
        assert value.shape == (12, inner)


def test_unsorted_segment_drops_negative_ids_and_bounds():
    out = _run(tf.unsorted_segment_sum([1.0, 2.0, 3.0], [0, -1, 1], 2))
    assert out.tolist() == [1.0, 3.0]
    with pytest.raises(errors.InvalidArgumentError, match="out of range"):
        _run(tf.unsorted_segment_max([1.0, 2.0], [0, 5], 2))


def test_scatter_nd_values():
    out = _run([tf.scatter_nd([[4], [3], [1], [7]], [9, 10, 11, 12], [8]),
                tf.scatter_nd([[1, 0], [1, 1]], [11.0, 12.0], [2, 3]),
                tf.scatter_nd([[0, 1], [1, 1]], [11.0, 12.0], [2, 3]),
                tf.scatter_nd([[1], [1]], [1.0, 2.0], [3]),
                tf.scatter_nd([[0, 0], [1, 1]], np.arange(6.0).reshape(2, 3), [2, 2, 3]),
                tf.scatter_nd(np.zeros([0, 1], np.int32), np.zeros([0, 3]), [2, 3])])
    assert out[0].tolist() == [0, 11, 0, 10, 9, 0, 0, 12]
    assert out[1].tolist() == [[0, 0, 0], [11, 12, 0]]
    assert out[2].tolist() == [[0, 11, 0], [0, 12, 0]]
    assert out[3].tolist() == [0, 3, 0]
    want = np.zeros((2, 2, 3))
    want[0, 0], want[1, 1] = [0, 1, 2], [3, 4, 5]
    np.testing.assert_array_equal(out[4], want)
    np.testing.assert_array_equal(out[5], np.zeros((2, 3)))
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"indices\[1\] = \[9\] does not index into shape \[8\]"):
        _run(tf.scatter_nd([[0], [9]], [1, 2], [8]))
    with pytest.raises(ValueError):
        tf.scatter_nd([[0], [1]], [[1, 2]], [8])


def test_variable_scatter_nd_updates():
    ref = tf.Variable([1, 2, 3, 4, 5, 6, 7, 8])
    upd = tf.scatter_nd_update(ref, [[4], [3], [1], [7]], [9, 10, 11, 12])
    add = tf.scatter_nd_add(ref, [[4], [4]], [1, 1])
    sub = tf.scatter_nd_sub(ref, [[0]], [1])
    with tf.Session() as sess:
        sess.run(ref.initializer)
        sess.run(upd)
        assert sess.run(ref).tolist() == [1, 11, 3, 10, 9, 6, 7, 12]
        sess.run([add])
        sess.run(sub)
        assert sess.run(ref).tolist() == [0, 11, 3, 10, 11, 6, 7, 12]
        with pytest.raises(errors.InvalidArgumentError, match="does not index"):
            sess.run(tf.scatter_nd_update(ref, [[8]], [1]))
