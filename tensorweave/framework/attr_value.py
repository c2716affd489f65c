"""Python attr values <-> `AttrValue` protos.

In memory, attrs hold Python values: `str` for strings, `int`, `float`, `bool`, `DType`,
`TensorShape`, `np.ndarray` for tensors, `str` (the function name) for funcs, and lists of
those. `Operation.get_attr` converts strings to `bytes` as TensorFlow does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.framework import dtypes, tensor_util
from tensorweave.framework.tensor_shape import TensorShape, as_shape
from tensorweave.protos import attr_value_pb2


def to_attr_value(value: Any, kind: str) -> Any:
    """Encodes a Python attr value of attr kind `kind` (e.g. `"list(int)"`) as `AttrValue`.

    Raises:
      TypeError: if `value` does not fit `kind`.
    """
    proto = attr_value_pb2.AttrValue()
    if kind.startswith("list("):
        inner = kind[5:-1]
        lst = proto.list
        lst.SetInParent()
        for v in value:
            _append_list(lst, v, inner)
        return proto
    if kind == "string":
        proto.s = _as_bytes(value)
    elif kind == "int":
        proto.i = int(value)
    elif kind == "float":
        proto.f = float(value)
    elif kind == "bool":
        proto.b = bool(value)
    elif kind == "type":
        proto.type = dtypes.as_dtype(value).as_datatype_enum
    elif kind == "shape":
        proto.shape.CopyFrom(as_shape(value).as_proto())
    elif kind == "tensor":
        proto.tensor.CopyFrom(tensor_util.make_tensor_proto(value))
    elif kind == "func":
        proto.func.name = value if isinstance(value, str) else value.name
    else:
        raise TypeError(f"Unsupported attr kind {kind!r}")
    return proto


def _append_list(lst: Any, v: Any, inner: str) -> None:
    if inner == "string":
        lst.s.append(_as_bytes(v))
    elif inner == "int":
        lst.i.append(int(v))
    elif inner == "float":
        lst.f.append(float(v))
    elif inner == "bool":
        lst.b.append(bool(v))
    elif inner == "type":
        lst.type.append(dtypes.as_dtype(v).as_datatype_enum)
    elif inner == "shape":
        lst.shape.add().CopyFrom(as_shape(v).as_proto())
    elif inner == "tensor":
        lst.tensor.add().CopyFrom(tensor_util.make_tensor_proto(v))
    elif inner == "func":
        lst.func.add(name=v if isinstance(v, str) else v.name)
    else:
        raise TypeError(f"Unsupported list attr kind {inner!r}")


def _as_bytes(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    raise TypeError(f"Expected a string attr value, got {value!r}")


def _as_str(value: bytes) -> Any:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return value


def from_attr_value(proto: Any) -> Any:
    """Decodes an `AttrValue` into the in-memory Python representation."""
    which = proto.WhichOneof("value")
    if which == "s":
        return _as_str(proto.s)
    if which in ("i", "f", "b"):
        return getattr(proto, which)
    if which == "type":
        return dtypes.as_dtype(proto.type)
    if which == "shape":
        return TensorShape(proto.shape)
    if which == "tensor":
        return tensor_util.make_ndarray(proto.tensor)
    if which == "func":
        return proto.func.name
    if which == "placeholder":
        return proto.placeholder
    if which == "list":
        return _from_list(proto.list)
    return None


def _from_list(lst: Any) -> list[Any]:
    if lst.s:
        return [_as_str(s) for s in lst.s]
    if lst.i:
        return list(lst.i)
    if lst.f:
        return list(lst.f)
    if lst.b:
        return list(lst.b)
    if lst.type:
        return [dtypes.as_dtype(t) for t in lst.type]
    if lst.shape:
        return [TensorShape(s) for s in lst.shape]
    if lst.tensor:
        return [tensor_util.make_ndarray(t) for t in lst.tensor]
    if lst.func:
        return [f.name for f in lst.func]
    return []


def infer_kind(value: Any) -> str:
    """Guesses the attr kind of a Python value for an attr not declared in an `OpDef`.

    Used for internal `_`-prefixed attrs such as `_class`.
    """
    if isinstance(value, list | tuple):
        return "list(%s)" % (infer_kind(value[0]) if value else "string")
    if isinstance(value, bool | np.bool_):
        return "bool"
    if isinstance(value, int | np.integer):
        return "int"
    if isinstance(value, float | np.floating):
        return "float"
    if isinstance(value, dtypes.DType):
        return "type"
    if isinstance(value, TensorShape):
        return "shape"
    if isinstance(value, np.ndarray):
        return "tensor"
    return "string"
