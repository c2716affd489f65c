"""Cases ported from TensorFlow's einsum_op_test.py: values against np.einsum (float32 and
float64, unary/binary, repeated labels, ellipsis and broadcasting), output repeated labels,
empty contractions, static shapes and invalid equations."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors

CASES = [
    ("->", [()]), ("ab->", [(3, 3)]), ("ab->ab", [(3, 3)]), ("abc->b", [(3, 4, 5)]),
    ("abc->ca", [(3, 4, 5)]), ("abc->cab", [(3, 4, 5)]),
    ("aa->", [(3, 3)]), ("aa->a", [(3, 3)]), ("aaa->", [(3, 3, 3)]), ("aaa->a", [(3, 3, 3)]),
    ("aab->a", [(3, 3, 4)]), ("aabcc->a", [(3, 3, 5, 4, 4)]), ("aabcc->ac", [(3, 3, 5, 4, 4)]),
    ("...->...", [()]), ("...->", [()]), ("->...", [()]), ("a...a->a...", [(2, 2)]),
    ("a...a->", [(2, 2)]), ("a...a->...", [(2, 5, 1, 2)]), ("a...a->a...", [(2, 3, 4, 5, 2)]),
    ("...ijk->...ki", [(3, 4, 5)]), ("...ijk->...ki", [(2, 2, 3, 4, 5)]),
    ("i...ii->...i", [(3, 2, 3, 3)]),
    (",->", [(), ()]), ("a,a->", [(3,), (3,)]), ("a,a->a", [(3,), (3,)]),
    ("ab,b->a", [(3, 4), (4,)]), ("ab,ab->", [(3, 4), (3, 4)]), ("ab,bc->ac", [(3, 4), (4, 5)]),
    ("nij,jk->nik", [(5, 2, 3), (3, 4)]), ("abc,bad->abcd", [(1, 2, 3), (2, 1, 4)]),
    ("sa,shb->shab", [(2, 1), (2, 3, 4)]), ("ba,b->", [(3, 2), (3,)]),
    ("abce,badf->abcd", [(1, 2, 3, 4), (2, 1, 4, 3)]), ("ijj,k->ik", [(2, 3, 3), (4,)]),
    ("aba,a->b", [(3, 4, 3), (3,)]), ("aab,bc->ac", [(2, 2, 3), (3, 4)]),
    ("aab,bcc->ac", [(2, 2, 3), (3, 4, 4)]),
    ("...mk,...kn->...mn", [(5, 1, 2, 3), (5, 1, 3, 4)]), ("...mk,...kn->...mn", [(2, 3), (3, 4)]),
    ("...ija,aijb...->ba...ij", [(1, 2, 2, 3, 1), (1, 2, 3, 4, 1, 2)]),
    ("...mk,...kn->mn", [(2, 3), (3, 4)]), ("...mk,kn->mn", [(2, 3), (3, 4)]),
    ("...ij,...jk->...ik", [(1, 2, 3), (3, 5)]), ("...ij,...jk->...ik", [(5, 2, 3), (3, 5)]),
    ("...ij,...jk->...ik", [(3, 1, 2, 3), (1, 1, 7, 3, 5)]),
    ("i...j,j...k->...ik", [(2, 1, 3, 1, 3), (3, 1, 7, 5)]),
    ("...abc,...abcd->...d", [(1, 1, 2, 3, 4), (5, 2, 3, 4, 6)]),
    ("ab...,b->ab...", [(2, 3, 1, 1, 5), (3,)]),
    ("ij,jk...k->i...", [(3, 2), (2, 4, 1, 4)]), ("ijj,jk...k->i...", [(3, 2, 2), (2, 4, 1, 4)]),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("equation,shapes", CASES, ids=[c[0] or "empty" for c in CASES])
def test_einsum_matches_numpy(equation, shapes, dtype):
    rng = np.random.RandomState(0)
    inputs = [np.array(rng.randn(*s)).astype(dtype) for s in shapes]
    want = np.einsum(equation, *inputs)
    with tf.Graph().as_default():
        out = tf.einsum(equation, *[tf.constant(x) for x in inputs])
        if out.shape.ndims is not None:
            assert out.shape.is_compatible_with(np.shape(want))
        got = tf.Session().run(out)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert np.asarray(got).dtype == dtype


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.complex64, np.complex128])
def test_einsum_dtypes(dtype):
    rng = np.random.RandomState(0)
    a, b = (np.array(rng.randn(2, 2) * 5).astype(dtype) for _ in range(2))
    with tf.Graph().as_default():
        got = tf.Session().run(tf.einsum("ij,jk->ik", a, b))
    np.testing.assert_allclose(got, np.einsum("ij,jk->ik", a, b))


def test_output_repeated_labels_and_empty_contractions():
    a = np.random.RandomState(0).randn(2, 2)
    with tf.Graph().as_default():
        out = tf.Session().run([tf.einsum("a->aa", np.diag(a)),
                                tf.einsum("ab,bc->ac", np.ones((0, 10)), np.ones((10, 10))),
                                tf.einsum("ibnd,ijbn->jnd", np.ones((1, 0, 5, 10)),
                                          np.ones((1, 1, 0, 5))),
                                tf.einsum("ab,bc->cc", np.ones((0, 10)), np.ones((10, 5)))])
    np.testing.assert_allclose(out[0], np.diag(np.diag(a)))
    assert out[1].shape == (0, 10)
    np.testing.assert_array_equal(out[2], np.zeros((1, 5, 10)))
    np.testing.assert_array_equal(out[3], np.zeros((5, 5)))


@pytest.mark.parametrize("equation,shapes", [
    ("ij,jk->ik", [(1, 2, 3), (3, 4)]),
    ("...ij,jk->ik", [(3,), (3, 4)]),
    ("ij,jk->ik", [(2, 3), (4, 4)]),
    ("...ij,...jk->...ik", [(5, 2, 3), (7, 3, 4)]),
    ("...ij,...jk->ik", [(2, 2, 3), (3, 4)]),
])
def test_invalid_equations(equation, shapes):
    rng = np.random.RandomState(0)
    inputs = [rng.randn(*s) for s in shapes]
    with tf.Graph().as_default():
        with pytest.raises((ValueError, errors.InvalidArgumentError)):
            tf.Session().run(tf.einsum(equation, *inputs))
        holders = [tf.placeholder_with_default(x, shape=None) for x in inputs]
        with pytest.raises((ValueError, errors.InvalidArgumentError)):
            tf.Session().run(tf.einsum(equation, *holders))


def test_unknown_shapes_placeholder():
    rng = np.random.RandomState(0)
    a, b = rng.randn(9, 2, 3, 5), rng.randn(9, 3, 4, 7)
    with tf.Graph().as_default():
        pa = tf.placeholder_with_default(a, [None, None, None, 5])
        pb = tf.placeholder_with_default(b, [None, None, 4, None])
        got = tf.Session().run(tf.einsum("bijl,bjkm->bik", pa, pb))
    np.testing.assert_allclose(got, np.einsum("bijl,bjkm->bik", a, b))
