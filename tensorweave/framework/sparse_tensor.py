"""`SparseTensor` and `SparseTensorValue` (follows TF 1.x `tf.SparseTensor`).

A sparse tensor is three dense tensors: `indices` int64 [N, rank], `values` [N] and
`dense_shape` int64 [rank]. `Session.run` fetches a `SparseTensor` as a
`SparseTensorValue` and feeds one (or an `(indices, values, dense_shape)` tuple) into a
`sparse_placeholder`.
"""

from __future__ import annotations

import collections
from typing import Any

from tensorweave.framework import dtypes, session_stack
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.framework.tensor_util import constant_value

SparseTensorValue = collections.namedtuple(
    "SparseTensorValue", ["indices", "values", "dense_shape"]
)


class SparseTensor:
    """A sparse tensor: `values[i]` at `indices[i]` of a tensor of shape `dense_shape`.

    Args:
      indices: int64 [N, rank] positions (row-major order for most ops).
      values: [N] values of any dtype.
      dense_shape: int64 [rank] shape of the dense tensor.
    """

    def __init__(self, indices: Any, values: Any, dense_shape: Any):
        self._indices = convert_to_tensor(indices, dtype=dtypes.int64, name="indices")
        self._values = convert_to_tensor(values, name="values")
        self._dense_shape = convert_to_tensor(dense_shape, dtype=dtypes.int64,
                                              name="dense_shape")

    @classmethod
    def from_value(cls, value: Any) -> SparseTensor:
        """A `SparseTensor` from a `SparseTensor` or `SparseTensorValue`."""
        if isinstance(value, SparseTensor):
            return value
        return cls(value.indices, value.values, value.dense_shape)

    @property
    def indices(self) -> Any:
        """int64 [N, rank] positions."""
        return self._indices

    @property
    def values(self) -> Any:
        """[N] values."""
        return self._values

    @property
    def dense_shape(self) -> Any:
        """int64 [rank] dense shape."""
        return self._dense_shape

    @property
    def dtype(self) -> Any:
        """The dtype of `values`."""
        return self._values.dtype

    @property
    def op(self) -> Any:
        """The op producing `values`."""
        return self._values.op

    @property
    def graph(self) -> Any:
        """The graph of the three tensors."""
        return self._indices.graph

    @property
    def shape(self) -> TensorShape:
        """The static dense shape (from a constant `dense_shape`, else its length)."""
        value = constant_value(self._dense_shape)
        if value is not None:
            return TensorShape([int(d) for d in value])
        n = self._dense_shape.shape.as_list()[0] if self._dense_shape.shape.ndims else None
        return TensorShape([None] * n) if n is not None else TensorShape(None)

    def get_shape(self) -> TensorShape:
        """Same as `shape`."""
        return self.shape

    def eval(self, feed_dict: Any = None, session: Any = None) -> SparseTensorValue:
        """Runs the three tensors in `session` (default: the default session)."""
        session = session or session_stack.get_default_session()
        if session is None:
            raise ValueError("Cannot evaluate SparseTensor without a default session")
        return session.run(self, feed_dict)

    def __repr__(self) -> str:
        return (f"SparseTensor(indices={self._indices!r}, values={self._values!r}, "
                f"dense_shape={self._dense_shape!r})")
