"""Clipping tensors and gradients by value or norm (follows TF 1.x `ops/clip_ops.py`).

All functions accept `IndexedSlices` where TensorFlow does (clipping their values and
keeping indices and dense shape) and are built from other ops, so they are differentiable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, constant_op, math_ops


def _values_of(t: Any, name: str) -> Any:
    return convert_to_tensor(t.values if isinstance(t, IndexedSlices) else t, name=name)


def _like(t: Any, values: Any) -> Any:
    if isinstance(t, IndexedSlices):
        return IndexedSlices(values, t.indices, t.dense_shape)
    return values


def clip_by_value(t: Any, clip_value_min: Any, clip_value_max: Any, name: str | None = None) -> Any:
    """Clips `t` element-wise to `[clip_value_min, clip_value_max]` (`tf.clip_by_value`).

    Args:
      t: a Tensor or `IndexedSlices`.
      clip_value_min: scalar (or a Tensor broadcastable to `t`'s shape), the minimum.
      clip_value_max: scalar (or broadcastable Tensor), the maximum.
      name: name scope (default "clip_by_value"); the result op takes the scope's name.

    Returns:
      The clipped Tensor (or `IndexedSlices`), of `t`'s dtype and shape.

    Raises:
      ValueError: if the bounds would broadcast `t` to a larger shape.
    """
    values = [t, clip_value_min, clip_value_max]
    with graph_mod.name_scope(name, "clip_by_value", values) as name:
        v = _values_of(t, "t")
        t_min = math_ops.minimum(v, clip_value_max)
        # Bounds must not broadcast the result beyond the input's shape.
        v.shape.merge_with(t_min.shape)
        t_max = math_ops.maximum(t_min, clip_value_min, name=name)
        v.shape.merge_with(t_max.shape)
        return _like(t, t_max)


def clip_by_norm(t: Any, clip_norm: Any, axes: Any = None, name: str | None = None) -> Any:
    """Scales `t` so that its L2 norm is at most `clip_norm` (`tf.clip_by_norm`).

    `t * clip_norm / max(l2norm(t), clip_norm)`, the norm taken over `axes` (all
    dimensions by default); a zero tensor is returned unchanged (and has a finite gradient).

    Args:
      t: a float Tensor or `IndexedSlices` (its values are clipped).
      clip_norm: positive float scalar.
      axes: dimensions (int32 vector) over which to take the norm; None for all.
      name: name scope (default "clip_by_norm").

    Raises:
      ValueError: if `clip_norm` would broadcast `t` to a larger shape.
    """
    with graph_mod.name_scope(name, "clip_by_norm", [t, clip_norm]) as name:
        values = _values_of(t, "t")
        l2sum = math_ops.reduce_sum(values * values, axes, keepdims=True)
        pred = l2sum > 0
        # Two-sided where: no NaN gradient from sqrt at 0.
        l2sum_safe = array_ops.where(pred, l2sum, array_ops.ones_like(l2sum))
        l2norm = array_ops.where(pred, math_ops.sqrt(l2sum_safe), l2sum)
        intermediate = values * clip_norm
        values.shape.merge_with(intermediate.shape)
        clipped = array_ops.identity(intermediate / math_ops.maximum(l2norm, clip_norm), name=name)
        return _like(t, clipped)


def _check_sequence(t_list: Any) -> list[Any]:
    if not isinstance(t_list, Sequence) or isinstance(t_list, str):
        raise TypeError("t_list should be a sequence")
    return list(t_list)


def global_norm(t_list: Sequence[Any], name: str | None = None) -> Any:
    """`sqrt(sum(l2norm(t) ** 2 for t in t_list))` (follows `tf.global_norm`).

    None entries are ignored; `IndexedSlices` count by their values. Each squared norm is
    computed next to its tensor (colocated).

    Args:
      t_list: Tensors, `IndexedSlices` or None, all of one float dtype.
      name: name scope (default "global_norm").

    Returns:
      A scalar Tensor named `<scope>/global_norm`.

    Raises:
      TypeError: if `t_list` is not a sequence.
    """
    t_list = _check_sequence(t_list)
    with graph_mod.name_scope(name, "global_norm", t_list):
        values = [_values_of(t, f"t_{i}") if t is not None else None for i, t in enumerate(t_list)]
        squared = []
        for v in values:
            if v is not None:
                with graph_mod.colocate_with(v):
                    squared.append(math_ops.reduce_sum(v * v))
        if not squared:
            total = constant_op.constant(0.0, dtype=dtypes.float32)
        else:
            total = math_ops.reduce_sum(array_ops.stack(squared))
        return math_ops.sqrt(total, name="global_norm")


def clip_by_global_norm(
    t_list: Sequence[Any], clip_norm: Any, use_norm: Any = None, name: str | None = None
) -> tuple[list[Any], Any]:
    """Scales all of `t_list` by `clip_norm / max(global_norm, clip_norm)`.

    Follows `tf.clip_by_global_norm`: if the global norm exceeds `clip_norm`, every tensor
    shrinks by the same ratio; None entries pass through. An infinite or NaN norm gives NaN
    tensors, as in TensorFlow.

    Args:
      t_list: Tensors, `IndexedSlices` or None.
      clip_norm: positive float scalar, the clipping ratio.
      use_norm: a precomputed global norm (default: `global_norm(t_list)`).
      name: name scope (default "clip_by_global_norm").

    Returns:
      `(list_clipped, global_norm)`: tensors like `t_list`'s and the scalar norm used.

    Raises:
      TypeError: if `t_list` is not a sequence.
    """
    t_list = _check_sequence(t_list)
    if use_norm is None:
        use_norm = global_norm(t_list, name)
    with graph_mod.name_scope(name, "clip_by_global_norm", t_list + [clip_norm]) as name:
        one = constant_op.constant(1.0, dtype=use_norm.dtype)
        scale_for_finite = clip_norm * math_ops.minimum(1.0 / use_norm, one / clip_norm)
        # NOTE: `use_norm - use_norm` is NaN for an infinite or NaN norm, and 0 otherwise.
        scale = scale_for_finite + (use_norm - use_norm)
        values = [_values_of(t, f"t_{i}") if t is not None else None for i, t in enumerate(t_list)]
        clipped = []
        for i, v in enumerate(values):
            if v is None:
                clipped.append(None)
                continue
            with graph_mod.colocate_with(v):
                clipped.append(
                    array_ops.identity(v * math_ops.cast(scale, v.dtype), name=f"{name}_{i}")
                )
        return [_like(t, c) for t, c in zip(t_list, clipped)], use_norm


def clip_by_average_norm(t: Any, clip_norm: Any, name: str | None = None) -> Any:
    """Scales `t` so that its L2 norm divided by its size is at most `clip_norm`.

    Follows `tf.clip_by_average_norm`: `t * clip_norm * min(size / l2norm(t), 1 /
    clip_norm)`.

    Args:
      t: a float Tensor.
      clip_norm: positive float scalar.
      name: name scope (default "clip_by_average_norm").
    """
    with graph_mod.name_scope(name, "clip_by_average_norm", [t, clip_norm]) as name:
        t = convert_to_tensor(t, name="t")
        n_element = math_ops.cast(array_ops.size(t), t.dtype.base_dtype)
        l2norm_inv = math_ops.rsqrt(math_ops.reduce_sum(t * t))
        ratio = constant_op.constant(1.0, dtype=t.dtype.base_dtype) / clip_norm
        return array_ops.identity(
            t * clip_norm * math_ops.minimum(l2norm_inv * n_element, ratio), name=name
        )


__all__ = [
    "clip_by_average_norm",
    "clip_by_global_norm",
    "clip_by_norm",
    "clip_by_value",
    "global_norm",
]
