"""Resource limits against memory amplification: how large a tensor may be built from a
message that does not carry its bytes.

A `TensorProto` with one `float_val` and shape `[2**40]` is ~20 bytes on the wire and
would expand to 4 TiB when decoded (TensorFlow pads typed value fields with their last
element); a stream header announces its size before its bytes arrive. Both are checked
against a limit before any memory is allocated; the error names what was being decoded.
Servers set theirs with `SecurityOptions.max_decoded_tensor_bytes` (0: the default).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from tensorweave import errors

DEFAULT_MAX_TENSOR_BYTES = 4 << 30


def effective(max_bytes: int | None) -> int:
    """`max_bytes`, or the default for None/0."""
    return int(max_bytes) if max_bytes and max_bytes > 0 else DEFAULT_MAX_TENSOR_BYTES


def check_tensor_size(what: str, shape: Sequence[int], itemsize: int,
                      max_bytes: int | None = None) -> int:
    """Returns the byte size of a `shape` tensor of `itemsize`-byte elements.

    Raises:
      InvalidArgumentError: a negative dimension.
      ResourceExhaustedError: naming `what`, when the size exceeds the limit.
    """
    if any(d < 0 for d in shape):
        raise errors.InvalidArgumentError(
            None, None, f"{what}: negative dimension in shape {list(shape)}")
    nbytes = math.prod(shape) * itemsize
    limit = effective(max_bytes)
    if nbytes > limit:
        raise errors.ResourceExhaustedError(
            None, None, f"{what}: a tensor of shape {list(shape)} ({nbytes} bytes) exceeds "
            f"the limit of {limit} bytes for tensors built from a message")
    return nbytes
