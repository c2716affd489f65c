"""Random op definitions: RandomUniform, RandomStandardNormal, TruncatedNormal, ...

Follows TensorFlow's `core/ops/random_ops.cc` (op types, input/attr names and defaults).
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import register_op
from tensorweave.framework.shape_inference import unchanged_shape
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.framework.tensor_util import constant_value, constant_value_as_shape

_SEED_ATTRS = ["seed: int = 0", "seed2: int = 0"]
_REAL_NUMBER_TYPES = (
    "{float, double, int32, uint8, int16, int8, int64, uint16, half, uint32, uint64}"
)


def _shape_from_input(op: Any) -> list[TensorShape]:
    op.inputs[0].shape.with_rank(1)
    return [constant_value_as_shape(op.inputs[0])]


def _uniform_int_shape(op: Any) -> list[TensorShape]:
    for t, what in ((op.inputs[1], "minval"), (op.inputs[2], "maxval")):
        if not t.shape.is_compatible_with(TensorShape([])):
            raise ValueError(
                f"Shape must be rank 0 but is rank {t.shape.ndims} for '{op.name}' "
                f"(op: '{op.type}') input {what} with shape {t.shape}."
            )
    return _shape_from_input(op)


def _multinomial_shape(op: Any) -> list[TensorShape]:
    logits = op.inputs[0].shape.with_rank(2)
    op.inputs[1].shape.with_rank(0)
    n = constant_value(op.inputs[1])
    return [TensorShape([logits[0], None if n is None else int(n)])]


for _op_type in ("RandomUniform", "RandomStandardNormal", "TruncatedNormal"):
    register_op(
        _op_type,
        inputs=["shape: T"],
        outputs=["output: dtype"],
        attrs=[*_SEED_ATTRS, "dtype: {half, float, double}", "T: {int32, int64}"],
        is_stateful=True,
        shape_fn=_shape_from_input,
    )
register_op(
    "RandomUniformInt",
    inputs=["shape: T", "minval: Tout", "maxval: Tout"],
    outputs=["output: Tout"],
    attrs=[*_SEED_ATTRS, "Tout: {int32, int64}", "T: {int32, int64}"],
    is_stateful=True,
    shape_fn=_uniform_int_shape,
)
register_op(
    "RandomShuffle",
    inputs=["value: T"],
    outputs=["output: T"],
    attrs=[*_SEED_ATTRS, "T: type"],
    is_stateful=True,
    shape_fn=unchanged_shape,
)
register_op(
    "Multinomial",
    inputs=["logits: T", "num_samples: int32"],
    outputs=["output: output_dtype"],
    attrs=[*_SEED_ATTRS, f"T: {_REAL_NUMBER_TYPES}", "output_dtype: {int32, int64} = DT_INT64"],
    is_stateful=True,
    shape_fn=_multinomial_shape,
)
