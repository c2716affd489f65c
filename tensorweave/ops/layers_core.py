"""`tf.layers.Dense`, `Dropout` and `Flatten` (follows TF 1.x `layers/core.py`): the same
variables (`<scope>/kernel`, `<scope>/bias`) and ops as the functional `tf.layers.dense`,
`dropout` and `flatten` in `layers_impl`."""

from __future__ import annotations

import math
from typing import Any

from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops import init_ops, layers_impl, math_ops, nn_ops
from tensorweave.ops.layers_base import InputSpec, Layer

_ZEROS = init_ops.zeros_initializer()


class Dense(Layer):
    """`activation(inputs @ kernel + bias)` (follows `tf.layers.Dense`).

    Args:
      units: the output size.
      activation: a function applied to the output, or None.
      use_bias: whether to add a bias.
      kernel_initializer: initializer of `kernel [in_units, units]` (None: Glorot uniform).
      bias_initializer: initializer of `bias [units]` (zeros).
      kernel_regularizer: function of the kernel returning a loss.
      bias_regularizer: same for the bias.
      activity_regularizer: same for the output.
      kernel_constraint: projection applied by optimizers to the kernel.
      bias_constraint: same for the bias.
      trainable: whether the weights are trainable.
      name: the layer's name and scope.
      **kwargs: `Layer` arguments.
    """

    def __init__(
        self,
        units,
        activation=None,
        use_bias=True,
        kernel_initializer=None,
        bias_initializer=_ZEROS,
        kernel_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        trainable=True,
        name=None,
        **kwargs,
    ):
        super().__init__(
            trainable=trainable, name=name, activity_regularizer=activity_regularizer, **kwargs
        )
        self.units = int(units)
        self.activation = activation
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint
        self.input_spec = InputSpec(min_ndim=2)
        self.kernel: Any = None
        self.bias: Any = None

    def build(self, input_shape: Any) -> None:
        """Creates `kernel` and `bias`.

        Raises:
          ValueError: if the last input dimension is unknown.
        """
        input_shape = TensorShape(input_shape)
        last = input_shape.as_list()[-1] if input_shape.ndims else None
        if last is None:
            raise ValueError(
                "The last dimension of the inputs to `Dense` should be defined. Found `None`."
            )
        self.input_spec = InputSpec(min_ndim=2, axes={-1: last})
        self.kernel = self.add_weight(
            "kernel",
            shape=[last, self.units],
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
            dtype=self._dtype,
            trainable=True,
        )
        if self.use_bias:
            self.bias = self.add_weight(
                "bias",
                shape=[self.units],
                initializer=self.bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
                dtype=self._dtype,
                trainable=True,
            )
        self.built = True

    def call(self, inputs: Any) -> Any:
        """`[batch, ..., in_units] -> [batch, ..., units]`."""
        inputs = math_ops.cast(inputs, self._dtype)
        rank = inputs.shape.ndims
        if rank == 2:
            outputs = math_ops.matmul(inputs, self.kernel)
        else:
            outputs = math_ops.tensordot(inputs, self.kernel, [[rank - 1], [0]])
            outputs.set_shape(inputs.shape.as_list()[:-1] + [self.units])
        if self.use_bias:
            outputs = nn_ops.bias_add(outputs, self.bias)
        if self.activation is not None:
            return self.activation(outputs)
        return outputs

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        """`input_shape` with the last dimension replaced by `units`."""
        dims = TensorShape(input_shape).as_list()
        return TensorShape(dims[:-1] + [self.units])


class Dropout(Layer):
    """Dropout active only when called with `training=True` (follows `tf.layers.Dropout`).

    Args:
      rate: the drop probability.
      noise_shape: the shape of the keep/drop mask.
      seed: op-level random seed.
      name: the layer's name.
      **kwargs: `Layer` arguments.
    """

    def __init__(self, rate=0.5, noise_shape=None, seed=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.rate, self.noise_shape, self.seed = rate, noise_shape, seed

    def call(self, inputs: Any, training: Any = False) -> Any:
        """`inputs` dropped out (training: Python bool or bool Tensor) or unchanged."""
        return layers_impl.dropout(
            inputs,
            rate=self.rate,
            noise_shape=self.noise_shape,
            seed=self.seed,
            training=training,
            name="dropout",
        )

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        """The input shape."""
        return TensorShape(input_shape)


class Flatten(Layer):
    """Flattens all but the batch dimension (follows `tf.layers.Flatten`).

    Args:
      data_format: "channels_last" or "channels_first" (moves channels last first).
      **kwargs: `Layer` arguments.
    """

    def __init__(self, data_format="channels_last", **kwargs):
        super().__init__(**kwargs)
        self.data_format = data_format
        self.input_spec = InputSpec(min_ndim=1)

    def call(self, inputs: Any) -> Any:
        """`[batch, ...] -> [batch, prod(...)]`."""
        return layers_impl.flatten(inputs, name="flatten", data_format=self.data_format)

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        """`[batch, product of the other dimensions]`."""
        dims = TensorShape(input_shape).as_list()
        rest = dims[1:]
        size = None if None in rest else int(math.prod(rest))
        return TensorShape([dims[0], size])


__all__ = ["Dense", "Dropout", "Flatten"]
