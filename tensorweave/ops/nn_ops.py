"""Neural-network ops: activations, softmax, bias, cross-entropy, L2 loss and top-k.

Follows TF 1.x `nn_ops` / `gen_nn_ops` (op types, input/attr names and defaults are
TensorFlow's `nn_ops.cc`). Convolutions and pooling are declared in `nn_conv_ops`, the
composite functions (`dropout`, `moments`, `sigmoid_cross_entropy_with_logits`, ...) in
`nn_impl`, `embedding_lookup` in `embedding_ops`; `tensorweave.nn` re-exports them all.
The op definitions (with the gradient helper ops `ReluGrad`, `BiasAddGrad`, ...) are in
`framework.op_defs.nn`, the gradients in `nn_grad`.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import array_ops, cwise_ops


# ------------------------------------------------------------------ activations
def relu(features: Any, name: str | None = None) -> Tensor:
    """`max(features, 0)` element-wise (follows `tf.nn.relu`, op `Relu`).

    Args:
      features: a real-number Tensor of any shape.
      name: op name.

    Returns:
      A Tensor of `features`' dtype and shape.
    """
    return apply_op("Relu", features=features, name=name)


def relu6(features: Any, name: str | None = None) -> Tensor:
    """`min(max(features, 0), 6)` element-wise (follows `tf.nn.relu6`, op `Relu6`)."""
    with graph_mod.name_scope(name, "Relu6", [features]) as scope:
        features = convert_to_tensor(features, name="features")
        return apply_op("Relu6", features=features, name=scope)


def elu(features: Any, name: str | None = None) -> Tensor:
    """`exp(features) - 1` if < 0, else `features` (follows `tf.nn.elu`, float types)."""
    return apply_op("Elu", features=features, name=name)


def leaky_relu(features: Any, alpha: float = 0.2, name: str | None = None) -> Tensor:
    """`features` if > 0, else `alpha * features` (follows `tf.nn.leaky_relu`).

    Integer inputs are cast to float32 first, as TensorFlow does.

    Args:
      features: a Tensor of any shape.
      alpha: the slope below zero (a Python float; a Tensor is not supported).
      name: name scope of the ops.

    Returns:
      A floating Tensor of `features`' shape.
    """
    with graph_mod.name_scope(name, "LeakyRelu", [features, alpha]) as scope:
        features = convert_to_tensor(features, name="features")
        if features.dtype.base_dtype.is_integer:
            features = cwise_ops.cast(features, "float32")
        return apply_op("LeakyRelu", features=features, alpha=float(alpha), name=scope)


def softplus(features: Any, name: str | None = None) -> Tensor:
    """`log(exp(features) + 1)`, computed stably (follows `tf.nn.softplus`)."""
    return apply_op("Softplus", features=features, name=name)


def softsign(features: Any, name: str | None = None) -> Tensor:
    """`features / (abs(features) + 1)` (follows `tf.nn.softsign`)."""
    return apply_op("Softsign", features=features, name=name)


# --------------------------------------------------------------------- softmax
def _lookup_axis(axis: Any, dim: Any) -> Any:
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'")
    axis = dim if axis is None else axis
    return -1 if axis is None else axis


def _softmax(logits: Any, op_type: str, axis: Any, name: str | None) -> Tensor:
    """`op_type` over `axis`, transposing `axis` to the end and back when it is not last.

    Raises:
      ValueError: for a statically out-of-range axis, or a non-last axis of unknown rank.
    """
    logits = convert_to_tensor(logits, name="logits")
    rank = logits.shape.ndims
    if isinstance(axis, Tensor):
        value = constant_value(axis)
        if value is None:
            raise ValueError("softmax needs a constant axis")
        axis = int(value)
    axis = int(axis)
    if axis == -1 or (rank is not None and axis == rank - 1):
        return apply_op(op_type, logits=logits, name=name)
    if rank is None:
        raise ValueError("softmax over a non-last axis needs an input of known rank")
    if not -rank <= axis < rank:
        raise ValueError(
            f"Dimension ({axis}) must be in the range [{-rank}, {rank}) where {rank} is the "
            "number of dimensions in the input."
        )
    axis %= rank
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    swapped = array_ops.transpose(logits, perm)
    out = apply_op(op_type, logits=swapped)
    return array_ops.transpose(out, perm, name=name)


def softmax(logits: Any, axis: Any = None, name: str | None = None, dim: Any = None) -> Tensor:
    """`exp(logits) / reduce_sum(exp(logits), axis)` (follows TF 1.x `tf.nn.softmax`).

    Args:
      logits: half/float32/float64 Tensor of rank >= 1.
      axis: the dimension softmax runs over (default -1, the last).
      name: op name.
      dim: deprecated alias of `axis`.

    Returns:
      A Tensor of `logits`' dtype and shape.

    Raises:
      ValueError: if both `axis` and `dim` are given or `axis` is out of range
        (TensorFlow raises InvalidArgumentError for the latter).
    """
    return _softmax(logits, "Softmax", _lookup_axis(axis, dim), name)


def log_softmax(logits: Any, axis: Any = None, name: str | None = None, dim: Any = None) -> Tensor:
    """`logits - log(reduce_sum(exp(logits), axis))` (follows TF 1.x `tf.nn.log_softmax`).

    Arguments and errors as `softmax`.
    """
    return _softmax(logits, "LogSoftmax", _lookup_axis(axis, dim), name)


# ------------------------------------------------------------------------ bias
def bias_add(value: Any, bias: Any, data_format: str | None = None, name: str | None = None):
    """`value + bias`, with `bias` along the channel dimension (follows `tf.nn.bias_add`).

    Args:
      value: `T [batch, ..., C]` (NHWC) or `T [batch, C, ...]` (NCHW), rank >= 2.
      bias: `T [C]`.
      data_format: "NHWC" (default, also for None) or "NCHW".
      name: name scope of the op.

    Returns:
      A Tensor of `value`'s dtype and shape.

    Raises:
      ValueError: for incompatible static shapes.
    """
    with graph_mod.name_scope(name, "BiasAdd", [value, bias]) as scope:
        value = convert_to_tensor(value, name="input")
        bias = convert_to_tensor(bias, dtype=value.dtype.base_dtype, name="bias")
        return apply_op(
            "BiasAdd", value=value, bias=bias, data_format=data_format or "NHWC", name=scope
        )


def bias_add_grad(out_backprop: Any, data_format: str = "NHWC", name: str | None = None):
    """`BiasAddGrad`: `out_backprop` summed over every dimension but the channel one."""
    return apply_op("BiasAddGrad", out_backprop=out_backprop, data_format=data_format, name=name)


def l2_loss(t: Any, name: str | None = None) -> Tensor:
    """`sum(t ** 2) / 2`, a scalar (follows `tf.nn.l2_loss`, op `L2Loss`)."""
    return apply_op("L2Loss", t=t, name=name)


# ------------------------------------------------------------------- top k
def in_top_k(predictions: Any, targets: Any, k: Any, name: str | None = None) -> Tensor:
    """Whether each target is among the `k` largest predictions (follows `tf.nn.in_top_k`).

    A target is in the top k when fewer than `k` predictions of its row are strictly larger
    than its own; out-of-range targets and non-finite predictions give False.

    Args:
      predictions: float32 [batch, classes].
      targets: int32 or int64 [batch], class ids.
      k: an int (or scalar Tensor of `targets`' dtype).
      name: op name.

    Returns:
      bool [batch].
    """
    with graph_mod.name_scope(name, "in_top_k") as scope:
        targets = convert_to_tensor(targets, name="targets")
        k = convert_to_tensor(k, dtype=targets.dtype.base_dtype, name="k")
        return apply_op("InTopKV2", predictions=predictions, targets=targets, k=k, name=scope)


def top_k(input: Any, k: Any = 1, sorted: bool = True, name: str | None = None):  # noqa: A002
    """The `k` largest entries of the last dimension and their indices (`tf.nn.top_k`).

    Equal values are ordered by lower index first.

    Args:
      input: a real-number Tensor of rank >= 1 with at least `k` columns.
      k: int (or int32 scalar Tensor) >= 0.
      sorted: ignored (results are always sorted descending).
      name: op name.

    Returns:
      `(values, indices)`: `T [..., k]` and int32 [..., k].

    Raises:
      ValueError: for a static `k` that is negative or larger than the last dimension.
    """
    values, indices = apply_op("TopKV2", input=input, k=k, sorted=sorted, name=name)
    return values, indices


__all__ = [
    "bias_add",
    "elu",
    "in_top_k",
    "l2_loss",
    "leaky_relu",
    "log_softmax",
    "relu",
    "relu6",
    "softmax",
    "softplus",
    "softsign",
    "top_k",
]
