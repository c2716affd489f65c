"""NumPy kernels of `GatherNd`, `ScatterNd`, `TensorScatter*` and the variable scatter
updates `ScatterMul|Div|Min|Max`, `ScatterNdUpdate|Add|Sub`."""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.framework.resource_mgr import Var
from tensorweave.kernels.array_kernels import invalid
from tensorweave.kernels.registry import register_compute
from tensorweave.kernels.state_kernels import check_indices


def _nd_index(indices: np.ndarray, shape: tuple[int, ...], what: str) -> tuple[np.ndarray, ...]:
    """Tuple index for `arr[...]` from `indices [..., r]`, validated against `shape`."""
    r = indices.shape[-1]
    if r > len(shape):
        raise invalid(f"index innermost dimension length must be <= params rank; saw: {r} vs. "
                      f"{len(shape)}")
    flat = indices.reshape(-1, r)
    for j in range(r):
        bad = np.nonzero((flat[:, j] < 0) | (flat[:, j] >= shape[j]))[0]
        if bad.size:
            i = int(bad[0])
            loc = ", ".join(str(int(v)) for v in flat[i])
            raise invalid(f"{what}[{i}] = [{loc}] does not index into shape {list(shape)}")
    return tuple(indices[..., j] for j in range(r))


@register_compute("GatherNd")
def _gather_nd(ctx: Any, params: Any, indices: Any) -> Any:
    params, indices = np.asarray(params), np.asarray(indices)
    if indices.ndim < 1:
        raise invalid("indices must be at least a vector")
    index = _nd_index(indices, params.shape, "indices")
    if not index:
        return np.broadcast_to(params, indices.shape[:-1] + params.shape).copy()
    return params[index]


def _apply(mode: str, out: np.ndarray, index: tuple[np.ndarray, ...], updates: np.ndarray):
    if mode == "update":
        out[index] = updates
    elif mode == "add":
        np.add.at(out, index, updates)
    elif mode == "sub":
        np.subtract.at(out, index, updates)
    elif mode == "mul":
        np.multiply.at(out, index, updates)
    elif mode == "div":
        if out.dtype.kind in "iu":
            np.floor_divide.at(out, index, updates)
        else:
            np.divide.at(out, index, updates)
    elif mode == "max":
        np.maximum.at(out, index, updates)
    else:
        np.minimum.at(out, index, updates)


def _updates_for(indices: np.ndarray, updates: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    want = indices.shape[:-1] + tuple(shape[indices.shape[-1] :])
    if updates.shape != want:
        raise invalid(
            f"updates must have shape {list(want)} (indices.shape[:-1] + shape[indices."
            f"shape[-1]:]), got {list(updates.shape)}"
        )
    return updates


@register_compute("ScatterNd")
def _scatter_nd(ctx: Any, indices: Any, updates: Any, shape: Any) -> Any:
    indices, updates = np.asarray(indices), np.asarray(updates)
    shape = tuple(int(d) for d in np.asarray(shape).reshape(-1))
    out = np.zeros(shape, dtype=updates.dtype)
    index = _nd_index(indices, shape, "indices")
    _apply("add", out, index, _updates_for(indices, updates, shape))
    return out


def _tensor_scatter(mode: str) -> Any:
    def compute(ctx: Any, tensor: Any, indices: Any, updates: Any) -> Any:
        tensor, indices = np.asarray(tensor), np.asarray(indices)
        out = tensor.copy()
        index = _nd_index(indices, tensor.shape, "indices")
        _apply(mode, out, index, _updates_for(indices, np.asarray(updates), tensor.shape))
        return out

    return compute


for _op, _mode in (
    ("TensorScatterUpdate", "update"),
    ("TensorScatterAdd", "add"),
    ("TensorScatterSub", "sub"),
    ("TensorScatterMax", "max"),
    ("TensorScatterMin", "min"),
):
    register_compute(_op)(_tensor_scatter(_mode))


def _scatter_ref(mode: str) -> Any:
    def compute(ctx: Any, var: Var, indices: Any, updates: Any) -> Var:
        def fn(old: Any) -> Any:
            idx = check_indices(indices, old.shape[0] if old.ndim else 0)
            upd = np.broadcast_to(updates, idx.shape + old.shape[1:])
            new = old.copy()
            _apply(mode, new, (idx,), upd)
            return new

        ctx.update(var, fn)
        return var

    return compute


def _scatter_nd_ref(mode: str) -> Any:
    def compute(ctx: Any, var: Var, indices: Any, updates: Any) -> Var:
        def fn(old: Any) -> Any:
            idx = np.asarray(indices)
            index = _nd_index(idx, old.shape, "indices")
            new = old.copy()
            _apply(mode, new, index, _updates_for(idx, np.asarray(updates), old.shape))
            return new

        ctx.update(var, fn)
        return var

    return compute


for _mode in ("mul", "div", "min", "max"):
    register_compute(f"Scatter{_mode.capitalize()}")(_scatter_ref(_mode))
for _op, _mode in (("ScatterNdUpdate", "update"), ("ScatterNdAdd", "add"), ("ScatterNdSub", "sub")):
    register_compute(_op)(_scatter_nd_ref(_mode))
