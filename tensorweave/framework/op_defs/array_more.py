"""More array ops: sequences, ranges, matrix diagonals/bands, `Einsum`, set difference,
`Roll` and the bitwise ops.

Follows `tensorflow/core/ops/array_ops.cc`, `math_ops.cc`, `linalg_ops.cc` and
`bitwise_ops.cc` (op types, input/attr names and defaults).
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import register_op
from tensorweave.framework.op_defs._types import INTEGERS, REAL_NUMBER
from tensorweave.framework.shape_inference import (
    merge_shapes,
    op_error,
    static_int,
    static_shape_value,
    with_rank,
    with_rank_at_least,
)
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape


def _same(op: Any) -> list[TensorShape]:
    return [op.inputs[0].shape]


def _reverse_sequence_shape(op: Any) -> list[TensorShape]:
    x = op.inputs[0].shape
    with_rank(op, op.inputs[1].shape, 1)
    seq_dim, batch_dim = op.get_attr("seq_dim"), op.get_attr("batch_dim")
    if x.ndims is not None:
        for what, d in (("seq_dim", seq_dim), ("batch_dim", batch_dim)):
            if not 0 <= d < x.ndims:
                raise op_error(op, f"Invalid {what} {d} for input of rank {x.ndims}")
        if seq_dim == batch_dim:
            raise op_error(op, f"seq_dim and batch_dim must not be the same: {seq_dim}")
        merge_shapes(op, TensorShape([x.as_list()[batch_dim]]), op.inputs[1].shape)
    return [x]


def _lin_space_shape(op: Any) -> list[TensorShape]:
    for t in op.inputs:
        with_rank(op, t.shape, 0)
    return [TensorShape([static_int(op.inputs[2])])]


def _matrix_diag_shape(op: Any) -> list[TensorShape]:
    d = with_rank_at_least(op, op.inputs[0].shape, 1)
    if d.ndims is None:
        return [unknown_shape()]
    return [TensorShape(d.as_list() + d.as_list()[-1:])]


def _matrix_diag_part_shape(op: Any) -> list[TensorShape]:
    x = with_rank_at_least(op, op.inputs[0].shape, 2)
    if x.ndims is None:
        return [unknown_shape()]
    rows, cols = x.as_list()[-2:]
    n = None if rows is None or cols is None else min(rows, cols)
    return [TensorShape(x.as_list()[:-2] + [n])]


def _matrix_set_diag_shape(op: Any) -> list[TensorShape]:
    x = with_rank_at_least(op, op.inputs[0].shape, 2)
    with_rank_at_least(op, op.inputs[1].shape, 1)
    if x.ndims is not None and op.inputs[1].shape.ndims is not None:
        merge_shapes(op, _matrix_diag_part_shape(op)[0], op.inputs[1].shape)
    return [x]


def _diag_shape(op: Any) -> list[TensorShape]:
    d = op.inputs[0].shape
    if d.ndims is None:
        return [unknown_shape()]
    return [TensorShape(d.as_list() * 2)]


def _diag_part_shape(op: Any) -> list[TensorShape]:
    x = op.inputs[0].shape
    if x.ndims is None:
        return [unknown_shape()]
    if x.ndims % 2:
        raise op_error(op, f"Input must have even rank <= 6, input rank is {x.ndims}")
    half = x.ndims // 2
    return [merge_shapes(op, TensorShape(x.as_list()[:half]), TensorShape(x.as_list()[half:]))]


def _einsum_tokens(term: str) -> list[str]:
    """The labels of an einsum term, `...` as one token."""
    return ["..." if c == "." else c for c in term.replace("...", ".")]


def _einsum_shape(op: Any) -> list[TensorShape]:
    eq = op.get_attr("equation")
    eq = (eq.decode() if isinstance(eq, bytes) else eq).replace(" ", "")
    if "->" not in eq:
        return [unknown_shape()]
    lhs, out = eq.split("->")
    terms = [_einsum_tokens(t) for t in lhs.split(",")]
    if len(terms) != len(op.inputs):
        raise op_error(op, f"Expecting {len(terms)} inputs but got {len(op.inputs)}")
    sizes: dict[str, int | None] = {}
    ellipsis = TensorShape([])
    for tokens, t in zip(terms, op.inputs):
        if t.shape.ndims is None:
            if "..." in tokens:
                return [unknown_shape()]
            continue
        dims = t.shape.as_list()
        labels = [c for c in tokens if c != "..."]
        width = len(dims) - len(labels)
        if width < 0 or (width and "..." not in tokens):
            raise op_error(op, f"Expected input of rank {len(labels)} for term "
                           f"{''.join(tokens)!r} but got rank {len(dims)}")
        pos = tokens.index("...") if "..." in tokens else len(tokens)
        block = dims[pos : pos + width]
        ellipsis = broadcast_static(op, ellipsis, TensorShape(block))
        rest = dims[:pos] + dims[pos + width :]
        for c, d in zip(labels, rest):
            if d is not None and d != 1:
                sizes[c] = d
            else:
                sizes.setdefault(c, d)
    result: list[int | None] = []
    for c in _einsum_tokens(out):
        if c == "...":
            if ellipsis.ndims is None:
                return [unknown_shape()]
            result += ellipsis.as_list()
        else:
            result.append(sizes.get(c))
    return [TensorShape(result)]


def _cross_shape(op: Any) -> list[TensorShape]:
    a = with_rank_at_least(op, op.inputs[0].shape, 1)
    return [merge_shapes(op, a, op.inputs[1].shape)]


def broadcast_static(op: Any, x: TensorShape, y: TensorShape) -> TensorShape:
    """The NumPy broadcast of two static shapes (unknown dims stay unknown unless paired
    with a known dim > 1); ValueError in TensorFlow's words for incompatible dims."""
    if x.ndims is None or y.ndims is None:
        return unknown_shape()
    rank = max(x.ndims, y.ndims)
    xs = [1] * (rank - x.ndims) + x.as_list()
    ys = [1] * (rank - y.ndims) + y.as_list()
    dims: list[int | None] = []
    for a, b in zip(xs, ys):
        if a == 1 or a is None and b not in (1, None):
            dims.append(b)
        elif b in (1, None) or a == b:
            dims.append(a)
        else:
            raise op_error(op, f"Dimensions must be equal, but are {a} and {b}")
    return TensorShape(dims)


def _binary_same(op: Any) -> list[TensorShape]:
    return [broadcast_static(op, op.inputs[0].shape, op.inputs[1].shape)]


register_op(
    "ReverseSequence",
    inputs=["input: T", "seq_lengths: Tlen"],
    outputs=["output: T"],
    attrs=["seq_dim: int", "batch_dim: int = 0", "T: type", "Tlen: {int32, int64} = DT_INT64"],
    shape_fn=_reverse_sequence_shape,
)
register_op(
    "LinSpace",
    inputs=["start: T", "stop: T", "num: Tidx"],
    outputs=["output: T"],
    attrs=["T: {half, float, double}", "Tidx: {int32, int64} = DT_INT32"],
    shape_fn=_lin_space_shape,
)
register_op(
    "UniqueWithCounts",
    inputs=["x: T"],
    outputs=["y: T", "idx: out_idx", "count: out_idx"],
    attrs=["T: type", "out_idx: {int32, int64} = DT_INT32"],
    shape_fn=lambda op: [
        TensorShape([None]),
        with_rank(op, op.inputs[0].shape, 1),
        TensorShape([None]),
    ],
)
register_op(
    "ListDiff",
    inputs=["x: T", "y: T"],
    outputs=["out: T", "idx: out_idx"],
    attrs=["T: type", "out_idx: {int32, int64} = DT_INT32"],
    shape_fn=lambda op: [TensorShape([None]), TensorShape([None])],
)
register_op(
    "MatrixBandPart",
    inputs=["input: T", "num_lower: Tindex", "num_upper: Tindex"],
    outputs=["band: T"],
    attrs=["T: type", "Tindex: {int32, int64} = DT_INT64"],
    shape_fn=_same,
)
register_op(
    "MatrixDiag",
    inputs=["diagonal: T"],
    outputs=["output: T"],
    attrs=["T: type"],
    shape_fn=_matrix_diag_shape,
)
register_op(
    "MatrixDiagPart",
    inputs=["input: T"],
    outputs=["diagonal: T"],
    attrs=["T: type"],
    shape_fn=_matrix_diag_part_shape,
)
register_op(
    "MatrixSetDiag",
    inputs=["input: T", "diagonal: T"],
    outputs=["output: T"],
    attrs=["T: type"],
    shape_fn=_matrix_set_diag_shape,
)
register_op(
    "Diag",
    inputs=["diagonal: T"],
    outputs=["output: T"],
    attrs=["T: {half, float, double, int32, int64, complex64, complex128}"],
    shape_fn=_diag_shape,
)
register_op(
    "DiagPart",
    inputs=["input: T"],
    outputs=["diagonal: T"],
    attrs=["T: {half, float, double, int32, int64, complex64, complex128}"],
    shape_fn=_diag_part_shape,
)
register_op(
    "Einsum",
    inputs=["inputs: N * T"],
    outputs=["output: T"],
    attrs=["equation: string", "N: int >= 1", "T: type"],
    shape_fn=_einsum_shape,
)
register_op(
    "Cross",
    inputs=["a: T", "b: T"],
    outputs=["product: T"],
    attrs=[f"T: {{{REAL_NUMBER}}}"],
    shape_fn=_cross_shape,
)
register_op(
    "Roll",
    inputs=["input: T", "shift: Tshift", "axis: Taxis"],
    outputs=["output: T"],
    attrs=["T: type", "Tshift: {int32, int64}", "Taxis: {int32, int64}"],
    shape_fn=_same,
)
for _name in ("BitwiseAnd", "BitwiseOr", "BitwiseXor", "LeftShift", "RightShift"):
    register_op(
        _name,
        inputs=["x: T", "y: T"],
        outputs=["z: T"],
        attrs=[f"T: {{{INTEGERS}}}"],
        shape_fn=_binary_same,
        is_commutative=_name.startswith("Bitwise"),
    )
register_op(
    "Invert", inputs=["x: T"], outputs=["y: T"], attrs=[f"T: {{{INTEGERS}}}"], shape_fn=_same
)
register_op(
    "PopulationCount",
    inputs=["x: T"],
    outputs=["y: uint8"],
    attrs=[f"T: {{{INTEGERS}}}"],
    shape_fn=_same,
)


def _broadcast_to_shape(op: Any) -> list[TensorShape]:
    from_shape = op.inputs[0].shape
    out = static_shape_value(op.inputs[1])
    if from_shape.ndims is not None and out.ndims is not None:
        if from_shape.ndims > out.ndims:
            raise op_error(op, f"Rank of input ({from_shape.ndims}) must be no greater than "
                           f"rank of output shape ({out.ndims})")
        pad = out.ndims - from_shape.ndims
        for i, d in enumerate(from_shape.as_list()):
            o = out.as_list()[pad + i]
            if d not in (None, 1) and o is not None and d != o:
                raise op_error(op, f"Incompatible shapes: {from_shape.as_list()} vs. "
                               f"{out.as_list()}")
    return [out]


register_op(
    "BroadcastTo",
    inputs=["input: T", "shape: Tidx"],
    outputs=["output: T"],
    attrs=["T: type", "Tidx: {int32, int64} = DT_INT32"],
    shape_fn=_broadcast_to_shape,
)
register_op(
    "BroadcastArgs",
    inputs=["s0: T", "s1: T"],
    outputs=["r0: T"],
    attrs=["T: {int32, int64} = DT_INT32"],
    shape_fn=lambda op: [TensorShape([None])],
)
for _name in ("LowerBound", "UpperBound"):
    register_op(
        _name,
        inputs=["sorted_inputs: T", "values: T"],
        outputs=["output: out_type"],
        attrs=["T: type", "out_type: {int32, int64} = DT_INT32"],
        shape_fn=lambda op: [op.inputs[1].shape],
    )
register_op(
    "UnravelIndex",
    inputs=["indices: Tidx", "dims: Tidx"],
    outputs=["output: Tidx"],
    attrs=["Tidx: {int32, int64} = DT_INT32"],
    shape_fn=lambda op: [
        TensorShape([op.inputs[1].shape.num_elements()])
        if op.inputs[0].shape.ndims == 0
        else TensorShape([op.inputs[1].shape.num_elements(), op.inputs[0].shape.num_elements()])
    ],
)
