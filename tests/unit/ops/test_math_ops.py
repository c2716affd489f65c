"""Element-wise math ops: kernels against NumPy, dtypes, broadcasting, casts, numerics
checks and errors. Static shapes, operator overloads and `BroadcastGradientArgs`:
test_math_operators.py."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors


def _run(fetches, feed_dict=None, graph=None):
    with tf.Session(graph=graph or tf.get_default_graph()) as sess:
        return sess.run(fetches, feed_dict)


def _rand(shape, dtype, rng, low=-5, high=5):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        low = max(low, 0) if dtype.kind == "u" else low
        return rng.integers(low, high, size=shape).astype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) > 0.5
    if dtype.kind == "c":
        return (rng.uniform(low, high, shape) + 1j * rng.uniform(low, high, shape)).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


SHAPE_PAIRS = [
    ((), ()),
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3, 1), (1, 4)),
    ((), (2, 3)),
    ((2, 1, 3), (4, 1)),
    ((0, 3), (3,)),
    ((2, 0), (1, 1)),
]

BINARY = [
    (tf.add, np.add, ["float32", "float64", "int32", "int64", "int8", "uint8", "float16"]),
    (tf.subtract, np.subtract, ["float32", "float64", "int32", "int64", "int16", "complex64"]),
    (tf.multiply, np.multiply, ["float32", "float64", "int32", "int64", "uint16", "complex128"]),
    (tf.maximum, np.maximum, ["float32", "float64", "int32", "int64"]),
    (tf.minimum, np.minimum, ["float32", "float64", "int32", "int64"]),
    (tf.realdiv, np.true_divide, ["float32", "float64", "complex64"]),
    (tf.squared_difference, lambda x, y: np.square(x - y), ["float32", "float64", "int32"]),
    (tf.atan2, np.arctan2, ["float32", "float64"]),
]


@pytest.mark.parametrize("fn,ref,dtypes", BINARY, ids=[b[0].__name__ for b in BINARY])
@pytest.mark.parametrize("sx,sy", SHAPE_PAIRS)
def test_binary_matches_numpy(fn, ref, dtypes, sx, sy):
    rng = np.random.default_rng(0)
    for dt in dtypes:
        x, y = _rand(sx, dt, rng), _rand(sy, dt, rng)
        with tf.Graph().as_default():
            out = fn(tf.constant(x), tf.constant(y))
            assert out.dtype == tf.as_dtype(dt)
            assert out.shape.as_list() == list(np.broadcast_shapes(sx, sy))
            got = _run(out)
        want = ref(x, y)
        assert np.asarray(got).dtype == np.dtype(dt), (fn.__name__, dt)
        np.testing.assert_allclose(got, want, rtol=1e-3 if dt == "float16" else 1e-6)


@pytest.mark.parametrize(
    "fn,ref,dtypes,low",
    [
        (tf.negative, np.negative, ["float32", "int32", "int64", "int8", "complex64"], -5),
        (tf.square, np.square, ["float32", "float64", "int32", "complex128"], -5),
        (tf.sqrt, np.sqrt, ["float32", "float64", "float16"], 0),
        (tf.rsqrt, lambda x: 1 / np.sqrt(x), ["float32", "float64"], 1),
        (tf.exp, np.exp, ["float32", "float64", "complex64"], -5),
        (tf.expm1, np.expm1, ["float32", "float64"], -5),
        (tf.log, np.log, ["float32", "float64"], 1),
        (tf.log1p, np.log1p, ["float32", "float64"], 0),
        (tf.abs, np.abs, ["float32", "float64", "int32", "int64", "int8"], -5),
        (tf.sign, np.sign, ["float32", "float64", "int32", "int64"], -5),
        (tf.reciprocal, np.reciprocal, ["float32", "float64"], 1),
        (tf.floor, np.floor, ["float32", "float64", "float16"], -5),
        (tf.ceil, np.ceil, ["float32", "float64"], -5),
        (tf.tanh, np.tanh, ["float32", "float64"], -5),
        (tf.sigmoid, lambda x: 1 / (1 + np.exp(-x)), ["float32", "float64"], -5),
        (tf.sin, np.sin, ["float32", "float64"], -5),
        (tf.cos, np.cos, ["float32", "float64"], -5),
        (tf.tan, np.tan, ["float32", "float64"], -1),
        (tf.atan, np.arctan, ["float32", "float64"], -5),
        (tf.sinh, np.sinh, ["float32", "float64"], -5),
        (tf.cosh, np.cosh, ["float32", "float64"], -5),
        (tf.asinh, np.arcsinh, ["float32", "float64"], -5),
        (tf.acosh, np.arccosh, ["float32", "float64"], 1),
    ],
)
@pytest.mark.parametrize("shape", [(), (4,), (2, 3), (0, 2)])
def test_unary_matches_numpy(fn, ref, dtypes, low, shape):
    rng = np.random.default_rng(1)
    for dt in dtypes:
        x = _rand(shape, dt, rng, low=low, high=5 if low >= 0 else 5)
        if np.dtype(dt).kind in "iu" and fn is tf.reciprocal:
            continue
        with tf.Graph().as_default():
            out = fn(tf.constant(x))
            assert out.dtype == tf.as_dtype(dt)
            assert out.shape.as_list() == list(shape)
            got = _run(out)
        assert np.asarray(got).dtype == np.dtype(dt)
        np.testing.assert_allclose(got, ref(x), rtol=2e-3 if dt == "float16" else 1e-5)


def test_unary_predicates_give_bool():
    x = np.array([1.0, np.nan, np.inf, -np.inf, 0.0], np.float32)
    with tf.Graph().as_default():
        c = tf.constant(x)
        got = _run([tf.is_nan(c), tf.is_inf(c), tf.is_finite(c)])
    for g, ref in zip(got, (np.isnan, np.isinf, np.isfinite)):
        assert g.dtype == np.bool_
        np.testing.assert_array_equal(g, ref(x))


def test_asin_acos_rint():
    x = np.array([-0.5, 0.0, 0.25, 0.9], np.float64)
    r = np.array([0.5, 1.5, 2.5, -0.5, -1.5], np.float32)
    with tf.Graph().as_default():
        got = _run([tf.asin(x), tf.acos(x), tf.rint(r), tf.atanh(x)])
    np.testing.assert_allclose(got[0], np.arcsin(x))
    np.testing.assert_allclose(got[1], np.arccos(x))
    np.testing.assert_array_equal(got[2], [0.0, 2.0, 2.0, -0.0, -2.0])
    np.testing.assert_allclose(got[3], np.arctanh(x))


def test_sigmoid_is_stable_and_keeps_dtype():
    x = np.array([-1000.0, -20.0, 0.0, 20.0, 1000.0], np.float32)
    with tf.Graph().as_default():
        got = _run(tf.sigmoid(x))
        scalar = _run(tf.sigmoid(np.float32(0.0)))
    assert got.dtype == np.float32 and np.all(np.isfinite(got))
    np.testing.assert_allclose(got, [0.0, 2.0611537e-09, 0.5, 1.0, 1.0], rtol=1e-6)
    assert scalar.dtype == np.float32 and scalar == 0.5


def test_round_is_bankers_and_identity_for_ints():
    with tf.Graph().as_default():
        f = tf.constant([0.5, 1.5, 2.5, -0.5, -1.5, 2.4, 2.6])
        i = tf.constant([1, 2, 3])
        r_int = tf.round(i)
        assert r_int is i
        got = _run(tf.round(f))
    np.testing.assert_array_equal(got, [0.0, 2.0, 2.0, -0.0, -2.0, 2.0, 3.0])


def test_string_add_concatenates_and_equal_compares():
    with tf.Graph().as_default():
        a = tf.constant(["ab", "c"])
        b = tf.constant("!")
        s = a + b
        assert s.op.type == "Add"
        got, eq = _run([s, tf.equal(a, "c")])
    assert list(got) == [b"ab!", b"c!"]
    np.testing.assert_array_equal(eq, [False, True])


def test_add_is_add_and_plus_operator_is_add_v2():
    with tf.Graph().as_default():
        x = tf.constant(1.0)
        assert tf.add(x, x).op.type == "Add"
        assert (x + x).op.type == "AddV2"


@pytest.mark.parametrize("dt", ["int32", "int64"])
def test_integer_division_semantics(dt):
    x = np.array([7, -7, 7, -7, 0], dt)
    y = np.array([2, 2, -2, -2, 3], dt)
    with tf.Graph().as_default():
        fd = tf.floor_div(x, y)
        fm = tf.floormod(x, y)
        td = tf.truncatediv(x, y)
        tm = tf.truncatemod(x, y)
        rd = tf.realdiv(x, y)
        div2 = tf.div(x, y)
        got = _run([fd, fm, td, tm, rd, div2])
    np.testing.assert_array_equal(got[0], [3, -4, -4, 3, 0])
    np.testing.assert_array_equal(got[1], [1, 1, -1, -1, 0])
    np.testing.assert_array_equal(got[2], [3, -3, -3, 3, 0])
    np.testing.assert_array_equal(got[3], [1, -1, 1, -1, 0])
    np.testing.assert_array_equal(got[4], [3, -3, -3, 3, 0])  # C division truncates
    np.testing.assert_array_equal(got[5], [3, -4, -4, 3, 0])  # tf.div floors ints
    for g in got:
        assert g.dtype == np.dtype(dt)


def test_small_integer_division_and_mod_types():
    x, y = np.array([-7, 7], np.int8), np.array([2, -2], np.int8)
    with tf.Graph().as_default():
        got = _run([tf.floor_div(x, y), tf.truncatediv(x, y), x // tf.constant(y)])
        with pytest.raises(TypeError):
            tf.floormod(x, y)  # FloorMod is int32/int64/float only, as in TensorFlow
    np.testing.assert_array_equal(got[0], [-4, -4])
    np.testing.assert_array_equal(got[1], [-3, -3])
    assert got[2].dtype == np.int8


@pytest.mark.parametrize(
    "fn", [tf.floor_div, tf.floormod, tf.truncatediv, tf.truncatemod, tf.realdiv]
)
def test_integer_division_by_zero_is_invalid_argument(fn):
    with tf.Graph().as_default():
        out = fn(tf.constant([1, 2]), tf.constant([1, 0]))
        with pytest.raises(errors.InvalidArgumentError, match="Integer division by zero"):
            _run(out)


def test_float_division_by_zero_gives_inf_and_nan():
    with tf.Graph().as_default():
        got = _run(tf.constant([1.0, -1.0, 0.0]) / 0.0)
    assert got[0] == np.inf and got[1] == -np.inf and np.isnan(got[2])


def test_floor_division_of_floats():
    x = np.array([7.5, -7.5], np.float32)
    with tf.Graph().as_default():
        got = _run([tf.floordiv(x, 2.0), tf.floormod(x, 2.0), tf.truncatemod(x, 2.0)])
    np.testing.assert_array_equal(got[0], [3.0, -4.0])
    np.testing.assert_array_equal(got[1], [1.5, 0.5])
    np.testing.assert_array_equal(got[2], [1.5, -1.5])


def test_pow():
    with tf.Graph().as_default():
        got = _run([tf.pow(tf.constant([2, 3]), 3), tf.pow(tf.constant([4.0, 9.0]), 0.5)])
        neg = tf.pow(tf.constant([2]), tf.constant([-1]))
        with pytest.raises(errors.InvalidArgumentError, match="negative integer powers"):
            _run(neg)
    np.testing.assert_array_equal(got[0], [8, 27])
    assert got[0].dtype == np.int32
    np.testing.assert_allclose(got[1], [2.0, 3.0])


def test_div_no_nan():
    with tf.Graph().as_default():
        got = _run(tf.div_no_nan(tf.constant([1.0, 2.0, 0.0]), tf.constant([0.0, 4.0, 0.0])))
    np.testing.assert_array_equal(got, [0.0, 0.5, 0.0])
    assert got.dtype == np.float32


@pytest.mark.parametrize(
    "dt,want",
    [
        ("int8", "float32"),
        ("uint8", "float32"),
        ("int16", "float32"),
        ("int32", "float64"),
        ("int64", "float64"),
        ("float32", "float32"),
        ("float16", "float16"),
        ("float64", "float64"),
    ],
)
def test_truediv_casts_ints_like_tensorflow(dt, want):
    with tf.Graph().as_default():
        x = tf.constant(np.array([1, 3], dt))
        y = tf.constant(np.array([2, 2], dt))
        for out in (tf.truediv(x, y), tf.divide(x, y), x / y):
            assert out.dtype == tf.as_dtype(want)
            assert out.op.type == "RealDiv"
            got = _run(out)
            assert got.dtype == np.dtype(want)
            np.testing.assert_allclose(got, [0.5, 1.5])


def test_truediv_names_and_type_errors():
    with tf.Graph().as_default():
        x = tf.constant([1, 2])
        out = x / 2
        assert out.op.name == "truediv"
        assert [i.op.type for i in out.op.inputs] == ["Cast", "Cast"]
        assert out.op.inputs[0].op.name == "truediv/Cast"
        with pytest.raises(TypeError, match="same dtype"):
            tf.truediv(x, tf.constant([1.0, 2.0]))
        with pytest.raises(TypeError):
            tf.truediv(tf.constant([True]), tf.constant([True]))
        assert tf.divide(1.0, 2.0, name="half").op.name == "half"


def test_comparisons_and_logic():
    rng = np.random.default_rng(3)
    x, y = _rand((3, 4), "float32", rng), _rand((4,), "float32", rng)
    a, b = rng.random((2, 3)) > 0.5, rng.random((3,)) > 0.5
    with tf.Graph().as_default():
        cx, cy, ca, cb = (tf.constant(v) for v in (x, y, a, b))
        outs = [
            tf.less(cx, cy),
            tf.less_equal(cx, cy),
            tf.greater(cx, cy),
            tf.greater_equal(cx, cy),
            tf.equal(cx, cy),
            tf.not_equal(cx, cy),
            tf.logical_and(ca, cb),
            tf.logical_or(ca, cb),
            tf.logical_not(ca),
            tf.logical_xor(ca, cb),
            cx < cy,
            cx <= cy,
            cx > cy,
            cx >= cy,
            ca & cb,
            ca | cb,
            ca ^ cb,
            ~ca,
            True & cb,
            False | cb,
        ]
        for o in outs:
            assert o.dtype == tf.bool
        got = _run(outs)
    want = [
        x < y,
        x <= y,
        x > y,
        x >= y,
        x == y,
        x != y,
        a & b,
        a | b,
        ~a,
        a ^ b,
        x < y,
        x <= y,
        x > y,
        x >= y,
        a & b,
        a | b,
        a ^ b,
        ~a,
        b,
        b,
    ]
    for g, w in zip(got, want):
        assert g.dtype == np.bool_
        np.testing.assert_array_equal(g, w)


def test_equal_without_incompatible_shape_error():
    from tensorweave.framework.op_def_library import apply_op

    with tf.Graph().as_default():
        x, y = tf.constant([1, 2, 3]), tf.constant([1, 2])
        eq = apply_op("Equal", x=x, y=y, incompatible_shape_error=False)
        ne = apply_op("NotEqual", x=x, y=y, incompatible_shape_error=False)
        assert eq.shape.ndims is None
        got = _run([eq, ne])
        with pytest.raises(ValueError, match="Dimensions must be equal"):
            tf.equal(x, y)
    assert got[0] == False and got[1] == True  # noqa: E712  (numpy bools: `is` would fail)


def test_logical_ops_reject_non_bool():
    with tf.Graph().as_default():
        with pytest.raises(TypeError):
            tf.logical_and(tf.constant([1]), tf.constant([1]))
        with pytest.raises(TypeError):
            tf.constant([1]) & tf.constant([0])


# ----------------------------------------------------------------------- casts
@pytest.mark.parametrize(
    "x,dst,want",
    [
        (np.array([1.7, -1.7, 0.0], np.float32), "int32", [1, -1, 0]),
        (np.array([1.5, 0.0, -2.0], np.float64), "bool", [True, False, True]),
        (np.array([True, False]), "float32", [1.0, 0.0]),
        (np.array([1 + 2j, 3 - 1j], np.complex64), "float32", [1.0, 3.0]),
        (np.array([2**31 - 1], np.int64), "float64", [2.0**31 - 1]),
        (np.array([1, 2], np.int32), "complex128", [1 + 0j, 2 + 0j]),
        (np.array([300, -1], np.int32), "uint8", [44, 255]),
    ],
)
def test_cast(x, dst, want):
    with tf.Graph().as_default():
        out = tf.cast(x, dst)
        assert out.dtype == tf.as_dtype(dst)
        assert out.op.type == "Cast"
        assert out.op.get_attr("SrcT") == tf.as_dtype(x.dtype)
        assert out.op.get_attr("Truncate") is False
        got = _run(out)
    assert got.dtype == np.dtype(dst)
    np.testing.assert_array_equal(got, want)


def test_cast_same_dtype_is_identity_and_helpers():
    with tf.Graph().as_default():
        x = tf.constant([1.5, 2.5])
        assert tf.cast(x, tf.float32) is x
        outs = [tf.to_float(tf.constant([1])), tf.to_double(x), tf.to_int32(x), tf.to_int64(x)]
        assert [o.dtype for o in outs] == [tf.float32, tf.float64, tf.int32, tf.int64]
        assert outs[0].op.name == "ToFloat"
        v = tf.Variable([1, 2])
        cv = tf.cast(v, tf.float32)
        with tf.Session() as sess:
            sess.run(v.initializer)
            np.testing.assert_array_equal(sess.run(cv), [1.0, 2.0])


def test_cast_indexed_slices_keeps_indices():
    with tf.Graph().as_default():
        s = tf.IndexedSlices(tf.constant([[1, 2]]), tf.constant([1]), tf.constant([3, 2]))
        c = tf.cast(s, tf.float64)
        assert isinstance(c, tf.IndexedSlices) and c.dtype == tf.float64
        assert c.indices is s.indices


def test_saturate_cast_clamps():
    with tf.Graph().as_default():
        got = _run(
            [
                tf.saturate_cast(tf.constant([-10.0, 300.0, 7.9]), tf.uint8),
                tf.saturate_cast(tf.constant([2**40, -(2**40)], tf.int64), tf.int32),
            ]
        )
    np.testing.assert_array_equal(got[0], [0, 255, 7])
    np.testing.assert_array_equal(got[1], [2**31 - 1, -(2**31)])


def test_conj():
    with tf.Graph().as_default():
        r = tf.constant([1.0])
        assert tf.conj(r) is r
        got = _run(tf.conj(tf.constant([1 + 2j], tf.complex64)))
    assert got.dtype == np.complex64 and got[0] == 1 - 2j


def test_scalar_mul():
    with tf.Graph().as_default():
        x = tf.constant([[1.0, 2.0]])
        got = _run(tf.scalar_mul(3, x))
        s = tf.scalar_mul(2.0, tf.IndexedSlices(x, tf.constant([0])))
        assert isinstance(s, tf.IndexedSlices)
        with pytest.raises(ValueError, match="Only scalar multiply"):
            tf.scalar_mul(tf.constant([1.0, 2.0]), x)
    np.testing.assert_array_equal(got, [[3.0, 6.0]])


# ---------------------------------------------------------------- check_numerics
@pytest.mark.parametrize(
    "values,what",
    [([1.0, np.nan], "NaN"), ([np.inf, 1.0], "Inf"), ([np.nan, -np.inf], "Inf and NaN")],
)
def test_check_numerics_errors(values, what):
    with tf.Graph().as_default():
        out = tf.check_numerics(tf.constant(values), "my message")
        with pytest.raises(errors.InvalidArgumentError) as info:
            _run(out)
    assert f"my message : Tensor had {what} values" in str(info.value)


def test_check_numerics_passes_finite_values():
    with tf.Graph().as_default():
        got = _run(tf.check_numerics(tf.constant([1.0, 2.0]), "m"))
    np.testing.assert_array_equal(got, [1.0, 2.0])
