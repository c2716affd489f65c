"""The `tf.summary` namespace: summary ops, merging, and event-file writing.

Follows TF 1.x `tensorflow/python/summary/summary.py` and `text_summary.py`. Each summary
function adds one op named by `name` under the current name scope (made unique like any op
name); that scoped name is also the summary's tag, e.g. `scalar("loss", x)` inside
`name_scope("train")` is op `train/loss` with tag `"train/loss"`, and a second
`scalar("loss", y)` there gets `train/loss_1`. The op's output (a scalar `string` tensor
holding a serialized `Summary`) is added to the `collections` (default
`[GraphKeys.SUMMARIES]`), which `merge_all` merges. `family` prefixes both the op name and
the tag, so TensorBoard groups the summary under that tab.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator
from typing import Any

from google.protobuf import json_format

from tensorweave.framework import dtypes, session_stack
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import summary_media_ops, summary_ops
from tensorweave.ops.variables import GraphKeys
from tensorweave.protos.event_pb2 import Event, SessionLog, TaggedRunMetadata
from tensorweave.protos.summary_pb2 import Summary, SummaryDescription, SummaryMetadata
from tensorweave.training.summary_io import FileWriter, FileWriterCache, summary_iterator

_log = logging.getLogger(__name__)
_INVALID_TAG_CHARACTERS = re.compile(r"[^-/\w\.]")
TEXT_PLUGIN_NAME = "text"


def _clean_tag(name: str | None) -> str | None:
    r"""`name` with characters outside `[-/\w.]` made `_` and no leading slashes.

    Follows `summary_op_util.clean_tag`, which logs the change.
    """
    if name is None:
        return None
    cleaned = _INVALID_TAG_CHARACTERS.sub("_", name).lstrip("/")
    if cleaned != name:
        _log.info("Summary name %s is illegal; using %s instead.", name, cleaned)
    return cleaned


@contextlib.contextmanager
def _summary_scope(
    name: str | None, family: str | None, default_name: str | None, values: list[Any]
) -> Iterator[tuple[str, str]]:
    """Opens the op's name scope; yields `(tag, scope)` (follows `summary_scope`)."""
    name, family = _clean_tag(name), _clean_tag(family)
    base = name if family is None else f"{family}/{name}"
    with graph_mod.name_scope(base, default_name, values=values) as scope:
        tag = scope.rstrip("/")
        if family is not None:
            # Prefixed again so TensorBoard shows it in the family's tab.
            tag = f"{family}/{tag}"
        yield tag, scope


def _collect(value: Tensor, collections: Any, default: list[str]) -> None:
    graph = value.graph
    for key in default if collections is None else collections:
        graph.add_to_collection(key, value)


def scalar(name: str, tensor: Any, collections: Any = None, family: str | None = None) -> Tensor:
    """A summary of one real number (follows TF 1.x `tf.summary.scalar`).

    Args:
      name: op name under the current name scope; the scoped name is the tag.
      tensor: a real-number tensor with exactly one element, rank 0 (float32, float64,
        int32, ...); stored as a float32 `simple_value`.
      collections: collection keys to add the result to (default `[GraphKeys.SUMMARIES]`).
      family: optional prefix of the op name and tag (TensorBoard tab).

    Returns:
      A scalar `string` Tensor holding a serialized `Summary`. Running it raises
      `InvalidArgumentError` if `tensor` is not a scalar.

    Raises:
      TypeError: if `tensor` is not a real-number tensor.
    """
    with _summary_scope(name, family, None, [tensor]) as (tag, scope):
        value = summary_ops.scalar_summary(tags=tag, values=tensor, name=scope)
    _collect(value, collections, [GraphKeys.SUMMARIES])
    return value


def histogram(name: str, values: Any, collections: Any = None, family: str | None = None) -> Tensor:
    """A histogram of `values` with TensorFlow's default buckets.

    Follows TF 1.x `tf.summary.histogram`.

    Args:
      name: op name under the current name scope; the scoped name is the tag.
      values: a real-number tensor of any shape.
      collections: collection keys to add the result to (default `[GraphKeys.SUMMARIES]`).
      family: optional prefix of the op name and tag.

    Returns:
      A scalar `string` Tensor holding a serialized `Summary` whose value has a `histo`
      (`min`, `max`, `num`, `sum`, `sum_squares`, bucket limits and counts). Running it
      raises `InvalidArgumentError` ("Nan in summary histogram for: <op name>") for NaN
      and ("Infinity in ...") for infinite values.

    Raises:
      TypeError: if `values` is not a real-number tensor.
    """
    with _summary_scope(name, family, "HistogramSummary", [values]) as (tag, scope):
        value = summary_ops.histogram_summary(tag=tag, values=values, name=scope)
    _collect(value, collections, [GraphKeys.SUMMARIES])
    return value


def tensor_summary(
    name: str,
    tensor: Any,
    summary_description: str | None = None,
    collections: Any = None,
    summary_metadata: Any = None,
    family: str | None = None,
    display_name: str | None = None,
) -> Tensor:
    """A summary holding a whole tensor plus `SummaryMetadata`.

    Follows TF 1.x `tf.summary.tensor_summary` (op `TensorSummaryV2`).

    Args:
      name: op name under the current name scope; the scoped name is the tag.
      tensor: a tensor of any dtype and shape.
      summary_description: optional `SummaryMetadata.summary_description`.
      collections: collection keys to add the result to (default `[GraphKeys.SUMMARIES]`).
      summary_metadata: a `SummaryMetadata` proto (e.g. naming a TensorBoard plugin).
      family: optional prefix of the op name and tag.
      display_name: optional `SummaryMetadata.display_name`.

    Returns:
      A scalar `string` Tensor holding a serialized `Summary`.
    """
    metadata = SummaryMetadata()
    if summary_metadata is not None:
        metadata.CopyFrom(summary_metadata)
    if summary_description is not None:
        metadata.summary_description = summary_description
    if display_name is not None:
        metadata.display_name = display_name
    with _summary_scope(name, family, None, [tensor]) as (tag, scope):
        value = summary_ops.tensor_summary_v2(
            tag=tag,
            tensor=tensor,
            serialized_summary_metadata=metadata.SerializeToString(),
            name=scope,
        )
    _collect(value, collections, [GraphKeys.SUMMARIES])
    return value


def text(name: str, tensor: Any, collections: Any = None) -> Tensor:
    """A summary of `string` values that TensorBoard's Text tab renders (as Markdown).

    Follows TF 1.x `tf.summary.text`: a `TensorSummaryV2` with plugin name `"text"`.

    Args:
      name: op name under the current name scope; the scoped name is the tag.
      tensor: a `string` tensor of any shape (or Python strings).
      collections: collection keys to add the result to (default `[GraphKeys.SUMMARIES]`).

    Returns:
      A scalar `string` Tensor holding a serialized `Summary`.

    Raises:
      ValueError: if `tensor` does not have dtype `string`.
    """
    if not isinstance(tensor, Tensor):
        tensor = convert_to_tensor(tensor, name="text")
    if tensor.dtype.base_dtype != dtypes.string:
        raise ValueError(
            f"Expected tensor {tensor.name} to have dtype string, got {tensor.dtype.name}"
        )
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name=TEXT_PLUGIN_NAME))
    return tensor_summary(name, tensor, summary_metadata=metadata, collections=collections)


def merge(inputs: Any, collections: Any = None, name: str | None = None) -> Tensor:
    """Merges summaries into one `Summary`.

    Follows TF 1.x `tf.summary.merge`; the op is `Merge/MergeSummary` by default.

    Args:
      inputs: a non-empty list of `string` tensors holding serialized `Summary` protos.
      collections: collection keys to add the result to (default: none).
      name: name scope and op name.

    Returns:
      A scalar `string` Tensor holding the union of the input values. Running it raises
      `InvalidArgumentError` ("Duplicate tag T found in summary inputs") when two values
      share a tag.

    Raises:
      ValueError: if `inputs` is empty.
      TypeError: if an input is not a `string` tensor.
    """
    inputs = list(inputs)
    if not inputs:
        raise ValueError("tf.summary.merge needs at least one summary input.")
    with graph_mod.name_scope(name, "Merge", inputs):
        value = summary_ops.merge_summary(inputs=inputs, name=name)
    _collect(value, collections, [])
    return value


def merge_all(
    key: str = GraphKeys.SUMMARIES, scope: str | None = None, name: str | None = None
) -> Tensor | None:
    """Merges every summary of collection `key` of the default graph.

    Follows TF 1.x `tf.summary.merge_all`.

    Args:
      key: the collection to merge.
      scope: optional regex; only summaries whose name matches it at the start.
      name: name scope and op name of the merge.

    Returns:
      The merged scalar `string` Tensor, or None when the collection has no summaries.
    """
    summaries = graph_mod.get_default_graph().get_collection(key, scope=scope)
    if not summaries:
        return None
    return merge(summaries, name=name)


def image(name: str, tensor: Any, max_outputs: int = 3, collections: Any = None,
          family: str | None = None) -> Tensor:
    """A summary of up to `max_outputs` images, PNG-encoded (follows TF 1.x
    `tf.summary.image`).

    Tags are `<tag>/image` when `max_outputs` is 1, else `<tag>/image/0`, `/image/1`, ...
    uint8 images are written as they are; float images are scaled per image (largest
    finite value to 255, or, with negative values, largest magnitude to 127 around 128),
    and non-finite pixels become opaque red.

    Args:
      name: op name under the current name scope; the scoped name is the tag.
      tensor: `[batch, height, width, channels]` uint8, half, float32 or float64 with 1, 3
        or 4 channels.
      max_outputs: images written at most (the first of the batch).
      collections: collection keys to add the result to (default `[GraphKeys.SUMMARIES]`).
      family: optional prefix of the op name and tag.

    Returns:
      A scalar `string` Tensor holding a serialized `Summary`. Running it raises
      `InvalidArgumentError` for a last dimension other than 1, 3 or 4.

    Raises:
      ValueError: if `tensor` is not rank 4.
    """
    with _summary_scope(name, family, None, [tensor]) as (tag, scope):
        value = summary_media_ops.image_summary(tag=tag, tensor=tensor,
                                                max_images=max_outputs, name=scope)
    _collect(value, collections, [GraphKeys.SUMMARIES])
    return value


def audio(name: str, tensor: Any, sample_rate: Any, max_outputs: int = 3,
          collections: Any = None, family: str | None = None) -> Tensor:
    """A summary of up to `max_outputs` audio clips as 16-bit PCM WAV (follows TF 1.x
    `tf.summary.audio`). Tags are `<tag>/audio` or `<tag>/audio/<i>`, as for `image`.

    Args:
      name: op name under the current name scope; the scoped name is the tag.
      tensor: float32 `[batch, frames, channels]` or `[batch, frames]`, in [-1, 1]
        (values outside are clipped).
      sample_rate: scalar float32 (or a Python number): samples per second.
      max_outputs: clips written at most.
      collections: collection keys to add the result to (default `[GraphKeys.SUMMARIES]`).
      family: optional prefix of the op name and tag.

    Returns:
      A scalar `string` Tensor holding a serialized `Summary`.

    Raises:
      ValueError: if `tensor` is not rank 2 or 3.
    """
    with _summary_scope(name, family, None, [tensor]) as (tag, scope):
        rate = convert_to_tensor(sample_rate, dtype=dtypes.float32, name="sample_rate")
        value = summary_media_ops.audio_summary_v2(tag=tag, tensor=tensor, sample_rate=rate,
                                                   max_outputs=max_outputs, name=scope)
    _collect(value, collections, [GraphKeys.SUMMARIES])
    return value


def get_summary_description(node_def: Any) -> SummaryDescription:
    """The `SummaryDescription` in a `TensorSummary` node's `description` attr (JSON);
    follows `tf.summary.get_summary_description`.

    Raises:
      ValueError: if the node is not a `TensorSummary`.
    """
    if node_def.op != "TensorSummary":
        raise ValueError(f"Can't get_summary_description on {node_def.op}")
    description = node_def.attr["description"].s.decode("utf-8")
    return json_format.Parse(description, SummaryDescription())


def all_v2_summary_ops() -> list[Any]:
    """TensorFlow 2 summary ops of the default graph: none, tensorweave writes summaries
    only through TF1 summary ops and `FileWriter` (follows
    `tf.compat.v1.summary.all_v2_summary_ops`)."""
    return graph_mod.get_default_graph().get_collection("_SUMMARY_V2")


def initialize(graph: Any = None, session: Any = None) -> None:
    """Initializes TensorFlow 2 summary writers in `session`: there are none here, so it
    only checks for a session (follows `tf.compat.v1.summary.initialize`).

    Raises:
      ValueError: with no `session` and no default session.
    """
    if session is None and session_stack.get_default_session() is None:
        raise ValueError("session must be passed if no default session exists")


__all__ = [
    "Event",
    "FileWriter",
    "FileWriterCache",
    "SessionLog",
    "Summary",
    "SummaryDescription",
    "SummaryMetadata",
    "TaggedRunMetadata",
    "all_v2_summary_ops",
    "audio",
    "get_summary_description",
    "histogram",
    "image",
    "initialize",
    "merge",
    "merge_all",
    "scalar",
    "summary_iterator",
    "tensor_summary",
    "text",
]
