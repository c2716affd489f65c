"""Definitions of `FusedBatchNormV3`, `LRN`, `Selu`, the candidate samplers and
`ComputeAccidentalHits` (TF 1.x `core/ops/nn_ops.cc`, `candidate_sampling_ops.cc`)."""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import register_op
from tensorweave.framework.shape_inference import merge_shapes, op_error, with_rank
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape


def _fused_bn_shape(op: Any) -> list[TensorShape]:
    fmt = op.get_attr("data_format")
    fmt = fmt.decode() if isinstance(fmt, bytes) else fmt
    x = op.inputs[0].shape
    rank = 5 if fmt in ("NDHWC", "NCDHW") else 4
    x = with_rank(op, x, rank)
    c = x.as_list()[1 if fmt.startswith("NC") else -1]
    channels = TensorShape([c])
    for i in (1, 2):
        channels = merge_shapes(op, channels, with_rank(op, op.inputs[i].shape, 1))
    if not op.get_attr("is_training"):
        for i in (3, 4):
            channels = merge_shapes(op, channels, with_rank(op, op.inputs[i].shape, 1))
    dims = x.as_list()
    dims[1 if fmt.startswith("NC") else -1] = channels.as_list()[0]
    return [TensorShape(dims), channels, channels, channels, channels, unknown_shape()]


register_op(
    "FusedBatchNormV3",
    inputs=["x: T", "scale: U", "offset: U", "mean: U", "variance: U"],
    outputs=[
        "y: T",
        "batch_mean: U",
        "batch_variance: U",
        "reserve_space_1: U",
        "reserve_space_2: U",
        "reserve_space_3: U",
    ],
    attrs=[
        "T: {half, float, double}",
        "U: {float, double}",
        "epsilon: float = 0.0001",
        "exponential_avg_factor: float = 1.0",
        "data_format: {'NHWC', 'NCHW', 'NDHWC', 'NCDHW'} = 'NHWC'",
        "is_training: bool = true",
    ],
    shape_fn=_fused_bn_shape,
)
register_op(
    "LRN",
    inputs=["input: T"],
    outputs=["output: T"],
    attrs=[
        "depth_radius: int = 5",
        "bias: float = 1.0",
        "alpha: float = 1.0",
        "beta: float = 0.5",
        "T: {half, float} = DT_FLOAT",
    ],
    shape_fn=lambda op: [with_rank(op, op.inputs[0].shape, 4)],
)
register_op(
    "Selu",
    inputs=["features: T"],
    outputs=["activations: T"],
    attrs=["T: {half, float, double}"],
    shape_fn=lambda op: [op.inputs[0].shape],
)

_SAMPLER_ATTRS = [
    "num_true: int >= 1",
    "num_sampled: int >= 1",
    "unique: bool",
    "seed: int = 0",
    "seed2: int = 0",
]


def _sampler_shape(op: Any) -> list[TensorShape]:
    true = with_rank(op, op.inputs[0].shape, 2)
    num_true = op.get_attr("num_true")
    if true.as_list()[1] is not None and true.as_list()[1] != num_true:
        raise op_error(op, f"true_classes must have num_true={num_true} columns")
    sampled = TensorShape([op.get_attr("num_sampled")])
    return [sampled, TensorShape([true.as_list()[0], num_true]), sampled]


_SAMPLER_OUTPUTS = [
    "sampled_candidates: int64",
    "true_expected_count: float",
    "sampled_expected_count: float",
]
for _name, _extra in (
    ("UniformCandidateSampler", ["range_max: int >= 1"]),
    ("LogUniformCandidateSampler", ["range_max: int >= 1"]),
    ("LearnedUnigramCandidateSampler", ["range_max: int >= 1"]),
    (
        "FixedUnigramCandidateSampler",
        [
            "range_max: int >= 1",
            "vocab_file: string = ''",
            "distortion: float = 1.0",
            "num_reserved_ids: int = 0",
            "num_shards: int >= 1 = 1",
            "shard: int >= 0 = 0",
            "unigrams: list(float) = []",
        ],
    ),
    ("AllCandidateSampler", []),
):
    register_op(
        _name,
        inputs=["true_classes: int64"],
        outputs=_SAMPLER_OUTPUTS,
        attrs=[*_SAMPLER_ATTRS[:3], *_extra, *_SAMPLER_ATTRS[3:]],
        shape_fn=_sampler_shape,
        is_stateful=True,
    )

register_op(
    "ComputeAccidentalHits",
    inputs=["true_classes: int64", "sampled_candidates: int64"],
    outputs=["indices: int32", "ids: int64", "weights: float"],
    attrs=["num_true: int", "seed: int = 0", "seed2: int = 0"],
    shape_fn=lambda op: [TensorShape([None])] * 3,
)
