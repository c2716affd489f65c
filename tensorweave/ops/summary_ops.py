"""Summary ops: `ScalarSummary`, `HistogramSummary`, `TensorSummaryV2`, `MergeSummary`.

Follows TensorFlow's `tensorflow/core/ops/logging_ops.cc` and `summary_ops.cc`. Every op
outputs a scalar `string` tensor holding a serialized `Summary` proto (wire-compatible with
TensorFlow's, so TensorBoard reads it). The user-facing API is the `tf.summary` namespace
(`tensorweave/summary.py`), which names the ops and picks their tags; the functions here
are the raw op wrappers (TensorFlow's `gen_logging_ops`), so this module exports nothing
into the top-level namespace.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops.gradient_registry import no_gradient

# Summaries are not differentiable (TensorFlow's `ops.NotDifferentiable` in logging_ops.py).
for _op_type in ("ScalarSummary", "HistogramSummary", "TensorSummaryV2", "MergeSummary"):
    no_gradient(_op_type)


def scalar_summary(tags: Any, values: Any, name: str | None = None) -> Any:
    """A `Summary` with one `simple_value` per tag (follows `gen_logging_ops.scalar_summary`).

    Args:
      tags: `string` tensor of any shape: the tags.
      values: real-number tensor of the same shape as `tags`; each value is stored as a
        float32 `simple_value`.
      name: op name.

    Returns:
      A scalar `string` Tensor: the serialized `Summary`. Running it raises
      `InvalidArgumentError` when `tags` and `values` differ in shape.

    Raises:
      TypeError: if `tags` is not a string tensor or `values` not a real-number tensor.
    """
    return apply_op("ScalarSummary", tags=tags, values=values, name=name)


def histogram_summary(tag: Any, values: Any, name: str | None = None) -> Any:
    """A `Summary` with one histogram of `values` (follows `gen_logging_ops`).

    Buckets are TensorFlow's default ones (limits growing by 10% from 1e-12 to 1e20, on both
    sides of zero, plus +-DBL_MAX), with runs of empty buckets collapsed.

    Args:
      tag: scalar `string` tensor.
      values: real-number tensor of any shape.
      name: op name.

    Returns:
      A scalar `string` Tensor: the serialized `Summary`. Running it raises
      `InvalidArgumentError` ("Nan in summary histogram for: NAME" / "Infinity in summary
      histogram for: NAME") for non-finite values, or when `tag` is not a scalar.

    Raises:
      TypeError: for inputs of the wrong dtype.
    """
    return apply_op("HistogramSummary", tag=tag, values=values, name=name)


def tensor_summary_v2(
    tag: Any, tensor: Any, serialized_summary_metadata: Any, name: str | None = None
) -> Any:
    """A `Summary` holding `tensor` as a `TensorProto` plus `SummaryMetadata`.

    Follows `gen_logging_ops.tensor_summary_v2`; the base of `tf.summary.text`.

    Args:
      tag: scalar `string` tensor.
      tensor: tensor of any dtype and shape; strings are stored in `string_val`, other
        dtypes in `tensor_content`, as TensorFlow does.
      serialized_summary_metadata: scalar `string` tensor: a serialized `SummaryMetadata`.
      name: op name.

    Returns:
      A scalar `string` Tensor: the serialized `Summary`.

    Raises:
      TypeError: for `tag`/`serialized_summary_metadata` that are not strings.
    """
    return apply_op(
        "TensorSummaryV2",
        tag=tag,
        tensor=tensor,
        serialized_summary_metadata=serialized_summary_metadata,
        name=name,
    )


def merge_summary(inputs: Any, name: str | None = None) -> Any:
    """The union of the values of serialized `Summary` protos (follows `gen_logging_ops`).

    Args:
      inputs: a non-empty list of `string` tensors of any shape, each element a serialized
        `Summary`.
      name: op name.

    Returns:
      A scalar `string` Tensor: the merged `Summary`. Running it raises
      `InvalidArgumentError` ("Duplicate tag T found in summary inputs") when two values
      share a non-empty tag, or when an element does not parse.

    Raises:
      TypeError: if `inputs` is not a list of string tensors.
      ValueError: if `inputs` is empty.
    """
    return apply_op("MergeSummary", inputs=list(inputs), name=name)


# The public API is `tf.summary` (tensorweave/summary.py); nothing is star-exported.
__all__: list[str] = []
