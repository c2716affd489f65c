"""`tf.TensorArray` (TF 1.x `tensor_array_ops._GraphTensorArray`), built on the
`TensorArray*V3` ops (`framework/op_defs/tensor_array.py`).

A TensorArray object is a (handle, flow) pair: every write returns a new object with the
same handle and the write's flow, so reads placed after it in the graph see the value.
Inside `while_loop`, a TensorArray loop variable travels as its flow.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape, as_shape, unknown_shape
from tensorweave.ops import array_ops, array_ops_gather, math_ops


class TensorArray:
    """A list of tensors of one dtype that graph ops write and read (`tf.TensorArray`).

    Args:
      dtype: element dtype.
      size: int32 scalar, the initial number of elements (needed unless `handle`).
      dynamic_size: whether writes past the end grow the array.
      clear_after_read: whether a read frees the element (a second read fails).
      tensor_array_name: the resource name (default: the op name).
      handle: an existing handle (with `flow`) instead of creating a new array.
      flow: the float32 scalar ordering the array's uses.
      infer_shape: whether all elements must have one shape (inferred from writes).
      element_shape: the shape each element has (`TensorShape`, may be partial).
      colocate_with_first_write_call: accepted; the array is placed where it is created.
      name: name scope.

    Raises:
      ValueError: `size` and `handle` both or neither given, or `flow` without `handle`.
    """

    def __init__(self, dtype: Any, size: Any = None, dynamic_size: bool | None = None,
                 clear_after_read: bool | None = None, tensor_array_name: str | None = None,
                 handle: Tensor | None = None, flow: Tensor | None = None,
                 infer_shape: bool = True, element_shape: Any = None,
                 colocate_with_first_write_call: bool = True, name: str | None = None):
        if handle is not None and tensor_array_name:
            raise ValueError("Cannot construct with both handle and tensor_array_name")
        if handle is not None and size is not None:
            raise ValueError("Cannot provide both a handle and size at the same time")
        if handle is None and size is None:
            raise ValueError("Size must be provided if handle is not provided")
        if handle is not None and (dynamic_size is not None or clear_after_read is not None):
            raise ValueError("Cannot provide both a handle and dynamic_size/clear_after_read "
                             "at the same time")
        if flow is not None and handle is None:
            raise ValueError("flow must be provided together with handle")
        self._dtype = dtypes.as_dtype(dtype).base_dtype
        self._dynamic_size = bool(dynamic_size)
        self._infer_shape = infer_shape
        # NOTE: one shared list per array: derived objects (each write's) refine it.
        self._element_shape = [as_shape(element_shape) if element_shape is not None
                               else unknown_shape()]
        if handle is not None:
            self._handle, self._flow = handle, flow
            return
        with graph_mod.name_scope(name, "TensorArray", [size]) as scope:
            self._handle, self._flow = apply_op(
                "TensorArrayV3", size=convert_to_tensor(size, dtypes.int32), dtype=self._dtype,
                element_shape=self._element_shape[0], dynamic_size=self._dynamic_size,
                clear_after_read=True if clear_after_read is None else clear_after_read,
                identical_element_shapes=infer_shape,
                tensor_array_name=tensor_array_name or "", name=scope)

    # ------------------------------------------------------------ properties
    @property
    def flow(self) -> Tensor:
        """The float32 flow tensor of this object."""
        return self._flow

    @property
    def dtype(self) -> dtypes.DType:
        """The element dtype."""
        return self._dtype

    @property
    def handle(self) -> Tensor:
        """The resource handle."""
        return self._handle

    @property
    def dynamic_size(self) -> bool:
        """Whether writes past the end grow the array."""
        return self._dynamic_size

    @property
    def element_shape(self) -> TensorShape:
        """The shape of the elements, as far as known."""
        return self._element_shape[0]

    def _derived(self, flow: Tensor) -> TensorArray:
        ta = TensorArray(self._dtype, handle=self._handle, flow=flow,
                         infer_shape=self._infer_shape)
        ta._element_shape = self._element_shape
        ta._dynamic_size = self._dynamic_size
        return ta

    def _merge_element_shape(self, shape: TensorShape) -> None:
        if not self._infer_shape:
            return
        if not shape.is_compatible_with(self.element_shape):
            raise ValueError(f"Inconsistent shapes: saw {shape} but expected "
                             f"{self.element_shape} (and infer_shape=True)")
        self._element_shape[0] = self.element_shape.merge_with(shape)

    # ------------------------------------------------------------------ ops
    def identity(self) -> TensorArray:
        """A TensorArray whose flow is an Identity of this one's (orders later uses)."""
        return self._derived(array_ops.identity(self._flow))

    def grad(self, source: str, flow: Tensor | None = None,
             name: str | None = None) -> TensorArray:
        """The gradient TensorArray of this one for gradient source `source`."""
        flow = self._flow if flow is None else flow
        with graph_mod.name_scope(name, "TensorArrayGrad", [self._handle]):
            with graph_mod.get_default_graph().colocate_with(self._handle):
                g_handle, unused_flow = apply_op(
                    "TensorArrayGradV3", handle=self._handle, flow_in=flow, source=source,
                    name=name or "TensorArrayGradV3")
                with graph_mod.get_default_graph().control_dependencies([g_handle]):
                    flow = array_ops.identity(flow, name="gradient_flow")
                ta = TensorArray(self._dtype, handle=g_handle, flow=flow,
                                 infer_shape=self._infer_shape)
                ta._element_shape = self._element_shape
                return ta

    def read(self, index: Any, name: str | None = None) -> Tensor:
        """The element at `index` (int32 scalar)."""
        value = apply_op("TensorArrayReadV3", handle=self._handle,
                         index=convert_to_tensor(index, dtypes.int32), flow_in=self._flow,
                         dtype=self._dtype, name=name or "TensorArrayReadV3")
        if self.element_shape.ndims is not None:
            value.set_shape(self.element_shape)
        return value

    def write(self, index: Any, value: Any, name: str | None = None) -> TensorArray:
        """A TensorArray with `value` written at `index`.

        Raises:
          ValueError: `value`'s static shape differs from the other elements' (with
            infer_shape).
        """
        with graph_mod.name_scope(name, "TensorArrayWrite", [self._handle, index, value]):
            value = convert_to_tensor(value, preferred_dtype=self._dtype, name="value")
            if value.dtype.base_dtype != self._dtype:
                raise TypeError(f"TensorArray dtype is {self._dtype.name} but op has dtype "
                                f"{value.dtype.base_dtype.name}.")
            self._merge_element_shape(value.shape)
            flow = apply_op("TensorArrayWriteV3", handle=self._handle,
                            index=convert_to_tensor(index, dtypes.int32), value=value,
                            flow_in=self._flow, name=name or "TensorArrayWriteV3")
        return self._derived(flow)

    def stack(self, name: str | None = None) -> Tensor:
        """All elements stacked along a new first dimension."""
        with graph_mod.name_scope(name, "TensorArrayStack", [self._handle]):
            return self.gather(array_ops_gather.range(0, self.size()), name=name)

    def gather(self, indices: Any, name: str | None = None) -> Tensor:
        """The elements at `indices` (int32 vector), stacked."""
        shape = self.element_shape
        value = apply_op("TensorArrayGatherV3", handle=self._handle,
                         indices=convert_to_tensor(indices, dtypes.int32), flow_in=self._flow,
                         dtype=self._dtype, element_shape=shape,
                         name=name or "TensorArrayGatherV3")
        return value

    def concat(self, name: str | None = None) -> Tensor:
        """All elements concatenated along their first dimension."""
        shape = self.element_shape
        except0 = TensorShape(shape.as_list()[1:]) if shape.ndims else unknown_shape()
        value, _ = apply_op("TensorArrayConcatV3", handle=self._handle, flow_in=self._flow,
                            dtype=self._dtype, element_shape_except0=except0,
                            name=name or "TensorArrayConcatV3")
        return value

    def unstack(self, value: Any, name: str | None = None) -> TensorArray:
        """A TensorArray holding `value`'s slices along dimension 0."""
        with graph_mod.name_scope(name, "TensorArrayUnstack", [self._handle, value]):
            value = convert_to_tensor(value, preferred_dtype=self._dtype, name="value")
            num = array_ops.shape(value)[0]
            return self.scatter(array_ops_gather.range(0, num), value, name=name)

    def scatter(self, indices: Any, value: Any, name: str | None = None) -> TensorArray:
        """A TensorArray with `value[i]` written at `indices[i]`."""
        with graph_mod.name_scope(name, "TensorArrayScatter", [self._handle, value, indices]):
            value = convert_to_tensor(value, preferred_dtype=self._dtype, name="value")
            if value.shape.ndims:
                self._merge_element_shape(TensorShape(value.shape.as_list()[1:]))
            flow = apply_op("TensorArrayScatterV3", handle=self._handle,
                            indices=convert_to_tensor(indices, dtypes.int32), value=value,
                            flow_in=self._flow, name=name or "TensorArrayScatterV3")
        return self._derived(flow)

    def split(self, value: Any, lengths: Any, name: str | None = None) -> TensorArray:
        """A TensorArray holding `value` split along dimension 0 into `lengths` pieces."""
        with graph_mod.name_scope(name, "TensorArraySplit", [self._handle, value, lengths]):
            value = convert_to_tensor(value, preferred_dtype=self._dtype, name="value")
            lengths = math_ops.cast(convert_to_tensor(lengths), dtypes.int64)
            if value.shape.ndims:
                self._merge_element_shape(TensorShape([None, *value.shape.as_list()[1:]]))
            flow = apply_op("TensorArraySplitV3", handle=self._handle, value=value,
                            lengths=lengths, flow_in=self._flow,
                            name=name or "TensorArraySplitV3")
        return self._derived(flow)

    def size(self, name: str | None = None) -> Tensor:
        """The current number of elements (int32 scalar)."""
        return apply_op("TensorArraySizeV3", handle=self._handle, flow_in=self._flow,
                        name=name or "TensorArraySizeV3")

    def close(self, name: str | None = None) -> Any:
        """Closes the array (later uses fail)."""
        return apply_op("TensorArrayCloseV3", handle=self._handle,
                        name=name or "TensorArrayCloseV3")


def build_ta_with_new_flow(old_ta: TensorArray, flow: Tensor) -> TensorArray:
    """A TensorArray with `old_ta`'s handle and element shape and a new flow."""
    return old_ta._derived(flow)


__all__ = ["TensorArray"]
