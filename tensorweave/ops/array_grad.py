"""Gradients of the array ops (follows TF 1.x `array_grad.py`).

Each function receives the forward op and the gradient(s) of its output(s) and returns one
gradient per op input, built from ops. Reductions come from `math_ops`, imported inside the
functions so that this module can be imported before `math_ops`.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.shape_inference import static_int
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, math_ops
from tensorweave.ops.gradient_registry import RegisterGradient, no_gradient


def _dense(grad: Any) -> Any:
    """`grad` as a dense tensor.

    An `IndexedSlices` is summed into its dense shape by the conversion function that
    `gradients_impl` registers.
    """
    if isinstance(grad, IndexedSlices):
        return convert_to_tensor(grad)
    return grad


def _fill_none(op: Operation, grads: tuple[Any, ...]) -> list[Any]:
    """The output gradients with None replaced by zeros of the output's shape."""
    return [
        array_ops.zeros_like(op.outputs[i]) if g is None else _dense(g) for i, g in enumerate(grads)
    ]


@RegisterGradient("Identity")
def _identity_grad(op: Operation, grad: Any) -> Any:
    return grad


@RegisterGradient("PlaceholderWithDefault")
def _placeholder_with_default_grad(op: Operation, grad: Any) -> Any:
    return grad


@RegisterGradient("Reshape")
def _reshape_grad(op: Operation, grad: Any) -> list[Any]:
    return [array_ops.reshape(_dense(grad), array_ops.shape(op.inputs[0])), None]


@RegisterGradient("ExpandDims")
def _expand_dims_grad(op: Operation, grad: Any) -> list[Any]:
    return [array_ops.reshape(_dense(grad), array_ops.shape(op.inputs[0])), None]


@RegisterGradient("Squeeze")
def _squeeze_grad(op: Operation, grad: Any) -> list[Any]:
    return [array_ops.reshape(_dense(grad), array_ops.shape(op.inputs[0]))]


@RegisterGradient("Transpose")
def _transpose_grad(op: Operation, grad: Any) -> list[Any]:
    perm = op.inputs[1]
    return [array_ops.transpose(_dense(grad), array_ops.invert_permutation(perm)), None]


def _as_int32(t: Tensor) -> Any:
    if t.dtype.base_dtype is dtypes.int32:
        return t
    value = static_int(t)
    if value is not None:
        return value
    return math_ops.cast(t, dtypes.int32)


@RegisterGradient("ConcatV2")
def _concat_grad(op: Operation, grad: Any) -> list[Any]:
    values, axis = op.inputs[:-1], op.inputs[-1]
    grad = _dense(grad)
    shapes = [array_ops.shape(v) for v in values]
    offsets = array_ops_concat_offset(_as_int32(axis), shapes)
    return [array_ops.slice(grad, o, s) for o, s in zip(offsets, shapes)] + [None]


def array_ops_concat_offset(concat_dim: Any, shapes: list[Any], name: str | None = None):
    """`ConcatOffset`: the offset of each input of a concat along `concat_dim`."""
    return apply_op("ConcatOffset", concat_dim=concat_dim, shape=list(shapes), name=name)[0]


@RegisterGradient("Pack")
def _pack_grad(op: Operation, grad: Any) -> list[Any]:
    return array_ops.unstack(_dense(grad), num=op.get_attr("N"), axis=op.get_attr("axis"))


@RegisterGradient("Unpack")
def _unpack_grad(op: Operation, *grads: Any) -> Any:
    return array_ops.stack(_fill_none(op, grads), axis=op.get_attr("axis"))


@RegisterGradient("Split")
def _split_grad(op: Operation, *grads: Any) -> list[Any]:
    return [None, array_ops.concat(_fill_none(op, grads), op.inputs[0])]


@RegisterGradient("SplitV")
def _split_v_grad(op: Operation, *grads: Any) -> list[Any]:
    return [array_ops.concat(_fill_none(op, grads), op.inputs[2]), None, None]


@RegisterGradient("Tile")
def _tile_grad(op: Operation, grad: Any) -> list[Any]:
    multiples = op.inputs[1]
    input_shape = array_ops.shape(op.inputs[0], out_type=multiples.dtype.base_dtype)
    # Interleave [m0, d0, m1, d1, ...]; summing the even axes undoes the tiling.
    split_shape = array_ops.reshape(
        array_ops.transpose(array_ops.stack([multiples, input_shape])), [-1]
    )
    axes = array_ops.range(0, array_ops.size(split_shape), 2)
    input_grad = math_ops.reduce_sum(array_ops.reshape(_dense(grad), split_shape), axes)
    input_grad.set_shape(op.inputs[0].shape)
    return [input_grad, None]


@RegisterGradient("Slice")
def _slice_grad(op: Operation, grad: Any) -> list[Any]:
    x, begin = op.inputs[0], op.inputs[1]
    index_type = begin.dtype.base_dtype
    m = math_ops
    pad_shape = array_ops.stack([array_ops.rank(x), 1])
    before = array_ops.reshape(begin, pad_shape)
    remaining = m.subtract(
        m.subtract(
            array_ops.shape(x, out_type=index_type),
            array_ops.shape(op.outputs[0], out_type=index_type),
        ),
        begin,
    )
    after = array_ops.reshape(remaining, pad_shape)
    paddings = array_ops.concat([before, after], 1)
    return [array_ops.pad(_dense(grad), paddings), None, None]


def _masks(op: Operation) -> dict[str, int]:
    return {
        k: op.get_attr(k)
        for k in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")
    }


@RegisterGradient("StridedSlice")
def _strided_slice_grad(op: Operation, grad: Any) -> list[Any]:

    x, begin, end, strides = op.inputs
    shape = array_ops.shape(x, out_type=begin.dtype.base_dtype)
    dx = apply_op(
        "StridedSliceGrad",
        shape=shape,
        begin=begin,
        end=end,
        strides=strides,
        dy=_dense(grad),
        **_masks(op),
    )
    return [dx, None, None, None]


@RegisterGradient("StridedSliceGrad")
def _strided_slice_grad_grad(op: Operation, grad: Any) -> list[Any]:
    _, begin, end, strides, _ = op.inputs
    return [
        None,
        None,
        None,
        None,
        array_ops.strided_slice(_dense(grad), begin, end, strides, **_masks(op)),
    ]


@RegisterGradient("GatherV2")
def _gather_v2_grad(op: Operation, grad: Any) -> list[Any]:
    params, indices, axis = op.inputs
    with op.graph.colocate_with(params):
        params_shape = array_ops.shape(params)
    indices_size = array_ops.expand_dims(array_ops.size(indices), 0)
    flat_indices = array_ops.reshape(indices, indices_size)
    if static_int(axis) == 0:
        values_shape = array_ops.concat([indices_size, params_shape[1:]], 0)
        values = array_ops.reshape(_dense(grad), values_shape)
        return [IndexedSlices(values, flat_indices, params_shape), None, None]
    # Move `axis` to the front, sum rows by index, and move it back.
    outer_shape = params_shape[:axis]
    inner_shape = params_shape[axis:][1:]
    values_shape = array_ops.concat([outer_shape, [-1], inner_shape], 0)
    values_dims = array_ops.size(values_shape)
    axis_dims = array_ops.size(outer_shape)
    outer_axes = array_ops.range(axis_dims)
    inner_axes = array_ops.range(axis_dims, values_dims)[1:]
    perm = array_ops.concat([array_ops.expand_dims(axis_dims, 0), outer_axes, inner_axes], 0)
    values = array_ops.transpose(array_ops.reshape(_dense(grad), values_shape), perm)
    summed = math_ops.unsorted_segment_sum(values, flat_indices, params_shape[axis])
    params_grad = array_ops.transpose(summed, array_ops.invert_permutation(perm))
    params_grad.set_shape(params.shape)
    return [params_grad, None, None]


@RegisterGradient("Select")
def _select_grad(op: Operation, grad: Any) -> list[Any]:
    c, x = op.inputs[0], op.inputs[1]
    grad = _dense(grad)
    zeros = array_ops.zeros_like(x)
    return [None, array_ops.where(c, grad, zeros), array_ops.where(c, zeros, grad)]


@RegisterGradient("Pad")
def _pad_grad(op: Operation, grad: Any) -> list[Any]:
    x, paddings = op.inputs[0], op.inputs[1]
    index_type = paddings.dtype.base_dtype
    before = array_ops.slice(paddings, [0, 0], array_ops.stack([array_ops.rank(x), 1]))
    begin = array_ops.reshape(before, [-1])
    sizes = array_ops.shape(x, out_type=index_type)
    x_grad = array_ops.slice(_dense(grad), begin, sizes)
    return [x_grad, None] + [None] * (len(op.inputs) - 2)


RegisterGradient("PadV2")(_pad_grad)


@RegisterGradient("DynamicStitch")
def _dynamic_stitch_grad(op: Operation, grad: Any) -> list[Any]:
    n = len(op.inputs) // 2
    grad = _dense(grad)
    return [None] * n + [array_ops.gather(grad, op.inputs[i]) for i in range(n)]


@RegisterGradient("ReverseV2")
def _reverse_v2_grad(op: Operation, grad: Any) -> list[Any]:
    return [array_ops.reverse_v2(_dense(grad), op.inputs[1]), None]


@RegisterGradient("Fill")
def _fill_grad(op: Operation, grad: Any) -> list[Any]:
    return [None, math_ops.reduce_sum(_dense(grad))]


for _op_type in (
    "Shape",
    "Size",
    "Rank",
    "ZerosLike",
    "OnesLike",
    "OneHot",
    "Where",
    "Range",
    "InvertPermutation",
    "Const",
    "Placeholder",
    "StopGradient",
    "Unique",
    "ConcatOffset",
):
    no_gradient(_op_type)
