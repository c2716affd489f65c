"""NumPy kernels of the N-d windowed ops: `Conv3D` (+ backprops), `MaxPool3D`,
`AvgPool3D` (+ grads), `DepthwiseConv2dNative` (+ backprops) and `MaxPoolWithArgmax` (+
grad), channels-last only (as TensorFlow's CPU kernels).

Windows are read-only strided views `[batch, *out, *window, channels]` of the padded input;
backprops scatter each window tap back with one vectorised add (col2im). SAME padding puts
the smaller half before, as TensorFlow; padded entries never win a max and are not counted
by an average. Max pooling routes gradients to the first maximum of each window in
row-major window order (TensorFlow's CPU tie-breaking).
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from tensorweave import errors
from tensorweave.kernels.registry import KernelNode, register_kernel


def _invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


def _shape_str(shape: Any) -> str:
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


@dataclasses.dataclass(frozen=True)
class _Geom:
    """One windowed op over `d` spatial dims: input/output sizes, window, stride, pads."""

    n: int
    sizes: tuple[int, ...]
    c: int
    outs: tuple[int, ...]
    ks: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    before: tuple[int, ...]
    after: tuple[int, ...]

    @property
    def d(self) -> int:
        """The number of spatial dimensions."""
        return len(self.sizes)


def _window(size: int, k: int, s: int, d: int, padding: str) -> tuple[int, int, int]:
    k_eff = (k - 1) * d + 1
    if padding == "SAME":
        out = (size + s - 1) // s
        needed = max(0, (out - 1) * s + k_eff - size)
        return out, needed // 2, needed - needed // 2
    out = int((size - k_eff + s) / s)
    if out < 0:
        raise _invalid(
            f"Computed output size would be negative: {out} [input_size: {size}, "
            f"effective_filter_size: {k_eff}, stride: {s}]"
        )
    return out, 0, 0


def _geom(shape: Any, ks: Any, strides: Any, dilations: Any, padding: str) -> _Geom:
    shape = [int(v) for v in shape]
    n, sizes, c = shape[0], tuple(shape[1:-1]), shape[-1]
    dims = [
        _window(size, int(k), int(s), int(dl), padding)
        for size, k, s, dl in zip(sizes, ks, strides, dilations)
    ]
    return _Geom(
        n,
        sizes,
        c,
        tuple(o for o, _, _ in dims),
        tuple(int(k) for k in ks),
        tuple(int(s) for s in strides),
        tuple(int(dl) for dl in dilations),
        tuple(b for _, b, _ in dims),
        tuple(a for _, _, a in dims),
    )


def _pad(x: np.ndarray, g: _Geom, value: Any) -> np.ndarray:
    if not any(g.before) and not any(g.after):
        return x
    widths = [(0, 0), *zip(g.before, g.after), (0, 0)]
    return np.pad(x, widths, constant_values=value)


def _windows(x: np.ndarray, g: _Geom, value: Any = 0) -> np.ndarray:
    """The read-only view `[n, *outs, *ks, c]` of the padded input."""
    xp = _pad(x, g, value)
    sp = xp.strides[1:-1]
    return as_strided(
        xp,
        shape=(g.n, *g.outs, *g.ks, g.c),
        strides=(
            xp.strides[0],
            *(a * s for a, s in zip(sp, g.strides)),
            *(a * dl for a, dl in zip(sp, g.dilations)),
            xp.strides[-1],
        ),
        writeable=False,
    )


def _scatter(g: _Geom, dtype: Any, tap: Any, channels: int | None = None) -> np.ndarray:
    """col2im: sums `tap(index)` (`[n, *outs, c]`) into every window tap `index`."""
    c = g.c if channels is None else channels
    padded = [s + b + a for s, b, a in zip(g.sizes, g.before, g.after)]
    out = np.zeros((g.n, *padded, c), dtype=dtype)
    if all(g.outs):
        for index in itertools.product(*(range(k) for k in g.ks)):
            region = tuple(
                slice(i * dl, i * dl + (o - 1) * s + 1, s)
                for i, dl, o, s in zip(index, g.dilations, g.outs, g.strides)
            )
            out[(slice(None), *region, slice(None))] += tap(index)
    crop = tuple(slice(b, b + s) for b, s in zip(g.before, g.sizes))
    return out[(slice(None), *crop, slice(None))]


def _lowest(dtype: Any) -> Any:
    dtype = np.dtype(dtype)
    return -np.inf if dtype.kind in "fc" else np.iinfo(dtype).min


def _check_rank(name: str, x: Any, rank: int) -> np.ndarray:
    x = np.asarray(x)
    if x.ndim != rank:
        raise _invalid(f"{name} must be {rank}-dimensional{_shape_str(x.shape)}")
    return x


def _sizes(name: str, sizes: Any, rank: int) -> list[int]:
    sizes = np.asarray(sizes)
    if sizes.shape != (rank,):
        raise _invalid(
            f"{name} must be a {rank}-element vector, got shape {_shape_str(sizes.shape)}"
        )
    return [int(v) for v in sizes]


def _check_dy(op: str, dy: np.ndarray, expected: tuple[int, ...]) -> None:
    if dy.shape != tuple(expected):
        raise _invalid(
            f"{op}: Size of out_backprop doesn't match computed: actual = "
            f"{_shape_str(dy.shape)}, computed = {_shape_str(expected)}"
        )


# ------------------------------------------------------------------------- config
def _config(node: KernelNode, rank: int, window_attr: str | None) -> dict[str, Any]:
    """Spatial strides/dilations/window of a channels-last op, TensorFlow's checks."""
    fmt = node.attrs.get("data_format", "NHWC")
    if fmt not in ("NHWC", "NDHWC"):
        raise _invalid(f"{node.op} on CPU only supports the channels-last data format")
    strides = [int(s) for s in node.attrs["strides"]]
    dilations = [int(d) for d in node.attrs.get("dilations", [1] * rank)]
    ks = [int(k) for k in node.attrs[window_attr]] if window_attr else [1] * rank
    for name, values in (("strides", strides), ("dilations", dilations), ("ksize", ks)):
        if len(values) != rank:
            raise _invalid(f"Sliding window {name} field must specify {rank} dimensions")
        if values[0] != 1 or values[-1] != 1:
            raise _invalid(
                f"Current implementation does not yet support {name} in the batch and depth "
                "dimensions."
            )
        if min(values) < 1:
            raise _invalid(f"Sliding window {name} must be positive")
    if node.attrs.get("explicit_paddings"):
        raise _invalid("explicit_paddings are not supported")
    return {
        "strides": strides[1:-1],
        "dilations": dilations[1:-1],
        "ks": ks[1:-1],
        "padding": node.attrs["padding"],
    }


def _conv_geom(x_shape: Any, f_shape: Any, cfg: dict[str, Any], depthwise: bool) -> _Geom:
    d = len(x_shape) - 2
    in_c, f_c = int(x_shape[-1]), int(f_shape[d])
    if in_c != f_c:
        what = (
            "input depth must equal filter depth"
            if depthwise
            else ("input depth must be evenly divisible by filter depth")
        )
        raise _invalid(f"{what}: {in_c} vs {f_c}")
    return _geom(x_shape, f_shape[:d], cfg["strides"], cfg["dilations"], cfg["padding"])


# ------------------------------------------------------------------- convolution
def _conv_forward(x: np.ndarray, f: np.ndarray, g: _Geom) -> np.ndarray:
    out = f.shape[-1]
    cols = _windows(x, g).reshape(-1, int(np.prod(g.ks)) * g.c)
    return np.matmul(cols, f.reshape(-1, out)).reshape(g.n, *g.outs, out)


def _conv_input(sizes: list[int], f: np.ndarray, dy: np.ndarray, g: _Geom) -> np.ndarray:
    out = f.shape[-1]
    cols = np.matmul(dy.reshape(-1, out), f.reshape(-1, out).T)
    cols = cols.reshape(g.n, *g.outs, *g.ks, g.c)
    d = g.d
    return _scatter(g, f.dtype, lambda i: cols[(slice(None),) * (1 + d) + i])


def _conv_filter(x: np.ndarray, sizes: list[int], dy: np.ndarray, g: _Geom) -> np.ndarray:
    out = sizes[-1]
    cols = _windows(x, g).reshape(-1, int(np.prod(g.ks)) * g.c)
    return np.matmul(cols.T, dy.reshape(-1, out)).reshape(sizes)


@register_kernel("Conv3D")
def _conv3d(node: KernelNode) -> Any:
    cfg = _config(node, 5, None)

    def compute(ctx: Any, x: Any, f: Any) -> Any:
        x, f = _check_rank("input", x, 5), _check_rank("filter", f, 5)
        return _conv_forward(x, f, _conv_geom(x.shape, f.shape, cfg, False))

    return compute


@register_kernel("Conv3DBackpropInputV2")
def _conv3d_backprop_input(node: KernelNode) -> Any:
    cfg = _config(node, 5, None)

    def compute(ctx: Any, input_sizes: Any, f: Any, dy: Any) -> Any:
        sizes = _sizes("input_sizes", input_sizes, 5)
        f, dy = _check_rank("filter", f, 5), _check_rank("out_backprop", dy, 5)
        g = _conv_geom(sizes, f.shape, cfg, False)
        _check_dy("Conv3DBackpropInputV2", dy, (g.n, *g.outs, f.shape[-1]))
        return _conv_input(sizes, f, dy, g)

    return compute


@register_kernel("Conv3DBackpropFilterV2")
def _conv3d_backprop_filter(node: KernelNode) -> Any:
    cfg = _config(node, 5, None)

    def compute(ctx: Any, x: Any, filter_sizes: Any, dy: Any) -> Any:
        sizes = _sizes("filter_sizes", filter_sizes, 5)
        x, dy = _check_rank("input", x, 5), _check_rank("out_backprop", dy, 5)
        g = _conv_geom(x.shape, sizes, cfg, False)
        _check_dy("Conv3DBackpropFilterV2", dy, (g.n, *g.outs, sizes[-1]))
        return _conv_filter(x, sizes, dy, g)

    return compute


# ------------------------------------------------------------------- depthwise
@register_kernel("DepthwiseConv2dNative")
def _depthwise(node: KernelNode) -> Any:
    cfg = _config(node, 4, None)

    def compute(ctx: Any, x: Any, f: Any) -> Any:
        x, f = _check_rank("input", x, 4), _check_rank("filter", f, 4)
        g = _conv_geom(x.shape, f.shape, cfg, True)
        out = np.einsum("nhwijc,ijcm->nhwcm", _windows(x, g), f)
        return out.reshape(g.n, *g.outs, -1)

    return compute


@register_kernel("DepthwiseConv2dNativeBackpropInput")
def _depthwise_input(node: KernelNode) -> Any:
    cfg = _config(node, 4, None)

    def compute(ctx: Any, input_sizes: Any, f: Any, dy: Any) -> Any:
        sizes = _sizes("input_sizes", input_sizes, 4)
        f, dy = _check_rank("filter", f, 4), _check_rank("out_backprop", dy, 4)
        g = _conv_geom(sizes, f.shape, cfg, True)
        m = f.shape[3]
        _check_dy("DepthwiseConv2dNativeBackpropInput", dy, (g.n, *g.outs, g.c * m))
        dy = dy.reshape(g.n, *g.outs, g.c, m)
        return _scatter(g, f.dtype, lambda i: np.einsum("nhwcm,cm->nhwc", dy, f[i]))

    return compute


@register_kernel("DepthwiseConv2dNativeBackpropFilter")
def _depthwise_filter(node: KernelNode) -> Any:
    cfg = _config(node, 4, None)

    def compute(ctx: Any, x: Any, filter_sizes: Any, dy: Any) -> Any:
        sizes = _sizes("filter_sizes", filter_sizes, 4)
        x, dy = _check_rank("input", x, 4), _check_rank("out_backprop", dy, 4)
        g = _conv_geom(x.shape, sizes, cfg, True)
        m = sizes[3]
        _check_dy("DepthwiseConv2dNativeBackpropFilter", dy, (g.n, *g.outs, g.c * m))
        dy = dy.reshape(g.n, *g.outs, g.c, m)
        return np.einsum("nhwijc,nhwcm->ijcm", _windows(x, g), dy).astype(x.dtype)

    return compute


# ---------------------------------------------------------------------- pooling
def _pool_geom(shape: Any, cfg: dict[str, Any]) -> _Geom:
    return _geom(shape, cfg["ks"], cfg["strides"], [1] * len(cfg["ks"]), cfg["padding"])


def _first_argmax(x: np.ndarray, g: _Geom) -> tuple[np.ndarray, np.ndarray]:
    """The max of each window and the flat window index of its first maximum."""
    win = _windows(x, g, _lowest(x.dtype))
    k = int(np.prod(g.ks))
    flat = np.moveaxis(win.reshape(g.n, *g.outs, k, g.c), -2, -1)
    arg = np.argmax(flat, axis=-1)
    return np.take_along_axis(flat, arg[..., None], -1)[..., 0], arg


def _avg_counts(g: _Geom, dtype: Any) -> np.ndarray:
    counts = np.ones((), dtype=np.int64)
    for size, o, k, s, b in zip(g.sizes, g.outs, g.ks, g.strides, g.before):
        start = np.arange(o) * s - b
        counts = np.multiply.outer(counts, np.minimum(start + k, size) - np.maximum(start, 0))
    return counts.astype(dtype).reshape(1, *g.outs, 1)


@register_kernel("MaxPool3D")
def _max_pool3d(node: KernelNode) -> Any:
    cfg = _config(node, 5, "ksize")

    def compute(ctx: Any, x: Any) -> Any:
        x = _check_rank("input", x, 5)
        return _first_argmax(x, _pool_geom(x.shape, cfg))[0]

    return compute


def _route(g: _Geom, grad: np.ndarray, arg: np.ndarray) -> np.ndarray:
    positions = list(itertools.product(*(range(k) for k in g.ks)))
    lookup = {p: t for t, p in enumerate(positions)}
    return _scatter(g, grad.dtype, lambda i: grad * (arg == lookup[i]))


@register_kernel("MaxPool3DGrad")
def _max_pool3d_grad(node: KernelNode) -> Any:
    cfg = _config(node, 5, "ksize")

    def compute(ctx: Any, x: Any, y: Any, grad: Any) -> Any:
        x, grad = _check_rank("orig_input", x, 5), _check_rank("grad", grad, 5)
        g = _pool_geom(x.shape, cfg)
        _check_dy("MaxPool3DGrad", grad, (g.n, *g.outs, g.c))
        return _route(g, grad, _first_argmax(x, g)[1]).astype(grad.dtype)

    return compute


@register_kernel("AvgPool3D")
def _avg_pool3d(node: KernelNode) -> Any:
    cfg = _config(node, 5, "ksize")

    def compute(ctx: Any, x: Any) -> Any:
        x = _check_rank("input", x, 5)
        g = _pool_geom(x.shape, cfg)
        sums = _windows(x, g).sum(axis=(4, 5, 6))
        return (sums / _avg_counts(g, x.dtype)).astype(x.dtype)

    return compute


@register_kernel("AvgPool3DGrad")
def _avg_pool3d_grad(node: KernelNode) -> Any:
    cfg = _config(node, 5, "ksize")

    def compute(ctx: Any, orig_input_shape: Any, grad: Any) -> Any:
        sizes = _sizes("orig_input_shape", orig_input_shape, 5)
        grad = _check_rank("grad", grad, 5)
        g = _pool_geom(sizes, cfg)
        _check_dy("AvgPool3DGrad", grad, (g.n, *g.outs, g.c))
        scaled = grad / _avg_counts(g, grad.dtype)
        return _scatter(g, grad.dtype, lambda i: scaled)

    return compute


# ------------------------------------------------------------ max pool with argmax
def _flat_positions(g: _Geom, include_batch: bool) -> np.ndarray:
    """`[n, h + pads, w + pads, c]` flat input index of every padded position (-1: pad)."""
    n, (h, w), c = g.n, g.sizes, g.c
    index = np.arange(n * h * w * c, dtype=np.int64).reshape(n, h, w, c)
    if not include_batch:
        index = index % (h * w * c)
    return _pad(index, g, -1)


@register_kernel("MaxPoolWithArgmax")
def _max_pool_with_argmax(node: KernelNode) -> Any:
    cfg = _config(node, 4, "ksize")
    include_batch = bool(node.attrs.get("include_batch_in_index", False))
    index_dtype = node.output_dtypes[1].as_numpy_dtype

    def compute(ctx: Any, x: Any) -> Any:
        x = _check_rank("input", x, 4)
        g = _pool_geom(x.shape, cfg)
        best, arg = _first_argmax(x, g)
        # The positions are padded already: window them without padding again.
        no_pad = dataclasses.replace(g, before=(0, 0), after=(0, 0))
        positions = _windows(_flat_positions(g, include_batch), no_pad)
        k = int(np.prod(g.ks))
        flat = np.moveaxis(positions.reshape(g.n, *g.outs, k, g.c), -2, -1)
        argmax = np.take_along_axis(flat, arg[..., None], -1)[..., 0]
        return best, argmax.astype(index_dtype)

    return compute


@register_kernel("MaxPoolGradWithArgmax")
def _max_pool_grad_with_argmax(node: KernelNode) -> Any:
    include_batch = bool(node.attrs.get("include_batch_in_index", False))

    def compute(ctx: Any, x: Any, grad: Any, argmax: Any) -> Any:
        x = _check_rank("input", x, 4)
        grad = np.asarray(grad)
        if grad.shape != np.shape(argmax):
            raise _invalid(
                f"Expected argmax shape to be {_shape_str(grad.shape)}, but got "
                f"{_shape_str(np.shape(argmax))}"
            )
        out = np.zeros(x.size, dtype=grad.dtype)
        index = np.asarray(argmax, dtype=np.int64)
        if not include_batch:
            per_image = x.size // max(x.shape[0], 1)
            index = index + (np.arange(x.shape[0]) * per_image).reshape(-1, 1, 1, 1)
        np.add.at(out, index.reshape(-1), grad.reshape(-1))
        return out.reshape(x.shape)

    return compute
