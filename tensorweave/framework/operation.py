"""Graph nodes (`Operation`) and the edges between them (`Tensor`), as in TensorFlow 1.x."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tensorweave.framework import dtypes, graph_export, session_stack
from tensorweave.framework.device_spec import DeviceSpec
from tensorweave.framework.op_def import OpDef
from tensorweave.framework.tensor_shape import TensorShape, as_shape, unknown_shape

if TYPE_CHECKING:
    from tensorweave.framework.graph import Graph


class Tensor:
    """A symbolic handle to output `value_index` of an `Operation` (follows TF 1.x `tf.Tensor`).

    A Tensor holds no value; `Session.run` computes one. Tensors compare and hash by
    identity, so they can be keys of a `feed_dict`.
    """

    __slots__ = ("_op", "_value_index", "_dtype", "_shape", "_consumers", "__weakref__")

    # NOTE: numpy must defer to our operator overloads (`np.float32(2) * t`).
    __array_priority__ = 100

    def __init__(self, op: Operation, value_index: int, dtype: dtypes.DType):
        self._op = op
        self._value_index = value_index
        self._dtype = dtype
        self._shape = unknown_shape()
        self._consumers: list[Operation] = []

    @property
    def op(self) -> Operation:
        """The `Operation` that produces this tensor."""
        return self._op

    @property
    def value_index(self) -> int:
        """The index of this tensor among its op's outputs."""
        return self._value_index

    @property
    def dtype(self) -> dtypes.DType:
        """The element type (a `_ref` type for mutable variable outputs)."""
        return self._dtype

    @property
    def graph(self) -> Graph:
        """The `Graph` that contains this tensor."""
        return self._op.graph

    @property
    def name(self) -> str:
        """TensorFlow's tensor name, `"<op name>:<index>"`."""
        return f"{self._op.name}:{self._value_index}"

    @property
    def device(self) -> str:
        """The device of the producing op (may be partial or empty)."""
        return self._op.device

    @property
    def shape(self) -> TensorShape:
        """The static (possibly partial) shape."""
        return self._shape

    def get_shape(self) -> TensorShape:
        """Alias of `shape`."""
        return self._shape

    def set_shape(self, shape: Any) -> None:
        """Refines the static shape.

        Raises:
          ValueError: if `shape` is incompatible with the current static shape.
        """
        self._shape = self._shape.merge_with(as_shape(shape))

    def consumers(self) -> list[Operation]:
        """The ops that take this tensor as a data input."""
        return list(self._consumers)

    def _as_node_def_input(self) -> str:
        if self._value_index == 0:
            return self._op.name
        return f"{self._op.name}:{self._value_index}"

    def _as_graph_element(self) -> Tensor:
        return self

    def eval(self, feed_dict: dict | None = None, session: Any = None) -> Any:
        """Computes this tensor in `session` (default: the default session).

        Raises:
          ValueError: when there is no default session, or it uses another graph.
        """
        return _run_using_default_session(self, feed_dict, self.graph, session)

    def __repr__(self) -> str:
        return f"<tf.Tensor '{self.name}' shape={self._shape} dtype={self._dtype.name}>"

    def __str__(self) -> str:
        shape = f", shape={self._shape}" if self._shape.ndims is not None else ""
        device = f", device={self.device}" if self.device else ""
        return f'Tensor("{self.name}"{shape}, dtype={self._dtype.name}{device})'

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: Any) -> bool:
        return self is other

    def __ne__(self, other: Any) -> bool:
        return self is not other

    def __bool__(self) -> bool:
        raise TypeError(
            "Using a `tf.Tensor` as a Python `bool` is not allowed. Use `if t is not None:` "
            "instead of `if t:` to test if a tensor is defined, and use TensorFlow ops such as "
            "tf.cond to execute subgraphs conditioned on the value of a tensor."
        )

    def __iter__(self):
        raise TypeError(
            "'Tensor' object is not iterable; use tf.unstack or index it with a Python int."
        )

    def __len__(self) -> int:
        raise TypeError(
            f"len is not well defined for symbolic Tensors ({self.name}). Use tf.shape or "
            "`tensor.shape[0]` for the static size."
        )

    @classmethod
    def _override_operator(cls, operator: str, func: Callable[..., Any]) -> None:
        """Installs an operator overload (called by the math/array op modules)."""
        setattr(cls, operator, func)


def _run_using_default_session(fetch: Any, feed_dict: Any, graph: Graph, session: Any) -> Any:
    if session is None:
        session = session_stack.get_default_session()
        if session is None:
            raise ValueError(
                "Cannot evaluate tensor using `eval()`: No default session is registered. Use "
                "`with sess.as_default()` or pass an explicit session to `eval(session=sess)`"
            )
    if session.graph is not graph:
        raise ValueError(
            "Cannot use the given session to evaluate tensor: the tensor's graph is different "
            "from the session's graph."
        )
    return session.run(fetch, feed_dict)


class Operation:
    """A node of a `Graph`: an op type, attrs, inputs, outputs and a device.

    Follows `tf.Operation`.

    Operations are created by graph-construction functions (`tf.matmul`, `tf.Variable`...)
    through `Graph.create_op`, never directly by users.
    """

    # NOTE: the cond/while context the op was built in (set by `Graph.create_op`).
    _control_flow_context: Any = None

    def __init__(
        self,
        graph: Graph,
        name: str,
        op_type: str,
        op_def: OpDef | None,
        inputs: list[Tensor],
        output_types: list[dtypes.DType],
        attrs: dict[str, Any],
        control_inputs: list[Operation],
        op_id: int,
    ):
        self._graph = graph
        self._name = name
        self._type = op_type
        self._op_def = op_def
        self._inputs = tuple(inputs)
        self._attrs = attrs
        self._control_inputs = list(control_inputs)
        self._control_outputs: list[Operation] = []
        self._id = op_id
        self._device = ""
        self._outputs = [Tensor(self, i, t) for i, t in enumerate(output_types)]
        for t in self._inputs:
            t._consumers.append(self)
        for c in self._control_inputs:
            c._control_outputs.append(self)

    @property
    def name(self) -> str:
        """The full name, e.g. `"layer1/MatMul"`."""
        return self._name

    @property
    def type(self) -> str:
        """The op type, e.g. `"MatMul"`."""
        return self._type

    @property
    def graph(self) -> Graph:
        """The containing `Graph`."""
        return self._graph

    @property
    def op_def(self) -> OpDef | None:
        """The registered `OpDef` (None for ops imported without a registration)."""
        return self._op_def

    @property
    def inputs(self) -> tuple[Tensor, ...]:
        """The data inputs."""
        return self._inputs

    @property
    def outputs(self) -> list[Tensor]:
        """The output tensors."""
        return list(self._outputs)

    def values(self) -> tuple[Tensor, ...]:
        """The output tensors as a tuple."""
        return tuple(self._outputs)

    @property
    def control_inputs(self) -> list[Operation]:
        """Ops that must run before this one (control dependencies)."""
        return list(self._control_inputs)

    @property
    def device(self) -> str:
        """The (possibly partial) device string, canonical form, e.g. `/job:ps/task:0`."""
        return self._device

    @property
    def node_def(self) -> Any:
        """This op as a `NodeDef` proto."""
        return graph_export.node_def_of(self)

    @property
    def _is_stateful(self) -> bool:
        return self._op_def is not None and self._op_def.is_stateful

    def get_attr(self, name: str) -> Any:
        """The attr value (strings as `bytes`, tensors as ndarrays, types as `DType`).

        Raises:
          ValueError: if the op has no such attr (TensorFlow's behaviour).
        """
        if name not in self._attrs:
            raise ValueError(f"Operation '{self._name}' has no attr named '{name}'.")
        value = self._attrs[name]
        if isinstance(value, str):
            return value.encode("utf-8")
        if isinstance(value, list) and value and isinstance(value[0], str):
            return [v.encode("utf-8") for v in value]
        return value

    @property
    def attrs(self) -> dict[str, Any]:
        """A copy of the attrs in their in-memory form (strings as `str`)."""
        return dict(self._attrs)

    def _set_attr(self, name: str, value: Any) -> None:
        self._attrs[name] = value

    def _set_device(self, device: Any) -> None:
        if device is None:
            self._device = ""
        elif isinstance(device, DeviceSpec):
            self._device = device.to_string()
        else:
            self._device = DeviceSpec.from_string(device).to_string() if device else ""

    def _get_control_flow_context(self) -> Any:
        return self._control_flow_context

    def _set_control_flow_context(self, ctx: Any) -> None:
        self._control_flow_context = ctx

    def _update_input(self, index: int, tensor: Tensor) -> None:
        """Replaces data input `index` (control-flow construction: Switch/Enter routing,
        a Merge's back edge)."""
        old = self._inputs[index]
        old._consumers.remove(self)
        self._inputs = (*self._inputs[:index], tensor, *self._inputs[index + 1:])
        tensor._consumers.append(self)

    def _remove_all_control_inputs(self) -> None:
        for op in self._control_inputs:
            op._control_outputs.remove(self)
        self._control_inputs = []

    def _add_control_input(self, op: Operation) -> None:
        if op not in self._control_inputs:
            self._control_inputs.append(op)
            op._control_outputs.append(self)

    def _add_control_inputs(self, ops: list[Operation]) -> None:
        for op in ops:
            self._add_control_input(op)

    def colocation_groups(self) -> list[bytes]:
        """The `loc:@name` groups this op belongs to (itself, unless `_class` says more)."""
        groups = self._attrs.get("_class")
        if not groups:
            return [f"loc:@{self._name}".encode()]
        return [g.encode("utf-8") if isinstance(g, str) else g for g in groups]

    def run(self, feed_dict: dict | None = None, session: Any = None) -> None:
        """Runs this op in `session` (default: the default session)."""
        _run_using_default_session(self, feed_dict, self._graph, session)

    def _as_graph_element(self) -> Operation:
        return self

    def __repr__(self) -> str:
        return f"<tf.Operation '{self._name}' type={self._type}>"

    def __str__(self) -> str:
        from google.protobuf import text_format

        return text_format.MessageToString(self.node_def)
