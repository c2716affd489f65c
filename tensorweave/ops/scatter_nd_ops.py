"""N-dimensional gather/scatter and the variable scatter updates (follows TF 1.x
`tf.gather_nd`, `tf.scatter_nd`, `tf.tensor_scatter_*` and `tf.scatter_*` on variables).

`indices` [..., r] address slices of the first r dimensions: `gather_nd(params, indices)`
has shape `indices.shape[:-1] + params.shape[r:]`, and the scatters take `updates` of that
shape. Duplicate indices add up in `scatter_nd` and the `*_add`/`*_sub` updates.
"""

from __future__ import annotations

from typing import Any

import tensorweave.framework.op_defs  # noqa: F401  (registers the op definitions)
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor


def _ref_of(ref: Any) -> Any:
    return ref._ref() if hasattr(ref, "_ref") else ref


def gather_nd(params: Any, indices: Any, name: str | None = None, batch_dims: int = 0) -> Tensor:
    """Slices of `params` at the n-d `indices` (follows `tf.gather_nd`, op `GatherNd`).

    Args:
      params: `Tensor` of any dtype.
      indices: int32/int64 `Tensor` [..., r] with r <= rank(params).
      name: op name.
      batch_dims: only 0 is supported.

    Returns:
      `Tensor` [indices.shape[:-1] + params.shape[r:]] of `params`' dtype.

    Raises:
      ValueError: if r > rank(params) statically.
      NotImplementedError: for `batch_dims != 0`.
      InvalidArgumentError: at run time, for indices out of range.
    """
    if batch_dims:
        raise NotImplementedError("tf.gather_nd with batch_dims != 0 is not implemented")
    return apply_op("GatherNd", params=params, indices=indices, name=name)


def scatter_nd(indices: Any, updates: Any, shape: Any, name: str | None = None) -> Tensor:
    """A zero tensor of `shape` with `updates` added at `indices` (follows `tf.scatter_nd`).

    Args:
      indices: int32/int64 `Tensor` [..., r].
      updates: `Tensor` [indices.shape[:-1] + shape[r:]].
      shape: 1-D int `Tensor` of indices' dtype, the output shape.
      name: op name.

    Raises:
      ValueError: for statically inconsistent shapes.
      InvalidArgumentError: at run time, for indices out of range.
    """
    return apply_op("ScatterNd", indices=indices, updates=updates, shape=shape, name=name)


def _tensor_scatter(op_type: str, tensor: Any, indices: Any, updates: Any, name: Any) -> Tensor:
    return apply_op(op_type, tensor=tensor, indices=indices, updates=updates, name=name)


def tensor_scatter_nd_update(tensor: Any, indices: Any, updates: Any, name: str | None = None):
    """A copy of `tensor` with slices at `indices` replaced by `updates` (follows
    `tf.tensor_scatter_nd_update`, op `TensorScatterUpdate`)."""
    return _tensor_scatter("TensorScatterUpdate", tensor, indices, updates, name)


def tensor_scatter_nd_add(tensor: Any, indices: Any, updates: Any, name: str | None = None):
    """A copy of `tensor` with `updates` added at `indices` (`tf.tensor_scatter_nd_add`)."""
    return _tensor_scatter("TensorScatterAdd", tensor, indices, updates, name)


def tensor_scatter_nd_sub(tensor: Any, indices: Any, updates: Any, name: str | None = None):
    """A copy of `tensor` with `updates` subtracted at `indices`
    (`tf.tensor_scatter_nd_sub`)."""
    return _tensor_scatter("TensorScatterSub", tensor, indices, updates, name)


def tensor_scatter_nd_max(tensor: Any, indices: Any, updates: Any, name: str | None = None):
    """A copy of `tensor` with the element-wise max of `updates` at `indices`
    (`tf.tensor_scatter_nd_max`)."""
    return _tensor_scatter("TensorScatterMax", tensor, indices, updates, name)


def tensor_scatter_nd_min(tensor: Any, indices: Any, updates: Any, name: str | None = None):
    """A copy of `tensor` with the element-wise min of `updates` at `indices`
    (`tf.tensor_scatter_nd_min`)."""
    return _tensor_scatter("TensorScatterMin", tensor, indices, updates, name)


tensor_scatter_update = tensor_scatter_nd_update
tensor_scatter_add = tensor_scatter_nd_add
tensor_scatter_sub = tensor_scatter_nd_sub


def _scatter(op_type: str, ref: Any, indices: Any, updates: Any, use_locking: Any, name: Any):
    kwargs = {} if use_locking is None else {"use_locking": use_locking}
    return apply_op(
        op_type, ref=_ref_of(ref), indices=indices, updates=updates, name=name, **kwargs
    )


def scatter_mul(ref: Any, indices: Any, updates: Any, use_locking: bool = False,
                name: str | None = None) -> Tensor:
    """`ref[indices] *= updates` on a variable (follows `tf.scatter_mul`).

    Args:
      ref: a `Variable` (reference tensor) [d0, ...].
      indices: int32/int64 `Tensor` of rows.
      updates: `Tensor` [indices.shape + ref.shape[1:]].
      use_locking: accepted for TensorFlow compatibility (updates are atomic here).
      name: op name.

    Returns:
      the variable's reference after the update.

    Raises:
      InvalidArgumentError: at run time, for indices out of range.
    """
    return _scatter("ScatterMul", ref, indices, updates, use_locking, name)


def scatter_div(ref: Any, indices: Any, updates: Any, use_locking: bool = False,
                name: str | None = None) -> Tensor:
    """`ref[indices] /= updates` on a variable (follows `tf.scatter_div`). See scatter_mul."""
    return _scatter("ScatterDiv", ref, indices, updates, use_locking, name)


def scatter_max(ref: Any, indices: Any, updates: Any, use_locking: bool = False,
                name: str | None = None) -> Tensor:
    """`ref[indices] = max(ref[indices], updates)` (follows `tf.scatter_max`)."""
    return _scatter("ScatterMax", ref, indices, updates, use_locking, name)


def scatter_min(ref: Any, indices: Any, updates: Any, use_locking: bool = False,
                name: str | None = None) -> Tensor:
    """`ref[indices] = min(ref[indices], updates)` (follows `tf.scatter_min`)."""
    return _scatter("ScatterMin", ref, indices, updates, use_locking, name)


def scatter_nd_update(ref: Any, indices: Any, updates: Any, use_locking: bool = True,
                      name: str | None = None) -> Tensor:
    """Sets the slices of the variable `ref` at the n-d `indices` (follows
    `tf.scatter_nd_update`). `updates` [indices.shape[:-1] + ref.shape[r:]]."""
    return _scatter("ScatterNdUpdate", ref, indices, updates, use_locking, name)


def scatter_nd_add(ref: Any, indices: Any, updates: Any, use_locking: bool = False,
                   name: str | None = None) -> Tensor:
    """Adds `updates` to the variable `ref` at the n-d `indices` (`tf.scatter_nd_add`)."""
    return _scatter("ScatterNdAdd", ref, indices, updates, use_locking, name)


def scatter_nd_sub(ref: Any, indices: Any, updates: Any, use_locking: bool = False,
                   name: str | None = None) -> Tensor:
    """Subtracts `updates` from `ref` at the n-d `indices` (`tf.scatter_nd_sub`)."""
    return _scatter("ScatterNdSub", ref, indices, updates, use_locking, name)


__all__ = [
    "gather_nd",
    "scatter_div",
    "scatter_max",
    "scatter_min",
    "scatter_mul",
    "scatter_nd",
    "scatter_nd_add",
    "scatter_nd_sub",
    "scatter_nd_update",
    "tensor_scatter_add",
    "tensor_scatter_nd_add",
    "tensor_scatter_nd_max",
    "tensor_scatter_nd_min",
    "tensor_scatter_nd_sub",
    "tensor_scatter_nd_update",
    "tensor_scatter_sub",
    "tensor_scatter_update",
]
