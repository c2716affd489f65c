"""Shape checks shared by the `tf.image` functions (TF 1.x `image_ops_impl.py`'s
`_CheckAtLeast3DImage`, `_assert` and `_ImageDimensions`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorweave.framework.operation import Tensor
from tensorweave.ops.array_ops_join import unstack
from tensorweave.ops.array_ops_shape import rank, shape
from tensorweave.ops.control_dependency_ops import with_dependencies
from tensorweave.ops.control_flow_ops import cond
from tensorweave.ops.cwise_binary_ops import equal
from tensorweave.ops.logging_ops import Assert, assert_positive
from tensorweave.ops.tensor_helpers import is_tensor


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


def check_rank_3_or_4(image: Tensor) -> int | None:
    """`image`'s static rank (None if unknown).

    Raises:
      ValueError: if the static rank is known and not 3 or 4.
    """
    ndims = image.get_shape().ndims
    if ndims not in (None, 3, 4):
        raise ValueError(f"'image' (shape {image.get_shape()}) must have either 3 or 4 "
                         "dimensions.")
    return ndims


def by_rank(image: Tensor, rank3: Callable[[], Any], rank4: Callable[[], Any]) -> Any:
    """`rank3()` or `rank4()` by `image`'s rank (3 or 4): chosen while building when the
    rank is static, else by a `cond` on the run-time rank."""
    ndims = image.get_shape().ndims
    if ndims is None:
        return cond(equal(rank(image), 3), rank3, rank4)
    return rank3() if ndims == 3 else rank4()


def image_dimensions(image: Tensor, rank: int) -> list:
    """`image`'s dimensions: Python ints where static, scalar int32 tensors elsewhere."""
    static = image.get_shape()
    if static.is_fully_defined():
        return static.as_list()
    dynamic = unstack(shape(image), rank)
    return [s if s is not None else d
            for s, d in zip(static.with_rank(rank).as_list(), dynamic, strict=True)]
