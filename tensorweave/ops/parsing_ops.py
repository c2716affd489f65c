"""Parsing `tf.train.Example` records: `tf.io.parse_example`, `parse_single_example`,
`parse_single_sequence_example`, the feature specs, `decode_raw` and `decode_csv`
(TensorFlow's `python/ops/parsing_ops.py`).

`VarLenFeature`s parse to a `tf.SparseTensor` (indices int64 [N, rank], values [N],
dense_shape int64 [rank]), as in TensorFlow; `Session.run` fetches it as a
`SparseTensorValue`.
"""

from __future__ import annotations

import collections
from typing import Any

import numpy as np

from tensorweave.framework import dtypes as dtypes_lib
from tensorweave.framework import graph as graph_mod
from tensorweave.framework import op_defs  # noqa: F401  (registers the parsing ops)
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape, as_shape
from tensorweave.ops import constant_op
from tensorweave.ops.gradients_impl import no_gradient

for _op in ("ParseExample", "ParseSingleExample", "ParseSingleSequenceExample",
            "ParseSequenceExample", "DecodeRaw",
            "DecodeCSV"):
    no_gradient(_op)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A variable-length feature, parsed to sparse parts (`tf.io.VarLenFeature`)."""


class FixedLenFeature(
    collections.namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"])
):
    """A fixed-shape feature, parsed to a dense tensor (`tf.io.FixedLenFeature`)."""

    def __new__(cls, shape: Any, dtype: Any, default_value: Any = None):
        """Fills TensorFlow's defaults."""
        return super().__new__(cls, shape, dtype, default_value)


class FixedLenSequenceFeature(
    collections.namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"]
    )
):
    """A sequence of fixed-shape values (`tf.io.FixedLenSequenceFeature`)."""

    def __new__(cls, shape: Any, dtype: Any, allow_missing: bool = False,
                default_value: Any = None):
        """Fills TensorFlow's defaults."""
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


class SparseFeature(
    collections.namedtuple(
        "SparseFeature", ["index_key", "value_key", "dtype", "size", "already_sorted"]
    )
):
    """Declared for compatibility (`tf.io.SparseFeature`); parsing it is not supported."""

    def __new__(cls, index_key: Any, value_key: Any, dtype: Any, size: Any,
                already_sorted: bool = False):
        """Fills TensorFlow's defaults."""
        return super().__new__(cls, index_key, value_key, dtype, size, already_sorted)


class RaggedFeature(collections.namedtuple("RaggedFeature", ["dtype", "value_key"])):
    """Declared for compatibility (`tf.io.RaggedFeature`); parsing it is not supported."""

    def __new__(cls, dtype: Any, value_key: Any = None, **unused: Any):
        """Fills TensorFlow's defaults."""
        return super().__new__(cls, dtype, value_key)


_ALLOWED = (dtypes_lib.float32, dtypes_lib.int64, dtypes_lib.string)


def _split_features(features: dict[str, Any], what: str) -> tuple[list, list]:
    """(sparse [(key, dtype)], dense [(key, dtype, shape, default)]) in sorted key order.

    Raises:
      ValueError: for an empty spec, an unsupported dtype or feature kind.
    """
    if not features:
        raise ValueError(f"Missing: features was {features}.")
    sparse, dense = [], []
    for key in sorted(features):
        spec = features[key]
        dtype = dtypes_lib.as_dtype(spec.dtype)
        if dtype not in _ALLOWED:
            raise ValueError(f"Unsupported {type(spec).__name__} dtype {dtype.name} for "
                             f"feature {key!r} in {what}; use float32, int64 or string.")
        if isinstance(spec, VarLenFeature):
            sparse.append((key, dtype))
        elif isinstance(spec, FixedLenFeature):
            dense.append((key, dtype, as_shape(spec.shape), spec.default_value))
        elif isinstance(spec, FixedLenSequenceFeature):
            if not spec.allow_missing:
                raise ValueError(f"Unsupported: FixedLenSequenceFeature requires "
                                 f"allow_missing to be True (feature {key!r}).")
            shape = TensorShape([None] + as_shape(spec.shape).as_list())
            dense.append((key, dtype, shape, spec.default_value))
        else:
            raise ValueError(f"Unsupported feature type {type(spec).__name__} for {key!r}")
    return sparse, dense


def _default_tensor(key: str, dtype: Any, shape: TensorShape, value: Any) -> Any:
    """The `dense_defaults` input: empty for a required feature, else `shape`-shaped."""
    if value is None:
        return constant_op.constant([], dtype=dtype, name=f"key_{key}")
    arr = np.asarray(value, dtype=object if dtype == dtypes_lib.string else dtype.as_numpy_dtype)
    if shape.is_fully_defined():
        dims = shape.as_list()
        arr = np.broadcast_to(arr.reshape(()), dims) if arr.size == 1 else arr.reshape(dims)
    return constant_op.constant(np.array(arr), dtype=dtype, name=f"key_{key}")


def _assemble(outputs: list[Any], sparse: list, dense: list) -> dict[str, Any]:
    n = len(sparse)
    result: dict[str, Any] = {}
    for i, (key, _) in enumerate(sparse):
        result[key] = SparseTensor(outputs[i], outputs[n + i], outputs[2 * n + i])
    for i, (key, *_) in enumerate(dense):
        result[key] = outputs[3 * n + i]
    return result


def parse_example(serialized: Any, features: dict[str, Any], name: str | None = None,
                  example_names: Any = None) -> dict[str, Any]:
    """Parses a batch of serialized `Example`s (`tf.io.parse_example`, the `ParseExample` op).

    Args:
      serialized: string [batch], serialized `Example` protos.
      features: key -> `FixedLenFeature` | `VarLenFeature` | `FixedLenSequenceFeature`
        (with `allow_missing=True`).
      name: a name scope for the ops.
      example_names: optional string [batch], names used in error messages.

    Returns:
      key -> dense Tensor [batch] + shape, or `SparseTensor` (indices int64 [N, 2]) for
      `VarLenFeature`s.

    Raises:
      ValueError: for an invalid spec. At run time `InvalidArgumentError` naming the key
        for missing required features, a type mismatch or a wrong number of values.
    """
    sparse, dense = _split_features(features, "parse_example")
    with graph_mod.name_scope(name, "ParseExample", [serialized]):
        names = [] if example_names is None else example_names
        defaults = [_default_tensor(k, dt, sh, dv) for k, dt, sh, dv in dense]
        outputs = apply_op(
            "ParseExample",
            serialized=convert_to_tensor(serialized, dtype=dtypes_lib.string),
            names=convert_to_tensor(names, dtype=dtypes_lib.string),
            sparse_keys=[convert_to_tensor(k, dtypes_lib.string) for k, _ in sparse],
            dense_keys=[convert_to_tensor(k, dtypes_lib.string) for k, *_ in dense],
            dense_defaults=defaults,
            sparse_types=[dt for _, dt in sparse],
            dense_shapes=[sh for _, _, sh, _ in dense],
            name="ParseExample",
        )
    return _assemble(_as_list(outputs), sparse, dense)


def _as_list(outputs: Any) -> list[Any]:
    """The flat output tensors of `apply_op`'s result (lists are grouped per output arg)."""
    if not isinstance(outputs, list):
        return [outputs]
    flat: list[Any] = []
    for group in outputs:
        flat.extend(group if isinstance(group, list) else [group])
    return flat


def parse_single_example(serialized: Any, features: dict[str, Any], name: str | None = None,
                         example_names: Any = None) -> dict[str, Any]:
    """Parses one serialized `Example` (`tf.io.parse_single_example`, `ParseSingleExample`).

    Args:
      serialized: string [], one serialized `Example`.
      features: as for `parse_example`.
      name: a name scope for the ops.
      example_names: ignored (TensorFlow uses it in error messages).

    Returns:
      key -> dense Tensor of the feature's shape, or `SparseTensor` (indices int64 [N, 1]).

    Raises:
      ValueError: for an invalid spec. At run time `InvalidArgumentError` naming the key.
    """
    sparse, dense = _split_features(features, "parse_single_example")
    with graph_mod.name_scope(name, "ParseSingleExample", [serialized]):
        defaults = [_default_tensor(k, dt, sh, dv) for k, dt, sh, dv in dense]
        outputs = apply_op(
            "ParseSingleExample",
            serialized=convert_to_tensor(serialized, dtype=dtypes_lib.string),
            dense_defaults=defaults,
            num_sparse=len(sparse),
            sparse_keys=[k for k, _ in sparse],
            dense_keys=[k for k, *_ in dense],
            sparse_types=[dt for _, dt in sparse],
            dense_shapes=[sh for _, _, sh, _ in dense],
            name="ParseSingleExample",
        )
    return _assemble(_as_list(outputs), sparse, dense)


def parse_single_sequence_example(
    serialized: Any, context_features: dict[str, Any] | None = None,
    sequence_features: dict[str, Any] | None = None, example_name: Any = None,
    name: str | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Parses one serialized `SequenceExample` (`tf.io.parse_single_sequence_example`).

    Args:
      serialized: string [], one serialized `SequenceExample`.
      context_features: key -> `FixedLenFeature` | `VarLenFeature`.
      sequence_features: key -> `FixedLenSequenceFeature` | `VarLenFeature`; dense
        sequences parse to [steps] + shape, sparse ones to indices int64 [N, 2].
      example_name: string [], a name used in error messages.
      name: a name scope for the ops.

    Returns:
      (context dict, sequence dict).

    Raises:
      ValueError: for an invalid spec. At run time `InvalidArgumentError` naming the key.
    """
    cs, cd, fs, fd = _sequence_specs(context_features, sequence_features)
    s = dtypes_lib.string
    with graph_mod.name_scope(name, "ParseSingleSequenceExample", [serialized]):
        outputs = _as_list(apply_op(
            "ParseSingleSequenceExample",
            serialized=convert_to_tensor(serialized, dtype=s),
            feature_list_dense_missing_assumed_empty=convert_to_tensor(
                [k for k, _, _, missing in fd if missing], dtype=s),
            context_sparse_keys=[convert_to_tensor(k, s) for k, _ in cs],
            context_dense_keys=[convert_to_tensor(k, s) for k, *_ in cd],
            feature_list_sparse_keys=[convert_to_tensor(k, s) for k, _ in fs],
            feature_list_dense_keys=[convert_to_tensor(k, s) for k, *_ in fd],
            context_dense_defaults=[_default_tensor(k, dt, sh, dv) for k, dt, sh, dv in cd],
            debug_name=convert_to_tensor(example_name or "", dtype=s),
            context_sparse_types=[dt for _, dt in cs],
            context_dense_shapes=[sh for _, _, sh, _ in cd],
            feature_list_sparse_types=[dt for _, dt in fs],
            feature_list_dense_types=[dt for _, dt, _, _ in fd],
            feature_list_dense_shapes=[sh for _, _, sh, _ in fd],
            name="ParseSingleSequenceExample",
        ))
    n_ctx = 3 * len(cs) + len(cd)
    return _assemble(outputs[:n_ctx], cs, cd), _assemble(outputs[n_ctx:], fs, fd)


def _sequence_specs(context_features: Any, sequence_features: Any) -> tuple:
    """(context sparse, context dense, list sparse, list dense) specs in key order."""
    context_features = context_features or {}
    sequence_features = sequence_features or {}
    if not context_features and not sequence_features:
        raise ValueError("Missing features.")
    cs, cd = _split_features(context_features, "context") if context_features else ([], [])
    fs, fd = [], []
    for key in sorted(sequence_features):
        spec = sequence_features[key]
        if isinstance(spec, VarLenFeature):
            fs.append((key, dtypes_lib.as_dtype(spec.dtype)))
        elif isinstance(spec, FixedLenSequenceFeature):
            fd.append((key, dtypes_lib.as_dtype(spec.dtype), as_shape(spec.shape),
                       spec.allow_missing))
        else:
            raise ValueError(f"Unsupported sequence feature {type(spec).__name__} for {key!r}")
    return cs, cd, fs, fd


def parse_sequence_example(
    serialized: Any, context_features: dict[str, Any] | None = None,
    sequence_features: dict[str, Any] | None = None, example_names: Any = None,
    name: str | None = None,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Parses a batch of serialized `SequenceExample`s (`tf.io.parse_sequence_example`).

    Args:
      serialized: string [batch].
      context_features: key -> `FixedLenFeature` | `VarLenFeature`.
      sequence_features: key -> `FixedLenSequenceFeature` (padded with zeros to the longest
        sequence: [batch, steps] + shape) | `VarLenFeature` (indices int64 [N, 3]).
      example_names: optional string [batch] used in error messages.
      name: a name scope for the ops.

    Returns:
      (context dict, feature list dict, lengths dict: int64 [batch] per dense sequence).

    Raises:
      ValueError: for an invalid spec. At run time `InvalidArgumentError` naming the key.
    """
    cs, cd, fs, fd = _sequence_specs(context_features, sequence_features)
    s = dtypes_lib.string
    with graph_mod.name_scope(name, "ParseSequenceExample", [serialized]):
        outputs = _as_list(apply_op(
            "ParseSequenceExample",
            serialized=convert_to_tensor(serialized, dtype=s),
            debug_name=convert_to_tensor([] if example_names is None else example_names, s),
            context_dense_defaults=[_default_tensor(k, dt, sh, dv) for k, dt, sh, dv in cd],
            feature_list_dense_missing_assumed_empty=[k for k, _, _, m in fd if m],
            context_sparse_keys=[k for k, _ in cs], context_dense_keys=[k for k, *_ in cd],
            feature_list_sparse_keys=[k for k, _ in fs],
            feature_list_dense_keys=[k for k, *_ in fd],
            Ncontext_sparse=len(cs), Ncontext_dense=len(cd), Nfeature_list_sparse=len(fs),
            Nfeature_list_dense=len(fd),
            context_sparse_types=[dt for _, dt in cs],
            context_dense_shapes=[sh for _, _, sh, _ in cd],
            feature_list_sparse_types=[dt for _, dt in fs],
            feature_list_dense_types=[dt for _, dt, _, _ in fd],
            feature_list_dense_shapes=[sh for _, _, sh, _ in fd],
            name="ParseSequenceExample",
        ))
    n_ctx, n_fl = 3 * len(cs) + len(cd), 3 * len(fs) + len(fd)
    lengths = dict(zip([k for k, *_ in fd], outputs[n_ctx + n_fl:]))
    return (_assemble(outputs[:n_ctx], cs, cd), _assemble(outputs[n_ctx:n_ctx + n_fl], fs, fd),
            lengths)


def decode_raw(input_bytes: Any = None, out_type: Any = None, little_endian: bool = True,
               name: str | None = None, bytes: Any = None) -> Any:  # noqa: A002
    """Reinterprets the bytes of strings as numbers (`tf.io.decode_raw`, `DecodeRaw`).

    Args:
      input_bytes: string tensor; every element must have the same length.
      out_type: the numeric dtype.
      little_endian: the byte order of the data.
      name: the op name.
      bytes: the deprecated alias of `input_bytes`.

    Returns:
      out_type [*input.shape, length // itemsize].

    Raises:
      InvalidArgumentError: at run time, for strings of different lengths.
    """
    data = input_bytes if input_bytes is not None else bytes
    return apply_op("DecodeRaw", bytes=convert_to_tensor(data, dtype=dtypes_lib.string),
                    out_type=dtypes_lib.as_dtype(out_type), little_endian=little_endian,
                    name=name)


def decode_csv(records: Any, record_defaults: list[Any], field_delim: str = ",",
               use_quote_delim: bool = True, name: str | None = None, na_value: str = "",
               select_cols: Any = None) -> list[Any]:
    """Parses CSV records into one tensor per column (`tf.io.decode_csv`, `DecodeCSV`).

    Args:
      records: string tensor of any shape.
      record_defaults: one per column: a list/tensor with the default value (or empty for
        a required column); its dtype (float32, float64, int32, int64, string) is the
        column's.
      field_delim: the one-character field separator.
      use_quote_delim: whether double quotes delimit fields (RFC 4180).
      name: the op name.
      na_value: a string that stands for a missing value.
      select_cols: the sorted column indices to keep, or None for all.

    Returns:
      A list of tensors shaped like `records`.

    Raises:
      InvalidArgumentError: at run time for a wrong number of fields, a missing required
        field or a value that does not parse.
    """
    defaults = [convert_to_tensor(d) for d in record_defaults]
    out = apply_op("DecodeCSV", records=convert_to_tensor(records, dtype=dtypes_lib.string),
                   record_defaults=defaults, field_delim=field_delim,
                   use_quote_delim=use_quote_delim, na_value=na_value,
                   select_cols=list(select_cols or []), name=name)
    return _as_list(out)


__all__ = [
    "FixedLenFeature",
    "FixedLenSequenceFeature",
    "RaggedFeature",
    "SparseFeature",
    "VarLenFeature",
    "decode_csv",
    "decode_raw",
    "parse_example",
    "parse_sequence_example",
    "parse_single_example",
    "parse_single_sequence_example",
]
