"""Canonicalisation of `StridedSlice` arguments (TensorFlow's `ValidateStridedSliceOp`).

Shared by the op's static shape function and its NumPy kernels; follows
`core/util/strided_slice_op.cc`.

A *sparse* spec (`begin`, `end`, `strides` and the five masks, as the op receives them) is
expanded into a *dense* spec with one entry per input dimension: the ellipsis becomes full
ranges, `tf.newaxis` entries are remembered for the final reshape, and each interval is
clamped into range. Unknown input dimensions (None) and unknown `begin`/`end` values are
allowed for static shape inference; they give unknown output dimensions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

_NEW_AXIS = -1
_SHRINK_AXIS = -2


@dataclasses.dataclass(frozen=True)
class StridedSliceSpec:
    """A validated, dense strided slice.

    Attributes:
      begin: canonical start per input dimension (None when not known statically).
      end: canonical stop per input dimension (None when not known statically).
      strides: stride per input dimension.
      shrink: per input dimension, whether it is indexed by a scalar (and dropped).
      processing_shape: the sliced shape before new axes are added and shrunk axes dropped.
      final_shape: the output shape.
    """

    begin: tuple[int | None, ...]
    end: tuple[int | None, ...]
    strides: tuple[int, ...]
    shrink: tuple[bool, ...]
    processing_shape: tuple[int | None, ...]
    final_shape: tuple[int | None, ...]

    def numpy_index(self) -> tuple[slice, ...]:
        """A NumPy basic index selecting the processing shape (shrunk axes kept as size 1).

        Only valid when every `begin`, `end` and input dimension is known.
        """
        index = []
        for b, e, s, size in zip(self.begin, self.end, self.strides, self.processing_shape):
            if size == 0:
                index.append(slice(0, 0, 1))
            elif s < 0 and e is not None and e < 0:
                index.append(slice(b, None, s))
            else:
                index.append(slice(b, e, s))
        return tuple(index)


def _bit(mask: int, i: int) -> bool:
    return bool(mask & (1 << i))


def validate_strided_slice(
    input_shape: Sequence[int | None],
    begin: Sequence[int] | None,
    end: Sequence[int] | None,
    strides: Sequence[int],
    begin_mask: int = 0,
    end_mask: int = 0,
    ellipsis_mask: int = 0,
    new_axis_mask: int = 0,
    shrink_axis_mask: int = 0,
) -> StridedSliceSpec:
    """Expands and checks a strided slice of a tensor of (possibly partial) `input_shape`.

    Args:
      input_shape: the input's dimensions (None for unknown ones); the rank must be known.
      begin: sparse start indices, or None when not known statically.
      end: sparse stop indices, or None when not known statically.
      strides: sparse strides (must be known).
      begin_mask: bit i set: ignore `begin[i]`.
      end_mask: bit i set: ignore `end[i]`.
      ellipsis_mask: bit i set: entry i is `...`.
      new_axis_mask: bit i set: entry i inserts a dimension of size 1.
      shrink_axis_mask: bit i set: entry i indexes by `begin[i]` and drops the dimension.

    Returns:
      The dense `StridedSliceSpec`.

    Raises:
      ValueError: with TensorFlow's messages, for several ellipses, zero strides, too many
        indices, or a scalar index out of bounds.
    """
    _check_sparse_spec(begin, end, strides, ellipsis_mask)
    spec = _build_dense_spec(
        len(input_shape),
        begin,
        end,
        strides,
        begin_mask,
        end_mask,
        ellipsis_mask,
        new_axis_mask,
        shrink_axis_mask,
    )
    processing = [_canonicalize_dim(spec, i, dim) for i, dim in enumerate(input_shape)]
    final = [1 if g == _NEW_AXIS else processing[g] for g in spec.gather if g != _SHRINK_AXIS]
    return StridedSliceSpec(
        tuple(spec.begin),
        tuple(spec.end),
        tuple(spec.strides),
        tuple(spec.shrink),
        tuple(processing),
        tuple(final),
    )


@dataclasses.dataclass
class _DenseSpec:
    """A sparse spec expanded to one entry per input dimension (TF's `StridedSliceDenseSpec`).

    `gather` lists, per entry of the sparse spec after ellipsis expansion, the input
    dimension it selects, `_NEW_AXIS` or `_SHRINK_AXIS`.
    """

    begin: list[int | None]
    end: list[int | None]
    strides: list[int]
    begin_mask: list[bool]
    end_mask: list[bool]
    shrink: list[bool]
    gather: list[int]


def _check_sparse_spec(
    begin: Sequence[int] | None, end: Sequence[int] | None, strides: Sequence[int], ellipsis: int
) -> None:
    """Raises TensorFlow's ValueErrors for mismatched lengths, ellipses and zero strides."""
    n = len(strides)
    if begin is not None and len(begin) != n or end is not None and len(end) != n:
        raise ValueError(
            "Expected begin, end, and strides to be 1D equal size tensors, but got shapes "
            f"[{n if begin is None else len(begin)}], [{n if end is None else len(end)}], "
            f"and [{n}] instead."
        )
    if bin(ellipsis & ((1 << n) - 1)).count("1") > 1:
        raise ValueError("Multiple ellipses in slice spec not allowed")
    for i, s in enumerate(strides):
        if int(s) == 0:
            raise ValueError(f"strides[{i}] must be non-zero")


def _build_dense_spec(
    dims: int,
    begin: Sequence[int] | None,
    end: Sequence[int] | None,
    strides: Sequence[int],
    begin_mask: int,
    end_mask: int,
    ellipsis_mask: int,
    new_axis_mask: int,
    shrink_axis_mask: int,
) -> _DenseSpec:
    """Expands the ellipsis (an implicit one at the end if none) into full ranges."""
    n = len(strides)
    ellipsis_seen = False
    new_axes_after_ellipsis = 0
    for i in range(n):
        if ellipsis_seen and _bit(new_axis_mask, i):
            new_axes_after_ellipsis += 1
        if _bit(ellipsis_mask, i):
            ellipsis_seen = True
    sparse_n = n
    if not ellipsis_seen:
        ellipsis_mask |= 1 << n
        sparse_n = n + 1
    spec = _DenseSpec(
        [0] * dims, [0] * dims, [1] * dims, [False] * dims, [False] * dims, [False] * dims, []
    )
    full = 0
    for i in range(sparse_n):
        if _bit(ellipsis_mask, i):
            stop = min(dims - (sparse_n - i) + 1 + new_axes_after_ellipsis, dims)
            while full < stop:
                spec.begin_mask[full] = spec.end_mask[full] = True
                spec.gather.append(full)
                full += 1
        elif _bit(new_axis_mask, i):
            spec.gather.append(_NEW_AXIS)
        else:
            if full >= dims:
                raise ValueError(
                    f"Index out of range using input dim {full}; input has only {dims} dims"
                )
            spec.begin[full] = None if begin is None else int(begin[i])
            spec.end[full] = None if end is None else int(end[i])
            spec.strides[full] = int(strides[i])
            spec.begin_mask[full] = _bit(begin_mask, i)
            spec.end_mask[full] = _bit(end_mask, i)
            spec.shrink[full] = _bit(shrink_axis_mask, i)
            spec.gather.append(_SHRINK_AXIS if spec.shrink[full] else full)
            full += 1
    return spec


def _canonicalize_dim(spec: _DenseSpec, i: int, dim: int | None) -> int | None:
    """Clamps dense entry `i` into input dimension `dim` (in place); returns its sliced size.

    Raises:
      ValueError: if a scalar index (shrink axis) is out of bounds.
    """
    stride, shrink = spec.strides[i], spec.shrink[i]
    b, e = spec.begin[i], spec.end[i]
    if dim is None:
        spec.begin[i] = spec.end[i] = None
        return 1 if shrink else None
    if b is not None and e is not None:
        if shrink:
            fwd = b + dim if b < 0 else b
            if fwd < 0 or fwd >= dim:
                raise ValueError(f"slice index {b} of dimension {i} out of bounds.")
            b, e = fwd, fwd + 1
        else:
            b = _canonical(b, dim, stride, spec.begin_mask[i], True)
            e = _canonical(e, dim, stride, spec.end_mask[i], False)
        spec.begin[i], spec.end[i] = b, e
        length = e - b
    elif shrink:
        length = 1
        stride = 1
    elif spec.begin_mask[i] and spec.end_mask[i]:
        length = -dim if stride < 0 else dim
        spec.begin[i] = _canonical(0, dim, stride, True, True)
        spec.end[i] = _canonical(0, dim, stride, True, False)
    else:
        return None
    if length == 0 or (length < 0) != (stride < 0):
        return 0
    return length // stride + (1 if length % stride else 0)


def _canonical(x: int, dim: int, stride: int, masked: bool, is_begin: bool) -> int:
    if masked:
        if stride > 0:
            return 0 if is_begin else dim
        return dim - 1 if is_begin else -1
    fwd = x + dim if x < 0 else x
    lo, hi = (0, dim) if stride > 0 else (-1, dim - 1)
    return lo if fwd < lo else hi if fwd > hi else fwd
