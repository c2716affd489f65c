"""Op definitions of the parsing ops: `ParseExample`, `ParseSingleExample`,
`ParseSingleSequenceExample`, `DecodeRaw`, `DecodeCSV`, `DecodeCompressed`,
`SerializeTensor`, `ParseTensor`, `DecodeBase64`, `EncodeBase64`, `ReadFile`,
`WriteFile`, `MatchingFiles` (TensorFlow's `core/ops/parsing_ops.cc`, `io_ops.cc`,
`string_ops.cc`: same op types, inputs, attrs and defaults)."""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import register_op
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape

# NOTE: TF restricts these lists to {float, int64, string}; the wrappers check it.


def _dense_shapes(op: Any, attr: str, batch: list[Any]) -> list[TensorShape]:
    out = []
    for s in op.get_attr(attr):
        dims = s.as_list() if s.ndims is not None else None
        out.append(unknown_shape() if dims is None else TensorShape(batch + dims))
    return out


def _parse_example_shape(op: Any) -> list[TensorShape]:
    n_sparse = op.get_attr("Nsparse")
    batch = op.inputs[0].shape
    b = batch.as_list()[0] if batch.ndims == 1 else None
    return (
        [TensorShape([None, 2])] * n_sparse
        + [TensorShape([None])] * n_sparse
        + [TensorShape([2])] * n_sparse
        + _dense_shapes(op, "dense_shapes", [b])
    )


register_op(
    "ParseExample",
    inputs=[
        "serialized: string", "names: string", "sparse_keys: Nsparse * string",
        "dense_keys: Ndense * string", "dense_defaults: Tdense",
    ],
    outputs=[
        "sparse_indices: Nsparse * int64", "sparse_values: sparse_types",
        "sparse_shapes: Nsparse * int64", "dense_values: Tdense",
    ],
    attrs=[
        "Nsparse: int >= 0", "Ndense: int >= 0", "sparse_types: list(type) >= 0",
        "Tdense: list(type) >= 0", "dense_shapes: list(shape) >= 0",
    ],
    shape_fn=_parse_example_shape,
)


def _parse_single_example_shape(op: Any) -> list[TensorShape]:
    n_sparse = op.get_attr("num_sparse")
    return (
        [TensorShape([None, 1])] * n_sparse
        + [TensorShape([None])] * n_sparse
        + [TensorShape([1])] * n_sparse
        + _dense_shapes(op, "dense_shapes", [])
    )


register_op(
    "ParseSingleExample",
    inputs=["serialized: string", "dense_defaults: Tdense"],
    outputs=[
        "sparse_indices: num_sparse * int64", "sparse_values: sparse_types",
        "sparse_shapes: num_sparse * int64", "dense_values: Tdense",
    ],
    attrs=[
        "num_sparse: int >= 0", "sparse_keys: list(string) >= 0",
        "dense_keys: list(string) >= 0", "sparse_types: list(type) >= 0",
        "Tdense: list(type) >= 0", "dense_shapes: list(shape) >= 0",
    ],
    shape_fn=_parse_single_example_shape,
)


def _parse_sequence_shape(op: Any) -> list[TensorShape]:
    ncs, nfs = op.get_attr("Ncontext_sparse"), op.get_attr("Nfeature_list_sparse")
    fl_dense = [
        unknown_shape() if s.ndims is None else TensorShape([None] + s.as_list())
        for s in op.get_attr("feature_list_dense_shapes")
    ]
    return (
        [TensorShape([None, 1])] * ncs + [TensorShape([None])] * ncs + [TensorShape([1])] * ncs
        + _dense_shapes(op, "context_dense_shapes", [])
        + [TensorShape([None, 2])] * nfs + [TensorShape([None])] * nfs
        + [TensorShape([2])] * nfs + fl_dense
    )


register_op(
    "ParseSingleSequenceExample",
    inputs=[
        "serialized: string", "feature_list_dense_missing_assumed_empty: string",
        "context_sparse_keys: Ncontext_sparse * string",
        "context_dense_keys: Ncontext_dense * string",
        "feature_list_sparse_keys: Nfeature_list_sparse * string",
        "feature_list_dense_keys: Nfeature_list_dense * string",
        "context_dense_defaults: Tcontext_dense", "debug_name: string",
    ],
    outputs=[
        "context_sparse_indices: Ncontext_sparse * int64",
        "context_sparse_values: context_sparse_types",
        "context_sparse_shapes: Ncontext_sparse * int64",
        "context_dense_values: Tcontext_dense",
        "feature_list_sparse_indices: Nfeature_list_sparse * int64",
        "feature_list_sparse_values: feature_list_sparse_types",
        "feature_list_sparse_shapes: Nfeature_list_sparse * int64",
        "feature_list_dense_values: feature_list_dense_types",
    ],
    attrs=[
        "Ncontext_sparse: int >= 0 = 0", "Ncontext_dense: int >= 0 = 0",
        "Nfeature_list_sparse: int >= 0 = 0", "Nfeature_list_dense: int >= 0 = 0",
        "context_sparse_types: list(type) >= 0 = []",
        "Tcontext_dense: list(type) >= 0 = []",
        "feature_list_dense_types: list(type) >= 0 = []",
        "context_dense_shapes: list(shape) >= 0 = []",
        "feature_list_sparse_types: list(type) >= 0 = []",
        "feature_list_dense_shapes: list(shape) >= 0 = []",
    ],
    shape_fn=_parse_sequence_shape,
)


def _decode_raw_shape(op: Any) -> list[TensorShape]:
    s = op.inputs[0].shape
    return [unknown_shape() if s.ndims is None else TensorShape(s.as_list() + [None])]


register_op(
    "DecodeRaw",
    inputs=["bytes: string"],
    outputs=["output: out_type"],
    attrs=[
        "out_type: {half, float, double, int32, uint16, uint8, int16, int8, int64, "
        "complex64, complex128, bool}",
        "little_endian: bool = true",
    ],
    shape_fn=_decode_raw_shape,
)


def _decode_csv_shape(op: Any) -> list[TensorShape]:
    return [op.inputs[0].shape] * len(op.outputs)


register_op(
    "DecodeCSV",
    inputs=["records: string", "record_defaults: OUT_TYPE"],
    outputs=["output: OUT_TYPE"],
    attrs=[
        "OUT_TYPE: list(type)",
        "field_delim: string = ','", "use_quote_delim: bool = true",
        "na_value: string = ''", "select_cols: list(int) = []",
    ],
    shape_fn=_decode_csv_shape,
)


def _same_shape(op: Any) -> list[TensorShape]:
    return [op.inputs[0].shape]


def _scalar(op: Any) -> list[TensorShape]:
    return [TensorShape([])]


register_op(
    "DecodeCompressed",
    inputs=["bytes: string"], outputs=["output: string"],
    attrs=["compression_type: string = ''"], shape_fn=_same_shape,
)
register_op("DecodeBase64", inputs=["input: string"], outputs=["output: string"],
            shape_fn=_same_shape)
register_op("EncodeBase64", inputs=["input: string"], outputs=["output: string"],
            attrs=["pad: bool = false"], shape_fn=_same_shape)
register_op("SerializeTensor", inputs=["tensor: T"], outputs=["serialized: string"],
            attrs=["T: type"], shape_fn=_scalar)
register_op("ParseTensor", inputs=["serialized: string"], outputs=["output: out_type"],
            attrs=["out_type: type"], shape_fn=lambda op: [unknown_shape()])
register_op("ReadFile", inputs=["filename: string"], outputs=["contents: string"],
            shape_fn=_scalar)
register_op("WriteFile", inputs=["filename: string", "contents: string"], is_stateful=True,
            shape_fn=lambda op: [])
register_op("MatchingFiles", inputs=["pattern: string"], outputs=["filenames: string"],
            shape_fn=lambda op: [TensorShape([None])])


def _parse_sequence_batch_shape(op: Any) -> list[TensorShape]:
    ncs, nfs = op.get_attr("Ncontext_sparse"), op.get_attr("Nfeature_list_sparse")
    nfd = op.get_attr("Nfeature_list_dense")
    fl_dense = [
        unknown_shape() if s.ndims is None else TensorShape([None, None] + s.as_list())
        for s in op.get_attr("feature_list_dense_shapes")
    ]
    return (
        [TensorShape([None, 2])] * ncs + [TensorShape([None])] * ncs
        + [TensorShape([2])] * ncs + _dense_shapes(op, "context_dense_shapes", [None])
        + [TensorShape([None, 3])] * nfs + [TensorShape([None])] * nfs
        + [TensorShape([3])] * nfs + fl_dense + [TensorShape([None])] * nfd
    )


register_op(
    "ParseSequenceExample",
    inputs=["serialized: string", "debug_name: string",
            "context_dense_defaults: Tcontext_dense"],
    outputs=[
        "context_sparse_indices: Ncontext_sparse * int64",
        "context_sparse_values: context_sparse_types",
        "context_sparse_shapes: Ncontext_sparse * int64",
        "context_dense_values: Tcontext_dense",
        "feature_list_sparse_indices: Nfeature_list_sparse * int64",
        "feature_list_sparse_values: feature_list_sparse_types",
        "feature_list_sparse_shapes: Nfeature_list_sparse * int64",
        "feature_list_dense_values: feature_list_dense_types",
        "feature_list_dense_lengths: Nfeature_list_dense * int64",
    ],
    attrs=[
        "feature_list_dense_missing_assumed_empty: list(string) >= 0",
        "context_sparse_keys: list(string) >= 0", "context_dense_keys: list(string) >= 0",
        "feature_list_sparse_keys: list(string) >= 0",
        "feature_list_dense_keys: list(string) >= 0",
        "Ncontext_sparse: int >= 0 = 0", "Ncontext_dense: int >= 0 = 0",
        "Nfeature_list_sparse: int >= 0 = 0", "Nfeature_list_dense: int >= 0 = 0",
        "context_sparse_types: list(type) >= 0 = []", "Tcontext_dense: list(type) >= 0 = []",
        "feature_list_dense_types: list(type) >= 0 = []",
        "context_dense_shapes: list(shape) >= 0 = []",
        "feature_list_sparse_types: list(type) >= 0 = []",
        "feature_list_dense_shapes: list(shape) >= 0 = []",
    ],
    shape_fn=_parse_sequence_batch_shape,
)
