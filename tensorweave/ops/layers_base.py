"""`tf.layers.Layer` and `tf.layers.InputSpec` (follows TF 1.x `layers/base.py`, the
legacy graph-mode layer built on variable scopes).

A layer creates its weights with `get_variable` on its first call, in a variable scope
named after the layer (`dense`, `dense_1`, ... for unnamed layers, per graph, or the
`name` given); later calls reuse them. Ops of a call live in that scope's name scope.
Regularization losses go to `layer.losses` and `GraphKeys.REGULARIZATION_LOSSES`; updates
added with `add_update` (e.g. batch-norm moving averages) go to `layer.updates` and
`GraphKeys.UPDATE_OPS`.
"""

from __future__ import annotations

import re
from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops import variable_scope as vs
from tensorweave.ops.variables import GraphKeys, Variable

_ALLOWED_KWARGS = frozenset(
    {
        "_scope",
        "_reuse",
        "input_shape",
        "batch_input_shape",
        "activity_regularizer",
        "input_dim",
        "autocast",
        "dynamic",
        "weights",
    }
)


def to_snake_case(name: str) -> str:
    """`Conv2DTranspose` -> `conv2d_transpose` (TensorFlow's rule)."""
    intermediate = re.sub("(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    insecure = re.sub("([a-z])([A-Z])", r"\1_\2", intermediate).lower()
    return insecure if insecure[0] != "_" else "private" + insecure


class InputSpec:
    """The rank, dtype and axis sizes a layer accepts (follows `tf.layers.InputSpec`).

    Args:
      dtype: expected dtype.
      shape: expected shape (None entries match anything).
      ndim: expected rank.
      max_ndim: maximum rank.
      min_ndim: minimum rank.
      axes: `{axis: size}` required sizes.
      allow_last_axis_squeeze: accepted for compatibility.
      name: accepted for compatibility.
    """

    def __init__(
        self,
        dtype=None,
        shape=None,
        ndim=None,
        max_ndim=None,
        min_ndim=None,
        axes=None,
        allow_last_axis_squeeze=False,
        name=None,
    ):
        self.dtype = dtypes.as_dtype(dtype).name if dtype is not None else None
        self.shape = tuple(shape) if shape is not None else None
        self.ndim = len(shape) if shape is not None else ndim
        self.max_ndim = max_ndim
        self.min_ndim = min_ndim
        self.name = name
        self.allow_last_axis_squeeze = allow_last_axis_squeeze
        self.axes = {int(k): v for k, v in (axes or {}).items()}

    def __repr__(self) -> str:
        parts = [
            f"{k}={getattr(self, k)}"
            for k in ("dtype", "shape", "ndim", "max_ndim", "min_ndim", "axes")
            if getattr(self, k)
        ]
        return f"InputSpec({', '.join(parts)})"


def _check_spec(spec: InputSpec, x: Tensor, index: int, layer: str) -> None:
    prefix = f"Input {index} of layer {layer} is incompatible with the layer: "
    shape = x.shape
    ndim = shape.ndims
    if spec.ndim is not None and ndim is not None and ndim != spec.ndim:
        raise ValueError(
            f"{prefix}expected ndim={spec.ndim}, found ndim={ndim}. Full shape received: "
            f"{shape.as_list()}"
        )
    if spec.max_ndim is not None and ndim is not None and ndim > spec.max_ndim:
        raise ValueError(f"{prefix}expected max_ndim={spec.max_ndim}, found ndim={ndim}")
    if spec.min_ndim is not None and ndim is not None and ndim < spec.min_ndim:
        raise ValueError(
            f"{prefix}expected min_ndim={spec.min_ndim}, found ndim={ndim}. Full shape "
            f"received: {shape.as_list()}"
        )
    if spec.dtype is not None and x.dtype.base_dtype.name != spec.dtype:
        raise ValueError(f"{prefix}expected dtype={spec.dtype}, found dtype={x.dtype.name}")
    if ndim is None:
        return
    dims = shape.as_list()
    for axis, value in spec.axes.items():
        if value is not None and -ndim <= axis < ndim and dims[axis] not in (None, value):
            raise ValueError(
                f"{prefix}expected axis {axis} of input shape to have value {value} but "
                f"received input with shape {dims}"
            )
    if spec.shape is not None:
        for got, want in zip(dims, spec.shape):
            if want is not None and got is not None and got != want:
                raise ValueError(f"{prefix}expected shape={spec.shape}, found shape={dims}")


class Layer:
    """The base class of `tf.layers` layers.

    Subclasses create weights in `build(input_shape)` with `add_weight` and compute in
    `call(inputs, ...)`; calling the layer runs both in the layer's scopes.

    Args:
      trainable: whether the weights are added to `TRAINABLE_VARIABLES`.
      name: the layer's name and variable scope (default: the class name in snake case,
        made unique in the graph).
      dtype: the weights' dtype (default: the first input's float dtype, else float32).
      **kwargs: `_scope`, `_reuse` (TensorFlow's private arguments) and
        `activity_regularizer`.

    Raises:
      TypeError: for an unknown keyword argument.
    """

    def __init__(
        self, trainable: bool = True, name: str | None = None, dtype: Any = None, **kwargs: Any
    ):
        for key in kwargs:
            if key not in _ALLOWED_KWARGS:
                raise TypeError(f"Keyword argument not understood: {key}")
        self.trainable = trainable
        self.built = False
        self._dtype = dtypes.as_dtype(dtype).base_dtype if dtype is not None else None
        self._name = name
        self._base_name = name or to_snake_case(type(self).__name__)
        self._scope = kwargs.get("_scope")
        self._reuse = kwargs.get("_reuse")
        self._activity_regularizer = kwargs.get("activity_regularizer")
        self._trainable_weights: list[Variable] = []
        self._non_trainable_weights: list[Variable] = []
        self._losses: list[Any] = []
        self._updates: list[Any] = []
        self.input_spec: Any = None

    # ------------------------------------------------------------------ properties
    @property
    def name(self) -> str:
        """The layer's name (its scope's last component once called)."""
        return self._name or self._base_name

    @property
    def dtype(self) -> str | None:
        """The weights' dtype name, or None before the first call."""
        return self._dtype.name if self._dtype is not None else None

    @property
    def scope_name(self) -> str:
        """The full name of the layer's variable scope.

        Raises:
          ValueError: before the first call.
        """
        if self._scope is None:
            raise ValueError(
                f'No name available for layer scope because the layer "{self.name}"'
                " has not been used yet."
            )
        return self._scope.name

    @property
    def activity_regularizer(self) -> Any:
        """The activity regularizer, or None."""
        return self._activity_regularizer

    @property
    def trainable_weights(self) -> list[Variable]:
        """The trainable weights (none when the layer is not trainable)."""
        return list(self._trainable_weights) if self.trainable else []

    @property
    def non_trainable_weights(self) -> list[Variable]:
        """The other weights (all of them when the layer is not trainable)."""
        if self.trainable:
            return list(self._non_trainable_weights)
        return list(self._trainable_weights) + list(self._non_trainable_weights)

    @property
    def weights(self) -> list[Variable]:
        """Trainable weights first, then the others."""
        return self.trainable_weights + self.non_trainable_weights

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights
    variables = weights

    @property
    def losses(self) -> list[Any]:
        """Regularization and `add_loss` losses."""
        return list(self._losses)

    @property
    def updates(self) -> list[Any]:
        """Ops added by `add_update` (e.g. moving averages)."""
        return list(self._updates)

    # -------------------------------------------------------------- subclass API
    def build(self, input_shape: Any) -> None:
        """Creates the weights; called once, before the first `call`."""
        self.built = True

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        """The layer's computation (identity here)."""
        return inputs

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        """The output shape for `input_shape`.

        Raises:
          NotImplementedError: unless a subclass overrides it.
        """
        raise NotImplementedError(f"{type(self).__name__}.compute_output_shape")

    def add_loss(self, losses: Any, inputs: Any = None) -> None:
        """Adds losses (a Tensor or list) to `layer.losses`."""
        losses = losses if isinstance(losses, list | tuple) else [losses]
        self._losses.extend(losses)

    def add_update(self, updates: Any, inputs: Any = None) -> None:
        """Adds update ops (or callables returning them) to `layer.updates`."""
        updates = updates if isinstance(updates, list | tuple) else [updates]
        self._updates.extend(u() if callable(u) else u for u in updates)

    def get_losses_for(self, inputs: Any) -> list[Any]:
        """The layer's losses (not tracked per input here)."""
        return self.losses

    def get_updates_for(self, inputs: Any) -> list[Any]:
        """The layer's updates (not tracked per input here)."""
        return self.updates

    def count_params(self) -> int:
        """The number of scalars in the weights.

        Raises:
          ValueError: before the layer is built.
        """
        if not self.built:
            raise ValueError(
                f"You tried to call `count_params` on {self.name}, but the layer isn't built."
            )
        return sum(int(w.get_shape().num_elements()) for w in self.weights)

    def add_weight(
        self,
        name: str,
        shape: Any = None,
        dtype: Any = None,
        initializer: Any = None,
        regularizer: Any = None,
        trainable: bool | None = None,
        constraint: Any = None,
        partitioner: Any = None,
        use_resource: Any = None,
        synchronization: Any = None,
        aggregation: Any = None,
        **kwargs: Any,
    ) -> Variable:
        """Creates (or, on reuse, gets) a weight `<scope>/<name>` with `get_variable`.

        Returns:
          The variable; a new one is added to the layer's trainable or non-trainable
          weights, and its regularization loss to `losses`.
        """
        trainable = True if trainable is None else trainable
        dtype = dtypes.as_dtype(dtype or self._dtype or dtypes.float32)
        self._set_scope(None)
        reuse = self.built or self._reuse
        existing = set(graph_mod.get_collection(GraphKeys.GLOBAL_VARIABLES))
        with vs.variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False):
            with graph_mod.name_scope(self._scope.original_name_scope):
                variable = vs.get_variable(
                    name,
                    shape=shape,
                    dtype=dtype,
                    initializer=initializer,
                    trainable=trainable and self.trainable,
                    constraint=constraint,
                    partitioner=partitioner,
                )
                if regularizer is not None and variable not in existing:
                    with graph_mod.name_scope(name + "/Regularizer"):
                        loss = regularizer(variable)
                    if loss is not None:
                        self._losses.append(loss)
                        graph_mod.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
        if variable not in self._trainable_weights + self._non_trainable_weights:
            if trainable and self.trainable:
                self._trainable_weights.append(variable)
            else:
                self._non_trainable_weights.append(variable)
        return variable

    # ------------------------------------------------------------------- calling
    def _set_scope(self, scope: Any = None) -> None:
        # `_scope` given as a string (the functional layers pass their `name`) is entered
        # as is; otherwise an unnamed scope is made unique (`dense`, `dense_1`, ...).
        if self._scope is not None and not isinstance(self._scope, str):
            return
        pending = self._scope if isinstance(self._scope, str) else scope
        if pending is not None or self._reuse:
            name = pending if pending is not None else self._base_name
            with vs.variable_scope(name, reuse=self._reuse or None) as captured:
                self._scope = captured
        else:
            with vs.variable_scope(None, default_name=self._base_name) as captured:
                self._scope = captured
        if self._name is None:
            self._name = captured.name.split("/")[-1]

    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        """Builds the layer on first use, then runs `call` in the layer's scopes.

        Raises:
          ValueError: if `inputs` do not match `input_spec`.
        """
        self._set_scope(kwargs.pop("scope", None))
        if not isinstance(inputs, list | tuple | dict):
            inputs = convert_to_tensor(inputs)
        self._check_inputs(inputs)
        updates_before = len(self._updates)
        reuse = self.built or self._reuse
        with vs.variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False):
            with graph_mod.name_scope(self._scope.original_name_scope):
                if not self.built:
                    first = inputs[0] if isinstance(inputs, list | tuple) else inputs
                    if self._dtype is None and isinstance(first, Tensor):
                        dt = first.dtype.base_dtype
                        self._dtype = dt if dt.is_floating else dtypes.float32
                    shapes = (
                        [t.shape for t in inputs]
                        if isinstance(inputs, list | tuple)
                        else getattr(inputs, "shape", None)
                    )
                    self.build(shapes)
                    self.built = True
                outputs = self.call(inputs, *args, **kwargs)
                if self._activity_regularizer is not None:
                    with graph_mod.name_scope("ActivityRegularizer"):
                        loss = self._activity_regularizer(outputs)
                    self.add_loss(loss)
                    graph_mod.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
        for update in self._updates[updates_before:]:
            graph_mod.add_to_collection(GraphKeys.UPDATE_OPS, update)
        return outputs

    def apply(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        """The same as calling the layer."""
        return self.__call__(inputs, *args, **kwargs)

    def _check_inputs(self, inputs: Any) -> None:
        if self.input_spec is None:
            return
        specs = self.input_spec if isinstance(self.input_spec, list) else [self.input_spec]
        flat = list(inputs) if isinstance(inputs, list | tuple) else [inputs]
        if len(flat) != len(specs):
            raise ValueError(
                f"Layer {self.name} expects {len(specs)} inputs, but it received "
                f"{len(flat)} input tensors."
            )
        for i, (spec, x) in enumerate(zip(specs, flat)):
            if spec is not None:
                _check_spec(spec, x, i, self.name)


__all__ = ["InputSpec", "Layer"]
