"""NumPy <-> `TensorProto` conversion and static constant folding.

Follows `tf.make_tensor_proto`, `tf.make_ndarray` and `tensor_util.constant_value`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.framework import dtypes, limits
from tensorweave.framework.tensor_shape import Dimension, TensorShape
from tensorweave.framework.varint import get_varint
from tensorweave.protos import tensor_pb2

# dtype name -> (TensorProto repeated field for element values)
_VAL_FIELDS = {
    "float16": "half_val",
    "float32": "float_val",
    "float64": "double_val",
    "int8": "int_val",
    "int16": "int_val",
    "int32": "int_val",
    "uint8": "int_val",
    "uint16": "int_val",
    "int64": "int64_val",
    "uint32": "uint32_val",
    "uint64": "uint64_val",
    "bool": "bool_val",
    "string": "string_val",
    "complex64": "scomplex_val",
    "complex128": "dcomplex_val",
}


def to_numpy(value: Any, dtype: dtypes.DType | None = None) -> np.ndarray:
    """Converts a Python/NumPy value to an ndarray of `dtype` (TF's default dtype if None).

    Strings become `np.object_` arrays of `bytes`. For integer dtypes, known `Dimension`s
    may stand among the ints (TF's int filter: `[-1, shape[1] * shape[2]]`).

    Raises:
      TypeError: if the value cannot be represented with `dtype`.
      ValueError: for ragged nested lists; for None (TF's "None values not supported.").
    """
    if value is None:
        raise ValueError("None values not supported.")
    if dtype is None:
        dtype = dtypes.dtype_of_value(value)
    dtype = dtype.base_dtype
    if dtype is dtypes.string:
        arr = np.asarray(value, dtype=object)
        return np.vectorize(_as_bytes, otypes=[object])(arr) if arr.size else arr
    npt = dtype.as_numpy_dtype
    if isinstance(value, np.ndarray | np.generic) and value.dtype == npt:
        return np.asarray(value)
    arr = np.asarray(value)
    if arr.dtype.kind == "O" and dtype.is_integer:
        arr = _dimensions_as_ints(arr)
    if arr.dtype.kind in "SUO" and dtype is not dtypes.string:
        raise TypeError(f"Expected {dtype.name}, got {value!r} of type '{type(value).__name__}'.")
    if (
        dtype.is_integer
        and arr.dtype.kind == "f"
        and not isinstance(value, np.ndarray | np.generic)
        and arr.size
        and not np.all(np.mod(arr, 1) == 0)
    ):
        raise TypeError(
            f"Expected {dtype.name}, got {value!r} of type '{type(value).__name__}' instead."
        )
    python_value = not isinstance(value, np.ndarray | np.generic)
    if dtype.is_integer and arr.dtype.kind in "iuO" and python_value:
        _check_int_range(arr, dtype)
    if dtype.is_bool and arr.dtype.kind not in "b":
        if not isinstance(value, np.ndarray | np.generic):
            raise TypeError(f"Expected bool, got {value!r} of type '{type(value).__name__}'.")
    return arr.astype(npt, copy=False)


def _dimensions_as_ints(arr: np.ndarray) -> np.ndarray:
    """Known `Dimension`s among ints count as ints, as in TF's int filter (`[-1, d * e]`)."""
    flat = arr.reshape(-1)
    if not all(isinstance(x, int | np.integer)
               or (isinstance(x, Dimension) and x.value is not None) for x in flat):
        return arr
    return np.array([int(x) for x in flat], dtype=np.int64).reshape(arr.shape)


def _check_int_range(arr: np.ndarray, dtype: dtypes.DType) -> None:
    """Python ints must fit `dtype` (NumPy's cast would wrap them, e.g. 2**33 -> 0)."""
    if not arr.size:
        return
    info = np.iinfo(dtype.as_numpy_dtype)
    flat = arr.reshape(-1)
    try:
        low, high = int(flat.min()), int(flat.max())
    except (TypeError, ValueError):
        return  # NOTE: not all ints (a ragged list or objects): the cast below reports it
    if low < info.min or high > info.max:
        bad = low if low < info.min else high
        raise ValueError(
            f"Can't convert Python int {bad} to {dtype.name} Tensor: it is out of range "
            f"[{info.min}, {info.max}].")


def _as_bytes(x: Any) -> bytes:
    if isinstance(x, bytes):
        return x
    if isinstance(x, str):
        return x.encode("utf-8")
    if isinstance(x, np.bytes_):
        return bytes(x)
    raise TypeError(f"Expected string, got {x!r} of type '{type(x).__name__}' instead.")


def make_tensor_proto(
    values: Any, dtype: Any = None, shape: Any = None, verify_shape: bool = False
) -> Any:
    """Builds a `TensorProto` from a value (follows `tf.make_tensor_proto`).

    Multi-element numeric tensors use `tensor_content` (raw little-endian bytes), single
    elements and strings use the typed `*_val` fields, as TensorFlow does. A scalar `values`
    with a larger `shape` is broadcast.

    Raises:
      TypeError: for values incompatible with `dtype`.
      ValueError: if `values` has more elements than `shape` allows.
    """
    dt = dtypes.as_dtype(dtype) if dtype is not None else None
    arr = to_numpy(values, dt)
    dt = dt.base_dtype if dt is not None else dtypes.as_dtype(arr.dtype)
    if shape is not None:
        target = [int(d) for d in TensorShape(shape).as_list()]
        if arr.size == 1 and int(np.prod(target)) != 1:
            arr = np.broadcast_to(arr.reshape(()), target)
        elif verify_shape and list(arr.shape) != target:
            raise TypeError(f"Expected Tensor's shape: {tuple(target)}, got {arr.shape}.")
        elif arr.size != int(np.prod(target)):
            raise ValueError(
                f"Too many elements provided. Needed at most {int(np.prod(target))}, "
                f"but received {arr.size}"
            )
        else:
            arr = arr.reshape(target)
    proto = tensor_pb2.TensorProto(dtype=dt.as_datatype_enum)
    proto.tensor_shape.CopyFrom(TensorShape(arr.shape).as_proto())
    if dt is dtypes.string:
        proto.string_val.extend(arr.reshape(-1).tolist())
    elif arr.size > 1:
        little_endian = arr.dtype.newbyteorder("<")
        proto.tensor_content = np.ascontiguousarray(arr, dtype=little_endian).tobytes()
    elif arr.size == 1:
        _set_single_value(proto, dt, arr.reshape(-1)[0])
    return proto


def _set_single_value(proto: Any, dt: dtypes.DType, x: Any) -> None:
    field = getattr(proto, _VAL_FIELDS[dt.name])
    if dt is dtypes.float16:
        field.append(int(np.asarray(x, np.float16).view(np.uint16)))
    elif dt.is_complex:
        field.extend([float(x.real), float(x.imag)])
    elif dt.is_bool:
        field.append(bool(x))
    elif dt.is_floating:
        field.append(float(x))
    else:
        field.append(int(x))


def make_ndarray(proto: Any, max_bytes: int | None = None,
                 what: str = "TensorProto") -> np.ndarray:
    """Converts a `TensorProto` to a writable ndarray (follows `tf.make_ndarray`).

    Typed `*_val` fields shorter than the shape are padded with their last element, as
    TensorFlow does for constants such as `tf.zeros`.

    Args:
      proto: the `TensorProto`.
      max_bytes: largest result (bytes) padding may build (None: `limits` default).
      what: names the decoded value in errors (e.g. the op or the RPC).

    Raises:
      TypeError: for dtypes without a NumPy equivalent (resource, variant).
      ResourceExhaustedError: the padded result would exceed `max_bytes`.
      InvalidArgumentError: a negative dimension.
    """
    dt = dtypes.as_dtype(proto.dtype).base_dtype
    shape = [d.size for d in proto.tensor_shape.dim]
    if not dt.is_numpy_compatible:
        raise TypeError(f"Cannot convert a TensorProto of dtype {dt.name} to an ndarray.")
    npt = dt.as_numpy_dtype
    itemsize = 8 if dt is dtypes.string else np.dtype(npt).itemsize
    limits.check_tensor_size(what, shape, itemsize, max_bytes)
    n = int(np.prod(shape)) if shape else 1
    if dt is dtypes.string and proto.tensor_content:
        return decode_string_list(proto.tensor_content, n).reshape(shape)
    if proto.tensor_content:
        arr = np.frombuffer(proto.tensor_content, dtype=np.dtype(npt).newbyteorder("<"))
        return arr.astype(npt).reshape(shape)
    if dt is dtypes.string:
        vals: list[Any] = list(proto.string_val)
        return _pad(np.array(vals, dtype=object), n, object).reshape(shape)
    field = list(getattr(proto, _VAL_FIELDS[dt.name]))
    if dt is dtypes.float16:
        arr = np.array(field, dtype=np.uint16).view(np.float16)
    elif dt.is_complex:
        arr = np.array(field[0::2], dtype=npt) + 1j * np.array(field[1::2], dtype=npt)
        arr = arr.astype(npt)
    else:
        arr = np.array(field, dtype=npt)
    return _pad(arr, n, npt).reshape(shape)


def decode_string_list(content: bytes, n: int) -> np.ndarray:
    """The strings (object [n] of bytes) of a string tensor's `tensor_content`.

    TensorFlow's C++ runtime (`port::EncodeStringList`) writes the `n` lengths as varint32s,
    then the strings' bytes back to back.

    Raises:
      ValueError: if `content` does not hold exactly `n` strings.
    """
    lengths, pos = [], 0
    for _ in range(n):
        try:
            value, pos = get_varint(content, pos, max_bits=32)
        except ValueError:
            raise ValueError(f"string tensor_content too short for {n} lengths") from None
        lengths.append(value)
    if pos + sum(lengths) != len(content):
        raise ValueError(f"string tensor_content of {len(content)} bytes does not hold {n} strings")
    out = np.empty(n, dtype=object)
    for i, length in enumerate(lengths):
        out[i] = bytes(content[pos : pos + length])
        pos += length
    return out


def _pad(arr: np.ndarray, n: int, npt: Any) -> np.ndarray:
    if arr.size == n:
        return arr
    if arr.size == 0:
        return np.zeros(n, dtype=npt) if npt is not object else np.full(n, b"", dtype=object)
    out = np.empty(n, dtype=npt)
    out[: arr.size] = arr
    out[arr.size :] = arr[-1]
    return out


def constant_value(tensor: Any) -> np.ndarray | None:
    """The value of `tensor` when it can be computed while building the graph, else None.

    Folds `Const`, `Identity`, `Shape`/`Size`/`Rank` of statically known shapes, `Cast`,
    `Pack`, `ConcatV2` and `Fill` of foldable inputs (follows `tf.get_static_value`).
    """
    op = tensor.op
    t = op.type
    if t == "Const":
        return op.get_attr("value")
    if t in ("Identity", "StopGradient"):
        return constant_value(op.inputs[0])
    if t == "Shape":
        shape = op.inputs[0].shape
        if shape.is_fully_defined():
            return np.array(shape.as_list(), dtype=op.get_attr("out_type").as_numpy_dtype)
        return None
    if t == "Size":
        n = op.inputs[0].shape.num_elements()
        return None if n is None else np.array(n, dtype=op.get_attr("out_type").as_numpy_dtype)
    if t == "Rank":
        r = op.inputs[0].shape.ndims
        return None if r is None else np.array(r, dtype=np.int32)
    if t == "Cast":
        v = constant_value(op.inputs[0])
        return None if v is None else v.astype(op.get_attr("DstT").as_numpy_dtype)
    if t == "Pack":
        vals = [constant_value(x) for x in op.inputs]
        if any(v is None for v in vals):
            return None
        return np.stack(vals, axis=op.get_attr("axis"))
    if t == "ConcatV2":
        vals = [constant_value(x) for x in op.inputs]
        if any(v is None for v in vals):
            return None
        return np.concatenate(vals[:-1], axis=int(vals[-1]))
    if t == "Fill":
        dims, value = constant_value(op.inputs[0]), constant_value(op.inputs[1])
        if dims is None or value is None:
            return None
        return np.full(dims, value, dtype=value.dtype)
    return None


def constant_value_as_shape(tensor: Any) -> TensorShape:
    """A `TensorShape` from a 1-D int tensor that holds a shape, with unknown parts as None.

    Used by shape functions of `Reshape`, `Fill`, `Zeros`... (follows
    `tensor_util.constant_value_as_shape`).
    """
    value = constant_value(tensor)
    if value is not None:
        return TensorShape([None if d < 0 else int(d) for d in value.reshape(-1)])
    op = tensor.op
    if op.type == "Shape":
        return op.inputs[0].shape
    if op.type == "Pack":
        dims = []
        for x in op.inputs:
            v = constant_value(x)
            dims.append(None if v is None or int(v) < 0 else int(v))
        return TensorShape(dims)
    if op.type == "ConcatV2":
        result = TensorShape([])
        for x in op.inputs[:-1]:
            result = result.concatenate(constant_value_as_shape(x))
        return result
    n = tensor.shape.with_rank(1)[0].value if tensor.shape.ndims is not None else None
    return TensorShape(None) if n is None else TensorShape([None] * n)
