"""Element structures and function tracing for `tf.data`.

Structures follow `tf.data`: tuples (and namedtuples) and dicts (keys in sorted order) nest;
anything else, lists included, is one component. A `SparseTensor` element travels as
its three component tensors (a `SparseComponents` triple in the structure) and is rebuilt on
the way out, so a `map` function returning `parse_single_example`'s `VarLenFeature`s works
(batching sparse elements into a higher-rank `SparseTensor`, as TensorFlow does, is not
supported). A function given to `map`, `filter`,
`flat_map`, ... is traced once into a `FuncGraph`; tensors of enclosing graphs that it
uses are captured as extra arguments (`other_arguments`), as TensorFlow's `FuncGraph`
does. The body is stored as a text `GraphDef` (see `framework.op_defs.dataset`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from tensorweave.framework import dtypes as dtypes_lib
from tensorweave.framework import function_runtime
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.graph_io import graph_to_graph_def, node_def_of
from tensorweave.framework.operation import Tensor
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape, as_shape
from tensorweave.ops import array_ops
from tensorweave.protos import graph_pb2


# ------------------------------------------------------------------ nest
class SparseComponents(NamedTuple):
    """A `SparseTensor`'s place in an element structure: its three components (or their
    dtypes / shapes)."""

    indices: Any
    values: Any
    dense_shape: Any


def is_nested(x: Any) -> bool:
    """True for tuples and dicts (the structures of `tf.data` elements)."""
    return isinstance(x, tuple | dict)


def flatten(x: Any) -> list[Any]:
    """The leaves of a structure, dict values in sorted key order."""
    if isinstance(x, dict):
        return [leaf for k in sorted(x) for leaf in flatten(x[k])]
    if isinstance(x, tuple):
        return [leaf for v in x for leaf in flatten(v)]
    return [x]


def pack_as(structure: Any, flat: list[Any]) -> Any:
    """`flat` leaves arranged as `structure`.

    Raises:
      ValueError: if the number of leaves differs.
    """
    leaves = list(flat)
    if len(leaves) != len(flatten(structure)):
        raise ValueError(f"Structure has {len(flatten(structure))} elements, got {len(leaves)}")
    it = iter(leaves)

    def build(s: Any) -> Any:
        if isinstance(s, dict):
            built = {k: build(s[k]) for k in sorted(s)}
            return {k: built[k] for k in s}
        if isinstance(s, tuple):
            values = [build(v) for v in s]
            return type(s)(*values) if hasattr(s, "_fields") else tuple(values)
        return next(it)

    return build(structure)


def with_sparse_tensors(x: Any) -> Any:
    """`x` (a structure of tensors) with each `SparseComponents` rebuilt as a `SparseTensor`."""
    if isinstance(x, SparseComponents):
        return SparseTensor(*x)
    if isinstance(x, dict):
        return {k: with_sparse_tensors(v) for k, v in x.items()}
    if isinstance(x, tuple):
        values = [with_sparse_tensors(v) for v in x]
        return type(x)(*values) if hasattr(x, "_fields") else tuple(values)
    return x


def map_structure(fn: Callable[..., Any], *structures: Any) -> Any:
    """`fn` applied leaf-wise over structures of the same shape."""
    flats = [flatten(s) for s in structures]
    return pack_as(structures[0], [fn(*leaves) for leaves in zip(*flats)])


def normalize_shapes(types: Any, shapes: Any) -> Any:
    """`shapes` as a structure of `TensorShape` matching `types` (None: unknown)."""
    if shapes is None:
        return map_structure(lambda _: TensorShape(None), types)
    if not is_nested(types):
        return as_shape(shapes)
    flat_types = flatten(types)
    flat_shapes = flatten_up_to(types, shapes)
    if len(flat_shapes) != len(flat_types):
        raise ValueError("output_shapes must match the structure of output_types")
    return pack_as(types, [as_shape(s) for s in flat_shapes])


def flatten_up_to(structure: Any, value: Any) -> list[Any]:
    """Leaves of `value` at the positions of `structure`'s leaves (lists stay whole)."""
    if isinstance(structure, dict):
        return [leaf for k in sorted(structure) for leaf in flatten_up_to(structure[k], value[k])]
    if isinstance(structure, tuple):
        if len(structure) != len(value):
            raise ValueError(f"Expected {len(structure)} components, got {len(value)}")
        return [leaf for s, v in zip(structure, value) for leaf in flatten_up_to(s, v)]
    return [value]


# ------------------------------------------------------------------ tracing
class FuncGraph(graph_mod.Graph):
    """A graph for a function body; tensors of enclosing graphs become captured arguments."""

    def __init__(self, outer: graph_mod.Graph):
        super().__init__()
        self.outer = outer
        self.captures: list[tuple[Tensor, Tensor]] = []  # (outer tensor, placeholder)
        self.seed = outer.seed

    @property
    def building_function(self) -> bool:
        """True: this graph is a function body."""
        return True

    def capture(self, tensor: Tensor) -> Tensor:
        """The placeholder standing for an outer tensor (created on first use)."""
        for outer, inner in self.captures:
            if outer is tensor:
                return inner
        with self.as_default(), graph_mod.name_scope(None):
            inner = array_ops.placeholder(
                tensor.dtype.base_dtype, tensor.shape, name=f"captured_{len(self.captures)}")
        self.captures.append((tensor, inner))
        return inner

    def create_op(self, op_type: str, inputs: list[Tensor], *args: Any, **kwargs: Any) -> Any:
        """Adds an op, capturing inputs that belong to an enclosing graph."""
        inputs = [self.capture(t) if isinstance(t, Tensor) and t.graph is not self else t
                  for t in inputs]
        return super().create_op(op_type, inputs, *args, **kwargs)


class TracedFunction:
    """A traced dataset function: body text, output structure and captured tensors."""

    def __init__(self, name: str, body: str, output_structure: Any, output_types: Any,
                 output_shapes: Any, captured: list[Tensor]):
        self.name = name
        self.body = body
        self.output_structure = output_structure
        self.output_types = output_types
        self.output_shapes = output_shapes
        self.captured = captured


def trace(fn: Callable[..., Any], input_types: Any, input_shapes: Any, name: str,
          to_tensors: Callable[[Any], Any] | None = None) -> TracedFunction:
    """Traces `fn` on placeholders of the element structure.

    Tuples are passed as positional arguments, other structures as one argument
    (`tf.data`'s convention). `to_tensors` turns the result into a structure of tensors
    (default: `convert_to_tensor` on each leaf).

    Raises:
      TypeError, ValueError: from `fn`, or if it returns None.
    """
    outer = graph_mod.get_default_graph()
    g = FuncGraph(outer)
    with g.as_default():
        flat_types, flat_shapes = flatten(input_types), flatten(input_shapes)
        args = [array_ops.placeholder(t, s, name=f"args_{i}")
                for i, (t, s) in enumerate(zip(flat_types, flat_shapes))]
        element = with_sparse_tensors(pack_as(input_types, args))
        if type(element) is tuple:
            result = fn(*element)
        else:
            result = fn(element)
        if result is None:
            raise ValueError(f"The function given to {name} returned None; it must return "
                             "a tensor or a structure of tensors")
        result = (to_tensors or _to_tensors)(result)
        outputs = flatten(result)
        for k, t in enumerate(outputs):
            array_ops.identity(t, name=f"output_{k}")
    body = function_runtime.body_to_text(graph_to_graph_def(g))
    types = map_structure(lambda t: t.dtype.base_dtype, result)
    shapes = map_structure(lambda t: t.shape, result)
    fn_name = f"{getattr(fn, '__name__', 'fn').strip('<>')}_{id(g):x}"
    return TracedFunction(fn_name, body, result, types, shapes, [o for o, _ in g.captures])


def _to_tensors(result: Any) -> Any:
    if isinstance(result, list):
        result = convert_to_tensor(result)
    result = _sparse_as_components(result)
    return map_structure(lambda x: x if isinstance(x, Tensor) else convert_to_tensor(x), result)


def _sparse_as_components(x: Any) -> Any:
    """`x` with every `SparseTensor` replaced by the `SparseComponents` of its tensors."""
    if isinstance(x, SparseTensor):
        return SparseComponents(x.indices, x.values, x.dense_shape)
    if isinstance(x, dict):
        return {k: _sparse_as_components(v) for k, v in x.items()}
    if isinstance(x, tuple):
        values = [_sparse_as_components(v) for v in x]
        return type(x)(*values) if hasattr(x, "_fields") else tuple(values)
    return x


def extract_body(tensor: Tensor) -> str:
    """A body computing `tensor` (as `output_0`) from a copy of its ancestors.

    Used by `make_one_shot_iterator`, whose dataset must not depend on placeholders or
    variables (TensorFlow refuses to capture them by value, too).

    Raises:
      ValueError: if the dataset depends on a placeholder or variable.
    """
    seen, order, stack = set(), [], [tensor.op]
    while stack:
        op = stack.pop()
        if op.name in seen:
            continue
        seen.add(op.name)
        if op.type in ("Placeholder", "PlaceholderWithDefault", "VariableV2", "VarHandleOp"):
            raise ValueError(
                f"Failed to capture stateful op {op.name} (type: {op.type}) by value: "
                "use make_initializable_iterator() for datasets that depend on "
                "placeholders or variables.")
        order.append(op)
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
    gd = graph_pb2.GraphDef()
    for op in order:
        nd = node_def_of(op)
        nd.device = ""
        if "_class" in nd.attr:
            del nd.attr["_class"]
        gd.node.append(nd)
    out = gd.node.add(name="output_0", op="Identity", input=[tensor._as_node_def_input()])
    out.attr["T"].type = dtypes_lib.variant.as_datatype_enum
    return function_runtime.body_to_text(gd)


class TensorSpec:
    """The (shape, dtype) of one component (a minimal `tf.TensorSpec`)."""

    def __init__(self, shape: Any, dtype: Any, name: str | None = None):
        self.shape = as_shape(shape)
        self.dtype = dtypes_lib.as_dtype(dtype)
        self.name = name

    def __eq__(self, other: Any) -> bool:
        return (isinstance(other, TensorSpec) and self.dtype == other.dtype
                and str(self.shape) == str(other.shape))

    def __hash__(self) -> int:
        return hash((self.dtype, str(self.shape)))

    def __repr__(self) -> str:
        return f"TensorSpec(shape={self.shape}, dtype={self.dtype!r}, name={self.name!r})"


class ElementStructure:
    """The `output_*` / `element_spec` properties of datasets and iterators, from the
    `_types` and `_shapes` structures the subclass sets."""

    _types: Any
    _shapes: Any

    @property
    def output_types(self) -> Any:
        """The structure of component `DType`s."""
        return self._types

    @property
    def output_shapes(self) -> Any:
        """The structure of component static `TensorShape`s."""
        return self._shapes

    @property
    def output_classes(self) -> Any:
        """The structure of component classes (`tf.Tensor`)."""
        return map_structure(lambda _: Tensor, self._types)

    @property
    def element_spec(self) -> Any:
        """The structure of (shape, dtype) `TensorSpec`s."""
        return map_structure(TensorSpec, self._shapes, self._types)


def attrs(types: Any, shapes: Any) -> dict[str, Any]:
    """The `output_types` / `output_shapes` attrs of a dataset or iterator op."""
    return {"output_types": flatten(types), "output_shapes": flatten(shapes)}
