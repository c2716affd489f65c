"""`tf.contrib.layers`: the TF 1.x contrib layer helpers most graph-mode programs use
(`flatten`, `fully_connected`, the Xavier / variance-scaling initializers, the l1/l2
regularizers), as in TF 1.15's `contrib/layers/python/layers/{layers,initializers,
regularizers}.py`.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import (
    cwise_binary_ops,
    cwise_unary_ops,
    init_ops,
    layers_impl,
    matmul_ops,
    nn_ops,
    random_ops,
    reduction_ops,
)
from tensorweave.ops import variable_scope as vs
from tensorweave.ops.variables import GraphKeys

_MODES = ("FAN_IN", "FAN_OUT", "FAN_AVG")
_ZEROS = init_ops.Zeros()


def variance_scaling_initializer(factor: float = 2.0, mode: str = "FAN_IN",
                                 uniform: bool = False, seed: int | None = None,
                                 dtype: Any = dtypes.float32) -> Any:
    """An initializer with variance `factor / n` (`tf.contrib.layers.variance_scaling_initializer`).

    `n` is the fan-in, fan-out or their mean (`mode`), with the dimensions before the last
    two multiplied into both fans (convolution kernels). Uniform draws lie in
    `[-sqrt(3 factor / n), sqrt(3 factor / n)]`; otherwise a truncated normal with stddev
    `sqrt(1.3 factor / n)` (the 1.3 undoes the truncation), as TF 1.x's contrib version
    (not `tf.variance_scaling_initializer`, whose constants differ).

    Args:
      factor: the variance multiplier (2.0: He et al.; 1.0 with FAN_AVG: Xavier).
      mode: "FAN_IN", "FAN_OUT" or "FAN_AVG".
      uniform: uniform instead of truncated-normal draws.
      seed: op-level seed.
      dtype: a floating dtype (the default dtype of the returned initializer).

    Returns:
      `init(shape, dtype=dtype, partition_info=None) -> Tensor`.

    Raises:
      TypeError: `dtype` is not floating point, or `mode` is unknown.
    """
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise TypeError("Cannot create initializer for non-floating point type.")
    if mode not in _MODES:
        raise TypeError(f"Unknown mode {mode} [FAN_IN, FAN_OUT, FAN_AVG]")
    default_dtype = dtype

    def _initializer(shape: Any, dtype: Any = default_dtype, partition_info: Any = None):
        dtype = dtypes.as_dtype(dtype)
        if not dtype.is_floating:
            raise TypeError("Cannot create initializer for non-floating point type.")
        dims = [int(d) for d in shape]
        fan_in = float(dims[-2]) if len(dims) > 1 else float(dims[-1]) if dims else 1.0
        fan_out = float(dims[-1]) if dims else 1.0
        for d in dims[:-2]:
            fan_in *= float(d)
            fan_out *= float(d)
        n = {"FAN_IN": fan_in, "FAN_OUT": fan_out, "FAN_AVG": (fan_in + fan_out) / 2.0}[mode]
        if uniform:
            limit = math.sqrt(3.0 * factor / n)
            return random_ops.random_uniform(dims, -limit, limit, dtype, seed=seed)
        return random_ops.truncated_normal(dims, 0.0, math.sqrt(1.3 * factor / n), dtype,
                                           seed=seed)

    return _initializer


def xavier_initializer(uniform: bool = True, seed: int | None = None,
                       dtype: Any = dtypes.float32) -> Any:
    """Glorot/Xavier initialization (`tf.contrib.layers.xavier_initializer`):
    `variance_scaling_initializer(1.0, "FAN_AVG", uniform, seed, dtype)`."""
    return variance_scaling_initializer(1.0, "FAN_AVG", uniform, seed, dtype)


xavier_initializer_conv2d = xavier_initializer


def _check_scale(scale: Any) -> bool:
    """False when `scale` disables the regularizer (0.0); raises for bad scales."""
    if isinstance(scale, numbers.Integral):
        raise ValueError(f"scale cannot be an integer: {scale}")
    if isinstance(scale, numbers.Real):
        if scale < 0.0:
            raise ValueError(f"Setting a scale less than 0 on a regularizer: {scale:g}")
        return scale != 0.0
    return True


def l2_regularizer(scale: float, scope: str | None = None) -> Any:
    """`fn(weights) -> scale * sum(weights ** 2) / 2` (`tf.contrib.layers.l2_regularizer`),
    in name scope `l2_regularizer`; a scale of 0.0 gives a function returning None.

    Raises:
      ValueError: `scale` is an integer or negative.
    """
    if not _check_scale(scale):
        return lambda _: None

    def l2(weights: Any) -> Tensor:
        with graph_mod.name_scope(scope, "l2_regularizer", [weights]) as name:
            weights = convert_to_tensor(weights)
            my_scale = convert_to_tensor(scale, dtype=weights.dtype.base_dtype, name="scale")
            return cwise_binary_ops.multiply(my_scale, nn_ops.l2_loss(weights), name=name)

    return l2


def l1_regularizer(scale: float, scope: str | None = None) -> Any:
    """`fn(weights) -> scale * sum(|weights|)` (`tf.contrib.layers.l1_regularizer`), in name
    scope `l1_regularizer`; a scale of 0.0 gives a function returning None.

    Raises:
      ValueError: `scale` is an integer or negative.
    """
    if not _check_scale(scale):
        return lambda _: None

    def l1(weights: Any) -> Tensor:
        with graph_mod.name_scope(scope, "l1_regularizer", [weights]) as name:
            weights = convert_to_tensor(weights)
            my_scale = convert_to_tensor(scale, dtype=weights.dtype.base_dtype, name="scale")
            total = reduction_ops.reduce_sum(cwise_unary_ops.abs(weights))
            return cwise_binary_ops.multiply(my_scale, total, name=name)

    return l1


def flatten(inputs: Any, outputs_collections: Any = None, scope: str | None = None) -> Tensor:
    """`[batch, ...]` -> `[batch, k]` in name scope `Flatten` (`tf.contrib.layers.flatten`).

    Args:
      inputs: a Tensor `[batch, ...]`.
      outputs_collections: collections the output is added to.
      scope: name scope.

    Returns:
      The `[batch, prod(...)]` Tensor of `inputs`' dtype.
    """
    with graph_mod.name_scope(scope, "Flatten", [inputs]):
        outputs = layers_impl.flatten(convert_to_tensor(inputs))
    _collect(outputs_collections, outputs)
    return outputs


def _collect(collections: Any, value: Any) -> None:
    if collections:
        for key in [collections] if isinstance(collections, str) else collections:
            graph_mod.get_default_graph().add_to_collection(key, value)


def _variable_collections(collections: Any, name: str) -> list[str] | None:
    if isinstance(collections, dict):
        collections = collections.get(name)
    if collections is None:
        return None
    extra = [collections] if isinstance(collections, str) else list(collections)
    return [GraphKeys.GLOBAL_VARIABLES, *extra]


def fully_connected(inputs: Any, num_outputs: int, activation_fn: Any = nn_ops.relu,
                    normalizer_fn: Any = None, normalizer_params: Any = None,
                    weights_initializer: Any = None, weights_regularizer: Any = None,
                    biases_initializer: Any = _ZEROS, biases_regularizer: Any = None,
                    reuse: Any = None, variables_collections: Any = None,
                    outputs_collections: Any = None, trainable: bool = True,
                    scope: str | None = None) -> Tensor:
    """`activation_fn(inputs @ weights + biases)` (`tf.contrib.layers.fully_connected`).

    Variables `<scope>/weights` `[depth, num_outputs]` (default initializer:
    `xavier_initializer()`) and `<scope>/biases` `[num_outputs]` (zeros; none when
    `normalizer_fn` is given or `biases_initializer` is None); default scope
    `fully_connected`. Inputs of rank > 2 are contracted on their last axis.

    Args:
      inputs: float Tensor `[batch, ..., depth]` with a known last dimension.
      num_outputs: output units.
      activation_fn: applied last (None: linear).
      normalizer_fn: replaces the biases: `normalizer_fn(outputs, **normalizer_params)`.
      normalizer_params: keyword arguments of `normalizer_fn`.
      weights_initializer: initializer of the weights.
      weights_regularizer: regularizer of the weights.
      biases_initializer: initializer of the biases (None: no biases).
      biases_regularizer: regularizer of the biases.
      reuse: reuse the scope's variables.
      variables_collections: extra collections (a list, or a dict keyed by
        "weights"/"biases") of the variables.
      outputs_collections: collections the output is added to.
      trainable: whether the variables are trainable.
      scope: variable scope.

    Returns:
      The `[batch, ..., num_outputs]` Tensor.

    Raises:
      ValueError: `num_outputs` is not an int, or the last input dimension is unknown.
    """
    if not isinstance(num_outputs, numbers.Integral):
        raise ValueError(f"num_outputs type should be one of (int, long), got {num_outputs!r}.")
    with vs.variable_scope(scope, "fully_connected", [inputs], reuse=reuse):
        inputs = convert_to_tensor(inputs)
        depth = inputs.shape.dims[-1].value if inputs.shape.ndims else None
        if depth is None:
            raise ValueError("The last dimension of the inputs to `Dense` should be defined. "
                             "Found `None`.")
        dtype = inputs.dtype.base_dtype
        weights = vs.get_variable(
            "weights", [depth, num_outputs], dtype,
            initializer=weights_initializer or xavier_initializer(),
            regularizer=weights_regularizer, trainable=trainable,
            collections=_variable_collections(variables_collections, "weights"))
        if inputs.shape.ndims == 2:
            outputs = matmul_ops.matmul(inputs, weights)
        else:
            outputs = matmul_ops.tensordot(inputs, weights, [[inputs.shape.ndims - 1], [0]])
        if normalizer_fn is not None:
            outputs = normalizer_fn(outputs, **(normalizer_params or {}))
        elif biases_initializer is not None:
            biases = vs.get_variable(
                "biases", [num_outputs], dtype, initializer=biases_initializer,
                regularizer=biases_regularizer, trainable=trainable,
                collections=_variable_collections(variables_collections, "biases"))
            outputs = nn_ops.bias_add(outputs, biases)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
    _collect(outputs_collections, outputs)
    return outputs


__all__ = [
    "flatten", "fully_connected", "l1_regularizer", "l2_regularizer",
    "variance_scaling_initializer", "xavier_initializer", "xavier_initializer_conv2d",
]
