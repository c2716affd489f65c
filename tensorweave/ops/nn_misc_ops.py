"""`tf.nn` depth/space rearrangements, morphological dilation/erosion, CTC loss and
`collapse_repeated` (follows TF 1.x `array_ops.py`, `nn_ops.py`, `ctc_ops.py`).

Definitions in `framework/op_defs/nn_misc.py`, kernels in `kernels/nn_misc_kernels.py`,
gradients in `nn_misc_grad.py`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.op_defs import nn_misc as _defs  # noqa: F401
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, math_ops


def depth_to_space(input, block_size, name=None, data_format="NHWC") -> Tensor:  # noqa: A002
    """Moves depth into `block_size x block_size` spatial blocks (`tf.nn.depth_to_space`).

    `[n, h, w, c] -> [n, h * bs, w * bs, c / bs**2]` (NHWC).

    Raises:
      ValueError: if the depth is not divisible by `block_size ** 2`.
    """
    return apply_op(
        "DepthToSpace", input=input, block_size=block_size, data_format=data_format, name=name
    )


def space_to_depth(input, block_size, name=None, data_format="NHWC") -> Tensor:  # noqa: A002
    """Moves spatial blocks into depth (`tf.nn.space_to_depth`).

    `[n, h, w, c] -> [n, h / bs, w / bs, c * bs**2]` (NHWC).
    """
    return apply_op(
        "SpaceToDepth", input=input, block_size=block_size, data_format=data_format, name=name
    )


def space_to_batch_nd(input, block_shape, paddings, name=None) -> Tensor:  # noqa: A002
    """Pads the spatial dimensions, then moves blocks into the batch (`SpaceToBatchND`).

    `input`: `[batch, *spatial (M), *rest]`; `block_shape`: int [M]; `paddings`: int
    [M, 2]. Output batch `prod(block_shape) * batch`.
    """
    return apply_op(
        "SpaceToBatchND", input=input, block_shape=block_shape, paddings=paddings, name=name
    )


def batch_to_space_nd(input, block_shape, crops, name=None) -> Tensor:  # noqa: A002
    """The inverse of `space_to_batch_nd`, then crops (`BatchToSpaceND`)."""
    return apply_op("BatchToSpaceND", input=input, block_shape=block_shape, crops=crops, name=name)


def space_to_batch(input, paddings, block_size=None, name=None, block_shape=None) -> Tensor:  # noqa: A002
    """4-D `space_to_batch_nd` with a square block (follows `tf.nn.space_to_batch`).

    Raises:
      ValueError: without a block size.
    """
    size = block_shape if block_size is None else block_size
    if size is None:
        raise ValueError("space_to_batch needs `block_size`")
    result = space_to_batch_nd(input, np.array([size, size], dtype=np.int64), paddings, name)
    result.set_shape(result.shape.merge_with([None] * 4))
    return result


def _required_paddings(sizes: list[int], block: list[int], base: np.ndarray):
    full = np.asarray(sizes) + base[:, 0] + base[:, 1]
    extra = (np.asarray(block) - full % block) % block
    paddings = np.stack([base[:, 0], base[:, 1] + extra], 1)
    crops = np.stack([np.zeros_like(extra), extra], 1)
    return paddings.astype(np.int32), crops.astype(np.int32)


def with_space_to_batch(
    input,
    dilation_rate,
    padding,
    op,
    filter_shape=None,  # noqa: A002
    spatial_dims=None,
    data_format=None,
) -> Tensor:
    """Runs `op(converted, num_spatial_dims, padding)` on a dilated grid by moving the
    dilation into the batch (follows `tf.nn.with_space_to_batch`).

    Raises:
      ValueError: for SAME padding without `filter_shape`, a bad padding, or spatial
        dimensions of unknown size (deviation: TensorFlow also handles those).
    """
    input = convert_to_tensor(input, name="input")  # noqa: A001
    rate = [int(r) for r in np.asarray(dilation_rate).reshape(-1)]
    n = len(rate)
    if spatial_dims is None:
        first = data_format is not None and data_format.startswith("NC")
        spatial_dims = list(range(2, n + 2)) if first else list(range(1, n + 1))
    if all(r == 1 for r in rate):
        return op(input, n, padding)
    if padding == "SAME":
        if filter_shape is None:
            raise ValueError("filter_shape must be specified for SAME padding")
        k = np.asarray(filter_shape).reshape(-1)[:n]
        total = (k - 1) * np.asarray(rate)
        base = np.stack([total // 2, total - total // 2], 1)
    elif padding == "VALID":
        base = np.zeros([n, 2], dtype=np.int64)
    else:
        raise ValueError(f"Invalid padding method {padding!r}")
    dims = input.shape.as_list()
    sizes = [dims[d] for d in spatial_dims]
    if None in sizes or spatial_dims != list(range(1, n + 1)):
        raise ValueError("with_space_to_batch needs static spatial sizes right after the batch")
    paddings, crops = _required_paddings(sizes, rate, base)
    converted = space_to_batch_nd(input, np.array(rate, np.int32), paddings)
    result = op(converted, n, "VALID")
    return batch_to_space_nd(result, np.array(rate, np.int32), crops)


def dilation2d(
    input,
    filter=None,
    strides=None,
    rates=None,
    padding=None,
    name=None,  # noqa: A002
    filters=None,
    dilations=None,
) -> Tensor:
    """Grayscale morphological dilation (`Dilation2D`, follows `tf.nn.dilation2d`).

    `out[b, y, x, c] = max_{dy, dx} input[b, y*s + dy*r, x*s + dx*r, c] + filter[dy, dx, c]`.

    Args:
      input: `T [batch, h, w, depth]`.
      filter: `T [fh, fw, depth]`.
      strides: 4 ints.
      rates: 4 ints (the dilation of the filter).
      padding: "SAME" or "VALID".
      name: op name.
      filters: alias of `filter`.
      dilations: alias of `rates`.
    """
    filter = filters if filter is None else filter  # noqa: A001
    rates = dilations if rates is None else rates
    return apply_op(
        "Dilation2D",
        input=input,
        filter=filter,
        strides=list(strides),
        rates=list(rates),
        padding=padding,
        name=name,
    )


def erosion2d(value, kernel, strides, rates, padding, name=None) -> Tensor:
    """Grayscale morphological erosion, `-dilation2d(-value, reversed kernel)`.

    Follows `tf.nn.erosion2d`.
    """
    with graph_mod.name_scope(name, "erosion2d", [value, kernel]) as scope:
        flipped = array_ops.reverse_v2(kernel, [0, 1])
        dilated = apply_op(
            "Dilation2D",
            input=math_ops.negative(value),
            filter=flipped,
            strides=list(strides),
            rates=list(rates),
            padding=padding,
            name=scope,
        )
        return math_ops.negative(dilated)


def _sequence_mask(lengths: Tensor, maxlen: Any) -> Tensor:
    positions = array_ops.range(maxlen)
    return math_ops.less(positions, array_ops.expand_dims(math_ops.cast(lengths, dtypes.int32), 1))


def collapse_repeated(labels, seq_length, name=None) -> tuple[Tensor, Tensor]:
    """Merges repeated consecutive labels of each row (follows `tf.nn.collapse_repeated`).

    Args:
      labels: int `[batch, max_len]`.
      seq_length: int `[batch]`, the valid length of each row.
      name: name scope.

    Returns:
      `(collapsed [batch, new_max_len], new_seq_length [batch])`, rows padded with 0.
    """
    with graph_mod.name_scope(name, "collapse_repeated_labels", [labels, seq_length]):
        labels = convert_to_tensor(labels, name="labels")
        seq_length = convert_to_tensor(seq_length, name="seq_length")
        first = array_ops.ones_like(labels[:, :1], dtype=dtypes.bool)
        changed = math_ops.not_equal(labels[:, 1:], labels[:, :-1])
        keep = array_ops.concat([first, changed], 1)
        keep = math_ops.logical_and(keep, _sequence_mask(seq_length, array_ops.shape(labels)[1]))
        new_len = math_ops.reduce_sum(math_ops.cast(keep, dtypes.int32), 1)
        new_max = math_ops.reduce_max(new_len)
        slots = array_ops.reshape(_sequence_mask(new_len, new_max), [-1])
        positions = array_ops.boolean_mask(array_ops.range(array_ops.size(slots)), slots)
        kept = array_ops.boolean_mask(
            array_ops.reshape(labels, [-1]), array_ops.reshape(keep, [-1])
        )
        flat = math_ops.unsorted_segment_sum(kept, positions, array_ops.size(slots))
        shape = array_ops.stack([array_ops.shape(labels)[0], new_max])
        return array_ops.reshape(flat, shape), math_ops.cast(new_len, seq_length.dtype)


def _is_sparse(x: Any) -> bool:
    return all(hasattr(x, a) for a in ("indices", "values", "dense_shape"))


def ctc_loss(
    labels,
    inputs=None,
    sequence_length=None,
    preprocess_collapse_repeated=False,
    ctc_merge_repeated=True,
    ignore_longer_outputs_than_inputs=False,
    time_major=True,
    logits=None,
) -> Tensor:
    """Connectionist temporal classification loss (`CTCLoss`, follows `tf.nn.ctc_loss`).

    Args:
      labels: a `SparseTensor` of int32 class ids `[batch, max_label_len]` (blank is the
        last class, `num_classes - 1`).
      inputs: float `[max_time, batch, num_classes]` logits (`[batch, max_time, ...]` with
        `time_major=False`).
      sequence_length: int32 `[batch]`.
      preprocess_collapse_repeated: merge repeated labels first.
      ctc_merge_repeated: must be True (the default; False is not implemented).
      ignore_longer_outputs_than_inputs: give 0 instead of failing for too-long labels.
      time_major: the layout of `inputs`.
      logits: alias of `inputs`.

    Returns:
      float `[batch]`: `-log p(labels | inputs)`.

    Raises:
      TypeError: if `labels` is not sparse.
      NotImplementedError: for `ctc_merge_repeated=False`.
    """
    if not _is_sparse(labels):
        raise TypeError(
            f"Expected argument `labels` to be a SparseTensor. Received "
            f"labels={labels} of type: {type(labels).__name__}"
        )
    if not ctc_merge_repeated:
        raise NotImplementedError("tf.nn.ctc_loss with ctc_merge_repeated=False")
    inputs = convert_to_tensor(logits if inputs is None else inputs, name="logits")
    if not time_major:
        inputs = array_ops.transpose(inputs, [1, 0, 2])
    loss, _ = apply_op(
        "CTCLoss",
        inputs=inputs,
        labels_indices=labels.indices,
        labels_values=math_ops.cast(labels.values, dtypes.int32),
        sequence_length=math_ops.cast(sequence_length, dtypes.int32),
        preprocess_collapse_repeated=preprocess_collapse_repeated,
        ctc_merge_repeated=ctc_merge_repeated,
        ignore_longer_outputs_than_inputs=ignore_longer_outputs_than_inputs,
    )
    return loss


class _Sparse:
    """The `(indices, values, dense_shape)` triple `ctc_loss` reads."""

    def __init__(self, indices: Any, values: Any, dense_shape: Any):
        self.indices, self.values, self.dense_shape = indices, values, dense_shape


def ctc_loss_v2(
    labels,
    logits,
    label_length,
    logit_length,
    logits_time_major=True,
    unique=None,
    blank_index=None,
    name=None,
) -> Tensor:
    """CTC loss with dense (or sparse) labels (follows `tf.nn.ctc_loss_v2`).

    Args:
      labels: int `[batch, max_label_len]` padded rows, or a SparseTensor.
      logits: float `[frames, batch, num_classes]` (time major) or `[batch, frames, ...]`.
      label_length: int `[batch]` (dense labels).
      logit_length: int `[batch]`.
      logits_time_major: the layout of `logits`.
      unique: ignored (an optimization hint in TensorFlow).
      blank_index: the blank class (default 0 for dense labels; required for sparse ones;
        negative counts from `num_classes`).
      name: name scope.

    Returns:
      float `[batch]` negative log likelihoods.

    Raises:
      ValueError: for sparse labels without `blank_index`.
    """
    with graph_mod.name_scope(name, "ctc_loss_dense", [logits, labels]):
        logits = convert_to_tensor(logits, name="logits")
        if not logits_time_major:
            logits = array_ops.transpose(logits, [1, 0, 2])
        classes = logits.shape.as_list()[2]
        if _is_sparse(labels):
            if blank_index is None:
                raise ValueError(
                    "Argument `blank_index` must be provided when labels is a SparseTensor."
                )
            indices, values = labels.indices, labels.values
        else:
            labels = convert_to_tensor(labels, name="labels")
            mask = _sequence_mask(label_length, array_ops.shape(labels)[1])
            indices = array_ops.where(mask)
            values = array_ops.boolean_mask(labels, mask)
            blank_index = 0 if blank_index is None else blank_index
        if blank_index < 0:
            blank_index += classes
        values = math_ops.cast(values, dtypes.int32)
        if blank_index != classes - 1:
            logits = array_ops.concat(
                [
                    logits[:, :, :blank_index],
                    logits[:, :, blank_index + 1 :],
                    logits[:, :, blank_index : blank_index + 1],
                ],
                2,
            )
            values = array_ops.where(math_ops.less(values, blank_index), values, values - 1)
        sparse = _Sparse(math_ops.cast(indices, dtypes.int64), values, None)
        return ctc_loss(sparse, logits, logit_length)


def ctc_unique_labels(labels, name=None) -> tuple[Tensor, Tensor]:
    """Each row's distinct labels (first-seen order, 0-padded) and its indices into them.

    Follows `tf.nn.ctc_unique_labels` (TensorFlow maps `unique` over rows with `map_fn`;
    here the rows are unstacked, so the batch size must be static).

    Args:
      labels: int `[batch, max_label_length]`.
      name: name scope.

    Returns:
      `(unique int64 [batch, max_label_length], idx int32 [batch, max_label_length])`.

    Raises:
      ValueError: for an unknown batch size.
    """
    with graph_mod.name_scope(name, "ctc_unique_labels", [labels]):
        labels = convert_to_tensor(labels, name="labels")
        if labels.shape.ndims != 2 or labels.shape.as_list()[0] is None:
            raise ValueError(
                "ctc_unique_labels needs labels of shape [batch, length] with a static batch size"
            )
        width = array_ops.shape(labels)[1]
        ys, idxs = [], []
        for row in array_ops.unstack(labels):
            u = array_ops.unique(row)
            extra = width - array_ops.shape(u.y)[0]
            padded = array_ops.pad(u.y, array_ops.reshape(array_ops.stack([0, extra]), [1, 2]))
            ys.append(math_ops.cast(padded, dtypes.int64))
            idxs.append(u.idx)
        return array_ops.stack(ys), array_ops.stack(idxs)


def _fractional(
    op_type: str, value, pooling_ratio, pseudo_random, overlapping, deterministic, seed, seed2, name
) -> tuple[Tensor, Tensor, Tensor]:
    ratio = [float(r) for r in pooling_ratio]
    out = apply_op(
        op_type,
        value=value,
        pooling_ratio=ratio,
        pseudo_random=pseudo_random,
        overlapping=overlapping,
        deterministic=deterministic,
        seed=seed,
        seed2=seed2,
        name=name,
    )
    return out[0], out[1], out[2]


def fractional_max_pool(
    value,
    pooling_ratio,
    pseudo_random=False,
    overlapping=False,
    deterministic=False,
    seed=0,
    seed2=0,
    name=None,
):
    """Fractional max pooling (Graham 2014; follows `tf.nn.fractional_max_pool`).

    Args:
      value: `T [batch, height, width, channels]` (float, double, int32, int64).
      pooling_ratio: 4 floats `[1.0, rows, cols, 1.0]`, each >= 1.
      pseudo_random: pseudo-random instead of random pooling sequences.
      overlapping: cells also include the next boundary row/column.
      deterministic: seed the sequences with (seed, seed2).
      seed: int.
      seed2: int.
      name: op name.

    Returns:
      `(output [batch, floor(h / r), floor(w / r), channels], row_pooling_sequence int64,
      col_pooling_sequence int64)`.
    """
    return _fractional(
        "FractionalMaxPool",
        value,
        pooling_ratio,
        pseudo_random,
        overlapping,
        deterministic,
        seed,
        seed2,
        name,
    )


def fractional_avg_pool(
    value,
    pooling_ratio,
    pseudo_random=False,
    overlapping=False,
    deterministic=False,
    seed=0,
    seed2=0,
    name=None,
):
    """Fractional average pooling (follows `tf.nn.fractional_avg_pool`); arguments and
    results as `fractional_max_pool`."""
    return _fractional(
        "FractionalAvgPool",
        value,
        pooling_ratio,
        pseudo_random,
        overlapping,
        deterministic,
        seed,
        seed2,
        name,
    )


__all__ = [
    "collapse_repeated",
    "ctc_loss",
    "ctc_loss_v2",
    "ctc_unique_labels",
    "depth_to_space",
    "dilation2d",
    "erosion2d",
    "fractional_avg_pool",
    "fractional_max_pool",
    "space_to_batch",
    "space_to_depth",
    "with_space_to_batch",
]
