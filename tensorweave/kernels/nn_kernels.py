"""NumPy kernels of the neural-network ops.

Activations, softmax, bias, cross-entropy, L2 loss and top-k, with their gradient helper
ops.

Each kernel is a handful of whole-array NumPy calls; attrs are read once in the builder.
Results keep the op's dtype: Python scalars mixed with arrays are "weak" in NumPy 2, and
integer reductions pass `dtype=` explicitly. Convolution and pooling kernels live in
`nn_conv_kernels`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.framework.tensor_shape import shape_str
from tensorweave.kernels.registry import KernelNode, invalid, register_compute, register_kernel


def _check_same_shape(a: Any, b: Any, what: str = "gradients and features") -> None:
    if a.shape != b.shape:
        raise invalid(
            f"{what} must have the same shape: {shape_str(np.shape(a))} vs. "
            f"{shape_str(np.shape(b))}"
        )


# ------------------------------------------------------------------ activations
@register_compute("Relu")
def _relu(ctx: Any, x: Any) -> Any:
    return np.maximum(x, 0)


@register_compute("Relu6")
def _relu6(ctx: Any, x: Any) -> Any:
    return np.minimum(np.maximum(x, 0), 6)


# NOTE: `gradients * (features > 0)`, as TensorFlow's kernel (so a NaN gradient stays NaN);
# a multiply by the bool mask is ~5x faster than np.where here.
@register_compute("ReluGrad")
def _relu_grad(ctx: Any, g: Any, x: Any) -> Any:
    _check_same_shape(g, x)
    return np.multiply(g, np.greater(x, 0))


@register_compute("Relu6Grad")
def _relu6_grad(ctx: Any, g: Any, x: Any) -> Any:
    _check_same_shape(g, x)
    return np.multiply(g, (x > 0) & (x < 6))


@register_compute("Elu")
def _elu(ctx: Any, x: Any) -> Any:
    return np.where(x < 0, np.expm1(x), x)


@register_compute("EluGrad")
def _elu_grad(ctx: Any, g: Any, y: Any) -> Any:
    _check_same_shape(g, y, "gradients and outputs")
    return np.where(y < 0, g * (y + 1), g)


@register_kernel("LeakyRelu")
def _leaky_relu(node: KernelNode) -> Any:
    alpha = float(node.attrs["alpha"])

    def compute(ctx: Any, x: Any) -> Any:
        return np.where(x > 0, x, x * alpha)

    return compute


@register_kernel("LeakyReluGrad")
def _leaky_relu_grad(node: KernelNode) -> Any:
    alpha = float(node.attrs["alpha"])

    def compute(ctx: Any, g: Any, x: Any) -> Any:
        _check_same_shape(g, x)
        return np.where(x > 0, g, g * alpha)

    return compute


@register_compute("Softplus")
def _softplus(ctx: Any, x: Any) -> Any:
    return np.logaddexp(x, 0)


@register_compute("SoftplusGrad")
def _softplus_grad(ctx: Any, g: Any, x: Any) -> Any:
    _check_same_shape(g, x)
    return g / (np.exp(-x) + 1)


@register_compute("Softsign")
def _softsign(ctx: Any, x: Any) -> Any:
    return x / (np.abs(x) + 1)


@register_compute("SoftsignGrad")
def _softsign_grad(ctx: Any, g: Any, x: Any) -> Any:
    _check_same_shape(g, x)
    d = np.abs(x) + 1
    return g / (d * d)


# ---------------------------------------------------------------------- softmax
def _check_rank_at_least_1(x: Any) -> None:
    if np.ndim(x) < 1:
        raise invalid(f"logits must have >= 1 dimension, got {shape_str(np.shape(x))}")


@register_compute("Softmax")
def _softmax(ctx: Any, x: Any) -> Any:
    _check_rank_at_least_1(x)
    if not x.size:
        return np.array(x)
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


@register_compute("LogSoftmax")
def _log_softmax(ctx: Any, x: Any) -> Any:
    _check_rank_at_least_1(x)
    if not x.size:
        return np.array(x)
    shifted = x - np.max(x, axis=-1, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))


# ------------------------------------------------------------------------- bias
def _bias_axis(data_format: str, rank: int) -> int:
    return 1 if data_format == "NCHW" and rank >= 3 else rank - 1


@register_kernel("BiasAdd")
def _bias_add(node: KernelNode) -> Any:
    data_format = node.attrs["data_format"]

    def compute(ctx: Any, value: Any, bias: Any) -> Any:
        if value.ndim < 2:
            raise invalid(f"Input tensor must be at least 2D: {shape_str(value.shape)}")
        if bias.ndim != 1:
            raise invalid(f"Biases must be 1D: {shape_str(bias.shape)}")
        axis = _bias_axis(data_format, value.ndim)
        if value.shape[axis] != bias.shape[0]:
            raise invalid(
                "Must provide as many biases as the last dimension of the input tensor: "
                f"{shape_str(bias.shape)} vs. {shape_str(value.shape)}"
            )
        if axis != value.ndim - 1:
            bias = bias.reshape((-1,) + (1,) * (value.ndim - axis - 1))
        return value + bias

    return compute


@register_kernel("BiasAddGrad")
def _bias_add_grad(node: KernelNode) -> Any:
    data_format = node.attrs["data_format"]
    dtype = node.attrs["T"].as_numpy_dtype
    blas = np.dtype(dtype) in (np.float32, np.float64)

    # The last (read-only) vector of ones, reused while the row count holds; replaced as a
    # whole and read once per call, as steps may run concurrently.
    last_ones = np.ones(0, dtype)

    def compute(ctx: Any, g: Any) -> Any:
        nonlocal last_ones
        if g.ndim < 2:
            raise invalid(f"Input tensor must be at least 2D: {shape_str(g.shape)}")
        axis = _bias_axis(data_format, g.ndim)
        if axis == g.ndim - 1 and blas:
            # A BLAS vector-matrix product sums the rows ~2x faster than add.reduce.
            rows = g.reshape(-1, g.shape[-1])
            ones = last_ones
            if ones.shape[0] != rows.shape[0]:
                ones = np.ones(rows.shape[0], dtype)
                ones.flags.writeable = False
                last_ones = ones
            return np.dot(ones, rows)
        axes = tuple(i for i in range(g.ndim) if i != axis)
        return np.add.reduce(g, axis=axes, dtype=dtype)

    return compute


# ---------------------------------------------------------------- cross-entropy
@register_compute("SoftmaxCrossEntropyWithLogits")
def _softmax_xent(ctx: Any, logits: Any, labels: Any) -> Any:
    logits, labels = np.asarray(logits), np.asarray(labels)
    if logits.ndim != 2 or labels.ndim != 2:
        raise invalid(
            f"logits and labels must be 2-D, got logits shape {shape_str(logits.shape)} and "
            f"labels shape {shape_str(labels.shape)}"
        )
    try:
        logits, labels = np.broadcast_arrays(logits, labels)
    except ValueError:
        raise invalid(
            f"logits and labels must be broadcastable: logits_size={shape_str(logits.shape)} "
            f"labels_size={shape_str(labels.shape)}"
        ) from None
    if logits.shape[1] == 0:
        n = logits.shape[0]
        return np.zeros(n, logits.dtype), np.zeros(logits.shape, logits.dtype)
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    e = np.exp(shifted)
    s = np.sum(e, axis=1, keepdims=True)
    loss = np.sum(labels * (np.log(s) - shifted), axis=1)
    return loss, e / s - labels


def _label_values(labels: np.ndarray) -> str:
    return " ".join(str(int(v)) for v in labels.reshape(-1))


class _RowStarts:
    """The flat offset of each row's start for the last (rows, classes) a node saw (the
    batch shape rarely changes), kept by the node's kernel, read-only."""

    def __init__(self) -> None:
        self._last: tuple[tuple[int, int], np.ndarray] = ((-1, -1), np.zeros(0, np.int64))

    def get(self, n: int, c: int) -> np.ndarray:
        key, starts = self._last  # NOTE: one tuple: threads of concurrent steps see a pair
        if key != (n, c):
            starts = np.arange(0, n * c, c)
            starts.flags.writeable = False
            self._last = ((n, c), starts)
        return starts


@register_kernel("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_softmax_xent_kernel(node: Any) -> Any:
    row_starts = _RowStarts()

    def compute(ctx: Any, logits: Any, labels: Any) -> Any:
        return _sparse_softmax_xent(logits, labels, row_starts)

    return compute


def _sparse_softmax_xent(logits: Any, labels: Any, row_starts: _RowStarts) -> Any:
    logits, labels = np.asarray(logits), np.asarray(labels)
    if logits.ndim != 2:
        raise invalid(f"logits must be 2-D, but got shape {shape_str(logits.shape)}")
    if labels.ndim != 1:
        raise invalid(f"labels must be 1-D, but got shape {shape_str(labels.shape)}")
    n, c = logits.shape
    if labels.shape[0] != n:
        raise invalid(
            "logits and labels must have the same first dimension, got logits shape "
            f"{shape_str(logits.shape)} and labels shape {shape_str(labels.shape)}"
        )
    if c == 0 and n:
        raise invalid(
            f"Must have at least one class, but got logits shape {shape_str(logits.shape)}"
        )
    if n == 0:
        return np.zeros(0, logits.dtype), np.zeros(logits.shape, logits.dtype)
    # One reduction checks both bounds: negative labels are huge as unsigned integers.
    unsigned = labels.view(np.uint64 if labels.dtype.itemsize == 8 else np.uint32)
    if unsigned.max() >= c:
        bad = labels[(labels < 0) | (labels >= c)]
        raise invalid(
            f"Received a label value of {int(bad[0])} which is outside the valid range "
            f"of [0, {c}).  Label values: {_label_values(labels)}"
        )
    shifted = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    s = e.sum(axis=1, keepdims=True)
    flat = row_starts.get(n, c) + labels  # the label's position in each row, flattened
    loss = np.log(s).reshape(n)
    loss -= shifted.reshape(-1)[flat]
    np.divide(e, s, out=e)
    e.reshape(-1)[flat] -= 1
    return loss, e


@register_compute("L2Loss")
def _l2_loss(ctx: Any, t: Any) -> Any:
    t = np.asarray(t)
    flat = t.reshape(-1)
    return np.asarray(np.dot(flat, flat) / 2, dtype=t.dtype)


# ------------------------------------------------------------------------ top k
@register_compute("InTopKV2")
def _in_top_k(ctx: Any, predictions: Any, targets: Any, k: Any) -> Any:
    predictions, targets = np.asarray(predictions), np.asarray(targets)
    if predictions.ndim != 2:
        raise invalid(f"predictions must be 2-dimensional, got {shape_str(predictions.shape)}")
    if targets.ndim != 1:
        raise invalid(f"targets must be 1-dimensional, got {shape_str(targets.shape)}")
    n, c = predictions.shape
    if targets.shape[0] != n:
        raise invalid(
            f"First dimension of predictions {n} must match length of targets {targets.shape[0]}"
        )
    valid = (targets >= 0) & (targets < c)
    rows = np.arange(n)
    target_pred = predictions[rows, np.where(valid, targets, 0)] if c else np.zeros(n)
    larger = np.sum(predictions > target_pred[:, None], axis=1)
    return valid & np.isfinite(target_pred) & (larger < int(k))


@register_compute("TopKV2")
def _top_k(ctx: Any, x: Any, k: Any) -> Any:
    x = np.asarray(x)
    k = int(k)
    if x.ndim < 1:
        raise invalid("input must be >= 1-D, got shape []")
    if k < 0:
        raise invalid(f"Need k >= 0, got {k}")
    n = x.shape[-1]
    if n < k:
        raise invalid(f"input must have at least k columns. Had {n}, needed {k}")
    # A stable ascending sort of the reversed row, read backwards: descending values, ties
    # by lower index first (TensorFlow's order), for every dtype including unsigned ones.
    order = np.argsort(x[..., ::-1], axis=-1, kind="stable")[..., ::-1][..., :k]
    indices = (n - 1 - order).astype(np.int32)
    return np.take_along_axis(x, indices, axis=-1), indices
