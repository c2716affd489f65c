"""Kernels of the TensorArray ops (`TensorArray*V3`), following TensorFlow's
`tensor_array_ops.cc`.

The handle a `TensorArrayV3` outputs *is* the array (a new one each time the op runs);
gradient arrays (`TensorArrayGradV3`) hang off their forward array by source name and
sum the values written to one index (several consumers of one read).
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.framework.tensor_shape import TensorShape, as_shape
from tensorweave.kernels.registry import KernelNode, register_compute, register_kernel

_FLOW = np.float32(0.0)


def _invalid(msg: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, msg)


class TensorArray:
    """One array: its elements (None: unwritten, `_CLEARED`: read and cleared), dtype and
    element shape."""

    def __init__(self, name: str, dtype: Any, size: int, dynamic_size: bool,
                 clear_after_read: bool, element_shape: TensorShape,
                 multiple_writes_aggregate: bool = False, identical: bool = False):
        self.name, self.dtype = name, np.dtype(dtype)
        self.items: list[Any] = [None] * size
        self.dynamic_size, self.clear_after_read = dynamic_size, clear_after_read
        self.element_shape = element_shape
        self.aggregate = multiple_writes_aggregate
        self.identical = identical
        self.closed = False
        self.grads: dict[str, TensorArray] = {}
        self.lock = threading.Lock()
        # `element_shape` as dims while it is the fully defined shape they were taken
        # from: a write of that shape changes nothing in it.
        self._known_shape: TensorShape | None = None
        self._known_dims: tuple[int, ...] = ()

    def _check(self) -> None:
        if self.closed:
            raise _invalid(f"TensorArray {self.name} has already been closed.")

    def write(self, index: int, value: Any, check_shape: bool = True) -> None:
        """Stores `value` at `index` (grows a dynamic array; sums on a gradient array)."""
        self._check()
        value = np.asarray(value)
        if value.dtype != self.dtype:
            raise _invalid(f"TensorArray dtype is {self.dtype.name} but Op is trying to write "
                           f"dtype {value.dtype.name}.")
        if index < 0:
            raise _invalid(f"Tried to write to index {index} but array size is: "
                           f"{len(self.items)}")
        if index >= len(self.items):
            if not self.dynamic_size:
                raise _invalid(f"Tried to write to index {index} but array is not resizeable "
                               f"and size is: {len(self.items)}")
            self.items.extend([None] * (index + 1 - len(self.items)))
        # NOTE: a value of the fully defined element shape leaves it as it is: no merge.
        if self._known_shape is not self.element_shape or value.shape != self._known_dims:
            self._merge_shape(index, value, check_shape)
        old = self.items[index]
        if old is not None:
            if old is _CLEARED or not self.aggregate:
                raise _invalid(
                    f"Could not write to TensorArray index {index} because it has already "
                    "been written to.")
            value = old + value
        self.items[index] = value

    def _merge_shape(self, index: int, value: Any, check_shape: bool) -> None:
        shape = TensorShape(value.shape)
        if self.element_shape.is_compatible_with(shape):
            self.element_shape = self.element_shape.merge_with(shape)
        elif self.identical and check_shape:
            raise _invalid(
                f"Could not write to TensorArray index {index} because the value shape is "
                f"{list(value.shape)} which is incompatible with the TensorArray's inferred "
                f"element shape: {self.element_shape} (consider setting "
                "infer_shape=False).")
        else:
            self.element_shape = TensorShape(None)
        if self.element_shape.is_fully_defined():
            self._known_shape = self.element_shape
            self._known_dims = tuple(self.element_shape.as_list())

    def read(self, index: int) -> Any:
        """The element at `index` (zeros when unwritten and the shape is known)."""
        self._check()
        if not 0 <= index < len(self.items):
            raise _invalid(f"Tried to read from index {index} but array size is: "
                           f"{len(self.items)}")
        value = self.items[index]
        if value is _CLEARED:
            raise _invalid(
                f"Could not read index {index} twice because it was cleared after a previous "
                "read (perhaps try setting clear_after_read = false?)")
        if value is None:
            if not self.element_shape.is_fully_defined():
                raise _invalid(
                    f"Could not read from TensorArray index {index}.  Furthermore, the "
                    f"element shape is not fully defined: {self.element_shape}.  It is "
                    "possible you are working with a resizeable TensorArray and "
                    "stop_gradients is not allowing the gradients to be written.  If you set "
                    "the full element_shape property on the forward TensorArray, the proper "
                    "all-zeros tensor will be returned instead of incurring this error.")
            return np.zeros(self.element_shape.as_list(), self.dtype)
        if self.clear_after_read and not self.aggregate:
            self.items[index] = _CLEARED
        return value


_CLEARED = object()


@register_kernel("TensorArrayV3")
def _tensor_array(node: KernelNode):
    attrs = node.attrs
    dtype = attrs["dtype"].as_numpy_dtype
    name = attrs.get("tensor_array_name") or node.name
    shape = as_shape(attrs.get("element_shape"))

    def compute(ctx: Any, size: Any):
        if int(size) < 0:
            raise _invalid(f"Size should be >= 0, got {int(size)}")
        return TensorArray(name, dtype, int(size), bool(attrs["dynamic_size"]),
                           bool(attrs["clear_after_read"]), shape,
                           identical=bool(attrs.get("identical_element_shapes"))), _FLOW

    return compute


@register_kernel("TensorArrayGradV3")
def _tensor_array_grad(node: KernelNode):
    source = node.attrs["source"]

    def compute(ctx: Any, ta: TensorArray, flow: Any):
        with ta.lock:
            grad = ta.grads.get(source)
            if grad is None:
                grad = ta.grads[source] = TensorArray(
                    f"{ta.name}@{source}", ta.dtype, len(ta.items), ta.dynamic_size, False,
                    ta.element_shape, multiple_writes_aggregate=True)
        return grad, _FLOW

    return compute


@register_compute("TensorArrayWriteV3")
def _write(ctx: Any, ta: TensorArray, index: Any, value: Any, flow: Any) -> Any:
    with ta.lock:
        ta.write(int(index), value)
    return _FLOW


@register_compute("TensorArrayReadV3")
def _read(ctx: Any, ta: TensorArray, index: Any, flow: Any) -> Any:
    with ta.lock:
        return ta.read(int(index))


def _stacked(ta: TensorArray, indices: Any) -> Any:
    values = [ta.read(int(i)) for i in np.asarray(indices).reshape(-1)]
    if not values:
        if not ta.element_shape.is_fully_defined():
            raise _invalid("TensorArray has size zero, but element shape "
                           f"{ta.element_shape} is not fully defined. Currently only static "
                           "shapes are supported when packing zero-size TensorArrays.")
        return np.zeros([0, *ta.element_shape.as_list()], ta.dtype)
    first = values[0].shape
    for i, v in enumerate(values):
        if v.shape != first:
            raise _invalid(
                f"TensorArray has inconsistent shapes.  Index 0 has shape: {list(first)} but "
                f"index {i} has shape: {list(v.shape)}")
    return np.stack(values)


@register_kernel("TensorArrayGatherV3")
def _gather(node: KernelNode):
    shape = as_shape(node.attrs.get("element_shape"))

    def compute(ctx: Any, ta: TensorArray, indices: Any, flow: Any) -> Any:
        with ta.lock:
            if shape.ndims is not None and ta.element_shape.ndims is None:
                ta.element_shape = shape
            return _stacked(ta, indices)

    return compute


@register_compute("TensorArrayScatterV3")
def _scatter(ctx: Any, ta: TensorArray, indices: Any, value: Any, flow: Any) -> Any:
    indices = np.asarray(indices).reshape(-1)
    value = np.asarray(value)
    if value.ndim == 0 or value.shape[0] != len(indices):
        raise _invalid(f"Expected len(indices) == values.shape[0], but saw: {len(indices)} vs. "
                       f"{value.shape[0] if value.ndim else 'a scalar'}")
    with ta.lock:
        for i, idx in enumerate(indices):
            ta.write(int(idx), value[i])
    return _FLOW


@register_compute("TensorArrayConcatV3")
def _concat(ctx: Any, ta: TensorArray, flow: Any):
    with ta.lock:
        values = [ta.read(i) for i in range(len(ta.items))]
    for v in values:
        if v.ndim == 0:
            raise _invalid("Concat saw a scalar shape at index 0 but requires at least vectors.")
    lengths = np.array([v.shape[0] for v in values], np.int64)
    if not values:
        return np.zeros([0], ta.dtype), lengths
    return np.concatenate(values), lengths


@register_compute("TensorArraySplitV3")
def _split(ctx: Any, ta: TensorArray, value: Any, lengths: Any, flow: Any) -> Any:
    value = np.asarray(value)
    lengths = np.asarray(lengths).reshape(-1)
    if value.ndim == 0 or int(lengths.sum()) != value.shape[0]:
        raise _invalid(f"Expected sum of lengths to be equal to values.shape[0], but sum of "
                       f"lengths is {int(lengths.sum())} and value's shape is: "
                       f"{list(value.shape)}")
    with ta.lock:
        if not ta.dynamic_size and len(lengths) != len(ta.items):
            raise _invalid(f"TensorArray's size is not equal to the size of lengths "
                           f"({len(ta.items)} vs. {len(lengths)}), and the TensorArray is not "
                           "marked as dynamically resizeable")
        start = 0
        for i, n in enumerate(lengths):
            ta.write(i, value[start:start + int(n)], check_shape=False)
            start += int(n)
    return _FLOW


@register_compute("TensorArraySizeV3")
def _size(ctx: Any, ta: TensorArray, flow: Any) -> Any:
    return np.int32(len(ta.items))


@register_compute("TensorArrayCloseV3")
def _close(ctx: Any, ta: TensorArray) -> None:
    with ta.lock:
        ta.closed = True
        ta.items = []
