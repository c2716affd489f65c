"""`apply_op`: build a node from an `OpDef`, converting inputs and inferring attrs.

Follows TensorFlow's `op_def_library.apply_op`.

Python values given for inputs become `Const` ops named after the input argument inside the
new op's name scope (e.g. `AssignAdd_1/value`), exactly as TensorFlow names them.
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def import ArgDef, AttrDef, OpDef, get_op_def
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import as_shape


def apply_op(op_type_name: str, name: str | None = None, **keywords: Any) -> Any:
    """Adds an op of type `op_type_name` with the given inputs and attrs to the graph.

    Args:
      op_type_name: a registered op type, e.g. `"MatMul"`.
      name: the op name (default: the op type), under the current name scope.
      **keywords: one entry per input argument (by its OpDef name) and per attr.

    Returns:
      The output Tensor for single-output ops, the Operation for ops without outputs, else a
      list with one Tensor (or list of Tensors for list arguments) per output argument.

    Raises:
      TypeError: for missing arguments, unexpected keywords, or inputs of the wrong dtype.
      ValueError: for attr values outside their allowed set or below their minimum, and
        from the op's shape function.
    """
    op_def = get_op_def(op_type_name)
    g = _graph_for(keywords, op_def)
    with g.as_default(), g.name_scope(name or op_type_name) as scope:
        attrs: dict[str, Any] = {}
        explicit = {k: v for k, v in keywords.items() if k in op_def.attrs}
        inputs: list[Tensor] = []
        for arg in op_def.inputs:
            if arg.name not in keywords:
                raise TypeError(f"No argument for input {arg.name} to '{op_type_name}' Op")
            inputs.extend(_convert_arg(op_def, arg, keywords[arg.name], attrs, explicit))
        extra = set(keywords) - set(op_def.attrs) - {a.name for a in op_def.inputs}
        if extra:
            raise TypeError(f"{op_type_name} got unexpected keyword arguments: {sorted(extra)}")
        for attr_name, attr in op_def.attrs.items():
            if attr_name in explicit:
                value = _check_attr(op_type_name, attr, explicit[attr_name])
                if attr_name in attrs and attrs[attr_name] != value:
                    raise TypeError(
                        f"Input of '{op_type_name}' Op has type {attrs[attr_name].name} that does "
                        f"not match attr {attr_name}={_fmt(value)}"
                    )
                attrs[attr_name] = value
            elif attr_name in attrs:
                attrs[attr_name] = _check_attr(op_type_name, attr, attrs[attr_name])
            elif attr.has_default:
                attrs[attr_name] = _copy_default(attr.default)
            else:
                raise TypeError(f"No argument for attr {attr_name} of '{op_type_name}' Op")
        # NOTE: like TensorFlow, an op that takes a variable by reference (Assign, Apply*,
        # Scatter*) is built colocated with it, whatever device scope is active.
        refs = [t for t, is_ref in zip(inputs, op_def.ref_inputs(attrs)) if is_ref]
        with g.colocate_with(refs[0].op) if refs else contextlib.nullcontext():
            op = g.create_op(
                op_type_name,
                inputs,
                op_def.output_dtypes(attrs),
                name=scope,
                attrs=attrs,
                op_def=op_def,
            )
    return _outputs_of(op, op_def, attrs)


def _graph_for(keywords: dict[str, Any], op_def: OpDef) -> graph_mod.Graph:
    for arg in op_def.inputs:
        value = keywords.get(arg.name)
        for v in value if isinstance(value, list | tuple) else [value]:
            g = getattr(v, "graph", None)
            if isinstance(g, graph_mod.Graph):
                return g
    return graph_mod.get_default_graph()


def _convert_arg(
    op_def: OpDef, arg: ArgDef, value: Any, attrs: dict[str, Any], explicit: dict[str, Any]
) -> list[Tensor]:
    op_type = op_def.name
    if arg.number_attr or arg.type_list_attr:
        if not isinstance(value, list | tuple):
            raise TypeError(
                f"Expected list for '{arg.name}' argument to '{op_type}' Op, not {value!r}."
            )
    if arg.type_list_attr:
        wanted = explicit.get(arg.type_list_attr)
        tensors = [
            convert_to_tensor(v, dtype=None if wanted is None else wanted[i], name=arg.name)
            for i, v in enumerate(value)
        ]
        attrs[arg.type_list_attr] = [t.dtype.base_dtype for t in tensors]
        return tensors
    values = list(value) if arg.number_attr else [value]
    if arg.number_attr:
        attrs[arg.number_attr] = len(values)
    tensors = []
    for v in values:
        t = _convert_one(op_def, arg, v, attrs, explicit)
        tensors.append(t)
    return tensors


def _convert_one(
    op_def: OpDef, arg: ArgDef, value: Any, attrs: dict[str, Any], explicit: dict[str, Any]
) -> Tensor:
    op_type = op_def.name
    dtype = arg.type
    preferred = None
    if arg.type_attr:
        dtype = attrs.get(arg.type_attr, explicit.get(arg.type_attr))
        attr = op_def.attrs[arg.type_attr]
        if dtype is None and attr.has_default:
            preferred = attr.default
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
    if value is None and not arg.number_attr:
        raise ValueError(
            f"Tried to convert '{arg.name}' to a tensor and failed. Error: None values not "
            "supported.")
    try:
        t = convert_to_tensor(
            value, dtype=dtype, name=arg.name, preferred_dtype=preferred, as_ref=arg.is_ref
        )
    except (TypeError, ValueError) as e:
        if isinstance(value, Tensor) and dtype is not None:
            raise TypeError(_mismatch(op_def, arg, value.dtype, dtype)) from e
        if dtype is not None:
            raise TypeError(
                f"Expected {dtype.name} passed to parameter '{arg.name}' of op '{op_type}', "
                f"got {value!r} of type '{type(value).__name__}' instead. Error: {e}"
            ) from e
        raise
    if arg.is_ref and not t.dtype._is_ref_dtype:
        raise TypeError(
            f"'{op_type}' Op requires that input '{arg.name}' be a mutable tensor "
            "(e.g.: a tf.Variable)"
        )
    base = t.dtype.base_dtype
    if arg.type_attr:
        if arg.type_attr in attrs and attrs[arg.type_attr] is not base:
            raise TypeError(_mismatch(op_def, arg, base, attrs[arg.type_attr]))
        attrs[arg.type_attr] = base
    elif arg.type is not None and base is not arg.type:
        raise TypeError(
            f"Input '{arg.name}' of '{op_type}' Op has type {base.name} that does not match "
            f"expected type of {arg.type.name}."
        )
    return t


def _mismatch(op_def: OpDef, arg: ArgDef, got: dtypes.DType, want: dtypes.DType) -> str:
    first = next(
        (a.name for a in op_def.inputs if a.type_attr == arg.type_attr and a is not arg), None
    )
    where = f"argument '{first}'" if first else f"attr '{arg.type_attr}'"
    return (
        f"Input '{arg.name}' of '{op_def.name}' Op has type {got.base_dtype.name} that does not "
        f"match type {want.base_dtype.name} of {where}."
    )


def _check_attr(op_type: str, attr: AttrDef, value: Any) -> Any:
    kind = attr.type
    if kind.startswith("list("):
        if not isinstance(value, list | tuple):
            raise TypeError(f"Expected list for attr {attr.name} of '{op_type}', got {value!r}")
        value = [_coerce(kind[5:-1], v, attr, op_type) for v in value]
        if attr.minimum is not None and len(value) < attr.minimum:
            raise ValueError(
                f"Attr '{attr.name}' of '{op_type}' Op passed list of length {len(value)} less "
                f"than minimum {attr.minimum}."
            )
        return value
    value = _coerce(kind, value, attr, op_type)
    if attr.allowed_values is not None and value not in attr.allowed_values:
        allowed = ", ".join(_fmt(v) for v in attr.allowed_values)
        if kind == "type":
            raise TypeError(
                f"Value passed to parameter '{attr.name}' has DataType {value.name} not in list "
                f"of allowed values: {allowed}"
            )
        raise ValueError(
            f"Attr '{attr.name}' of '{op_type}' Op passed {value!r} not in: {allowed}."
        )
    if kind == "int" and attr.minimum is not None and value < attr.minimum:
        raise ValueError(
            f"Attr '{attr.name}' of '{op_type}' Op passed {value} less than minimum {attr.minimum}."
        )
    return value


def _coerce(kind: str, value: Any, attr: AttrDef, op_type: str) -> Any:
    try:
        if kind == "type":
            return dtypes.as_dtype(value).base_dtype
        if kind == "int":
            if isinstance(value, float) and not value.is_integer():
                raise TypeError(f"Expected int, got {value!r}")
            return int(value)
        if kind == "float":
            return float(value)
        if kind == "bool":
            if not isinstance(value, bool | np.bool_):
                raise TypeError(f"Expected bool, got {value!r}")
            return bool(value)
        if kind == "string":
            if isinstance(value, bytes):
                return value.decode("utf-8")
            if not isinstance(value, str):
                raise TypeError(f"Expected string, got {value!r}")
            return value
        if kind == "shape":
            return as_shape(value)
        if kind == "tensor":
            return np.asarray(value)
        if kind == "func":
            return value if isinstance(value, str) else value.name
    except (TypeError, ValueError) as e:
        raise TypeError(f"Bad value for attr '{attr.name}' of '{op_type}' Op: {e}") from e
    raise TypeError(f"Unsupported attr kind {kind!r}")


def _copy_default(value: Any) -> Any:
    return list(value) if isinstance(value, list) else value


def _fmt(v: Any) -> str:
    return v.name if isinstance(v, dtypes.DType) else repr(v)


def _outputs_of(op: Operation, op_def: OpDef, attrs: dict[str, Any]) -> Any:
    outputs = op.outputs
    if not op_def.outputs:
        return op
    if len(op_def.outputs) == 1 and not (
        op_def.outputs[0].number_attr or op_def.outputs[0].type_list_attr
    ):
        return outputs[0]
    result: list[Any] = []
    i = 0
    for arg in op_def.outputs:
        if arg.number_attr or arg.type_list_attr:
            n = attrs[arg.number_attr] if arg.number_attr else len(attrs[arg.type_list_attr])
            result.append(outputs[i : i + n])
            i += n
        else:
            result.append(outputs[i])
            i += 1
    return result
