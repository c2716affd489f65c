"""`IndexedSlices`: a sparse set of rows of a dense tensor (follows `tf.IndexedSlices`).

Gradients of `gather` on a variable are IndexedSlices, so optimizers update only the rows
that were read (`SparseApply*`, `ScatterSub`).
"""

from __future__ import annotations

from typing import Any


class IndexedSlices:
    """Rows `values[i]` at positions `indices[i]` of a tensor of shape `dense_shape`.

    Attributes:
      values: `Tensor` [n, ...] of the row values.
      indices: int32/int64 `Tensor` [n] of the row positions (may repeat: rows add up).
      dense_shape: optional 1-D int `Tensor` with the full shape.
    """

    def __init__(self, values: Any, indices: Any, dense_shape: Any = None):
        self._values = values
        self._indices = indices
        self._dense_shape = dense_shape

    @property
    def values(self) -> Any:
        """The row values."""
        return self._values

    @property
    def indices(self) -> Any:
        """The row positions."""
        return self._indices

    @property
    def dense_shape(self) -> Any:
        """The full shape, or None."""
        return self._dense_shape

    @property
    def name(self) -> str:
        """The name of `values`."""
        return self._values.name

    @property
    def dtype(self) -> Any:
        """The element type."""
        return self._values.dtype

    @property
    def op(self) -> Any:
        """The op producing `values`."""
        return self._values.op

    @property
    def graph(self) -> Any:
        """The graph of `values`."""
        return self._values.graph

    @property
    def device(self) -> str:
        """The device of `values`."""
        return self._values.device

    def __repr__(self) -> str:
        shape = f", dense_shape={self._dense_shape!r}" if self._dense_shape is not None else ""
        return f"IndexedSlices(indices={self._indices!r}, values={self._values!r}{shape})"


class IndexedSlicesValue:
    """The fetched value of an `IndexedSlices` (NumPy arrays)."""

    def __init__(self, values: Any, indices: Any, dense_shape: Any = None):
        self.values = values
        self.indices = indices
        self.dense_shape = dense_shape

    def __repr__(self) -> str:
        return f"IndexedSlicesValue(values={self.values!r}, indices={self.indices!r})"
