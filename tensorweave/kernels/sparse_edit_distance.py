"""NumPy kernel of `EditDistance`: Levenshtein distances between the sequences of two
sparse tensors, grouped by all but the last index."""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.kernels.array_kernels import invalid
from tensorweave.kernels.registry import KernelNode, register_kernel


def _levenshtein(a: list[Any], b: list[Any]) -> int:
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def _groups(indices: np.ndarray, values: np.ndarray) -> dict[tuple[int, ...], list[Any]]:
    order = np.lexsort(indices.T[::-1]) if indices.size else np.arange(len(values))
    out: dict[tuple[int, ...], list[Any]] = {}
    for k in order:
        out.setdefault(tuple(int(v) for v in indices[k, :-1]), []).append(values[k])
    return out


@register_kernel("EditDistance")
def _edit_distance(node: KernelNode) -> Any:
    normalize = node.attrs["normalize"]

    def compute(ctx: Any, hi: Any, hv: Any, hs: Any, ti: Any, tv: Any, ts: Any) -> Any:
        hi, ti = np.asarray(hi, np.int64), np.asarray(ti, np.int64)
        hs, ts = np.asarray(hs, np.int64), np.asarray(ts, np.int64)
        if hs.size != ts.size or hi.shape[1] != hs.size or ti.shape[1] != ts.size:
            raise invalid(f"hypothesis and truth must have the same rank: {hs.size} vs "
                          f"{ts.size}")
        out_shape = tuple(int(max(a, b)) for a, b in zip(hs[:-1], ts[:-1]))
        hyp, truth = _groups(hi, np.asarray(hv)), _groups(ti, np.asarray(tv))
        out = np.zeros(out_shape, np.float32)
        for key in set(hyp) | set(truth):
            h, t = hyp.get(key, []), truth.get(key, [])
            d = float(_levenshtein(h, t))
            if normalize:
                d = d / len(t) if t else (np.inf if h else 0.0)
            out[key] = d
        return out

    return compute
