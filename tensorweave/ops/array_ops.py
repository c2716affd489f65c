"""Array ops: placeholders, identity, shapes, slicing, joining, gathering (TF 1.x style).

Follows TensorFlow 1.x `array_ops`. The ops live in sibling modules re-exported
here: `array_ops_shape` (shapes, reshaping, fills), `array_ops_join`
(stack/concat/split/tile/pad/reverse/unique and the auto-packing of lists of tensors),
`array_ops_index` (slicing and `Tensor.__getitem__`) and `array_ops_gather` (gather,
one_hot, where, range, dynamic_stitch, boolean_mask). The op definitions are in
`framework.op_defs.array*`, the gradients in `array_grad`.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.ops.array_ops_gather import (
    boolean_mask,
    dynamic_stitch,
    gather,
    one_hot,
    range,
    where,
)
from tensorweave.ops.array_ops_index import (
    _slice_helper,  # noqa: F401  (TF's name)
    newaxis,
    slice,
    strided_slice,
)
from tensorweave.ops.array_ops_join import (
    concat,
    pad,
    reverse,
    reverse_v2,
    split,
    stack,
    tile,
    unique,
    unstack,
)
from tensorweave.ops.array_ops_shape import (
    expand_dims,
    fill,
    invert_permutation,
    ones,
    ones_like,
    rank,
    reshape,
    shape,
    shape_internal,  # noqa: F401  (TF's name)
    size,
    squeeze,
    transpose,
    zeros,
    zeros_like,
)


def placeholder(dtype: Any, shape: Any = None, name: str | None = None) -> Any:
    """A tensor that must be fed at run time (follows `tf.placeholder`).

    Args:
      dtype: element type.
      shape: static shape, partial (`[None, 3]`) or None for any shape.
      name: op name.

    Returns:
      A `Tensor` of `dtype` and `shape`; running it without a feed raises
      `InvalidArgumentError` naming the placeholder.
    """
    shape = unknown_shape() if shape is None else TensorShape(shape)
    return apply_op("Placeholder", dtype=dtypes.as_dtype(dtype), shape=shape, name=name)


def placeholder_with_default(input: Any, shape: Any, name: str | None = None) -> Any:  # noqa: A002
    """A tensor that is `input` unless fed (follows `tf.placeholder_with_default`)."""
    value = convert_to_tensor(input)
    return apply_op(
        "PlaceholderWithDefault",
        input=value,
        dtype=value.dtype,
        shape=TensorShape(shape),
        name=name,
    )


def identity(input: Any, name: str | None = None) -> Any:  # noqa: A002
    """Returns a tensor with the same value as `input` (follows `tf.identity`).

    Reading a variable through it takes a snapshot of the variable's value.
    """
    return apply_op("Identity", input=input, name=name)


def stop_gradient(input: Any, name: str | None = None) -> Any:  # noqa: A002
    """`input`, with gradients blocked (follows `tf.stop_gradient`)."""
    return apply_op("StopGradient", input=input, name=name)


__all__ = [
    "placeholder",
    "placeholder_with_default",
    "identity",
    "stop_gradient",
    "expand_dims",
    "fill",
    "invert_permutation",
    "ones",
    "ones_like",
    "rank",
    "reshape",
    "shape",
    "size",
    "squeeze",
    "transpose",
    "zeros",
    "zeros_like",
    "concat",
    "pad",
    "reverse",
    "reverse_v2",
    "split",
    "stack",
    "tile",
    "unique",
    "unstack",
    "boolean_mask",
    "dynamic_stitch",
    "gather",
    "newaxis",
    "one_hot",
    "range",
    "slice",
    "strided_slice",
    "where",
]
