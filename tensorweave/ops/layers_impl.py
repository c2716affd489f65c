"""Functional layers over `get_variable` (follows TF 1.x `tf.layers`).

`dense`, `conv2d`, `flatten`, `dropout`, `max_pooling2d` and `average_pooling2d` build the
ops and variables TensorFlow's layers build, with the same names: a layer without a
`name` gets a unique variable scope `dense`, `dense_1`, ... (per base name); its weights
are `<scope>/kernel` and `<scope>/bias`. Pass the same `name` with `reuse=True` (or open a
reusing variable scope) to share them. `kernel_initializer=None` means Glorot uniform,
as in TensorFlow. Regularizers add their losses to `GraphKeys.REGULARIZATION_LOSSES`.

Deviation: `channels_first` convolutions and pools transpose to NHWC and back (the CPU
kernels are NHWC only, as TensorFlow's).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import array_ops, init_ops, math_ops, nn_conv_ops, nn_impl, nn_ops
from tensorweave.ops import variable_scope as vs
from tensorweave.ops.variables import GraphKeys


# -------------------------------------------------------------------- helpers
def _layer_scope(name: str | None, base_name: str, values: list[Any], reuse: Any) -> Any:
    """The layer's variable scope: `name`, or a unique `base_name`, `base_name_1`, ...

    With `reuse` and no name, the base name itself is reused (TensorFlow's rule).
    """
    if name is None and reuse in (True, vs.AUTO_REUSE):
        name = base_name
    if name is None:
        return vs.variable_scope(None, default_name=base_name, values=values)
    return vs.variable_scope(name, values=values, reuse=reuse or None)


def _normalize_tuple(value: Any, n: int, name: str) -> tuple[int, ...]:
    if isinstance(value, int):
        return (value,) * n
    try:
        values = tuple(int(v) for v in value)
    except TypeError:
        values = ()
    if len(values) != n:
        raise ValueError(
            f"The `{name}` argument must be a tuple of {n} integers. Received: {value}"
        )
    return values


def _normalize_padding(padding: str) -> str:
    value = padding.lower() if isinstance(padding, str) else padding
    if value not in ("valid", "same"):
        raise ValueError(
            f'The `padding` argument must be one of "valid", "same". Received: {padding}'
        )
    return value.upper()


def _channels_first(data_format: str) -> bool:
    value = data_format.lower() if isinstance(data_format, str) else data_format
    if value not in ("channels_first", "channels_last"):
        raise ValueError(
            'The `data_format` argument must be one of "channels_first", "channels_last". '
            f"Received: {data_format}"
        )
    return value == "channels_first"


def _float_dtype(inputs: Tensor) -> dtypes.DType:
    dt = inputs.dtype.base_dtype
    return dt if dt.is_floating else dtypes.float32


def _activity_regularize(outputs: Tensor, regularizer: Any) -> None:
    if regularizer is None:
        return
    with graph_mod.name_scope(None, "ActivityRegularizer", [outputs]):
        loss = regularizer(outputs)
    if loss is not None:
        graph_mod.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)


def _weights(
    shape: list[int],
    units: int,
    dtype: dtypes.DType,
    use_bias: bool,
    config: dict[str, Any],
) -> tuple[Any, Any]:
    """`kernel` of `shape` and (when `use_bias`) `bias` of `[units]`, via get_variable."""
    kernel = vs.get_variable(
        "kernel",
        shape=shape,
        dtype=dtype,
        initializer=config["kernel_initializer"] or init_ops.glorot_uniform_initializer(),
        regularizer=config["kernel_regularizer"],
        trainable=config["trainable"],
        constraint=config["kernel_constraint"],
    )
    bias = None
    if use_bias:
        bias = vs.get_variable(
            "bias",
            shape=[units],
            dtype=dtype,
            initializer=config["bias_initializer"],
            regularizer=config["bias_regularizer"],
            trainable=config["trainable"],
            constraint=config["bias_constraint"],
        )
    return kernel, bias


# ----------------------------------------------------------------------- dense
def dense(
    inputs: Any,
    units: int,
    activation: Any = None,
    use_bias: bool = True,
    kernel_initializer: Any = None,
    bias_initializer: Any = init_ops.zeros_initializer(),  # noqa: B008  (TF's default)
    kernel_regularizer: Any = None,
    bias_regularizer: Any = None,
    activity_regularizer: Any = None,
    kernel_constraint: Any = None,
    bias_constraint: Any = None,
    trainable: bool = True,
    name: str | None = None,
    reuse: Any = None,
) -> Tensor:
    """A densely connected layer, `activation(inputs @ kernel + bias)` (`tf.layers.dense`).

    Args:
      inputs: float `[batch, ..., in_units]` with a static last dimension; rank > 2
        inputs are contracted on their last dimension.
      units: the output size.
      activation: a function applied to the output, or None.
      use_bias: whether to add a bias.
      kernel_initializer: initializer of `kernel [in_units, units]` (None: Glorot uniform).
      bias_initializer: initializer of `bias [units]` (zeros).
      kernel_regularizer: function of the kernel whose result is a regularization loss.
      bias_regularizer: same for the bias.
      activity_regularizer: same for the output.
      kernel_constraint: projection applied by optimizers to the kernel.
      bias_constraint: same for the bias.
      trainable: add the variables to `TRAINABLE_VARIABLES`.
      name: the layer's variable scope (default: unique `dense`, `dense_1`, ...).
      reuse: reuse the variables of a layer with the same name.

    Returns:
      `[batch, ..., units]` of the input's float dtype.

    Raises:
      ValueError: if the last dimension of `inputs` is not known, or when creating
        variables that exist without `reuse` (from `get_variable`).
    """
    inputs = convert_to_tensor(inputs, name="inputs")
    shape = inputs.shape
    if shape.ndims is None or shape.as_list()[-1] is None:
        raise ValueError(
            "The last dimension of the inputs to `Dense` should be defined. Found `None`."
        )
    config = dict(locals())
    dtype = _float_dtype(inputs)
    with _layer_scope(name, "dense", [inputs], reuse):
        kernel, bias = _weights([shape.as_list()[-1], units], units, dtype, use_bias, config)
        inputs = math_ops.cast(inputs, dtype)
        rank = shape.ndims
        if rank == 2:
            outputs = math_ops.matmul(inputs, kernel)
        else:
            outputs = math_ops.tensordot(inputs, kernel, [[rank - 1], [0]])
            outputs.set_shape(shape.as_list()[:-1] + [units])
        if bias is not None:
            outputs = nn_ops.bias_add(outputs, bias)
        if activation is not None:
            outputs = activation(outputs)
        _activity_regularize(outputs, activity_regularizer)
        return outputs


# ----------------------------------------------------------------- convolution
def conv2d(
    inputs: Any,
    filters: int,
    kernel_size: Any,
    strides: Any = (1, 1),
    padding: str = "valid",
    data_format: str = "channels_last",
    dilation_rate: Any = (1, 1),
    activation: Any = None,
    use_bias: bool = True,
    kernel_initializer: Any = None,
    bias_initializer: Any = init_ops.zeros_initializer(),  # noqa: B008  (TF's default)
    kernel_regularizer: Any = None,
    bias_regularizer: Any = None,
    activity_regularizer: Any = None,
    kernel_constraint: Any = None,
    bias_constraint: Any = None,
    trainable: bool = True,
    name: str | None = None,
    reuse: Any = None,
) -> Tensor:
    """A 2-D convolution layer (follows `tf.layers.conv2d`).

    Args:
      inputs: float `[batch, height, width, channels]` (or `[batch, channels, h, w]` for
        `channels_first`) with a static channel dimension.
      filters: the number of output channels.
      kernel_size: an int or a pair, the window's height and width.
      strides: an int or a pair.
      padding: "valid" or "same" (case-insensitive).
      data_format: "channels_last" or "channels_first".
      dilation_rate: an int or a pair.
      activation: a function applied to the output, or None.
      use_bias: whether to add a bias.
      kernel_initializer: initializer of `kernel [kh, kw, in_channels, filters]`
        (None: Glorot uniform).
      bias_initializer: initializer of `bias [filters]` (zeros).
      kernel_regularizer: function of the kernel returning a regularization loss.
      bias_regularizer: same for the bias.
      activity_regularizer: same for the output.
      kernel_constraint: projection applied by optimizers to the kernel.
      bias_constraint: same for the bias.
      trainable: add the variables to `TRAINABLE_VARIABLES`.
      name: the layer's variable scope (default: unique `conv2d`, `conv2d_1`, ...).
      reuse: reuse the variables of a layer with the same name.

    Returns:
      The convolved tensor in `data_format`.

    Raises:
      ValueError: for malformed arguments or an unknown channel dimension.
    """
    inputs = convert_to_tensor(inputs, name="inputs")
    kernel_size = _normalize_tuple(kernel_size, 2, "kernel_size")
    strides = _normalize_tuple(strides, 2, "strides")
    dilation_rate = _normalize_tuple(dilation_rate, 2, "dilation_rate")
    pad = _normalize_padding(padding)
    first = _channels_first(data_format)
    if inputs.shape.ndims != 4:
        raise ValueError(f"Input 0 of layer conv2d should have rank 4, found {inputs.shape}")
    in_channels = inputs.shape.as_list()[1 if first else -1]
    if in_channels is None:
        raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
    config = dict(locals())
    dtype = _float_dtype(inputs)
    with _layer_scope(name, "conv2d", [inputs], reuse):
        shape = [*kernel_size, in_channels, filters]
        kernel, bias = _weights(shape, filters, dtype, use_bias, config)
        x = array_ops.transpose(inputs, [0, 2, 3, 1]) if first else inputs
        outputs = nn_conv_ops.conv2d(
            math_ops.cast(x, dtype), kernel, [1, *strides, 1], pad, dilations=[1, *dilation_rate, 1]
        )
        if bias is not None:
            outputs = nn_ops.bias_add(outputs, bias)
        if first:
            outputs = array_ops.transpose(outputs, [0, 3, 1, 2])
        if activation is not None:
            outputs = activation(outputs)
        _activity_regularize(outputs, activity_regularizer)
        return outputs


# ---------------------------------------------------------------------- pooling
def _pooling2d(
    pool: Any, base_name: str, inputs: Any, pool_size: Any, strides: Any, padding: str,
    data_format: str, name: str | None,
) -> Tensor:  # fmt: skip
    pool_size = _normalize_tuple(pool_size, 2, "pool_size")
    strides = _normalize_tuple(strides, 2, "strides")
    pad = _normalize_padding(padding)
    first = _channels_first(data_format)
    with graph_mod.name_scope(name, base_name, [inputs]):
        inputs = convert_to_tensor(inputs, name="inputs")
        x = array_ops.transpose(inputs, [0, 2, 3, 1]) if first else inputs
        out = pool(x, [1, *pool_size, 1], [1, *strides, 1], pad)
        return array_ops.transpose(out, [0, 3, 1, 2]) if first else out


def max_pooling2d(
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: str = "valid",
    data_format: str = "channels_last",
    name: str | None = None,
) -> Tensor:
    """Max pooling over 2-D windows (follows `tf.layers.max_pooling2d`).

    Args:
      inputs: `[batch, height, width, channels]` (or channels first).
      pool_size: an int or a pair, the window size.
      strides: an int or a pair.
      padding: "valid" or "same".
      data_format: "channels_last" or "channels_first".
      name: name scope (default: unique `max_pooling2d`, ...).

    Raises:
      ValueError: for malformed arguments.
    """
    return _pooling2d(
        nn_conv_ops.max_pool, "max_pooling2d", inputs, pool_size, strides, padding,
        data_format, name,
    )  # fmt: skip


def average_pooling2d(
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: str = "valid",
    data_format: str = "channels_last",
    name: str | None = None,
) -> Tensor:
    """Average pooling over 2-D windows (follows `tf.layers.average_pooling2d`).

    Arguments as `max_pooling2d`; with "same" padding only real entries are averaged.
    """
    return _pooling2d(
        nn_conv_ops.avg_pool, "average_pooling2d", inputs, pool_size, strides, padding,
        data_format, name,
    )  # fmt: skip


# ------------------------------------------------------------- reshaping, dropout
def flatten(inputs: Any, name: str | None = None, data_format: str = "channels_last") -> Tensor:
    """Flattens all but the first dimension (follows `tf.layers.flatten`).

    Args:
      inputs: a Tensor of rank >= 1, `[batch, ...]`.
      name: name scope (default: unique `flatten`, ...).
      data_format: "channels_first" moves the channel dimension (1) last first, so the
        result matches a channels-last model's.

    Returns:
      `[batch, prod(...)]` (`[batch, 1]` for rank-1 inputs).
    """
    first = _channels_first(data_format)
    with graph_mod.name_scope(name, "flatten", [inputs]):
        inputs = convert_to_tensor(inputs, name="inputs")
        rank = inputs.shape.ndims
        if first and rank is not None and rank > 2:
            inputs = array_ops.transpose(inputs, [0, *range(2, rank), 1])
        dims = inputs.shape.as_list() if rank is not None else None
        if dims is not None and None not in dims[1:]:
            return array_ops.reshape(inputs, [-1, int(np.prod(dims[1:], dtype=np.int64))])
        batch = dims[0] if dims is not None and dims[0] is not None else None
        if batch is not None:
            return array_ops.reshape(inputs, [batch, -1])
        return array_ops.reshape(inputs, array_ops.stack([array_ops.shape(inputs)[0], -1]))


def dropout(
    inputs: Any,
    rate: Any = 0.5,
    noise_shape: Any = None,
    seed: int | None = None,
    training: Any = False,
    name: str | None = None,
) -> Tensor:
    """Dropout that is active only while training (follows `tf.layers.dropout`).

    Args:
      inputs: a float Tensor.
      rate: the drop probability, in [0, 1).
      noise_shape: the shape of the keep/drop mask (see `tf.nn.dropout`).
      seed: op-level random seed.
      training: a Python bool or a bool scalar Tensor; with a Tensor both branches are
        built and one is selected at run time (`Select`, since there is no `tf.cond`).
      name: name scope (default: unique `dropout`, ...).

    Returns:
      `inputs`' shape and dtype: dropped out and scaled by `1 / (1 - rate)` when training,
      else `inputs` unchanged.
    """
    with graph_mod.name_scope(name, "dropout", [inputs]):
        inputs = convert_to_tensor(inputs, name="inputs")
        if not isinstance(training, bool):
            training = convert_to_tensor(training, dtype=dtypes.bool, name="training")
            static = constant_value(training)
            if static is not None:
                training = bool(static)
        if isinstance(training, bool):
            if not training:
                return array_ops.identity(inputs)
            return nn_impl.dropout(inputs, noise_shape=noise_shape, seed=seed, rate=rate)
        dropped = nn_impl.dropout(inputs, noise_shape=noise_shape, seed=seed, rate=rate)
        return array_ops.where(training, dropped, inputs)


__all__ = [
    "average_pooling2d",
    "conv2d",
    "dense",
    "dropout",
    "flatten",
    "max_pooling2d",
]
