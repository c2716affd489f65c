"""`tf.contrib.layers`: the TF 1.x contrib layer helpers most graph-mode programs use
(`flatten`, `fully_connected`, `dropout`, `batch_norm`, the Xavier / variance-scaling
initializers, the l1/l2 regularizers), as in TF 1.15's
`contrib/layers/python/layers/{layers,initializers,regularizers}.py`. The layer functions
take their defaults from `tf.contrib.framework.arg_scope`.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

from tensorweave.contrib.framework import add_arg_scope
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import (
    array_ops,
    cwise_binary_ops,
    cwise_unary_ops,
    init_ops,
    layers_core,
    layers_impl,
    layers_normalization,
    matmul_ops,
    nn_norm_ops,
    nn_ops,
    random_ops,
    reduction_ops,
    smart_cond,
)
from tensorweave.ops import variable_scope as vs
from tensorweave.ops.variables import GraphKeys
from tensorweave.training import moving_averages

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


@add_arg_scope
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


@add_arg_scope
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
    `normalizer_fn` is given or `biases_initializer` is None), model variables (also in
    `MODEL_VARIABLES`, as TF's); default scope `fully_connected`. Inputs of rank > 2 are
    contracted on their last axis.

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
    with vs.variable_scope(scope, "fully_connected", [inputs], reuse=reuse,
                           custom_getter=_model_variable_getter):
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


@add_arg_scope
def dropout(inputs: Any, keep_prob: Any = 0.5, noise_shape: Any = None, is_training: Any = True,
            outputs_collections: Any = None, scope: str | None = None,
            seed: int | None = None) -> Tensor:
    """Dropout with keep probability `keep_prob` while training (`tf.contrib.layers.dropout`).

    A `tf.layers.Dropout(rate=1 - keep_prob)` layer in variable scope `Dropout`: kept
    entries are scaled by `1 / keep_prob`; with `is_training` False the input passes
    unchanged.

    Args:
      inputs: float Tensor.
      keep_prob: float scalar (or scalar Tensor) in (0, 1].
      noise_shape: int32 shape of the keep/drop mask (broadcast over `inputs`).
      is_training: Python bool or bool scalar Tensor (a Tensor builds a `tf.cond`).
      outputs_collections: collections the output is added to.
      scope: variable scope.
      seed: op-level random seed.

    Returns:
      The Tensor of `inputs`' shape and dtype.
    """
    with vs.variable_scope(scope, "Dropout", [inputs]) as sc:
        inputs = convert_to_tensor(inputs)
        layer = layers_core.Dropout(rate=1 - keep_prob, noise_shape=noise_shape, seed=seed,
                                    name=sc.name, _scope=sc)
        outputs = layer.apply(inputs, training=is_training)
    _collect(outputs_collections, outputs)
    return outputs


def _model_variable_getter(getter: Any, name: str, *args: Any, **kwargs: Any) -> Any:
    # TF's contrib layers create model variables (`tf.contrib.framework.model_variable`).
    extra = [c for c in kwargs.get("collections") or [] if c != GraphKeys.GLOBAL_VARIABLES]
    kwargs["collections"] = [*extra, GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES]
    return getter(name, *args, **kwargs)


def _param_initializers(params: Any) -> dict[str, Any]:
    params = params or {}
    return {k: params.get(k, init) for k, init in (
        ("beta", _ZEROS), ("gamma", init_ops.Ones()), ("moving_mean", _ZEROS),
        ("moving_variance", init_ops.Ones()))}


def _fused_batch_norm(inputs: Tensor, decay: Any, center: bool, scale: bool, epsilon: float,
                      param_initializers: Any, param_regularizers: Any,
                      updates_collections: Any, is_training: Any,
                      variables_collections: Any, trainable: bool, data_format: str,
                      zero_debias_moving_mean: bool) -> Tensor:
    """TF's `_fused_batch_norm`: rank 2 or 4 inputs through `FusedBatchNormV3`."""
    original_shape = inputs.shape
    if original_shape.ndims == 2:
        channels = original_shape.dims[-1].value
        if channels is None:
            raise ValueError("`C` dimension must be known but is None")
        new_shape = [-1, channels, 1, 1] if data_format == "NCHW" else [-1, 1, 1, channels]
        x = array_ops.reshape(inputs, new_shape)
    else:
        x = inputs
    params_shape = x.shape[1:2] if data_format == "NCHW" else x.shape[-1:]
    if not params_shape.is_fully_defined():
        raise ValueError(f"Inputs {inputs.name} has undefined `C` dimension {params_shape}.")
    inits = _param_initializers(param_initializers)
    regs = param_regularizers or {}

    def param(name: str, train: bool) -> Any:
        return vs.get_variable(
            name, params_shape, dtypes.float32, initializer=inits[name],
            regularizer=regs.get(name), trainable=train and trainable,
            collections=_variable_collections(variables_collections, name))

    beta = param("beta", True) if center else array_ops.zeros(params_shape, dtypes.float32)
    gamma = param("gamma", True) if scale else array_ops.ones(params_shape, dtypes.float32)
    moving_mean, moving_variance = param("moving_mean", False), param("moving_variance", False)
    outputs, mean, variance = smart_cond.smart_cond(
        is_training,
        lambda: nn_norm_ops.fused_batch_norm(x, gamma, beta, epsilon=epsilon,
                                             data_format=data_format),
        lambda: nn_norm_ops.fused_batch_norm(x, gamma, beta, mean=moving_mean,
                                             variance=moving_variance, epsilon=epsilon,
                                             is_training=False, data_format=data_format))

    def updates() -> tuple[Tensor, Tensor]:
        return (moving_averages.assign_moving_average(moving_mean, mean, decay,
                                                      zero_debias=zero_debias_moving_mean),
                moving_averages.assign_moving_average(moving_variance, variance, decay,
                                                      zero_debias=False))

    if smart_cond.smart_constant_value(is_training) is not False:
        if updates_collections is None:
            def forced() -> Tensor:
                with graph_mod.control_dependencies(list(updates())):
                    return array_ops.identity(outputs)

            outputs = smart_cond.smart_cond(is_training, forced, lambda: outputs)
        else:
            update_ops = smart_cond.smart_cond(is_training, updates,
                                               lambda: (moving_mean, moving_variance))
            for op in update_ops:
                _collect(updates_collections, op)
    outputs.set_shape(x.shape)
    if original_shape.ndims == 2:
        outputs = array_ops.reshape(outputs, array_ops.shape(inputs))
        outputs.set_shape(original_shape)
    return outputs


def _layer_batch_norm(inputs: Tensor, sc: Any, decay: Any, center: bool, scale: bool,
                      epsilon: float, param_initializers: Any, param_regularizers: Any,
                      is_training: Any, reuse: Any, variables_collections: Any,
                      trainable: bool, fused: bool, data_format: str) -> Tensor:
    """The `tf.layers.BatchNormalization` path (updates in `GraphKeys.UPDATE_OPS`)."""
    inits = _param_initializers(param_initializers)
    regs = param_regularizers or {}
    layer = layers_normalization.BatchNormalization(
        axis=1 if data_format == "NCHW" else -1, momentum=decay, epsilon=epsilon,
        center=center, scale=scale, beta_initializer=inits["beta"],
        gamma_initializer=inits["gamma"], moving_mean_initializer=inits["moving_mean"],
        moving_variance_initializer=inits["moving_variance"],
        beta_regularizer=regs.get("beta"), gamma_regularizer=regs.get("gamma"),
        trainable=trainable, name=sc.name, _scope=sc, _reuse=reuse,
        fused=None if fused else False)  # None: fused where the layer can be, as TF's v1 layer
    outputs = layer.apply(inputs, training=is_training)
    for name in ("moving_mean", "moving_variance", "beta", "gamma"):
        variable = getattr(layer, name)
        extra = _variable_collections(variables_collections, name)
        if variable is not None and extra:
            _collect(extra[1:], variable)
    return outputs


@add_arg_scope
def batch_norm(inputs: Any, decay: Any = 0.999, center: bool = True, scale: bool = False,
               epsilon: float = 0.001, activation_fn: Any = None, param_initializers: Any = None,
               param_regularizers: Any = None, updates_collections: Any = GraphKeys.UPDATE_OPS,
               is_training: Any = True, reuse: Any = None, variables_collections: Any = None,
               outputs_collections: Any = None, trainable: bool = True,
               batch_weights: Any = None, fused: Any = None, data_format: str = "NHWC",
               zero_debias_moving_mean: bool = False, scope: str | None = None,
               renorm: bool = False, renorm_clipping: Any = None, renorm_decay: float = 0.99,
               adjustment: Any = None) -> Tensor:
    """Batch normalization over all axes but the channel one (`tf.contrib.layers.batch_norm`).

    Variables in scope `BatchNorm`: `beta` (if `center`), `gamma` (if `scale`),
    `moving_mean` and `moving_variance` (float32 `[channels]`, not trainable, also in
    `MODEL_VARIABLES`). Training normalizes with the batch statistics and updates
    `moving -= (1 - decay) * (moving - batch)` (the batch variance unbiased, as
    `FusedBatchNormV3` gives it); the update ops go to `updates_collections`, or with
    `updates_collections=None` run before the output is returned (control dependencies).
    Inference uses the moving statistics. As in TF 1.15: rank 2 inputs, or rank 4 with
    `updates_collections` other than `UPDATE_OPS` or with `zero_debias_moving_mean`, use
    the fused path (rank 2 reshaped to `[-1, 1, 1, C]`); the rest uses
    `tf.layers.BatchNormalization`.

    Args:
      inputs: float Tensor `[batch, ..., channels]` (NHWC) or `[batch, channels, ...]`.
      decay: moving-average decay.
      center: add the `beta` offset.
      scale: multiply by `gamma`.
      epsilon: added to the variance.
      activation_fn: applied to the output (None: linear).
      param_initializers: dict of initializers keyed by the variable names.
      param_regularizers: dict of regularizers for "beta" and "gamma".
      updates_collections: collections of the moving-average updates (None: in place).
      is_training: Python bool or bool scalar Tensor (a Tensor builds `tf.cond`s).
      reuse: reuse the scope's variables.
      variables_collections: extra collections (a list, or a dict keyed by variable name).
      outputs_collections: collections the output is added to.
      trainable: whether `beta`/`gamma` are trainable.
      batch_weights: per-example weights (not supported).
      fused: use the fused kernel when possible (None: True).
      data_format: "NHWC" or "NCHW".
      zero_debias_moving_mean: zero-debias the moving mean (fused path).
      scope: variable scope.
      renorm: batch renormalization (not supported).
      renorm_clipping: see `renorm`.
      renorm_decay: see `renorm`.
      adjustment: a normalization adjustment function (not supported).

    Returns:
      The normalized Tensor of `inputs`' shape.

    Raises:
      ValueError: `data_format` is not NHWC/NCHW, or the rank or channel size is unknown.
      NotImplementedError: `batch_weights`, `renorm`, `adjustment`, or a case TF leaves
        to its unfused legacy implementation (rank other than 2/4 or `fused=False` with
        non-default `updates_collections` or `zero_debias_moving_mean`).
    """
    del renorm_clipping, renorm_decay
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError("data_format has to be either NCHW or NHWC.")
    if batch_weights is not None or renorm or adjustment is not None:
        raise NotImplementedError(
            "tf.contrib.layers.batch_norm with batch_weights, renorm or adjustment")
    inputs = convert_to_tensor(inputs)
    rank = inputs.shape.ndims
    if rank is None:
        raise ValueError(f"Inputs {inputs.name} has undefined rank.")
    custom_updates = updates_collections is not GraphKeys.UPDATE_OPS
    use_fused = fused is not False and rank in (2, 4) and (
        zero_debias_moving_mean or rank == 2 or custom_updates)
    if not use_fused and (custom_updates or zero_debias_moving_mean):
        raise NotImplementedError(
            "tf.contrib.layers.batch_norm's unfused legacy path (non-default "
            "updates_collections or zero_debias_moving_mean with fused=False or a rank other "
            "than 2 and 4)")
    with vs.variable_scope(scope, "BatchNorm", [inputs], reuse=reuse,
                           custom_getter=_model_variable_getter) as sc:
        if use_fused:
            outputs = _fused_batch_norm(
                inputs, decay, center, scale, epsilon, param_initializers, param_regularizers,
                updates_collections, is_training, variables_collections, trainable,
                data_format, zero_debias_moving_mean)
        else:
            outputs = _layer_batch_norm(
                inputs, sc, decay, center, scale, epsilon, param_initializers,
                param_regularizers, is_training, reuse, variables_collections, trainable,
                fused is not False, data_format)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
    _collect(outputs_collections, outputs)
    return outputs


__all__ = [
    "batch_norm", "dropout", "flatten", "fully_connected", "l1_regularizer", "l2_regularizer",
    "variance_scaling_initializer", "xavier_initializer", "xavier_initializer_conv2d",
]
