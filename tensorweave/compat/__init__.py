"""`tf.compat`: text/bytes helpers, numeric type tuples, forward-compatibility dates and the
`v1`/`v2` namespaces (follows `tf.compat`, `tensorflow/python/util/compat.py` and
`compat/compat.py`).

`tf.compat.v1` is tensorweave's own namespace (`tf.compat.v1.Session is tf.Session`), so
`import tensorweave.compat.v1 as tf` works as TensorFlow 2 programs write it. `tf.compat.v2`
is the same stub: tensorweave has only the TF1 API, so v2-only names are missing there.
"""

from __future__ import annotations

import contextlib
import contextvars
import datetime
import numbers
import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from tensorweave.compat import v1, v2  # noqa: F401  (namespaces)
from tensorweave.framework.tensor_shape import (
    Dimension,
    TensorShape,
    as_dimension,
    dimension_value,
)

bytes_or_text_types = (bytes, str)
integral_types = (numbers.Integral, np.integer)
real_types = (numbers.Real, np.integer, np.floating)
complex_types = (numbers.Complex, np.number)

#: The date TensorFlow 1.15's forward-compatibility window starts from.
_FORWARD_COMPATIBILITY_HORIZON = datetime.date(2019, 11, 1)
_horizon: contextvars.ContextVar[datetime.date] = contextvars.ContextVar(
    "forward_compatibility_horizon", default=_FORWARD_COMPATIBILITY_HORIZON)


def dimension_at_index(shape: Any, index: int) -> Dimension:
    """`shape[index]` as a `Dimension`; an unknown one when the rank is unknown (follows
    `tf.compat.dimension_at_index`).

    Raises:
      IndexError: if the rank is known and `index` is out of range.
    """
    shape = shape if isinstance(shape, TensorShape) else TensorShape(shape)
    if shape.rank is None:
        return Dimension(None)
    return as_dimension(shape.dims[index])


def as_bytes(bytes_or_text: Any, encoding: str = "utf-8") -> bytes:
    """`bytes` as is, `str` encoded (follows `tf.compat.as_bytes`).

    Raises:
      TypeError: for any other type.
    """
    if isinstance(bytes_or_text, bytearray):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


def as_text(bytes_or_text: Any, encoding: str = "utf-8") -> str:
    """`str` as is, `bytes` decoded (follows `tf.compat.as_text`).

    Raises:
      TypeError: for any other type.
    """
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text.decode(encoding)
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


as_str = as_text


def as_str_any(value: Any, encoding: str = "utf-8") -> str:
    """`as_str` for bytes, `str(value)` for anything else (follows `tf.compat.as_str_any`)."""
    return as_str(value, encoding) if isinstance(value, bytes) else str(value)


def path_to_str(path: Any) -> Any:
    """An `os.PathLike`'s `str` path; other values as they are (`tf.compat.path_to_str`)."""
    return os.fspath(path) if isinstance(path, os.PathLike) else path


def forward_compatible(year: int, month: int, day: int) -> bool:
    """Whether the forward-compatibility horizon is past this date, i.e. whether graphs
    may use features added by then (follows `tf.compat.forward_compatible`)."""
    return _horizon.get() > datetime.date(year, month, day)


@contextlib.contextmanager
def forward_compatibility_horizon(year: int, month: int, day: int) -> Iterator[None]:
    """Moves the horizon to this date in the block (follows
    `tf.compat.forward_compatibility_horizon`, a test helper)."""
    token = _horizon.set(datetime.date(year, month, day))
    try:
        yield
    finally:
        _horizon.reset(token)


__all__ = [
    "as_bytes", "as_str", "as_str_any", "as_text", "bytes_or_text_types", "complex_types",
    "dimension_at_index", "dimension_value", "forward_compatibility_horizon",
    "forward_compatible", "integral_types", "path_to_str", "real_types", "v1", "v2",
]
