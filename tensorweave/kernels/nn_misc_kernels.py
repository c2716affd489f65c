"""NumPy kernels of `DepthToSpace`, `SpaceToDepth`, `SpaceToBatchND`, `BatchToSpaceND`,
`Dilation2D` (+ backprops) and `CTCLoss` (follow TensorFlow's CPU kernels).

`CTCLoss` runs the forward-backward recursion of Graves et al. (2006) in log space, with
the blank as the last class, and returns the loss `-log p(labels | inputs)` and its
gradient w.r.t. the unnormalized inputs (`softmax - posterior`), as TensorFlow's op.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.kernels.registry import KernelNode, register_kernel


def _invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


# ------------------------------------------------------------------ depth / space
def _nhwc(node: KernelNode) -> bool:
    fmt = node.attrs.get("data_format", "NHWC")
    if fmt not in ("NHWC", "NCHW"):
        raise _invalid(f"{node.op} only supports NHWC and NCHW on CPU")
    return fmt == "NHWC"


@register_kernel("DepthToSpace")
def _depth_to_space(node: KernelNode) -> Any:
    bs, nhwc = int(node.attrs["block_size"]), _nhwc(node)

    def compute(ctx: Any, x: Any) -> Any:
        x = x if nhwc else np.transpose(x, [0, 2, 3, 1])
        n, h, w, c = x.shape
        if c % (bs * bs):
            raise _invalid(f"Input depth dimension {c} should be divisible by: {bs * bs}")
        y = x.reshape(n, h, w, bs, bs, c // (bs * bs)).transpose(0, 1, 3, 2, 4, 5)
        y = y.reshape(n, h * bs, w * bs, c // (bs * bs))
        return y if nhwc else np.transpose(y, [0, 3, 1, 2])

    return compute


@register_kernel("SpaceToDepth")
def _space_to_depth(node: KernelNode) -> Any:
    bs, nhwc = int(node.attrs["block_size"]), _nhwc(node)

    def compute(ctx: Any, x: Any) -> Any:
        x = x if nhwc else np.transpose(x, [0, 2, 3, 1])
        n, h, w, c = x.shape
        if h % bs or w % bs:
            raise _invalid(
                f"Image width {w} and height {h} should be divisible by block_size: {bs}"
            )
        y = x.reshape(n, h // bs, bs, w // bs, bs, c).transpose(0, 1, 3, 2, 4, 5)
        y = y.reshape(n, h // bs, w // bs, bs * bs * c)
        return y if nhwc else np.transpose(y, [0, 3, 1, 2])

    return compute


def _block_args(x: Any, block: Any, pads: Any, what: str) -> tuple[np.ndarray, np.ndarray]:
    block = np.asarray(block, dtype=np.int64).reshape(-1)
    pads = np.asarray(pads, dtype=np.int64)
    m = block.size
    if pads.shape != (m, 2):
        raise _invalid(f"{what} should have shape [{m}, 2] instead of {list(pads.shape)}")
    if np.any(block < 1):
        raise _invalid("All values in block_shape must be positive")
    if np.any(pads < 0):
        raise _invalid(f"All values in {what} must be non-negative")
    if x.ndim < m + 1:
        raise _invalid(f"input rank should be >= {m + 1} instead of {x.ndim}")
    return block, pads


@register_kernel("SpaceToBatchND")
def _space_to_batch(node: KernelNode) -> Any:
    def compute(ctx: Any, x: Any, block: Any, pads: Any) -> Any:
        block, pads = _block_args(x, block, pads, "paddings")
        m = block.size
        rest = x.shape[m + 1 :]
        padded = np.pad(x, [(0, 0), *map(tuple, pads), *[(0, 0)] * len(rest)])
        for i in range(m):
            if padded.shape[i + 1] % block[i]:
                raise _invalid(
                    f"padded_shape[{i}]={padded.shape[i + 1]} is not divisible by "
                    f"block_shape[{i}]={block[i]}"
                )
        split = [x.shape[0]]
        for i in range(m):
            split += [padded.shape[i + 1] // block[i], block[i]]
        y = padded.reshape(*split, *rest)
        perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)]
        perm += list(range(1 + 2 * m, y.ndim))
        y = y.transpose(perm)
        out = [x.shape[0] * int(np.prod(block))] + [split[1 + 2 * i] for i in range(m)]
        return np.ascontiguousarray(y.reshape(*out, *rest))

    return compute


@register_kernel("BatchToSpaceND")
def _batch_to_space(node: KernelNode) -> Any:
    def compute(ctx: Any, x: Any, block: Any, crops: Any) -> Any:
        block, crops = _block_args(x, block, crops, "crops")
        m = block.size
        prod = int(np.prod(block))
        if x.shape[0] % prod:
            raise _invalid(
                f"Input batch dimension ({x.shape[0]}) is not divisible by product "
                f"of block sizes ({prod})"
            )
        n = x.shape[0] // prod
        spatial, rest = x.shape[1 : m + 1], x.shape[m + 1 :]
        y = x.reshape(*block, n, *spatial, *rest)
        perm = [m]
        for i in range(m):
            perm += [m + 1 + i, i]
        perm += list(range(2 * m + 1, y.ndim))
        y = y.transpose(perm).reshape(n, *(s * b for s, b in zip(spatial, block)), *rest)
        index = [slice(None)]
        for i in range(m):
            size = y.shape[i + 1]
            if crops[i].sum() > size:
                raise _invalid("Crops must not exceed the block-expanded size")
            index.append(slice(int(crops[i, 0]), size - int(crops[i, 1])))
        return np.ascontiguousarray(y[tuple(index)])

    return compute


# ---------------------------------------------------------------------- dilation
def _dilation_geometry(node: KernelNode, x: Any, f: Any) -> Any:
    if x.ndim != 4 or f.ndim != 3:
        raise _invalid("input must be 4-dimensional and filter 3-dimensional")
    if x.shape[3] != f.shape[2]:
        raise _invalid(f"input and filter must have the same depth: {x.shape[3]} vs {f.shape[2]}")
    strides, rates = list(node.attrs["strides"]), list(node.attrs["rates"])
    pad = node.attrs["padding"]
    geo = []
    for size, k, s, r in zip(x.shape[1:3], f.shape[:2], strides[1:3], rates[1:3]):
        k_eff = (k - 1) * r + 1
        if pad == "SAME":
            out = (size + s - 1) // s
            before = max(0, (out - 1) * s + k_eff - size) // 2
        else:
            out, before = (size - k_eff + s) // s, 0
            if out < 0:
                raise _invalid("Computed output size would be negative")
        geo.append((out, before, s, r))
    return geo


def _dilation_argmax(node: KernelNode, x: Any, f: Any) -> tuple[Any, Any, Any, Any]:
    """The output and, per output element, the input and filter positions of the max."""
    (oh, ph, sh, rh), (ow, pw, sw, rw) = _dilation_geometry(node, x, f)
    n, h, w, c = x.shape
    best = np.full((n, oh, ow, c), -np.inf)
    at_in = np.zeros((n, oh, ow, c, 2), dtype=np.int64)
    at_f = np.zeros((n, oh, ow, c, 2), dtype=np.int64)
    ys, xs = np.arange(oh) * sh - ph, np.arange(ow) * sw - pw
    for i in range(f.shape[0]):
        for j in range(f.shape[1]):
            yy, xx = ys + i * rh, xs + j * rw
            ok = ((yy >= 0) & (yy < h))[:, None] & ((xx >= 0) & (xx < w))[None, :]
            vals = x[:, np.clip(yy, 0, h - 1)][:, :, np.clip(xx, 0, w - 1)] + f[i, j]
            vals = np.where(ok[None, :, :, None], vals, -np.inf)
            better = vals > best
            best = np.where(better, vals, best)
            at_in[..., 0] = np.where(
                better, np.clip(yy, 0, h - 1)[None, :, None, None], at_in[..., 0]
            )
            at_in[..., 1] = np.where(
                better, np.clip(xx, 0, w - 1)[None, None, :, None], at_in[..., 1]
            )
            at_f[..., 0] = np.where(better, i, at_f[..., 0])
            at_f[..., 1] = np.where(better, j, at_f[..., 1])
    return best.astype(x.dtype), at_in, at_f, (n, oh, ow, c)


@register_kernel("Dilation2D")
def _dilation2d(node: KernelNode) -> Any:
    def compute(ctx: Any, x: Any, f: Any) -> Any:
        return _dilation_argmax(node, x, f)[0]

    return compute


def _route(node: KernelNode, x: Any, f: Any, dy: Any, to_input: bool) -> Any:
    _, at_in, at_f, shape = _dilation_argmax(node, x, f)
    if dy.shape != shape:
        raise _invalid(f"out_backprop has an unexpected shape {list(dy.shape)}")
    n, oh, ow, c = shape
    b = np.broadcast_to(np.arange(n)[:, None, None, None], shape)
    ch = np.broadcast_to(np.arange(c)[None, None, None, :], shape)
    if to_input:
        out = np.zeros(x.shape, dtype=dy.dtype)
        np.add.at(out, (b, at_in[..., 0], at_in[..., 1], ch), dy)
    else:
        out = np.zeros(f.shape, dtype=dy.dtype)
        np.add.at(out, (at_f[..., 0], at_f[..., 1], ch), dy)
    return out


@register_kernel("Dilation2DBackpropInput")
def _dilation2d_input(node: KernelNode) -> Any:
    def compute(ctx: Any, x: Any, f: Any, dy: Any) -> Any:
        return _route(node, x, f, dy, True)

    return compute


@register_kernel("Dilation2DBackpropFilter")
def _dilation2d_filter(node: KernelNode) -> Any:
    def compute(ctx: Any, x: Any, f: Any, dy: Any) -> Any:
        return _route(node, x, f, dy, False)

    return compute


# -------------------------------------------------------------------------- CTC
def _log_softmax(x: np.ndarray) -> np.ndarray:
    m = x.max(axis=-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))


def _ctc_one(logp: np.ndarray, labels: list[int], blank: int) -> tuple[float, np.ndarray]:
    """`(-log p, posterior [T, C])` for one sequence of log-probabilities `[T, C]`."""
    t_len = logp.shape[0]
    ext = [blank]
    for lab in labels:
        ext += [lab, blank]
    s_len = len(ext)
    neg = -np.inf
    alpha = np.full((t_len, s_len), neg)
    beta = np.full((t_len, s_len), neg)
    alpha[0, 0] = logp[0, blank]
    if s_len > 1:
        alpha[0, 1] = logp[0, ext[1]]
    skip = np.array([s > 1 and ext[s] != blank and ext[s] != ext[s - 2] for s in range(s_len)])
    for t in range(1, t_len):
        prev = alpha[t - 1]
        acc = np.logaddexp(prev, np.concatenate([[neg], prev[:-1]]))
        acc = np.where(skip, np.logaddexp(acc, np.concatenate([[neg, neg], prev[:-2]])), acc)
        alpha[t] = acc + logp[t, ext]
    beta[-1, -1] = logp[-1, blank]
    if s_len > 1:
        beta[-1, -2] = logp[-1, ext[-2]]
    skip_back = np.array(
        [s < s_len - 2 and ext[s] != blank and ext[s] != ext[s + 2] for s in range(s_len)]
    )
    for t in range(t_len - 2, -1, -1):
        nxt = beta[t + 1]
        acc = np.logaddexp(nxt, np.concatenate([nxt[1:], [neg]]))
        acc = np.where(skip_back, np.logaddexp(acc, np.concatenate([nxt[2:], [neg, neg]])), acc)
        beta[t] = acc + logp[t, ext]
    log_p = np.logaddexp(alpha[-1, -1], alpha[-1, -2]) if s_len > 1 else alpha[-1, -1]
    ab = alpha + beta - logp[:, ext]
    post = np.full(logp.shape, neg)
    for s, k in enumerate(ext):
        post[:, k] = np.logaddexp(post[:, k], ab[:, s])
    return -log_p, np.exp(post - log_p)


def _ctc_labels(indices: Any, values: Any, batch: int) -> list[list[int]]:
    labels: list[list[int]] = [[] for _ in range(batch)]
    for (b, _), v in zip(np.asarray(indices).tolist(), np.asarray(values).tolist()):
        if not 0 <= b < batch:
            raise _invalid(f"labels batch index {b} out of range [0, {batch})")
        labels[b].append(int(v))
    return labels


@register_kernel("CTCLoss")
def _ctc_loss(node: KernelNode) -> Any:
    collapse = bool(node.attrs.get("preprocess_collapse_repeated", False))
    merge = bool(node.attrs.get("ctc_merge_repeated", True))
    ignore_longer = bool(node.attrs.get("ignore_longer_outputs_than_inputs", False))
    if not merge:
        raise NotImplementedError("CTCLoss with ctc_merge_repeated=False")

    def compute(ctx: Any, inputs: Any, indices: Any, values: Any, seq_len: Any) -> Any:
        t_max, batch, classes = inputs.shape
        blank = classes - 1
        seq_len = np.asarray(seq_len)
        if seq_len.shape != (batch,):
            raise _invalid(
                f"len(sequence_length) != batch_size. len(sequence_length): "
                f"{seq_len.size} batch_size: {batch}"
            )
        loss = np.zeros(batch, dtype=inputs.dtype)
        grad = np.zeros(inputs.shape, dtype=inputs.dtype)
        for b, labels in enumerate(_ctc_labels(indices, values, batch)):
            if collapse:
                labels = [v for i, v in enumerate(labels) if i == 0 or v != labels[i - 1]]
            if any(not 0 <= v < blank for v in labels):
                raise _invalid(f"Saw a label out of range [0, {blank}) in batch {b}")
            length = int(seq_len[b])
            if length > t_max:
                raise _invalid(f"sequence_length({b}) <= {t_max}")
            required = len(labels) + sum(labels[i] == labels[i - 1] for i in range(1, len(labels)))
            if required > length:
                if ignore_longer:
                    continue
                raise _invalid(
                    f"Not enough time for target transition sequence (required: "
                    f"{required}, available: {length})"
                )
            if length == 0:
                continue
            logp = _log_softmax(inputs[:length, b].astype(np.float64))
            nll, posterior = _ctc_one(logp, labels, blank)
            loss[b] = nll
            grad[:length, b] = np.exp(logp) - posterior
        return loss, grad

    return compute
