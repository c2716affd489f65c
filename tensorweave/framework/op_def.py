"""Op definitions: inputs, outputs, attrs and a static shape function per op type.

Ops are declared with TensorFlow's `REGISTER_OP` spec syntax, e.g.::

    register_op("MatMul",
                inputs=["a: T", "b: T"], outputs=["product: T"],
                attrs=["transpose_a: bool = false", "transpose_b: bool = false",
                       "T: {half, float, double, int32, int64}"],
                shape_fn=_matmul_shape)

Argument specs: `name: T` (type attr), `name: float` (fixed type), `name: Ref(T)`,
`name: N * T` (N tensors of one type), `name: Tlist` (a `list(type)` attr).
Attr specs: `name: type|int|float|bool|string|shape|tensor|func|list(...)`, an allowed set
`{float, double}` or `{'SAME', 'VALID'}`, a minimum `>= 1`, a default `= value`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from typing import Any

from tensorweave.framework import attr_value, dtypes
from tensorweave.framework.registry import Registry
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.protos import op_def_pb2

op_def_registry = Registry("op definitions")

NO_DEFAULT = object()

# TensorFlow's type sets for attr specs (bfloat16 and the quantized types are not supported).
FLOATS = "half, float, double"
COMPLEX = "complex64, complex128"
REAL_NUMBER = f"{FLOATS}, int32, int64, uint8, int16, int8, uint16, uint32, uint64"
NUMBER = f"{REAL_NUMBER}, {COMPLEX}"
_TYPE_ALIASES = {"float": "float32", "double": "float64", "half": "float16"}


@dataclasses.dataclass(frozen=True)
class ArgDef:
    """One input or output argument of an op."""

    name: str
    type: dtypes.DType | None = None
    type_attr: str | None = None
    number_attr: str | None = None
    type_list_attr: str | None = None
    is_ref: bool = False


@dataclasses.dataclass(frozen=True)
class AttrDef:
    """One attribute of an op: its kind (`"int"`, `"list(type)"`, ...) and constraints."""

    name: str
    type: str
    default: Any = NO_DEFAULT
    allowed_values: tuple | None = None
    minimum: int | None = None

    @property
    def has_default(self) -> bool:
        """True when the attr may be omitted."""
        return self.default is not NO_DEFAULT


@dataclasses.dataclass
class OpDef:
    """The definition of an op type (TensorFlow's `OpDef` plus a Python shape function).

    `register_op` keeps an op's argument and attr specs and parses them into `inputs`,
    `outputs` and `attrs` when one of these is first read (`from_specs`): every op is
    registered at import, few are used by a process.
    """

    name: str
    inputs: list[ArgDef]
    outputs: list[ArgDef]
    attrs: dict[str, AttrDef]
    is_stateful: bool = False
    shape_fn: Callable[[Any], Sequence[Any]] | None = None
    allows_uninitialized_input: bool = False
    is_commutative: bool = False

    @classmethod
    def from_specs(
        cls,
        name: str,
        inputs: Sequence[str],
        outputs: Sequence[str],
        attrs: Sequence[str],
        **fields: Any,
    ) -> OpDef:
        """The definition with these argument and attr specs (see `register_op`), parsed
        on first use of `inputs`, `outputs` or `attrs`."""
        op_def = cls.__new__(cls)
        op_def.__dict__.update(fields, name=name, _specs=(inputs, outputs, attrs))
        return op_def

    def __getattr__(self, field: str) -> Any:
        # NOTE: called only for a missing attribute: the parsed fields of a definition from
        # `from_specs`, before their first use. Two threads may both parse; either result is
        # the same definition.
        specs = self.__dict__.get("_specs")
        if specs is None or field not in ("inputs", "outputs", "attrs"):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {field!r}")
        input_specs, output_specs, attr_specs = specs
        attr_defs = {a.name: a for a in (parse_attr(s) for s in attr_specs)}
        parsed = {
            "inputs": [parse_arg(s, attr_defs) for s in input_specs],
            "outputs": [parse_arg(s, attr_defs) for s in output_specs],
            "attrs": attr_defs,
        }
        self.__dict__.update(parsed)
        return parsed[field]

    def output_dtypes(self, attrs: dict[str, Any]) -> list[dtypes.DType]:
        """The flat list of output dtypes for a node with `attrs` (ref types for ref outputs)."""
        return _expand_args(self.outputs, attrs)

    def input_dtypes(self, attrs: dict[str, Any]) -> list[dtypes.DType]:
        """The flat list of expected input dtypes for a node with `attrs`."""
        return _expand_args(self.inputs, attrs)

    def ref_inputs(self, attrs: dict[str, Any]) -> list[bool]:
        """For each flat input, whether it is a reference input."""
        flags: list[bool] = []
        for arg in self.inputs:
            flags.extend([arg.is_ref] * _arg_count(arg, attrs))
        return flags

    def to_proto(self) -> Any:
        """This definition as an `OpDef` proto (for `MetaGraphDef.stripped_op_list`)."""
        proto = op_def_pb2.OpDef(name=self.name, is_stateful=self.is_stateful)
        for args, field in ((self.inputs, proto.input_arg), (self.outputs, proto.output_arg)):
            for a in args:
                field.add(
                    name=a.name,
                    type=a.type.as_datatype_enum if a.type is not None else 0,
                    type_attr=a.type_attr or "",
                    number_attr=a.number_attr or "",
                    type_list_attr=a.type_list_attr or "",
                    is_ref=a.is_ref,
                )
        for attr in self.attrs.values():
            ap = proto.attr.add(name=attr.name, type=attr.type)
            if attr.has_default and attr.default is not None:
                ap.default_value.CopyFrom(attr_value.to_attr_value(attr.default, attr.type))
            if attr.minimum is not None:
                ap.has_minimum = True
                ap.minimum = attr.minimum
            if attr.allowed_values:
                kind = "list(type)" if attr.type == "type" else "list(string)"
                ap.allowed_values.CopyFrom(
                    attr_value.to_attr_value(list(attr.allowed_values), kind)
                )
        return proto


def _arg_count(arg: ArgDef, attrs: dict[str, Any]) -> int:
    if arg.number_attr:
        return int(attrs[arg.number_attr])
    if arg.type_list_attr:
        return len(attrs[arg.type_list_attr])
    return 1


def _expand_args(args: list[ArgDef], attrs: dict[str, Any]) -> list[dtypes.DType]:
    out: list[dtypes.DType] = []
    for arg in args:
        if arg.type_list_attr:
            types = [dtypes.as_dtype(t) for t in attrs[arg.type_list_attr]]
        else:
            t = arg.type if arg.type is not None else dtypes.as_dtype(attrs[arg.type_attr])
            types = [t] * _arg_count(arg, attrs)
        out.extend(t._as_ref if arg.is_ref else t for t in types)
    return out


_ARG_RE = re.compile(r"^\s*(\w+)\s*:\s*(Ref\(\s*(.+?)\s*\)|(.+?))\s*$")


def parse_arg(spec: str, attrs: dict[str, AttrDef]) -> ArgDef:
    """Parses an input/output spec such as `"values: N * T"` or `"ref: Ref(T)"`.

    Raises:
      ValueError: for a malformed spec or a reference to an undeclared attr.
    """
    m = _ARG_RE.match(spec)
    if not m:
        raise ValueError(f"Malformed argument spec: {spec!r}")
    name = m.group(1)
    is_ref = m.group(3) is not None
    body = (m.group(3) or m.group(4)).strip()
    number_attr = None
    if "*" in body:
        number_attr, body = (s.strip() for s in body.split("*", 1))
        _require_attr(attrs, number_attr, "int", spec)
    if body in attrs:
        kind = attrs[body].type
        if kind == "type":
            return ArgDef(name, type_attr=body, number_attr=number_attr, is_ref=is_ref)
        if kind == "list(type)":
            return ArgDef(name, type_list_attr=body, is_ref=is_ref)
        raise ValueError(f"Attr {body!r} used as a type in {spec!r} has kind {kind!r}")
    try:
        fixed = dtypes.as_dtype(_TYPE_ALIASES.get(body, body))
    except TypeError as e:
        raise ValueError(f"Unknown type {body!r} in argument spec {spec!r}") from e
    return ArgDef(name, type=fixed, number_attr=number_attr, is_ref=is_ref)


def _require_attr(attrs: dict[str, AttrDef], name: str, kind: str, spec: str) -> None:
    if name not in attrs or attrs[name].type != kind:
        raise ValueError(f"Spec {spec!r} needs an attr {name!r} of kind {kind!r}")


# NOTE: greedy groups ending on a non-space (with fullmatch): the lazy `(.+?)\s*$` form
# backtracked on long type sets and cost ~10 ms of every import (1,200 specs).
_ATTR_RE = re.compile(r"\s*(\w+)\s*:\s*([^=>]*[^=>\s])\s*(?:>=\s*(-?\d+))?\s*(?:=\s*(.*\S))?\s*")


def parse_attr(spec: str) -> AttrDef:
    """Parses an attr spec such as `"T: {float, double} = DT_FLOAT"` or `"N: int >= 1"`.

    Raises:
      ValueError: for a malformed spec.
    """
    m = _ATTR_RE.fullmatch(spec)
    if not m:
        raise ValueError(f"Malformed attr spec: {spec!r}")
    name, kind, minimum, default_text = m.groups()
    allowed = None
    if kind.startswith("{"):
        items = [s.strip() for s in kind.strip("{}").split(",") if s.strip()]
        if items and items[0][0] in "'\"":
            kind, allowed = "string", tuple(s.strip("'\"") for s in items)
        else:
            kind = "type"
            allowed = tuple(dtypes.as_dtype(_TYPE_ALIASES.get(s, s)) for s in items)
    default = NO_DEFAULT if default_text is None else _parse_default(default_text, kind)
    return AttrDef(name, kind, default, allowed, int(minimum) if minimum is not None else None)


def _parse_default(text: str, kind: str) -> Any:
    text = text.strip()
    if kind.startswith("list("):
        inner = kind[5:-1]
        body = text.strip()[1:-1].strip()
        return [_parse_default(t, inner) for t in body.split(",")] if body else []
    if kind == "type":
        name = text[3:].lower() if text.startswith("DT_") else text
        return dtypes.as_dtype(_TYPE_ALIASES.get(name, name))
    if kind == "bool":
        return text == "true"
    if kind == "int":
        return int(text)
    if kind == "float":
        return float(text)
    if kind == "string":
        return text.strip("'\"")
    if kind == "shape":
        return TensorShape(None) if text == "unknown" else TensorShape(eval_shape_literal(text))
    if kind in ("tensor", "func"):
        return None
    raise ValueError(f"Cannot parse default {text!r} for attr kind {kind!r}")


def eval_shape_literal(text: str) -> list[int | None]:
    """Parses `[2, -1, 3]` into `[2, None, 3]`."""
    body = text.strip()[1:-1].strip()
    if not body:
        return []
    return [None if int(t) < 0 else int(t) for t in body.split(",")]


def register_op(
    name: str,
    inputs: Sequence[str] = (),
    outputs: Sequence[str] = (),
    attrs: Sequence[str] = (),
    is_stateful: bool = False,
    shape_fn: Callable[[Any], Sequence[Any]] | None = None,
    allows_uninitialized_input: bool = False,
    is_commutative: bool = False,
) -> Any:
    """Registers an `OpDef`; usable directly or as a decorator on the shape function.

    `shape_fn(op)` receives the new `Operation` and returns one shape per output (anything
    `TensorShape()` accepts); it may raise ValueError for statically incompatible inputs.

    The specs are parsed when the definition is first used (`OpDef.from_specs`);
    `tests/unit/ops/test_registries.py` parses every definition of the package.

    Raises:
      KeyError: if `name` is already registered.
      ValueError: for malformed specs, when the definition is first used.
    """
    op_def = OpDef.from_specs(
        name,
        tuple(inputs),
        tuple(outputs),
        tuple(attrs),
        is_stateful=is_stateful,
        shape_fn=shape_fn,
        allows_uninitialized_input=allows_uninitialized_input,
        is_commutative=is_commutative,
    )
    op_def_registry.register(op_def, name)

    def decorator(fn: Callable[[Any], Sequence[Any]]) -> Callable[[Any], Sequence[Any]]:
        op_def.shape_fn = fn
        return fn

    return decorator


def get_op_def(op_type: str) -> OpDef:
    """Returns the registered `OpDef`.

    Raises:
      LookupError: if `op_type` is not registered.
    """
    return op_def_registry.lookup(op_type)
