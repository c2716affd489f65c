"""More random ops: `RandomGamma` (+ `RandomGammaGrad`), `RandomPoissonV2` and the
stateless random ops, whose output is a pure function of a `seed` input of shape [2]
(follows `tensorflow/core/ops/random_ops.cc` and `stateless_random_ops.cc`)."""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import register_op
from tensorweave.framework.op_defs.array_more import broadcast_static
from tensorweave.framework.shape_inference import static_shape_value, static_value
from tensorweave.framework.tensor_shape import TensorShape

_SEEDS = ["seed: int = 0", "seed2: int = 0"]
_FLOATS = "{half, float, double}"
_STATELESS = ["shape: T", "seed: Tseed"]
_STATELESS_ATTRS = ["T: {int32, int64} = DT_INT32", "Tseed: {int32, int64} = DT_INT64"]


def _shape_then_params(op: Any) -> list[TensorShape]:
    """`shape` followed by the parameter's shape (RandomGamma, RandomPoissonV2)."""
    return [static_shape_value(op.inputs[0]).concatenate(op.inputs[1].shape)]


def _stateless_shape(op: Any) -> list[TensorShape]:
    return [static_shape_value(op.inputs[0])]


def _stateless_multinomial_shape(op: Any) -> list[TensorShape]:
    logits = op.inputs[0].shape
    n = static_value(op.inputs[1])
    rows = logits.as_list()[0] if logits.ndims == 2 else None
    return [TensorShape([rows, None if n is None else int(n)])]


register_op(
    "RandomGamma",
    inputs=["shape: S", "alpha: T"],
    outputs=["output: T"],
    attrs=[*_SEEDS, "S: {int32, int64}", f"T: {_FLOATS}"],
    is_stateful=True,
    shape_fn=_shape_then_params,
)
register_op(
    "RandomGammaGrad",
    inputs=["alpha: T", "sample: T"],
    outputs=["output: T"],
    attrs=["T: {float, double}"],
    shape_fn=lambda op: [broadcast_static(op, op.inputs[0].shape, op.inputs[1].shape)],
)
register_op(
    "IgammaGradA",
    inputs=["a: T", "x: T"],
    outputs=["z: T"],
    attrs=["T: {float, double}"],
    shape_fn=lambda op: [broadcast_static(op, op.inputs[0].shape, op.inputs[1].shape)],
)
register_op(
    "RandomPoissonV2",
    inputs=["shape: S", "rate: R"],
    outputs=["output: dtype"],
    attrs=[*_SEEDS, "S: {int32, int64}", "R: {half, float, double, int32, int64} = DT_DOUBLE",
           "dtype: {half, float, double, int32, int64} = DT_INT64"],
    is_stateful=True,
    shape_fn=_shape_then_params,
)
for _name in ("StatelessRandomUniform", "StatelessRandomNormal", "StatelessTruncatedNormal"):
    register_op(
        _name,
        inputs=_STATELESS,
        outputs=["output: dtype"],
        attrs=[f"dtype: {_FLOATS} = DT_FLOAT", *_STATELESS_ATTRS],
        shape_fn=_stateless_shape,
    )
register_op(
    "StatelessRandomUniformInt",
    inputs=[*_STATELESS, "minval: dtype", "maxval: dtype"],
    outputs=["output: dtype"],
    attrs=["dtype: {int32, int64}", "T: {int32, int64}", "Tseed: {int32, int64} = DT_INT64"],
    shape_fn=_stateless_shape,
)
register_op(
    "StatelessMultinomial",
    inputs=["logits: T", "num_samples: int32", "seed: Tseed"],
    outputs=["output: output_dtype"],
    attrs=["T: {half, float, double, int32, int64}", "Tseed: {int32, int64} = DT_INT64",
           "output_dtype: {int32, int64} = DT_INT64"],
    shape_fn=_stateless_multinomial_shape,
)
register_op(
    "StatelessRandomGammaV2",
    inputs=[*_STATELESS, "alpha: dtype"],
    outputs=["output: dtype"],
    attrs=[f"dtype: {_FLOATS}", "T: {int32, int64}", "Tseed: {int32, int64} = DT_INT64"],
    shape_fn=_stateless_shape,
)
register_op(
    "StatelessRandomPoisson",
    inputs=[*_STATELESS, "lam: Rtype"],
    outputs=["output: dtype"],
    attrs=["Rtype: {half, float, double, int32, int64}",
           "dtype: {half, float, double, int32, int64}", "T: {int32, int64}",
           "Tseed: {int32, int64} = DT_INT64"],
    shape_fn=_stateless_shape,
)
register_op(
    "StatelessRandomBinomial",
    inputs=["shape: S", "seed: Tseed", "counts: T", "probs: T"],
    outputs=["output: dtype"],
    attrs=["S: {int32, int64}", "Tseed: {int32, int64} = DT_INT64",
           "T: {half, float, double, int32, int64} = DT_DOUBLE",
           "dtype: {half, float, double, int32, int64} = DT_INT64"],
    shape_fn=_stateless_shape,
)
register_op(
    "StatelessParameterizedTruncatedNormal",
    inputs=["shape: S", "seed: Tseed", "means: dtype", "stddevs: dtype", "minvals: dtype",
            "maxvals: dtype"],
    outputs=["output: dtype"],
    attrs=["S: {int32, int64}", "Tseed: {int32, int64} = DT_INT64", "dtype: {half, float, double}"],
    shape_fn=_stateless_shape,
)
