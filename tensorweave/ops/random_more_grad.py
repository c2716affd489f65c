"""Gradients of the gamma samplers in alpha by implicit reparameterization (follows
TensorFlow's `random_grad.py`), and of `Igamma`/`Igammac` in `a` via `IgammaGradA`."""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops import array_ops, reduction_ops
from tensorweave.ops.gradients_impl import RegisterGradient, no_gradient


@RegisterGradient("RandomGamma")
def _random_gamma_grad(op: Any, grad: Any) -> Any:
    shape, alpha = op.inputs
    sample = op.outputs[0]
    sample_dims = array_ops.size(shape)
    # alpha [A...] gains leading unit dims to broadcast against sample [S..., A...].
    unit_dims = array_ops.ones(array_ops.expand_dims(sample_dims, 0), dtypes.int32)
    padded = array_ops.reshape(alpha, array_ops.concat([unit_dims, array_ops.shape(alpha)], 0))
    partial = apply_op("RandomGammaGrad", alpha=padded, sample=sample)
    return None, reduction_ops.reduce_sum(grad * partial, axis=array_ops.range(sample_dims))


@RegisterGradient("StatelessRandomGammaV2")
def _stateless_gamma_grad(op: Any, grad: Any) -> Any:
    alpha, sample = op.inputs[2], op.outputs[0]
    partial = apply_op("RandomGammaGrad", alpha=alpha, sample=sample)
    return None, None, grad * partial


for _op in ("RandomPoissonV2", "RandomGammaGrad", "IgammaGradA", "StatelessRandomUniform",
            "StatelessRandomNormal", "StatelessTruncatedNormal", "StatelessRandomUniformInt",
            "StatelessMultinomial", "StatelessRandomPoisson", "StatelessRandomBinomial",
            "StatelessParameterizedTruncatedNormal"):
    no_gradient(_op)
