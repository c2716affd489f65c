"""Joining and splitting op definitions: Concat, Pack, Unpack, Split, Tile, Pad, ...

Follows TensorFlow's `core/ops/array_ops.cc` (op types, input/attr names and defaults).
"""

from __future__ import annotations

import numpy as np

from tensorweave.framework.op_def import register_op
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.shape_inference import (
    merge_shapes,
    op_error,
    static_int,
    static_shape_value,
    static_value,
    with_rank,
    with_rank_at_least,
)
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape

_INDEX = "{int32, int64} = DT_INT32"


def _axis_in(op: Operation, axis: int, rank: int) -> int:
    if axis < -rank or axis >= rank:
        raise op_error(op, f"Invalid axis: {axis}; must be in [{-rank},{rank})")
    return axis + rank if axis < 0 else axis


@register_op(
    "Pack",
    inputs=["values: N * T"],
    outputs=["output: T"],
    attrs=["N: int >= 1", "T: type", "axis: int = 0"],
)
def _pack_shape(op: Operation) -> list[TensorShape]:
    inputs = op.inputs
    cur = inputs[-1].shape
    for i in range(len(inputs) - 2, -1, -1):
        cur = merge_shapes(
            op, inputs[i].shape, cur, f"\n\tFrom merging shape {i} with other shapes."
        )
    if cur.ndims is None:
        return [unknown_shape()]
    axis = _axis_in(op, op.get_attr("axis"), cur.ndims + 1)
    dims = cur.as_list()
    return [TensorShape(dims[:axis] + [len(inputs)] + dims[axis:])]


@register_op(
    "Unpack",
    inputs=["value: T"],
    outputs=["output: num * T"],
    attrs=["num: int >= 0", "T: type", "axis: int = 0"],
)
def _unpack_shape(op: Operation) -> list[TensorShape]:
    s = op.inputs[0].shape
    num = op.get_attr("num")
    if s.ndims is None:
        return [unknown_shape()] * num
    axis = _axis_in(op, op.get_attr("axis"), s.ndims)
    dims = s.as_list()
    if dims[axis] is not None and dims[axis] != num:
        raise op_error(op, f"Dimension must be {num} but is {dims[axis]}")
    return [TensorShape(dims[:axis] + dims[axis + 1 :])] * num


@register_op(
    "ConcatV2",
    inputs=["values: N * T", "axis: Tidx"],
    outputs=["output: T"],
    attrs=["N: int >= 2", "T: type", f"Tidx: {_INDEX}"],
)
def _concat_shape(op: Operation) -> list[TensorShape]:
    values = [t.shape for t in op.inputs[:-1]]
    with_rank(op, op.inputs[-1].shape, 0)
    axis = static_int(op.inputs[-1])
    if axis is None:
        rank = next((s.ndims for s in values if s.ndims is not None), None)
        if rank is None:
            return [unknown_shape()]
        if rank == 0:
            raise op_error(op, "Can't concatenate scalars (use tf.stack instead)")
        for s in values:
            with_rank(op, s, rank)
        return [unknown_shape(rank)]
    min_rank = -axis if axis < 0 else axis + 1
    before: TensorShape | None = None
    after: TensorShape | None = None
    middle: int | None = 0
    for s in reversed(values):
        with_rank_at_least(op, s, min_rank)
        if s.ndims is None:
            b, m, a = unknown_shape(), None, unknown_shape()
        else:
            dims = s.as_list()
            k = axis + s.ndims if axis < 0 else axis
            b, m, a = TensorShape(dims[:k]), dims[k], TensorShape(dims[k + 1 :])
        before = b if before is None else merge_shapes(op, b, before)
        after = a if after is None else merge_shapes(op, a, after)
        middle = None if middle is None or m is None else middle + m
    if before.ndims is None or after.ndims is None:
        rank = next((s.ndims for s in values if s.ndims is not None), None)
        if rank is None:
            return [unknown_shape()]
        return [unknown_shape(rank)]
    return [before.concatenate([middle]).concatenate(after)]


register_op(
    "ConcatOffset",
    inputs=["concat_dim: int32", "shape: N * int32"],
    outputs=["offset: N * int32"],
    attrs=["N: int >= 2"],
    shape_fn=lambda op: [t.shape for t in op.inputs[1:]],
)


def _split_dim(op: Operation, tensor: Tensor, rank: int | None) -> int | None:
    with_rank(op, tensor.shape, 0)
    d = static_int(tensor)
    if d is None or rank is None:
        return None
    if d < -rank or d >= rank:
        raise op_error(
            op, f"Dimension size, given by scalar input {d} must be in range [{-rank}, {rank})"
        )
    return d + rank if d < 0 else d


@register_op(
    "Split",
    inputs=["split_dim: int32", "value: T"],
    outputs=["output: num_split * T"],
    attrs=["num_split: int >= 1", "T: type"],
)
def _split_shape(op: Operation) -> list[TensorShape]:
    value = op.inputs[1].shape
    n = op.get_attr("num_split")
    d = _split_dim(op, op.inputs[0], value.ndims)
    if d is None:
        return [unknown_shape(value.ndims)] * n
    dims = value.as_list()
    if dims[d] is not None:
        if dims[d] % n:
            raise op_error(
                op,
                f"Dimension size must be evenly divisible by {n} but is {dims[d]}\n\tNumber of "
                "ways to split should evenly divide the split dimension",
            )
        dims[d] //= n
    return [TensorShape(dims)] * n


@register_op(
    "SplitV",
    inputs=["value: T", "size_splits: Tlen", "split_dim: int32"],
    outputs=["output: num_split * T"],
    attrs=["num_split: int >= 1", "T: type", "Tlen: {int32, int64} = DT_INT64"],
)
def _split_v_shape(op: Operation) -> list[TensorShape]:
    value = op.inputs[0].shape
    n = op.get_attr("num_split")
    d = _split_dim(op, op.inputs[2], value.ndims)
    sizes = static_value(op.inputs[1])
    if value.ndims is None:
        return [unknown_shape()] * n
    if value.ndims == 0:
        raise op_error(op, "Can't split scalars")
    if d is None:
        return [unknown_shape(value.ndims)] * n
    dims = value.as_list()
    if sizes is None:
        return [TensorShape(dims[:d] + [None] + dims[d + 1 :])] * n
    sizes = [int(s) for s in sizes.reshape(-1)]
    if len(sizes) != n:
        raise op_error(op, "Length of size_splits should be equal to num_outputs")
    if sizes.count(-1) > 1:
        raise op_error(op, "size_splits can only have one -1")
    total = sum(s for s in sizes if s != -1)
    out = []
    for s in sizes:
        if s == -1:
            s = None if dims[d] is None else dims[d] - total
        out.append(TensorShape(dims[:d] + [s] + dims[d + 1 :]))
    if dims[d] is not None and (total > dims[d] if -1 in sizes else total != dims[d]):
        raise op_error(
            op,
            f"can't split axis of size {dims[d]} into pieces of size "
            f"[{','.join(str(s) for s in sizes)}]",
        )
    return out


@register_op(
    "Tile",
    inputs=["input: T", "multiples: Tmultiples"],
    outputs=["output: T"],
    attrs=["T: type", f"Tmultiples: {_INDEX}"],
)
def _tile_shape(op: Operation) -> list[TensorShape]:
    value = op.inputs[0].shape
    with_rank(op, op.inputs[1].shape, 1)
    multiples = static_shape_value(op.inputs[1])
    if value.ndims is not None:
        if multiples.ndims is not None and multiples.ndims != value.ndims:
            raise op_error(op, f"Shape must be rank {value.ndims} but is rank {multiples.ndims}")
        multiples = with_rank(op, multiples, value.ndims)
    if multiples.ndims is None:
        return [unknown_shape()]
    value = with_rank(op, value, multiples.ndims)
    return [
        TensorShape(
            [
                None if a is None or b is None else a * b
                for a, b in zip(value.as_list(), multiples.as_list())
            ]
        )
    ]


def _pad_shape(op: Operation) -> list[TensorShape]:
    paddings = with_rank(op, op.inputs[1].shape, 2)
    n_dim, cols = paddings.as_list()
    if cols is not None and cols != 2:
        raise op_error(op, f"Dimension must be 2 but is {cols}")
    value = op.inputs[0].shape
    if n_dim is not None:
        value = with_rank(op, value, n_dim)
    elif value.ndims is not None:
        n_dim = value.ndims
    pads = static_value(op.inputs[1])
    if pads is None:
        return [unknown_shape(n_dim)]
    value = with_rank(op, value, pads.shape[0])
    if np.any(pads < 0):
        raise op_error(op, "Paddings must be non-negative")
    return [
        TensorShape(
            [
                None if d is None else d + int(p[0]) + int(p[1])
                for d, p in zip(value.as_list(), pads)
            ]
        )
    ]


register_op(
    "Pad",
    inputs=["input: T", "paddings: Tpaddings"],
    outputs=["output: T"],
    attrs=["T: type", f"Tpaddings: {_INDEX}"],
    shape_fn=_pad_shape,
)
register_op(
    "PadV2",
    inputs=["input: T", "paddings: Tpaddings", "constant_values: T"],
    outputs=["output: T"],
    attrs=["T: type", f"Tpaddings: {_INDEX}"],
    shape_fn=_pad_shape,
)


@register_op(
    "ReverseV2",
    inputs=["tensor: T", "axis: Tidx"],
    outputs=["output: T"],
    attrs=[
        f"Tidx: {_INDEX}",
        "T: {uint8, int8, uint16, int16, int32, int64, bool, half, float, double, complex64, "
        "complex128, string}",
    ],
)
def _reverse_shape(op: Operation) -> list[TensorShape]:
    value = op.inputs[0].shape
    with_rank(op, op.inputs[1].shape, 1)
    if value.ndims is not None and value.ndims > 8:
        raise op_error(op, "reverse does not work on tensors with more than 8 dimensions")
    axes = static_value(op.inputs[1])
    if axes is not None and value.ndims is not None:
        r = value.ndims
        seen = set()
        for i, a in enumerate(int(a) for a in axes.reshape(-1)):
            c = a + r if a < 0 else a
            if c < 0 or c >= r:
                raise op_error(op, f"'axis'[{i}] = {a} is out of valid range [0, {r - 1}")
            if c in seen:
                raise op_error(op, f"axis {c} specified more than once.")
            seen.add(c)
    return [value]


register_op(
    "Unique",
    inputs=["x: T"],
    outputs=["y: T", "idx: out_idx"],
    attrs=["T: type", f"out_idx: {_INDEX}"],
    shape_fn=lambda op: [TensorShape([None]), with_rank(op, op.inputs[0].shape, 1)],
)
