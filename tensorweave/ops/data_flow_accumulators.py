"""Gradient accumulators: `tf.ConditionalAccumulator`, `tf.SparseConditionalAccumulator`.

Follows TF 1.x `python/ops/data_flow_ops.py` and `core/ops/data_flow_ops.cc`.

An accumulator aggregates gradients applied with `local_step >= global_step`, drops stale
ones, and hands out their mean (or sum) once `num_required` have arrived, advancing its
global step by one. `SyncReplicasOptimizer` uses one per variable.

The handles are TF 1.x's `Ref(string)` (so the placer colocates every accumulator op with
its accumulator, as TensorFlow's does); at run time the handle is the accumulator object,
not a 2-element string tensor.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes as dtypes_mod
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.ops.cwise_ops import cast
from tensorweave.ops.gradient_registry import no_gradient

for _name in (
    "ConditionalAccumulator",
    "SparseConditionalAccumulator",
    "AccumulatorNumAccumulated",
    "AccumulatorSetGlobalStep",
    "AccumulatorApplyGradient",
    "AccumulatorTakeGradient",
    "SparseAccumulatorApplyGradient",
    "SparseAccumulatorTakeGradient",
):
    no_gradient(_name)


def _int64(value: Any) -> Any:
    t = convert_to_tensor(value)
    return t if t.dtype.base_dtype == dtypes_mod.int64 else cast(t, dtypes_mod.int64)


def _accumulator_op(
    op_type: str, dtype: Any, shape: Any, shared_name: str | None, name: str, reduction_type: str
) -> Any:
    """The handle of a new (Sparse)ConditionalAccumulator op."""
    return apply_op(
        op_type,
        dtype=dtypes_mod.as_dtype(dtype),
        shape=TensorShape(shape),
        shared_name=shared_name or "",
        name=name,
        reduction_type=reduction_type,
    )


class ConditionalAccumulatorBase:
    """What dense and sparse accumulators share (follows `ConditionalAccumulatorBase`).

    Args:
      dtype: the gradients' dtype.
      shape: the gradients' shape (None: unknown).
      accumulator_ref: the accumulator's handle Tensor.
    """

    def __init__(self, dtype: Any, shape: Any, accumulator_ref: Any):
        self._dtype = dtypes_mod.as_dtype(dtype)
        self._shape = TensorShape(shape) if shape is not None else unknown_shape()
        self._accumulator_ref = accumulator_ref
        self._name = accumulator_ref.op.name.split("/")[-1]

    @property
    def accumulator_ref(self) -> Any:
        """The accumulator's handle Tensor."""
        return self._accumulator_ref

    @property
    def name(self) -> str:
        """The name of the accumulator op."""
        return self._accumulator_ref.op.name

    @property
    def dtype(self) -> dtypes_mod.DType:
        """The gradients' dtype."""
        return self._dtype

    def num_accumulated(self, name: str | None = None) -> Any:
        """An int32 scalar Tensor: gradients accumulated since the last take."""
        return apply_op(
            "AccumulatorNumAccumulated",
            handle=self._accumulator_ref,
            name=name or f"{self._name}_NumAccumulated",
        )

    def set_global_step(self, new_global_step: Any, name: str | None = None) -> Any:
        """An op setting the accumulator's global step (cast to int64).

        Gradients with a smaller `local_step` are dropped afterwards.
        """
        return apply_op(
            "AccumulatorSetGlobalStep",
            handle=self._accumulator_ref,
            new_global_step=_int64(new_global_step),
            name=name,
        )


class ConditionalAccumulator(ConditionalAccumulatorBase):
    """Aggregates dense gradients (follows `tf.ConditionalAccumulator`).

    Args:
      dtype: the gradients' dtype (a number type).
      shape: the gradients' shape; None for unknown.
      shared_name: if set, shared by every session and graph of the task under this name.
      name: the op name.
      reduction_type: `"MEAN"` (default) or `"SUM"`.
    """

    def __init__(
        self,
        dtype: Any,
        shape: Any = None,
        shared_name: str | None = None,
        name: str = "conditional_accumulator",
        reduction_type: str = "MEAN",
    ):
        ref = _accumulator_op(
            "ConditionalAccumulator", dtype, shape, shared_name, name, reduction_type
        )
        super().__init__(dtype, shape, ref)

    def apply_grad(self, grad: Any, local_step: Any = 0, name: str | None = None) -> Any:
        """An op adding `grad` unless `local_step` (int64) is below the global step.

        Raises:
          ValueError: if `grad`'s static shape is incompatible with the accumulator's.
          InvalidArgumentError: at run time, for a shape that differs from the gradients
            already accumulated.
        """
        grad = convert_to_tensor(grad, dtype=self._dtype)
        grad.shape.assert_is_compatible_with(self._shape)
        return apply_op(
            "AccumulatorApplyGradient",
            handle=self._accumulator_ref,
            local_step=_int64(local_step),
            gradient=grad,
            name=name,
        )

    def take_grad(self, num_required: Any, name: str | None = None) -> Any:
        """The mean (or sum) of the next `num_required` gradients, as a Tensor.

        At run time it waits until that many were accumulated, then resets the
        accumulator and advances its global step by one. InvalidArgumentError if
        `num_required < 1`.
        """
        out = apply_op(
            "AccumulatorTakeGradient",
            handle=self._accumulator_ref,
            num_required=num_required,
            dtype=self._dtype,
            name=name,
        )
        out.set_shape(self._shape)
        return out


class SparseConditionalAccumulator(ConditionalAccumulatorBase):
    """Aggregates sparse (IndexedSlices) gradients (follows `tf.SparseConditionalAccumulator`).

    The mean averages each row over the gradients that had it.

    Args:
      dtype, shape, shared_name, reduction_type: as `ConditionalAccumulator`.
      name: the op name.
    """

    def __init__(
        self,
        dtype: Any,
        shape: Any = None,
        shared_name: str | None = None,
        name: str = "sparse_conditional_accumulator",
        reduction_type: str = "MEAN",
    ):
        ref = _accumulator_op(
            "SparseConditionalAccumulator", dtype, shape, shared_name, name, reduction_type
        )
        super().__init__(dtype, shape, ref)

    def apply_indexed_slices_grad(
        self, grad: IndexedSlices, local_step: Any = 0, name: str | None = None
    ) -> Any:
        """`apply_grad` with the parts of an IndexedSlices."""
        return self.apply_grad(grad.indices, grad.values, grad.dense_shape, local_step, name)

    def apply_grad(
        self,
        grad_indices: Any,
        grad_values: Any,
        grad_shape: Any = None,
        local_step: Any = 0,
        name: str | None = None,
    ) -> Any:
        """An op adding the rows `grad_values[i]` at `grad_indices[i]` unless stale.

        Args:
          grad_indices: int `[n]` row indices.
          grad_values: `[n, ...]` rows, of the accumulator's dtype.
          grad_shape: optional dense shape (checked against the accumulator's).
          local_step: the step the gradient was computed at (int64).
          name: op name.
        """
        values = convert_to_tensor(grad_values, dtype=self._dtype)
        return apply_op(
            "SparseAccumulatorApplyGradient",
            handle=self._accumulator_ref,
            local_step=_int64(local_step),
            gradient_indices=_int64(grad_indices),
            gradient_values=values,
            gradient_shape=_int64([] if grad_shape is None else grad_shape),
            has_known_shape=grad_shape is not None,
            name=name,
        )

    def take_grad(self, num_required: Any, name: str | None = None) -> tuple[Any, Any, Any]:
        """`(indices int64 [n], values [n, ...], shape int64)` of the aggregated gradient.

        The first entry of `shape` is the accumulator's first dimension (-1 if unknown).
        """
        indices, values, shape = apply_op(
            "SparseAccumulatorTakeGradient",
            handle=self._accumulator_ref,
            num_required=num_required,
            dtype=self._dtype,
            name=name,
        )
        return indices, values, shape

    def take_indexed_slices_grad(self, num_required: Any, name: str | None = None) -> IndexedSlices:
        """`take_grad` as an IndexedSlices."""
        indices, values, shape = self.take_grad(num_required, name)
        return IndexedSlices(values=values, indices=indices, dense_shape=shape)


__all__ = ["ConditionalAccumulator", "ConditionalAccumulatorBase", "SparseConditionalAccumulator"]
