"""NumPy kernels of 2-D convolution and pooling (NHWC, as TensorFlow's CPU kernels).

Windows are strided views of the (padded) input, `[batch, out_h, out_w, k_h, k_w, ch]`,
made with `as_strided` and never written. `Conv2D` and `Conv2DBackpropFilter` copy the
windows once into an im2col matrix `[batch * out_h * out_w, k_h * k_w * in_ch]` and make
one matmul; `Conv2DBackpropInput` makes one matmul into column space and scatters the
columns back with one vectorised add per kernel tap (col2im). Pooling combines the window
view one window position at a time (one whole-array `maximum`/`add` per position, much
faster than NumPy reductions over short axes); `MaxPoolGrad` routes each gradient to the
first maximum of its window, row-major (TensorFlow's CPU tie-breaking), with the same
per-position scatter as col2im.

SAME padding follows TensorFlow: `out = ceil(in / stride)`, the padding split with the
smaller half before. Average pooling divides by the number of real (unpadded) entries.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from tensorweave.framework.tensor_shape import shape_str
from tensorweave.kernels.registry import KernelNode, invalid, register_kernel


@dataclasses.dataclass(frozen=True)
class _Geometry:
    """Sizes of one NHWC windowed op: input, output, window, stride, dilation, padding."""

    n: int
    h: int
    w: int
    c: int
    oh: int
    ow: int
    kh: int
    kw: int
    sh: int
    sw: int
    dh: int = 1
    dw: int = 1
    pt: int = 0
    pb: int = 0
    pl: int = 0
    pr: int = 0

    @property
    def padded(self) -> tuple[int, int, int, int]:
        """The shape of the padded input."""
        return (self.n, self.h + self.pt + self.pb, self.w + self.pl + self.pr, self.c)

    @property
    def out_shape(self) -> tuple[int, int, int]:
        """`(batch, out_h, out_w)`."""
        return (self.n, self.oh, self.ow)


def _window(size: int, k: int, s: int, d: int, padding: str) -> tuple[int, int, int]:
    """`(output size, padding before, padding after)` of one spatial dimension."""
    k_eff = (k - 1) * d + 1
    if padding == "SAME":
        out = (size + s - 1) // s
        needed = max(0, (out - 1) * s + k_eff - size)
        return out, needed // 2, needed - needed // 2
    out = int((size - k_eff + s) / s)  # C division, truncating toward zero, as TensorFlow
    if out < 0:
        raise invalid(
            f"Computed output size would be negative: {out} [input_size: {size}, "
            f"effective_filter_size: {k_eff}, stride: {s}]"
        )
    return out, 0, 0


def _geometry(
    shape: Any, kh: int, kw: int, strides: list[int], dilations: list[int], padding: str
) -> _Geometry:
    n, h, w, c = (int(d) for d in shape)
    oh, pt, pb = _window(h, kh, strides[1], dilations[1], padding)
    ow, pl, pr = _window(w, kw, strides[2], dilations[2], padding)
    return _Geometry(
        n, h, w, c, oh, ow, kh, kw, strides[1], strides[2], dilations[1], dilations[2],
        pt, pb, pl, pr,
    )  # fmt: skip


def _pad(x: np.ndarray, g: _Geometry, value: Any) -> np.ndarray:
    if not (g.pt or g.pb or g.pl or g.pr):
        return x
    out = np.full(g.padded, value, dtype=x.dtype)
    out[:, g.pt : g.pt + g.h, g.pl : g.pl + g.w, :] = x
    return out


def _windows(xp: np.ndarray, g: _Geometry) -> np.ndarray:
    """The read-only window view `[n, oh, ow, kh, kw, c]` of the padded input."""
    s0, s1, s2, s3 = xp.strides
    return as_strided(
        xp,
        shape=(g.n, g.oh, g.ow, g.kh, g.kw, g.c),
        strides=(s0, s1 * g.sh, s2 * g.sw, s1 * g.dh, s2 * g.dw, s3),
        writeable=False,
    )


def _taps(win: np.ndarray, g: _Geometry) -> Any:
    """`(t, view)` for each window position `t = i * kw + j`; views are `[n, oh, ow, c]`."""
    for t in range(g.kh * g.kw):
        yield t, win[:, :, :, t // g.kw, t % g.kw, :]


def _im2col(x: np.ndarray, g: _Geometry) -> np.ndarray:
    """`[n * oh * ow, kh * kw * c]`: one row per output position.

    Copied one window position at a time: with few channels this is ~2x faster than
    letting NumPy copy the 6-D window view at once.
    """
    cols = np.empty((g.n, g.oh, g.ow, g.kh, g.kw, g.c), dtype=x.dtype)
    for t, tap in _taps(_windows(_pad(x, g, 0), g), g):
        cols[:, :, :, t // g.kw, t % g.kw, :] = tap
    return cols.reshape(g.n * g.oh * g.ow, g.kh * g.kw * g.c)


def _scatter_taps(g: _Geometry, dtype: Any, tap: Any) -> np.ndarray:
    """col2im: sums `tap(i, j)` (`[n, oh, ow, c]`) into every window position (i, j).

    Returns the unpadded `[n, h, w, c]` result.
    """
    out = np.zeros(g.padded, dtype=dtype)
    if g.oh and g.ow:
        h_span, w_span = (g.oh - 1) * g.sh + 1, (g.ow - 1) * g.sw + 1
        for i in range(g.kh):
            for j in range(g.kw):
                r, c = i * g.dh, j * g.dw
                out[:, r : r + h_span : g.sh, c : c + w_span : g.sw, :] += tap(i, j)
    return out[:, g.pt : g.pt + g.h, g.pl : g.pl + g.w, :]


def _lowest(dtype: Any) -> Any:
    dtype = np.dtype(dtype)
    return -np.inf if dtype.kind in "fc" else np.iinfo(dtype).min


def _check_rank4(name: str, x: Any) -> np.ndarray:
    x = np.asarray(x)
    if x.ndim != 4:
        raise invalid(f"{name} must be 4-dimensional{shape_str(x.shape)}")
    return x


def _sizes(name: str, sizes: Any) -> list[int]:
    sizes = np.asarray(sizes)
    if sizes.shape != (4,):
        raise invalid(f"{name} must be a 4-element vector, got shape {shape_str(sizes.shape)}")
    return [int(v) for v in sizes]


# ------------------------------------------------------------------ attr checks
def _conv_config(node: KernelNode) -> tuple[list[int], list[int], str]:
    strides = [int(s) for s in node.attrs["strides"]]
    dilations = [int(d) for d in node.attrs.get("dilations", [1, 1, 1, 1])]
    if node.attrs.get("data_format", "NHWC") != "NHWC":
        raise invalid("Generic conv implementation only supports NHWC tensor format for now.")
    if len(strides) != 4:
        raise invalid("Sliding window strides field must specify 4 dimensions")
    if len(dilations) != 4:
        raise invalid("Sliding window dilations field must specify 4 dimensions")
    if strides[0] != 1 or strides[3] != 1:
        raise invalid(
            "Current implementation does not yet support strides in the batch and depth dimensions."
        )
    if dilations[0] != 1 or dilations[3] != 1:
        raise invalid(
            "Current implementation does not yet support dilations in the batch and depth "
            "dimensions."
        )
    if min(strides) < 1 or min(dilations) < 1:
        raise invalid("Strides and dilations must be positive")
    if node.attrs.get("explicit_paddings"):
        raise invalid("explicit_paddings are not supported")
    return strides, dilations, node.attrs["padding"]


def _pool_config(node: KernelNode, kind: str) -> tuple[list[int], list[int], str]:
    ksize = [int(k) for k in node.attrs["ksize"]]
    strides = [int(s) for s in node.attrs["strides"]]
    if node.attrs.get("data_format", "NHWC") != "NHWC":
        raise invalid(f"Default {kind}PoolingOp only supports NHWC on device type CPU")
    if len(ksize) != 4:
        raise invalid("Sliding window ksize field must specify 4 dimensions")
    if len(strides) != 4:
        raise invalid("Sliding window stride field must specify 4 dimensions")
    if ksize[0] != 1 or strides[0] != 1:
        raise invalid("Pooling is not yet supported on the batch dimension.")
    if ksize[3] != 1 or strides[3] != 1:
        raise invalid("Pooling is not yet supported on the depth dimension.")
    if min(ksize) < 1 or min(strides) < 1:
        raise invalid("Sliding window ksize and strides must be positive")
    return ksize, strides, node.attrs["padding"]


# ------------------------------------------------------------------ convolution
def _conv_geometry(x_shape: Any, f_shape: Any, config: Any) -> _Geometry:
    strides, dilations, padding = config
    if int(x_shape[3]) != int(f_shape[2]):
        raise invalid(
            f"input depth must be evenly divisible by filter depth: {int(x_shape[3])} vs "
            f"{int(f_shape[2])}"
        )
    return _geometry(x_shape, int(f_shape[0]), int(f_shape[1]), strides, dilations, padding)


def _check_out_backprop(op: str, dy: np.ndarray, g: _Geometry, out_channels: int) -> None:
    expected = (*g.out_shape, out_channels)
    if dy.shape != expected:
        raise invalid(
            f"{op}: Size of out_backprop doesn't match computed: actual = "
            f"{shape_str(dy.shape)}, computed = {shape_str(expected)}"
        )


@register_kernel("Conv2D")
def _conv2d(node: KernelNode) -> Any:
    config = _conv_config(node)

    def compute(ctx: Any, x: Any, f: Any) -> Any:
        x, f = _check_rank4("input", x), _check_rank4("filter", f)
        g = _conv_geometry(x.shape, f.shape, config)
        out = f.shape[3]
        cols = _im2col(x, g)
        return np.matmul(cols, f.reshape(-1, out)).reshape(*g.out_shape, out)

    return compute


@register_kernel("Conv2DBackpropInput")
def _conv2d_backprop_input(node: KernelNode) -> Any:
    config = _conv_config(node)

    def compute(ctx: Any, input_sizes: Any, f: Any, dy: Any) -> Any:
        sizes = _sizes("input_sizes", input_sizes)
        f, dy = _check_rank4("filter", f), _check_rank4("out_backprop", dy)
        g = _conv_geometry(sizes, f.shape, config)
        out = f.shape[3]
        _check_out_backprop("Conv2DBackpropInput", dy, g, out)
        cols = np.matmul(dy.reshape(-1, out), f.reshape(-1, out).T)
        cols = cols.reshape(*g.out_shape, g.kh, g.kw, g.c)
        return _scatter_taps(g, f.dtype, lambda i, j: cols[:, :, :, i, j, :])

    return compute


@register_kernel("Conv2DBackpropFilter")
def _conv2d_backprop_filter(node: KernelNode) -> Any:
    config = _conv_config(node)

    def compute(ctx: Any, x: Any, filter_sizes: Any, dy: Any) -> Any:
        sizes = _sizes("filter_sizes", filter_sizes)
        x, dy = _check_rank4("input", x), _check_rank4("out_backprop", dy)
        g = _conv_geometry(x.shape, sizes, config)
        out = sizes[3]
        _check_out_backprop("Conv2DBackpropFilter", dy, g, out)
        cols = _im2col(x, g)
        return np.matmul(cols.T, dy.reshape(-1, out)).reshape(sizes)

    return compute


# ---------------------------------------------------------------------- pooling
def _pool_geometry(shape: Any, config: Any) -> _Geometry:
    ksize, strides, padding = config
    return _geometry(shape, ksize[1], ksize[2], strides, [1, 1, 1, 1], padding)


def _window_max(x: np.ndarray, g: _Geometry, with_argmax: bool) -> tuple[np.ndarray, Any]:
    """The max of each window and, if asked, the position `t` of its first maximum.

    One vectorised comparison per window position (strict `>`: the first maximum in
    row-major window order wins, as in TensorFlow's CPU kernels).
    """
    taps = _taps(_windows(_pad(x, g, _lowest(x.dtype)), g), g)
    best = next(taps)[1].copy()
    index_type = np.int8 if g.kh * g.kw <= 127 else np.intp
    argmax = np.zeros(best.shape, dtype=index_type) if with_argmax else None
    for t, tap in taps:
        if argmax is not None:
            # Arithmetic select: faster than np.where/np.copyto(where=) on strided views.
            argmax += (t - argmax) * (tap > best)
        np.maximum(best, tap, out=best)
    return best, argmax


def _check_grad_shape(grad: np.ndarray, expected: tuple[int, ...]) -> None:
    if grad.shape != expected:
        raise invalid(
            f"Expected grad shape to be {shape_str(expected)}, but got {shape_str(grad.shape)}"
        )


@register_kernel("MaxPool")
def _max_pool(node: KernelNode) -> Any:
    config = _pool_config(node, "MaxPooling")

    def compute(ctx: Any, x: Any) -> Any:
        x = _check_rank4("input", x)
        g = _pool_geometry(x.shape, config)
        return _window_max(x, g, with_argmax=False)[0]

    return compute


@register_kernel("MaxPoolGrad")
def _max_pool_grad(node: KernelNode) -> Any:
    config = _pool_config(node, "MaxPooling")

    def compute(ctx: Any, x: Any, y: Any, grad: Any) -> Any:
        x, grad = _check_rank4("orig_input", x), _check_rank4("grad", grad)
        g = _pool_geometry(x.shape, config)
        _check_grad_shape(grad, (*g.out_shape, g.c))
        argmax = _window_max(x, g, with_argmax=True)[1]
        return _scatter_taps(g, grad.dtype, lambda i, j: grad * (argmax == i * g.kw + j))

    return compute


@register_kernel("MaxPoolGradGrad")
def _max_pool_grad_grad(node: KernelNode) -> Any:
    config = _pool_config(node, "MaxPooling")

    def compute(ctx: Any, x: Any, y: Any, grad: Any) -> Any:
        x, grad = _check_rank4("orig_input", x), _check_rank4("grad", grad)
        if grad.shape != x.shape:
            raise invalid(
                f"grad must have the shape of orig_input: {shape_str(grad.shape)} vs. "
                f"{shape_str(x.shape)}"
            )
        g = _pool_geometry(x.shape, config)
        argmax = _window_max(x, g, with_argmax=True)[1]
        out = np.zeros((*g.out_shape, g.c), dtype=grad.dtype)
        for t, tap in _taps(_windows(_pad(grad, g, 0), g), g):
            out += tap * (argmax == t)
        return out

    return compute


def _avg_counts(g: _Geometry, dtype: Any) -> np.ndarray:
    """`[1, oh, ow, 1]`: how many real (unpadded) entries each window covers."""
    top = np.arange(g.oh) * g.sh - g.pt
    left = np.arange(g.ow) * g.sw - g.pl
    rows = np.minimum(top + g.kh, g.h) - np.maximum(top, 0)
    cols = np.minimum(left + g.kw, g.w) - np.maximum(left, 0)
    return np.outer(rows, cols).astype(dtype).reshape(1, g.oh, g.ow, 1)


@register_kernel("AvgPool")
def _avg_pool(node: KernelNode) -> Any:
    config = _pool_config(node, "AvgPooling")

    def compute(ctx: Any, x: Any) -> Any:
        x = _check_rank4("input", x)
        g = _pool_geometry(x.shape, config)
        taps = _taps(_windows(_pad(x, g, 0), g), g)
        sums = next(taps)[1].copy()
        for _, tap in taps:
            np.add(sums, tap, out=sums)
        return sums / _avg_counts(g, x.dtype)

    return compute


@register_kernel("AvgPoolGrad")
def _avg_pool_grad(node: KernelNode) -> Any:
    config = _pool_config(node, "AvgPooling")

    def compute(ctx: Any, orig_input_shape: Any, grad: Any) -> Any:
        sizes = _sizes("orig_input_shape", orig_input_shape)
        grad = _check_rank4("grad", grad)
        g = _pool_geometry(sizes, config)
        _check_grad_shape(grad, (*g.out_shape, g.c))
        scaled = grad / _avg_counts(g, grad.dtype)
        return _scatter_taps(g, grad.dtype, lambda i, j: scaled)

    return compute
