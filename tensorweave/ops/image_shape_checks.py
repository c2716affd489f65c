"""Shape checks shared by the `tf.image` functions (TF 1.x `image_ops_impl.py`'s
`_CheckAtLeast3DImage`, `_assert` and `_ImageDimensions`)."""

from __future__ import annotations

from typing import Any

from tensorweave.framework.operation import Tensor
from tensorweave.ops.array_ops_join import unstack
from tensorweave.ops.array_ops_shape import shape
from tensorweave.ops.control_dependency_ops import with_dependencies
from tensorweave.ops.logging_ops import Assert, assert_positive
from tensorweave.ops.variables import Variable


def is_tensor(x: Any) -> bool:
    """Whether `x` is a graph value (tensor or variable) rather than a Python number."""
    return isinstance(x, Tensor | Variable)


def static_assert(condition: Any, message: str) -> list:
    """`[Assert(condition)]` for a tensor condition; for a Python one, `[]` or ValueError."""
    if is_tensor(condition):
        return [Assert(condition, [message])]
    if not condition:
        raise ValueError(message)
    return []


def check_at_least_3d(image: Tensor) -> list:
    """The run-time checks that `image`'s inner three dimensions are positive (none when
    they are known statically).

    Raises:
      ValueError: if the static rank is below 3 or a static inner dimension is 0.
    """
    static = image.get_shape()
    try:
        known = static.with_rank(3) if static.ndims is None else static.with_rank_at_least(3)
    except ValueError:
        raise ValueError(f"'image' (shape {static}) must be at least three-dimensional.") from None
    inner = known[-3:]
    if any(d.value == 0 for d in inner):
        raise ValueError(f"inner 3 dims of 'image.shape' must be > 0: {known}")
    if inner.is_fully_defined():
        return []
    return [assert_positive(shape(image)[-3:], ["inner 3 dims of 'image.shape' must be > 0."])]


def assert_at_least_3d(image: Tensor) -> Tensor:
    """`image`, depending on `check_at_least_3d`'s run-time checks."""
    checks = check_at_least_3d(image)
    return with_dependencies(checks, image) if checks else image


def image_dimensions(image: Tensor, rank: int) -> list:
    """`image`'s dimensions: Python ints where static, scalar int32 tensors elsewhere."""
    static = image.get_shape()
    if static.is_fully_defined():
        return static.as_list()
    dynamic = unstack(shape(image), rank)
    return [s if s is not None else d
            for s, d in zip(static.with_rank(rank).as_list(), dynamic, strict=True)]
