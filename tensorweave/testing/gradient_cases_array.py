"""Gradient-check cases of the array ops (consumed by the gradient checker tests).

Each case builds a small float64 graph around one array op; indices, conditions and
shapes are constants inside `build`, so only the float inputs are differentiated.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops import array_ops, constant_op, logging_ops
from tensorweave.testing.gradient_case import GradientCase


def _split_concat(parts: list[Any], axis: int) -> Any:
    return array_ops.concat(list(reversed(parts)), axis)


def _strided_slice_grad(dy: Any) -> Any:
    # The gradient of x[1:4:2, ::-1] for x of shape [5, 3].
    return apply_op(
        "StridedSliceGrad",
        shape=[5, 3],
        begin=[1, 0],
        end=[4, 0],
        strides=[2, -1],
        dy=dy,
        end_mask=2,
        begin_mask=2,
    )


def _select_cond(shape: tuple[int, ...]) -> Any:
    rng = np.random.RandomState(len(shape))
    return constant_op.constant(rng.rand(*shape) > 0.5)


CASES: list[GradientCase] = [
    GradientCase("Identity", array_ops.identity, ((2, 3),)),
    GradientCase(
        "PlaceholderWithDefault",
        lambda x: array_ops.placeholder_with_default(x, [None, 3]),
        ((2, 3),),
    ),
    GradientCase("Reshape", lambda x: array_ops.reshape(x, [3, 2]), ((2, 3),), "static"),
    GradientCase("Reshape", lambda x: array_ops.reshape(x, [-1, 4]), ((2, 3, 4),), "infer"),
    GradientCase(
        "Reshape",
        lambda x: array_ops.reshape(x, [array_ops.shape(x)[0], -1]),
        ((3, 2, 2),),
        "dynamic",
    ),
    GradientCase("ExpandDims", lambda x: array_ops.expand_dims(x, 0), ((3,),), "front"),
    GradientCase("ExpandDims", lambda x: array_ops.expand_dims(x, -1), ((2, 3),), "back"),
    GradientCase("Squeeze", array_ops.squeeze, ((1, 3, 1),), "all"),
    GradientCase("Squeeze", lambda x: array_ops.squeeze(x, [1]), ((2, 1, 3),), "axis"),
    GradientCase("Transpose", array_ops.transpose, ((2, 3),), "default"),
    GradientCase("Transpose", lambda x: array_ops.transpose(x, [1, 2, 0]), ((2, 3, 4),), "perm"),
    GradientCase("ConcatV2", lambda a, b: array_ops.concat([a, b], 1), ((2, 3), (2, 2)), "axis1"),
    GradientCase(
        "ConcatV2",
        lambda a, b, c: array_ops.concat([a, b, c], 0),
        ((1, 3), (2, 3), (3, 3)),
        "three",
    ),
    GradientCase(
        "ConcatV2", lambda a, b: array_ops.concat([a, b], -1), ((2, 1), (2, 2)), "negative"
    ),
    GradientCase("Pack", lambda a, b: array_ops.stack([a, b]), ((3,), (3,)), "axis0"),
    GradientCase(
        "Pack", lambda a, b, c: array_ops.stack([a, b, c], axis=1), ((2, 3),) * 3, "axis1"
    ),
    GradientCase("Unpack", lambda x: _split_concat(array_ops.unstack(x), 0), ((3, 4),), "all"),
    GradientCase("Unpack", lambda x: array_ops.unstack(x, axis=1)[1], ((2, 3),), "one_output"),
    GradientCase("Tile", lambda x: array_ops.tile(x, [2, 1]), ((2, 3),), "rows"),
    GradientCase("Tile", lambda x: array_ops.tile(x, [3, 2]), ((2, 2),), "both"),
    GradientCase("Slice", lambda x: array_ops.slice(x, [1, 2], [2, -1]), ((4, 5),)),
    GradientCase("StridedSlice", lambda x: x[1:3, ::-1], ((4, 3),), "reverse"),
    GradientCase("StridedSlice", lambda x: x[..., 1], ((2, 3, 4),), "ellipsis_shrink"),
    GradientCase("StridedSlice", lambda x: x[:, None, 2:], ((2, 4),), "newaxis"),
    GradientCase("StridedSlice", lambda x: x[-1, ::2], ((3, 5),), "stride"),
    GradientCase("StridedSliceGrad", _strided_slice_grad, ((2, 3),)),
    GradientCase("GatherV2", lambda p: array_ops.gather(p, [0, 2, 0]), ((3, 2),), "repeated"),
    GradientCase(
        "GatherV2", lambda p: array_ops.gather(p, [[1, 0], [1, 1]]), ((2, 3),), "indices2d"
    ),
    GradientCase(
        "GatherV2", lambda p: array_ops.gather(p, [2, 0, 2], axis=1), ((2, 3, 2),), "axis1"
    ),
    GradientCase(
        "Select",
        lambda x, y: array_ops.where(_select_cond((2, 3)), x, y),
        ((2, 3), (2, 3)),
        "same_shape",
    ),
    GradientCase(
        "Select",
        lambda x, y: array_ops.where(constant_op.constant([True, False, True]), x, y),
        ((3, 2), (3, 2)),
        "vector_cond",
    ),
    GradientCase("Pad", lambda x: array_ops.pad(x, [[1, 0], [2, 1]]), ((2, 3),)),
    GradientCase("PadV2", lambda x: array_ops.pad(x, [[0, 2]], constant_values=0.5), ((3,),)),
    GradientCase(
        "Split", lambda x: _split_concat(array_ops.split(x, 3, axis=1), 1), ((4, 6),), "all"
    ),
    GradientCase("Split", lambda x: array_ops.split(x, 2)[0], ((4, 3),), "one_output"),
    GradientCase(
        "SplitV",
        lambda x: _split_concat(array_ops.split(x, [1, -1, 2]), 0),
        ((6, 2),),
    ),
    GradientCase(
        "DynamicStitch",
        lambda a, b: array_ops.dynamic_stitch(
            [constant_op.constant([0, 2]), constant_op.constant([[1], [3]])], [a, b]
        ),
        ((2, 3), (2, 1, 3)),
    ),
    GradientCase("ReverseV2", lambda x: array_ops.reverse(x, [1]), ((2, 3),), "one_axis"),
    GradientCase("ReverseV2", lambda x: array_ops.reverse(x, [0, -1]), ((2, 3, 4),), "two_axes"),
    GradientCase("Fill", lambda v: array_ops.fill([2, 3], array_ops.reshape(v, [])), ((1,),)),
    GradientCase("Print", lambda x: logging_ops.Print(x, [x], message="grad check"), ((2, 3),)),
]

assert all(c.input_shapes and all(isinstance(s, tuple) for s in c.input_shapes) for c in CASES)
_ = dtypes  # the cases are float64: the checker's placeholders set the dtype
