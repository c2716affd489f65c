"""Numerical gradient checking.

`compute_gradient` and `compute_gradient_error` follow TF 1.x `tf.test.compute_gradient`
and `tf.test.compute_gradient_error` (`tensorflow/python/ops/gradient_checker.py`): the
theoretical Jacobian comes from `tf.gradients` with one-hot `grad_ys`, one column per
element of y; the numerical one from central differences, one row per element of x. Both
are float64 arrays of shape `[x_size, y_size]`. Complex tensors are not supported.

`check_gradients` runs one `GradientCase` on float64 inputs and raises an
`AssertionError` naming the op, the case, the input and the worst element (in the style
of minitorch's `grad_check`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from tensorweave.client.session import Session
from tensorweave.framework import dtypes, session_stack
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.operation import Tensor
from tensorweave.ops import array_ops
from tensorweave.ops.gradients_impl import gradients
from tensorweave.testing.gradient_case import GradientCase

# Least precise float type in the graph -> (delta, absolute and relative tolerance).
_PRECISION = {
    dtypes.float64: (1e-6, 1e-5),
    dtypes.float32: (1e-3, 5e-3),
    dtypes.float16: (1e-2, 1e-1),
}


def _size(shape: Sequence[int]) -> int:
    return int(np.prod(shape, dtype=np.int64))


def _as_shape(shape: Any) -> tuple[int, ...]:
    return (int(shape),) if np.isscalar(shape) else tuple(int(d) for d in shape)


# ------------------------------------------------------------------- the Jacobians
def _theoretical_jacobian(
    sess: Any,
    dx: Any,
    x_shape: tuple[int, ...],
    dy: Tensor,
    dy_shape: tuple[int, ...],
    feeds: dict[Any, Any],
) -> np.ndarray:
    """`[x_size, y_size]`: column j is the gradient for a one-hot `grad_ys` at element j.

    Raises:
      ValueError: if the gradient has another number of elements than x.
    """
    x_size, dy_size = _size(x_shape), _size(dy_shape)
    jacobian = np.zeros((x_size, dy_size), dtype=np.float64)
    if dx is None:
        return jacobian
    dy_data = np.zeros(dy_shape, dtype=dy.dtype.base_dtype.as_numpy_dtype)
    row_size = _size(x_shape[1:])
    for col in range(dy_size):
        dy_data.flat[col] = 1
        run_feeds = {**feeds, dy: dy_data}
        if isinstance(dx, IndexedSlices):
            indices, values = sess.run([dx.indices, dx.values], run_feeds)
            for i, v in zip(np.ravel(indices), values):
                jacobian[int(i) * row_size : (int(i) + 1) * row_size, col] += np.ravel(v)
        else:
            value = np.asarray(sess.run(dx, run_feeds), dtype=np.float64)
            if value.size != x_size:
                raise ValueError(
                    f"gradient has shape {value.shape}, but its input has shape {x_shape}"
                )
            jacobian[:, col] = value.ravel()
        dy_data.flat[col] = 0
    return jacobian


def _numeric_jacobian(
    sess: Any,
    x: Tensor,
    x_data: np.ndarray,
    y: Tensor,
    y_size: int,
    delta: float,
    feeds: dict[Any, Any],
) -> np.ndarray:
    """`[x_size, y_size]`: row i is `(y(x + delta e_i) - y(x - delta e_i)) / (2 delta)`."""
    x_data = np.asarray(x_data, dtype=np.float64)
    jacobian = np.zeros((x_data.size, y_size), dtype=np.float64)
    for row in range(x_data.size):
        x_pos, x_neg = x_data.copy(), x_data.copy()
        x_pos.flat[row] += delta
        x_neg.flat[row] -= delta
        y_pos = np.asarray(sess.run(y, {**feeds, x: x_pos}), dtype=np.float64)
        y_neg = np.asarray(sess.run(y, {**feeds, x: x_neg}), dtype=np.float64)
        jacobian[row, :] = ((y_pos - y_neg) / (2 * delta)).ravel()
    return jacobian


def _gradient_and_dy(x: list[Tensor], y: Tensor, y_shape: Any) -> tuple[list[Any], Tensor]:
    """The gradients of y w.r.t. each x for a `grad_ys` placeholder, and the placeholder."""
    with y.graph.as_default():
        dy = array_ops.placeholder(y.dtype.base_dtype, shape=y_shape, name="grad_y")
        return gradients(y, x, grad_ys=dy), dy


@contextlib.contextmanager
def _session_for(graph: graph_mod.Graph) -> Iterator[Any]:
    """The default session when it runs `graph`, else a temporary one."""
    sess = session_stack.get_default_session()
    if sess is not None and sess.graph is graph:
        yield sess
        return
    with Session(graph=graph) as sess:
        yield sess


def compute_gradient(
    x: Any,
    x_shape: Any,
    y: Tensor,
    y_shape: Any,
    x_init_value: Any = None,
    delta: float = 1e-3,
    init_targets: Any = None,
    extra_feed_dict: dict[Any, Any] | None = None,
) -> Any:
    """The theoretical and numerical Jacobians of y w.r.t. x.

    Follows TF 1.x `tf.test.compute_gradient`. Runs in the default session when it belongs
    to y's graph, else in a temporary one.

    Args:
      x: a float Tensor, or a list of them; each must be feedable.
      x_shape: the shape of x, or a list of shapes when x is a list.
      y: a float Tensor.
      y_shape: the shape of y.
      x_init_value: the value of x (a list when x is a list); None draws uniformly from
        `[0, 1)` with `np.random`.
      delta: the central-difference step.
      init_targets: ops run once first (e.g. variable initializers).
      extra_feed_dict: further feeds for every run.

    Returns:
      `(theoretical, numerical)`, two float64 arrays of shape `[x_size, y_size]`; a list of
      such pairs when x is a list.

    Raises:
      TypeError: if x or y is not of a float type.
      ValueError: if `x_init_value` does not have the shape `x_shape`.
    """
    xs = x if isinstance(x, list) else [x]
    shapes = [_as_shape(s) for s in x_shape] if isinstance(x, list) else [_as_shape(x_shape)]
    inits = x_init_value if isinstance(x, list) else [x_init_value]
    if inits is None:
        inits = [None] * len(xs)
    for t in [*xs, y]:
        if not t.dtype.base_dtype.is_floating:
            raise TypeError(f"compute_gradient supports float tensors only, got {t}")
    y_shape = _as_shape(y_shape)
    dxs, dy = _gradient_and_dy(xs, y, y_shape)
    with _session_for(y.graph) as sess:
        if init_targets is not None:
            sess.run(list(init_targets))
        result = []
        for xi, shape, init, dx in zip(xs, shapes, inits, dxs):
            if init is None:
                init = np.random.random_sample(shape)
            init = np.asarray(init, dtype=np.float64)
            if init.shape != shape:
                raise ValueError(f"x_shape = {shape}, init_data shape = {init.shape}")
            feeds = {**(extra_feed_dict or {}), xi: init}
            jt = _theoretical_jacobian(sess, dx, shape, dy, y_shape, feeds)
            jn = _numeric_jacobian(sess, xi, init, y, _size(y_shape), delta, feeds)
            result.append((jt, jn))
    return result if isinstance(x, list) else result[0]


def compute_gradient_error(
    x: Any,
    x_shape: Any,
    y: Tensor,
    y_shape: Any,
    x_init_value: Any = None,
    delta: float = 1e-3,
    init_targets: Any = None,
    extra_feed_dict: dict[Any, Any] | None = None,
) -> float:
    """The largest absolute difference between the theoretical and numerical Jacobians.

    Follows TF 1.x `tf.test.compute_gradient_error`; arguments as `compute_gradient`.
    """
    grad = compute_gradient(
        x, x_shape, y, y_shape, x_init_value, delta, init_targets, extra_feed_dict
    )
    pairs = grad if isinstance(grad, list) else [grad]
    error = 0.0
    for jt, jn in pairs:
        if jt.size or jn.size:
            error = max(error, float(np.fabs(jt - jn).max()))
    return error


# ------------------------------------------------------------------ GradientCase
def _label(case: GradientCase) -> str:
    return f"op '{case.op_type}' (case '{case.name or case.op_type}')"


def _precision(graph: graph_mod.Graph) -> tuple[float, float]:
    """Step and tolerance for the least precise float type computed in `graph`."""
    kinds = {t.dtype.base_dtype for op in graph.get_operations() for t in op.outputs}
    for dtype in (dtypes.float16, dtypes.float32):
        if dtype in kinds:
            return _PRECISION[dtype]
    return _PRECISION[dtypes.float64]


def _outputs(out: Any) -> list[Tensor]:
    outs = list(out) if isinstance(out, list | tuple) else [out]
    for t in outs:
        if not isinstance(t, Tensor) or not t.dtype.base_dtype.is_floating:
            raise TypeError(f"build() must return float Tensors, got {t!r}")
    return outs


def _build(case: GradientCase) -> tuple[graph_mod.Graph, list[Tensor], list[Any]]:
    """The case's graph: inputs, and per output `(y, dxs, dy)`."""
    g = graph_mod.Graph()
    with g.as_default():
        xs = [
            array_ops.placeholder(dtypes.float64, shape=shape, name=f"input_{i}")
            for i, shape in enumerate(case.input_shapes)
        ]
        checks = []
        for y in _outputs(case.build(*xs)):
            dxs, dy = _gradient_and_dy(xs, y, y.shape)
            checks.append((y, dxs, dy))
    return g, xs, checks


def check_gradients(case: GradientCase, rng: np.random.Generator) -> None:
    """Checks the gradient of `case.build` w.r.t. every input by central differences.

    Inputs are float64 placeholders of `case.input_shapes`, fed values drawn uniformly
    from `case.input_range`; step and tolerance follow the least precise float type in
    the graph (float64: step 1e-6, tolerance 1e-5 absolute + 1e-5 relative).

    Raises:
      AssertionError: naming the op type, the case, the input index and the worst element
        of the Jacobian with the theoretical and numerical values; or wrapping the error
        raised while building or running the graph.
    """
    try:
        graph, xs, checks = _build(case)
    except Exception as e:
        raise AssertionError(f"{_label(case)}: building the gradient failed: {e!r}") from e
    delta, tol = _precision(graph)
    low, high = case.input_range
    data = [rng.uniform(low, high, size=shape) for shape in case.input_shapes]
    feeds = dict(zip(xs, data))
    with Session(graph=graph) as sess:
        for j, (y, dxs, dy) in enumerate(checks):
            try:
                y_shape = np.shape(sess.run(y, feeds))
                for i, (x, dx) in enumerate(zip(xs, dxs)):
                    shape = tuple(case.input_shapes[i])
                    jt = _theoretical_jacobian(sess, dx, shape, dy, y_shape, feeds)
                    jn = _numeric_jacobian(sess, x, data[i], y, _size(y_shape), delta, feeds)
                    _compare(case, i, j if len(checks) > 1 else None, shape, y_shape, jt, jn, tol)
            except AssertionError:
                raise
            except Exception as e:
                raise AssertionError(f"{_label(case)}: running the check failed: {e!r}") from e


def _compare(
    case: GradientCase,
    i: int,
    j: int | None,
    x_shape: tuple[int, ...],
    y_shape: tuple[int, ...],
    jt: np.ndarray,
    jn: np.ndarray,
    tol: float,
) -> None:
    """Raises AssertionError at the Jacobian element that exceeds `tol` the most."""
    if not jt.size:
        return
    allowed = tol + tol * np.abs(jn)
    with np.errstate(invalid="ignore"):
        excess = np.abs(jt - jn) / allowed
    excess = np.where(np.isnan(jt) & np.isnan(jn), 0.0, excess)
    excess = np.where(np.isnan(excess), np.inf, excess)
    worst = int(np.argmax(excess))
    if excess.flat[worst] <= 1.0:
        return
    row, col = np.unravel_index(worst, jt.shape)
    x_index = tuple(int(k) for k in np.unravel_index(row, x_shape)) if x_shape else ()
    y_index = tuple(int(k) for k in np.unravel_index(col, y_shape)) if y_shape else ()
    output = "output" if j is None else f"output {j}"
    raise AssertionError(
        f"Gradient check failed for {_label(case)}: input {i} (shape {x_shape}) element "
        f"{x_index}, {output} element {y_index}: theoretical {float(jt[row, col]):.6g} vs "
        f"numerical {float(jn[row, col]):.6g} (|diff| {abs(jt[row, col] - jn[row, col]):.3g} > "
        f"{tol:g} + {tol:g} * |numerical|)"
    )


__all__ = ["check_gradients", "compute_gradient", "compute_gradient_error"]
