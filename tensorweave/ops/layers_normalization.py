"""`tf.layers.BatchNormalization` and `tf.layers.batch_normalization` (follows TF 1.x
`layers/normalization.py`).

Weights `<scope>/gamma`, `<scope>/beta` (trainable) and `<scope>/moving_mean`,
`<scope>/moving_variance` (not trainable). With `training=True` the layer normalizes with
the batch statistics and adds the moving-average updates
(`moving -= (1 - momentum) * (moving - batch)`, name scope `AssignMovingAvg`) to
`layer.updates` and `GraphKeys.UPDATE_OPS`; with `training=False` it uses the moving
statistics. 4-D inputs normalized over their channel axis (1 or 3) use one
`FusedBatchNormV3` op (whose batch variance for the moving average is unbiased, as
TensorFlow's); other cases use `moments` + `batch_normalization` (biased variance).

A Tensor `training` goes through `smart_cond` (it needs `tf.cond`). Not supported:
`renorm`, `virtual_batch_size`, `adjustment` (NotImplementedError).
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops import array_ops, init_ops, math_ops, nn_impl, nn_norm_ops, state_ops
from tensorweave.ops.layers_base import InputSpec, Layer
from tensorweave.ops.smart_cond import smart_cond, smart_constant_value

_ZEROS = init_ops.zeros_initializer()
_ONES = init_ops.ones_initializer()


def _assign_moving_average(variable: Any, value: Any, momentum: Any) -> Any:
    with graph_mod.name_scope(None, "AssignMovingAvg", [variable, value, momentum]) as scope:
        with graph_mod.colocate_with(variable):
            decay = convert_to_tensor(1.0 - momentum, name="decay")
            if decay.dtype != variable.dtype.base_dtype:
                decay = math_ops.cast(decay, variable.dtype.base_dtype)
            delta = (variable - math_ops.cast(value, variable.dtype.base_dtype)) * decay
            return state_ops.assign_sub(variable, delta, name=scope)


class BatchNormalization(Layer):
    """Batch normalization layer (follows `tf.layers.BatchNormalization`).

    Args:
      axis: the feature axis (or a list of axes) normalized separately.
      momentum: moving-average momentum.
      epsilon: added to the variance.
      center: add the `beta` offset.
      scale: multiply by `gamma`.
      beta_initializer: `beta`'s initializer.
      gamma_initializer: `gamma`'s initializer.
      moving_mean_initializer: the moving mean's initializer.
      moving_variance_initializer: the moving variance's initializer.
      beta_regularizer: a loss function of `beta`.
      gamma_regularizer: a loss function of `gamma`.
      beta_constraint: projection of `beta` after optimizer updates.
      gamma_constraint: projection of `gamma` after optimizer updates.
      renorm: not supported (must be False).
      renorm_clipping: not supported.
      renorm_momentum: not supported.
      fused: use `FusedBatchNormV3` (None: when possible).
      trainable: whether `gamma`/`beta` are trainable.
      virtual_batch_size: not supported (must be None).
      adjustment: not supported (must be None).
      name: the layer's name.
      **kwargs: `Layer` arguments.

    Raises:
      NotImplementedError: for `renorm`, `virtual_batch_size` or `adjustment`.
    """

    def __init__(
        self,
        axis=-1,
        momentum=0.99,
        epsilon=1e-3,
        center=True,
        scale=True,
        beta_initializer=_ZEROS,
        gamma_initializer=_ONES,
        moving_mean_initializer=_ZEROS,
        moving_variance_initializer=_ONES,
        beta_regularizer=None,
        gamma_regularizer=None,
        beta_constraint=None,
        gamma_constraint=None,
        renorm=False,
        renorm_clipping=None,
        renorm_momentum=0.99,
        fused=None,
        trainable=True,
        virtual_batch_size=None,
        adjustment=None,
        name=None,
        **kwargs,
    ):
        super().__init__(name=name, trainable=trainable, **kwargs)
        for flag, what in (
            (renorm, "renorm"),
            (virtual_batch_size, "virtual_batch_size"),
            (adjustment, "adjustment"),
        ):
            if flag:
                raise NotImplementedError(f"tf.layers.BatchNormalization with {what}")
        self.axis = list(axis) if isinstance(axis, list | tuple) else axis
        self.momentum, self.epsilon = momentum, epsilon
        self.center, self.scale = center, scale
        self.beta_initializer, self.gamma_initializer = beta_initializer, gamma_initializer
        self.moving_mean_initializer = moving_mean_initializer
        self.moving_variance_initializer = moving_variance_initializer
        self.beta_regularizer, self.gamma_regularizer = beta_regularizer, gamma_regularizer
        self.beta_constraint, self.gamma_constraint = beta_constraint, gamma_constraint
        self.fused = fused
        self.gamma = self.beta = self.moving_mean = self.moving_variance = None
        self._axes: list[int] = []
        self._data_format = "NHWC"

    def _choose_fused(self, ndims: int) -> None:
        fusable = ndims == 4 and self._axes in ([1], [3])
        if self.fused is None:
            self.fused = fusable
        elif self.fused and not fusable:
            raise ValueError(
                "Unsupported axis, fused batch norm only supports axis == [1] or axis == [3] "
                "for 4D input tensors"
            )
        if self.fused:
            self._data_format = "NCHW" if self._axes == [1] else "NHWC"

    def build(self, input_shape: Any) -> None:
        """Creates `gamma`, `beta`, `moving_mean` and `moving_variance`.

        Raises:
          ValueError: for an unknown rank, an invalid axis or an unknown feature size.
        """
        input_shape = TensorShape(input_shape)
        ndims = input_shape.ndims
        if ndims is None:
            raise ValueError(f"Input has undefined rank: {input_shape}")
        axes = self.axis if isinstance(self.axis, list) else [self.axis]
        axes = sorted(a + ndims if a < 0 else a for a in axes)
        for a in axes:
            if a < 0 or a >= ndims:
                raise ValueError(f"Invalid axis: {a}")
        self._axes = axes
        self._choose_fused(ndims)
        dims = input_shape.as_list()
        sizes = {a: dims[a] for a in axes}
        if any(v is None for v in sizes.values()):
            raise ValueError(f"Input has undefined `axis` dimension. Input shape: {input_shape}")
        self.input_spec = InputSpec(ndim=ndims, axes=sizes)
        shape = [sizes[a] for a in axes] if len(axes) > 1 else [sizes[axes[0]]]
        w = {"shape": shape, "dtype": self._dtype}
        if self.scale:
            self.gamma = self.add_weight(
                "gamma",
                initializer=self.gamma_initializer,
                regularizer=self.gamma_regularizer,
                constraint=self.gamma_constraint,
                trainable=True,
                **w,
            )
        if self.center:
            self.beta = self.add_weight(
                "beta",
                initializer=self.beta_initializer,
                regularizer=self.beta_regularizer,
                constraint=self.beta_constraint,
                trainable=True,
                **w,
            )
        self.moving_mean = self.add_weight(
            "moving_mean", initializer=self.moving_mean_initializer, trainable=False, **w
        )
        self.moving_variance = self.add_weight(
            "moving_variance", initializer=self.moving_variance_initializer, trainable=False, **w
        )
        self.built = True

    def _momentum(self, training: Any, static: bool | None) -> Any:
        if static is None:
            return smart_cond(training, lambda: self.momentum, lambda: 1.0)
        return convert_to_tensor(self.momentum)

    def _fused_call(self, inputs: Any, training: Any, static: bool | None) -> Any:
        c = self.moving_mean.get_shape().as_list()[0]
        gamma = self.gamma if self.gamma is not None else array_ops.ones([c], self._dtype)
        beta = self.beta if self.beta is not None else array_ops.zeros([c], self._dtype)

        def train() -> Any:
            return nn_norm_ops.fused_batch_norm(
                inputs, gamma, beta, epsilon=self.epsilon, data_format=self._data_format
            )

        def infer() -> Any:
            return nn_norm_ops.fused_batch_norm(
                inputs,
                gamma,
                beta,
                self.moving_mean,
                self.moving_variance,
                epsilon=self.epsilon,
                data_format=self._data_format,
                is_training=False,
            )

        output, mean, variance = smart_cond(training, train, infer)
        if static is not False:
            momentum = self._momentum(training, static)
            self.add_update(_assign_moving_average(self.moving_mean, mean, momentum))
            self.add_update(_assign_moving_average(self.moving_variance, variance, momentum))
        return output

    def call(self, inputs: Any, training: Any = False) -> Any:
        """Normalizes `inputs` (batch statistics when training, else moving ones)."""
        static = smart_constant_value(training)
        if static is not None:
            training = static
        if self.fused:
            return self._fused_call(inputs, training, static)
        ndims = inputs.shape.ndims
        reduction = [i for i in range(ndims) if i not in self._axes]
        shape = [1] * ndims
        for a in self._axes:
            shape[a] = inputs.shape.as_list()[a]

        def broadcast(v: Any) -> Any:
            return array_ops.reshape(v, shape) if v is not None and ndims > 1 else v

        def batch() -> Any:
            return nn_impl.moments(math_ops.cast(inputs, self._dtype), reduction)

        def moving() -> Any:
            return self.moving_mean, self.moving_variance

        mean, variance = smart_cond(training, batch, moving)
        if static is not False:
            momentum = self._momentum(training, static)
            self.add_update(_assign_moving_average(self.moving_mean, mean, momentum))
            self.add_update(_assign_moving_average(self.moving_variance, variance, momentum))
        outputs = nn_norm_ops.batch_normalization(
            inputs,
            broadcast(mean),
            broadcast(variance),
            broadcast(self.beta),
            broadcast(self.gamma),
            self.epsilon,
        )
        outputs.set_shape(inputs.shape)
        return outputs

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        """The input shape."""
        return TensorShape(input_shape)


def batch_normalization(
    inputs,
    axis=-1,
    momentum=0.99,
    epsilon=1e-3,
    center=True,
    scale=True,
    beta_initializer=_ZEROS,
    gamma_initializer=_ONES,
    moving_mean_initializer=_ZEROS,
    moving_variance_initializer=_ONES,
    beta_regularizer=None,
    gamma_regularizer=None,
    beta_constraint=None,
    gamma_constraint=None,
    training=False,
    trainable=True,
    name=None,
    reuse=None,
    renorm=False,
    renorm_clipping=None,
    renorm_momentum=0.99,
    fused=None,
    virtual_batch_size=None,
    adjustment=None,
):
    """The functional form of `BatchNormalization` (follows `tf.layers.batch_normalization`).

    The moving-average updates are added to `GraphKeys.UPDATE_OPS`; run them with the
    train op (`tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS))`).
    Arguments as `BatchNormalization`, plus `training` (Python bool or bool Tensor) and
    `reuse` (reuse the variables of a layer with the same `name`).
    """
    layer = BatchNormalization(
        axis=axis,
        momentum=momentum,
        epsilon=epsilon,
        center=center,
        scale=scale,
        beta_initializer=beta_initializer,
        gamma_initializer=gamma_initializer,
        moving_mean_initializer=moving_mean_initializer,
        moving_variance_initializer=moving_variance_initializer,
        beta_regularizer=beta_regularizer,
        gamma_regularizer=gamma_regularizer,
        beta_constraint=beta_constraint,
        gamma_constraint=gamma_constraint,
        renorm=renorm,
        renorm_clipping=renorm_clipping,
        renorm_momentum=renorm_momentum,
        fused=fused,
        trainable=trainable,
        virtual_batch_size=virtual_batch_size,
        adjustment=adjustment,
        name=name,
        _reuse=reuse,
        _scope=name,
    )
    return layer.apply(inputs, training=training)


__all__ = ["BatchNormalization", "batch_normalization"]
