"""NumPy kernels of the summary ops.

Follows TensorFlow's `summary_op.cc`, `summary_tensor_op.cc` and
`lib/histogram/histogram.cc`. Each kernel returns a 0-d `np.object_` array holding the
serialized `Summary` bytes.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
from google.protobuf.message import DecodeError

from tensorweave import errors
from tensorweave.framework.tensor_shape import shape_str
from tensorweave.kernels.registry import KernelNode, register_compute, register_kernel
from tensorweave.protos import summary_pb2, tensor_pb2

_DBL_MAX = sys.float_info.max


def _default_bucket_limits() -> np.ndarray:
    """TensorFlow's default histogram bucket limits (float64, 1551 right edges).

    Positive limits start at 1e-12 and grow by 10% while below 1e20, then DBL_MAX; the
    negative limits mirror them; 0.0 sits between. The loop multiplies in float64 exactly
    as TensorFlow does, so the limits match bit for bit.
    """
    positive = []
    v = 1.0e-12
    while v < 1.0e20:
        positive.append(v)
        v *= 1.1
    positive.append(_DBL_MAX)
    negative = [-x for x in reversed(positive)]
    limits = np.array(negative + [0.0] + positive, dtype=np.float64)
    limits.flags.writeable = False
    return limits


# A read-only constant, not a cache: identical for every histogram.
DEFAULT_BUCKET_LIMITS = _default_bucket_limits()


def histogram_proto(values: np.ndarray) -> Any:
    """A `HistogramProto` of `values` (any real dtype/shape) with the default buckets.

    `num`, `sum`, `sum_squares` are float64; empty buckets are collapsed into one entry per
    run (whose limit is the run's last limit), as TensorFlow's
    `EncodeToProto(preserve_zero_buckets=false)`. An empty input gives `min=DBL_MAX`,
    `max=-DBL_MAX` and a single `(DBL_MAX, 0)` bucket. Values must be finite.
    """
    flat = np.asarray(values, dtype=np.float64).reshape(-1)
    limits = DEFAULT_BUCKET_LIMITS
    # std::upper_bound: the first limit strictly greater than the value.
    counts = np.bincount(np.searchsorted(limits, flat, side="right"), minlength=limits.size).astype(
        np.float64
    )
    nonzero = counts > 0
    # A bucket is written when non-empty, or when it ends a run of empty buckets.
    keep = nonzero | np.append(nonzero[1:], True)
    proto = summary_pb2.HistogramProto(
        min=float(flat.min()) if flat.size else _DBL_MAX,
        max=float(flat.max()) if flat.size else -_DBL_MAX,
        num=float(flat.size),
        sum=float(flat.sum()),
        sum_squares=float(np.dot(flat, flat)),
    )
    proto.bucket_limit.extend(limits[keep].tolist())
    proto.bucket.extend(counts[keep].tolist())
    return proto


def _pack(summary: Any) -> np.ndarray:
    out = np.empty((), dtype=object)
    out[()] = summary.SerializeToString()
    return out


def _as_text(value: Any) -> str:
    if isinstance(value, np.ndarray):
        value = value.item() if value.size == 1 else value
    if isinstance(value, bytes | np.bytes_):
        return bytes(value).decode("utf-8")
    return str(value)


@register_compute("ScalarSummary")
def _scalar_summary(ctx: Any, tags: Any, values: Any) -> np.ndarray:
    tags = np.asarray(tags, dtype=object)
    values = np.asarray(values)
    if tags.shape != values.shape:
        single = f" (tag '{_as_text(tags.reshape(-1)[0])}')" if tags.size == 1 else ""
        raise errors.InvalidArgumentError(
            None,
            None,
            f"tags and values not the same shape: {shape_str(tags.shape)} != "
            f"{shape_str(values.shape)}{single}",
        )
    summary = summary_pb2.Summary()
    for tag, value in zip(tags.reshape(-1), values.reshape(-1)):
        summary.value.add(tag=_as_text(tag), simple_value=float(np.float32(value)))
    return _pack(summary)


@register_kernel("HistogramSummary")
def _histogram_summary(node: KernelNode) -> Any:
    node_name = node.name

    def compute(ctx: Any, tag: Any, values: Any) -> np.ndarray:
        tag = np.asarray(tag, dtype=object)
        if tag.ndim != 0:
            raise errors.InvalidArgumentError(None, None, "tags must be scalar")
        flat = np.asarray(values, dtype=np.float64).reshape(-1)
        if not np.all(np.isfinite(flat)):
            # Report the first non-finite value, as TensorFlow's element loop does.
            first = flat[np.argmin(np.isfinite(flat))]
            kind = "Nan" if np.isnan(first) else "Infinity"
            raise errors.InvalidArgumentError(
                None, None, f"{kind} in summary histogram for: {node_name}"
            )
        summary = summary_pb2.Summary()
        summary.value.add(tag=_as_text(tag), histo=histogram_proto(flat))
        return _pack(summary)

    return compute


def _tensor_proto(value: Any, dtype: Any) -> Any:
    """`value` as a `TensorProto`, encoded as TensorFlow's summary kernels do.

    Strings go to `string_val` (`AsProtoField`), everything else to little-endian
    `tensor_content` (`AsProtoTensorContent`).
    """
    arr = np.asarray(value)
    proto = tensor_pb2.TensorProto(dtype=dtype.as_datatype_enum)
    for d in arr.shape:
        proto.tensor_shape.dim.add(size=d)
    if arr.dtype == object or arr.dtype.kind in "SU":
        proto.string_val.extend(
            x if isinstance(x, bytes) else _as_text(x).encode("utf-8") for x in arr.reshape(-1)
        )
    else:
        little = arr.dtype.newbyteorder("<")
        proto.tensor_content = np.ascontiguousarray(arr, dtype=little).tobytes()
    return proto


@register_kernel("TensorSummaryV2")
def _tensor_summary_v2(node: KernelNode) -> Any:
    dtype = node.attrs["T"]

    def compute(ctx: Any, tag: Any, tensor: Any, serialized_metadata: Any) -> np.ndarray:
        summary = summary_pb2.Summary()
        value = summary.value.add(tag=_as_text(tag))
        value.tensor.CopyFrom(_tensor_proto(tensor, dtype))
        metadata = np.asarray(serialized_metadata, dtype=object).reshape(-1)
        try:
            value.metadata.ParseFromString(bytes(metadata[0]) if metadata.size else b"")
        except DecodeError as e:
            raise errors.InvalidArgumentError(
                None, None, f"Could not parse the serialized summary metadata: {e}"
            ) from None
        return _pack(summary)

    return compute


@register_compute("MergeSummary")
def _merge_summary(ctx: Any, *inputs: Any) -> np.ndarray:
    merged = summary_pb2.Summary()
    seen: set[str] = set()
    for tensor in inputs:
        for serialized in np.asarray(tensor, dtype=object).reshape(-1):
            part = summary_pb2.Summary()
            try:
                part.ParseFromString(bytes(serialized))
            except (DecodeError, TypeError):
                raise errors.InvalidArgumentError(
                    None, None, "Could not parse one of the summary inputs"
                ) from None
            for value in part.value:
                # Untagged values (old-style tensor summaries) are never duplicates.
                if value.tag and value.tag in seen:
                    raise errors.InvalidArgumentError(
                        None, None, f"Duplicate tag {value.tag} found in summary inputs"
                    )
                seen.add(value.tag)
            merged.value.extend(part.value)
    return _pack(merged)
