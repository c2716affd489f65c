"""More `tf.nn` activations and losses (follows TF 1.x `nn_impl.py` / `nn_ops.py`):
`selu` (the `Selu` op), `crelu`, `swish`/`silu`, `log_poisson_loss`,
`compute_average_loss`, `scale_regularization_loss`, `approx_max_k`/`approx_min_k`."""

from __future__ import annotations

import math
from typing import Any

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.op_defs import nn_extra as _defs  # noqa: F401
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, constant_op, math_ops, nn_ops


def selu(features: Any, name: str | None = None) -> Tensor:
    """Scaled ELU: `scale * x` for `x > 0`, else `scale * alpha * (exp(x) - 1)`.

    Follows `tf.nn.selu` (alpha = 1.6732632..., scale = 1.0507009...); half/float/double.
    """
    return apply_op("Selu", features=features, name=name)


def crelu(features: Any, name: str | None = None, axis: int = -1) -> Tensor:
    """`concat([relu(x), relu(-x)], axis)`: doubles the depth (follows `tf.nn.crelu`)."""
    with graph_mod.name_scope(name, "CRelu", [features]) as scope:
        features = convert_to_tensor(features, name="features")
        c = array_ops.concat([features, math_ops.negative(features)], axis, name="concat")
        return nn_ops.relu(c, name=scope)


def swish(features: Any, beta: float = 1.0, name: str | None = None) -> Tensor:
    """`features * sigmoid(beta * features)` (follows `tf.nn.swish` / `tf.nn.silu`)."""
    with graph_mod.name_scope(name, "swish", [features]) as scope:
        features = convert_to_tensor(features, name="features")
        beta_t = math_ops.cast(beta, features.dtype)
        return math_ops.multiply(features, math_ops.sigmoid(beta_t * features), name=scope)


silu = swish


def log_poisson_loss(
    targets: Any, log_input: Any, compute_full_loss: bool = False, name: str | None = None
) -> Tensor:
    """Poisson negative log likelihood `exp(log_input) - log_input * targets`.

    Follows `tf.nn.log_poisson_loss`; `compute_full_loss` adds Stirling's approximation of
    `log(targets!)` where `targets > 1`.

    Raises:
      ValueError: if the shapes are incompatible.
    """
    with graph_mod.name_scope(name, "log_poisson_loss", [log_input, targets]) as name:
        log_input = convert_to_tensor(log_input, name="log_input")
        targets = convert_to_tensor(targets, name="targets")
        try:
            targets.shape.assert_is_compatible_with(log_input.shape)
        except ValueError:
            raise ValueError(
                "log_input and targets must have the same shape "
                f"({log_input.shape} vs {targets.shape})"
            ) from None
        result = math_ops.exp(log_input) - log_input * targets
        if compute_full_loss:
            dtype = targets.dtype
            half = constant_op.constant(0.5, dtype=dtype)
            two_pi = constant_op.constant(2 * math.pi, dtype=dtype)
            stirling = (
                targets * math_ops.log(targets) - targets + half * math_ops.log(two_pi * targets)
            )
            zeros = array_ops.zeros_like(targets)
            small = math_ops.logical_and(
                math_ops.greater_equal(targets, zeros), math_ops.less_equal(targets, 1.0)
            )
            result = result + array_ops.where(small, zeros, stirling)
        return result


def compute_average_loss(
    per_example_loss: Any, sample_weight: Any = None, global_batch_size: Any = None
) -> Tensor:
    """`sum(per_example_loss * sample_weight) / global_batch_size` (one replica).

    Follows `tf.nn.compute_average_loss`; `global_batch_size` defaults to the first
    dimension of `per_example_loss`.

    Raises:
      ValueError: for a scalar `per_example_loss` or a non-integer `global_batch_size`.
    """
    per_example_loss = convert_to_tensor(per_example_loss)
    dtype = per_example_loss.dtype
    if per_example_loss.shape.ndims == 0:
        raise ValueError(
            "Invalid value passed for `per_example_loss`. Expected a tensor with at least "
            f"rank 1. Received: {per_example_loss}."
        )
    if sample_weight is not None:
        weight = math_ops.cast(convert_to_tensor(sample_weight), dtype)
        per_example_loss = per_example_loss * weight
    if global_batch_size is None:
        global_batch_size = array_ops.shape(per_example_loss)[0]
    elif isinstance(global_batch_size, float) or (
        hasattr(global_batch_size, "dtype") and not global_batch_size.dtype.is_integer
    ):
        raise ValueError("global_batch_size must be an integer.")
    batch = math_ops.cast(global_batch_size, dtype)
    return math_ops.div_no_nan(math_ops.reduce_sum(per_example_loss), batch)


def scale_regularization_loss(regularization_loss: Any) -> Tensor:
    """The sum of `regularization_loss` divided by the number of replicas (here 1).

    Follows `tf.nn.scale_regularization_loss`.
    """
    return math_ops.reduce_sum(regularization_loss)


def _top_k_along(operand: Any, k: int, dimension: int, largest: bool, name: Any):
    operand = convert_to_tensor(operand, name="operand")
    rank = operand.shape.ndims
    if rank is None:
        raise ValueError("approx_max_k/approx_min_k need an operand of known rank.")
    dimension = dimension % rank
    perm = [d for d in range(rank) if d != dimension] + [dimension]
    moved = array_ops.transpose(operand, perm) if dimension != rank - 1 else operand
    values, indices = nn_ops.top_k(moved if largest else math_ops.negative(moved), k)
    if not largest:
        values = math_ops.negative(values)
    if dimension != rank - 1:
        inverse = [perm.index(d) for d in range(rank)]
        values = array_ops.transpose(values, inverse)
        indices = array_ops.transpose(indices, inverse)
    return values, indices


def approx_max_k(
    operand,
    k,
    reduction_dimension=-1,
    recall_target=0.95,
    reduction_input_size_override=-1,
    aggregate_to_topk=True,
    name=None,
):
    """The `k` largest values and their int32 indices along `reduction_dimension`.

    Follows `tf.math.approx_max_k`; this implementation is exact (recall 1), which
    satisfies any `recall_target`.
    """
    with graph_mod.name_scope(name, "ApproxTopK", [operand]):
        return _top_k_along(operand, k, reduction_dimension, True, name)


def approx_min_k(
    operand,
    k,
    reduction_dimension=-1,
    recall_target=0.95,
    reduction_input_size_override=-1,
    aggregate_to_topk=True,
    name=None,
):
    """The `k` smallest values and their int32 indices (exact; follows `approx_min_k`)."""
    with graph_mod.name_scope(name, "ApproxTopK", [operand]):
        return _top_k_along(operand, k, reduction_dimension, False, name)


__all__ = [
    "approx_max_k",
    "approx_min_k",
    "compute_average_loss",
    "crelu",
    "log_poisson_loss",
    "scale_regularization_loss",
    "selu",
    "silu",
    "swish",
]
