"""More array functions: sequences, sorting, ranges, uniques, broadcasting and searching
(follows TF 1.x `tf.sequence_mask`, `tf.reverse_sequence`, `tf.sort`, `tf.argsort`,
`tf.linspace`, `tf.unique_with_counts`, `tf.setdiff1d`, `tf.broadcast_to`,
`tf.searchsorted`, `tf.meshgrid`, `tf.roll`, `tf.repeat`, ...)."""

from __future__ import annotations

import collections
from typing import Any

import numpy as np

import tensorweave.framework.op_defs  # noqa: F401  (registers the op definitions)
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.shape_inference import static_value
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops import array_ops, constant_op, cwise_ops, reduction_ops
from tensorweave.ops.nn_ops import top_k
from tensorweave.ops.scatter_nd_ops import scatter_nd


def sequence_mask(
    lengths: Any, maxlen: Any = None, dtype: Any = dtypes.bool, name: str | None = None
) -> Tensor:
    """`mask[i..., j] = j < lengths[i...]` (follows `tf.sequence_mask`).

    Args:
      lengths: int `Tensor` [...] of lengths.
      maxlen: int scalar, the size of the new last dimension (default `max(lengths)`).
      dtype: output dtype.
      name: op name.

    Returns:
      `Tensor` [..., maxlen] of `dtype`.

    Raises:
      ValueError: if `maxlen` is not a scalar.
    """
    with graph_mod.name_scope(name, "SequenceMask", [lengths, maxlen]):
        lengths = convert_to_tensor(lengths, name="lengths")
        if maxlen is None:
            maxlen = cwise_ops.maximum(
                constant_op.constant(0, lengths.dtype), reduction_ops.reduce_max(lengths)
            )
        else:
            maxlen = convert_to_tensor(maxlen, name="maxlen")
            if maxlen.shape.ndims is not None and maxlen.shape.ndims != 0:
                raise ValueError("maxlen must be scalar for sequence_mask")
        row = array_ops.range(constant_op.constant(0, maxlen.dtype), maxlen, 1)
        matrix = cwise_ops.cast(array_ops.expand_dims(lengths, -1), maxlen.dtype)
        result = cwise_ops.less(row, matrix)
        if dtypes.as_dtype(dtype) == dtypes.bool:
            return result
        return cwise_ops.cast(result, dtype)


def reverse_sequence(
    input: Any,  # noqa: A002
    seq_lengths: Any,
    seq_axis: Any = None,
    batch_axis: Any = None,
    name: str | None = None,
    seq_dim: Any = None,
    batch_dim: Any = None,
) -> Tensor:
    """Reverses the first `seq_lengths[b]` elements along `seq_axis` of each batch entry `b`
    (follows `tf.reverse_sequence`, op `ReverseSequence`).

    Args:
      input: `Tensor` of rank >= 2.
      seq_lengths: int32/int64 [input.shape[batch_axis]], each <= input.shape[seq_axis].
      seq_axis: the axis reversed.
      batch_axis: the batch axis (default 0).
      name: op name.
      seq_dim: deprecated spelling of seq_axis.
      batch_dim: deprecated spelling of batch_axis.

    Raises:
      ValueError: for invalid axes; InvalidArgumentError at run time for bad lengths.
    """
    seq = seq_axis if seq_axis is not None else seq_dim
    batch = batch_axis if batch_axis is not None else batch_dim
    if seq is None:
        raise ValueError("reverse_sequence needs seq_axis")
    return apply_op(
        "ReverseSequence", input=input, seq_lengths=seq_lengths, seq_dim=seq,
        batch_dim=0 if batch is None else batch, name=name,
    )


def _sort_or_argsort(values: Any, axis: Any, direction: str, return_argsort: bool) -> Tensor:
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f'Unknown direction "{direction}"')
    values = convert_to_tensor(values, name="values")
    axis = static_value(convert_to_tensor(axis))
    if axis is None:
        raise ValueError("axis must be a constant scalar")
    rank = values.shape.ndims
    if rank is None:
        raise ValueError("sort needs a tensor of known rank")
    axis = int(axis) % rank if rank else 0
    if direction == "ASCENDING" and values.dtype.is_unsigned:
        raise ValueError("tf.sort ASCENDING of unsigned integers is not supported")
    key = cwise_ops.negative(values) if direction == "ASCENDING" else values
    perm = None
    if axis != rank - 1:
        perm = list(range(rank))
        perm[axis], perm[-1] = rank - 1, axis
        key = array_ops.transpose(key, perm)
    n = array_ops.shape(key)[-1]
    top, indices = top_k(key, n)
    out = indices if return_argsort else (
        cwise_ops.negative(top) if direction == "ASCENDING" else top
    )
    return array_ops.transpose(out, perm) if perm is not None else out


def sort(values: Any, axis: int = -1, direction: str = "ASCENDING", name: str | None = None):
    """`values` sorted along `axis` (follows `tf.sort`, built on `TopKV2` as TF does).

    Raises:
      ValueError: for an unknown direction or a non-constant axis.
    """
    with graph_mod.name_scope(name, "sort", [values]):
        return _sort_or_argsort(values, axis, direction, False)


def argsort(values: Any, axis: int = -1, direction: str = "ASCENDING", stable: bool = False,
            name: str | None = None) -> Tensor:
    """int32 indices that sort `values` along `axis` (follows `tf.argsort`); ties keep the
    lower index first, so the order is stable."""
    with graph_mod.name_scope(name, "argsort", [values]):
        return _sort_or_argsort(values, axis, direction, True)


def lin_space(start: Any, stop: Any, num: Any, name: str | None = None) -> Tensor:
    """`num` evenly spaced values from `start` to `stop` inclusive (follows `tf.linspace`,
    op `LinSpace`). start/stop: float scalars; num: int32/int64 scalar > 0."""
    return apply_op("LinSpace", start=start, stop=stop, num=num, name=name)


linspace = lin_space

UniqueWithCountsOutput = collections.namedtuple("UniqueWithCountsOutput", ["y", "idx", "count"])


def unique_with_counts(x: Any, out_idx: Any = dtypes.int32, name: str | None = None):
    """The distinct values of the 1-D `x` in order of first appearance, each element's
    position among them, and their counts (follows `tf.unique_with_counts`)."""
    y, idx, count = apply_op("UniqueWithCounts", x=x, out_idx=dtypes.as_dtype(out_idx),
                             name=name)
    return UniqueWithCountsOutput(y, idx, count)


ListDiffOutput = collections.namedtuple("ListDiffOutput", ["out", "idx"])


def setdiff1d(x: Any, y: Any, index_dtype: Any = dtypes.int32, name: str | None = None):
    """The values of 1-D `x` not in `y`, in order, and their positions in `x` (follows
    `tf.setdiff1d`, op `ListDiff`)."""
    out, idx = apply_op("ListDiff", x=x, y=y, out_idx=dtypes.as_dtype(index_dtype), name=name)
    return ListDiffOutput(out, idx)


def broadcast_to(input: Any, shape: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """`input` broadcast to `shape` with NumPy's rules (follows `tf.broadcast_to`)."""
    return apply_op("BroadcastTo", input=input, shape=shape, name=name)


def broadcast_dynamic_shape(shape_x: Any, shape_y: Any) -> Tensor:
    """The broadcast of two 1-D int shape tensors (follows `tf.broadcast_dynamic_shape`)."""
    return apply_op("BroadcastArgs", s0=shape_x, s1=shape_y)


def broadcast_static_shape(shape_x: Any, shape_y: Any) -> TensorShape:
    """The broadcast of two `TensorShape`s (follows `tf.broadcast_static_shape`).

    Raises:
      ValueError: if they are incompatible.
    """
    x, y = TensorShape(shape_x), TensorShape(shape_y)
    if x.ndims is None or y.ndims is None:
        return TensorShape(None)
    xs = [1] * (max(x.ndims, y.ndims) - x.ndims) + x.as_list()
    ys = [1] * (max(x.ndims, y.ndims) - y.ndims) + y.as_list()
    dims = []
    for a, b in zip(xs, ys):
        if a == 1 or (a is None and b not in (1, None)):
            dims.append(b)
        elif b in (1, None) or a == b:
            dims.append(a)
        else:
            raise ValueError(f"Incompatible shapes for broadcasting: {x} and {y}")
    return TensorShape(dims)


def searchsorted(sorted_sequence: Any, values: Any, side: str = "left",
                 out_type: Any = dtypes.int32, name: str | None = None) -> Tensor:
    """Insertion points of `values` into the innermost rows of `sorted_sequence` (follows
    `tf.searchsorted`, ops `LowerBound`/`UpperBound`).

    Raises:
      ValueError: for `side` other than "left"/"right".
    """
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right', got {side!r}")
    op_type = "LowerBound" if side == "left" else "UpperBound"
    return apply_op(op_type, sorted_inputs=sorted_sequence, values=values,
                    out_type=dtypes.as_dtype(out_type), name=name)


def unravel_index(indices: Any, dims: Any, name: str | None = None) -> Tensor:
    """Coordinates of flat `indices` in an array of shape `dims` (`tf.unravel_index`)."""
    return apply_op("UnravelIndex", indices=indices, dims=dims, name=name)


def meshgrid(*args: Any, **kwargs: Any) -> list[Tensor]:
    """N-D coordinate grids from 1-D tensors (follows `tf.meshgrid`).

    Args:
      *args: 1-D `Tensor`s.
      **kwargs: `indexing`, "xy" (Cartesian, default) or "ij" (matrix); `name`.

    Raises:
      TypeError: for unknown keyword arguments; ValueError: for a bad indexing.
    """
    indexing = kwargs.pop("indexing", "xy")
    name = kwargs.pop("name", "meshgrid")
    if kwargs:
        raise TypeError(f"'{next(iter(kwargs))}' is an invalid keyword argument for this function")
    if indexing not in ("xy", "ij"):
        raise ValueError("indexing parameter must be either 'xy' or 'ij'")
    with graph_mod.name_scope(name, "meshgrid", list(args)):
        n = len(args)
        outs = []
        for i, x in enumerate(args):
            shape = [1] * n
            shape[i] = -1
            outs.append(array_ops.reshape(convert_to_tensor(x), shape))
        if indexing == "xy" and n > 1:
            outs[0] = array_ops.reshape(outs[0], [1, -1] + [1] * (n - 2))
            outs[1] = array_ops.reshape(outs[1], [-1, 1] + [1] * (n - 2))
        sizes = [array_ops.size(x) for x in args]
        if indexing == "xy" and n > 1:
            sizes[0], sizes[1] = sizes[1], sizes[0]
        full = array_ops.stack(sizes)
        return [broadcast_to(x, full) for x in outs]


def roll(input: Any, shift: Any, axis: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Elements shifted cyclically by `shift` along `axis` (follows `tf.roll`)."""
    return apply_op("Roll", input=input, shift=shift, axis=axis, name=name)


def repeat(input: Any, repeats: Any, axis: Any = None, name: str | None = None) -> Tensor:  # noqa: A002
    """Each element (or slice along `axis`) repeated `repeats` times (follows `tf.repeat`).

    Args:
      input: `Tensor`.
      repeats: int scalar or 1-D with one count per slice (statically known).
      axis: the axis (default: the flattened input).
      name: op name.

    Raises:
      ValueError: if `repeats` is not statically known.
    """
    with graph_mod.name_scope(name, "Repeat", [input, repeats]):
        x = convert_to_tensor(input, name="input")
        reps = static_value(convert_to_tensor(repeats))
        if reps is None:
            raise ValueError("tf.repeat needs statically known repeats here")
        if axis is None:
            x, axis = array_ops.reshape(x, [-1]), 0
        size = x.shape.as_list()[axis] if x.shape.ndims is not None else None
        if size is None:
            raise ValueError("tf.repeat needs the size of the repeated axis statically")
        index = np.repeat(np.arange(size), np.broadcast_to(reps, (size,)))
        return array_ops.gather(x, index.astype(np.int32), axis=axis)


def shape_n(input: Any, out_type: Any = dtypes.int32, name: str | None = None) -> list[Tensor]:  # noqa: A002
    """`[tf.shape(t) for t in input]` (follows `tf.shape_n`)."""
    with graph_mod.name_scope(name, "ShapeN", list(input)):
        return [array_ops.shape(t, out_type=out_type) for t in input]


def identity_n(input: Any, name: str | None = None) -> list[Tensor]:  # noqa: A002
    """Identities of each tensor of `input`, as one node (follows `tf.identity_n`, op
    `IdentityN`)."""
    out = apply_op("IdentityN", input=[convert_to_tensor(t) for t in input], name=name)
    out = out if isinstance(out, list) else [out]
    return list(out[0]) if len(out) == 1 and isinstance(out[0], list) else list(out)


def parallel_stack(values: Any, name: str = "parallel_stack") -> Tensor:
    """`tf.stack(values)` (follows `tf.parallel_stack`; no separate op is needed here)."""
    return array_ops.stack(values, name=name)


def confusion_matrix(labels: Any, predictions: Any, num_classes: Any = None,
                     dtype: Any = dtypes.int32, name: str | None = None,
                     weights: Any = None) -> Tensor:
    """The [num_classes, num_classes] matrix counting (label, prediction) pairs, rows
    indexed by label (follows `tf.math.confusion_matrix`).

    Args:
      labels: 1-D int `Tensor` of true classes.
      predictions: 1-D int `Tensor` of predicted classes, same length.
      num_classes: number of classes (default: 1 + the largest label or prediction).
      dtype: output dtype.
      name: op name.
      weights: optional 1-D `Tensor`: each pair adds its weight instead of 1.
    """
    with graph_mod.name_scope(name, "confusion_matrix", [labels, predictions, weights]):
        labels = cwise_ops.cast(convert_to_tensor(labels, name="labels"), dtypes.int64)
        predictions = cwise_ops.cast(convert_to_tensor(predictions, name="predictions"),
                                     dtypes.int64)
        if num_classes is None:
            n = cwise_ops.maximum(reduction_ops.reduce_max(predictions),
                                  reduction_ops.reduce_max(labels)) + 1
        else:
            n = cwise_ops.cast(convert_to_tensor(num_classes), dtypes.int64)
        indices = array_ops.stack([labels, predictions], axis=1)
        if weights is None:
            values = array_ops.ones_like(predictions, dtype=dtype)
        else:
            values = cwise_ops.cast(convert_to_tensor(weights, name="weights"), dtype)
        shape = array_ops.stack([n, n])
        return scatter_nd(indices, values, shape)


def _approx_k(operand: Any, k: int, reduction_dimension: int, largest: bool, name: Any):
    with graph_mod.name_scope(name, "ApproxTopK", [operand]):
        x = convert_to_tensor(operand, name="operand")
        rank = x.shape.ndims
        if rank is None:
            raise ValueError("approx_max_k needs an operand of known rank")
        axis = reduction_dimension % rank
        perm = None
        if axis != rank - 1:
            perm = list(range(rank))
            perm[axis], perm[-1] = rank - 1, axis
            x = array_ops.transpose(x, perm)
        values, indices = top_k(x if largest else cwise_ops.negative(x), k)
        if not largest:
            values = cwise_ops.negative(values)
        if perm is not None:
            values, indices = array_ops.transpose(values, perm), array_ops.transpose(indices, perm)
        return values, indices


def approx_max_k(operand: Any, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True, name: str | None = None):
    """`(values, indices)` of the `k` largest entries along `reduction_dimension` (follows
    `tf.math.approx_max_k`; computed exactly here, so the recall is 1)."""
    return _approx_k(operand, k, reduction_dimension, True, name)


def approx_min_k(operand: Any, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True, name: str | None = None):
    """`(values, indices)` of the `k` smallest entries along `reduction_dimension`
    (follows `tf.math.approx_min_k`; computed exactly here)."""
    return _approx_k(operand, k, reduction_dimension, False, name)


__all__ = [
    "argsort",
    "broadcast_dynamic_shape",
    "broadcast_static_shape",
    "broadcast_to",
    "confusion_matrix",
    "identity_n",
    "lin_space",
    "linspace",
    "meshgrid",
    "parallel_stack",
    "repeat",
    "reverse_sequence",
    "roll",
    "searchsorted",
    "sequence_mask",
    "setdiff1d",
    "shape_n",
    "sort",
    "unique_with_counts",
    "unravel_index",
]
