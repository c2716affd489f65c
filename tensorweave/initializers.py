"""The `tf.initializers` namespace of TF 1.15: initializer classes under their snake_case
names, the He/LeCun variance-scaling shortcuts, and the variable-initializer ops."""

from __future__ import annotations

from tensorweave.ops.init_ops import (
    Constant as constant,
    GlorotNormal as glorot_normal,
    GlorotUniform as glorot_uniform,
    Identity as identity,
    Ones as ones,
    Orthogonal as orthogonal,
    RandomNormal as random_normal,
    RandomUniform as random_uniform,
    TruncatedNormal as truncated_normal,
    UniformUnitScaling as uniform_unit_scaling,
    VarianceScaling as variance_scaling,
    Zeros as zeros,
    he_normal,
    he_uniform,
    lecun_normal,
    lecun_uniform,
)
from tensorweave.ops.variables import (
    global_variables_initializer as global_variables,
    local_variables_initializer as local_variables,
    variables_initializer as variables,
)

__all__ = [
    "constant",
    "glorot_normal",
    "glorot_uniform",
    "he_normal",
    "he_uniform",
    "identity",
    "lecun_normal",
    "lecun_uniform",
    "ones",
    "orthogonal",
    "random_normal",
    "random_uniform",
    "truncated_normal",
    "uniform_unit_scaling",
    "variance_scaling",
    "zeros",
    "global_variables",
    "local_variables",
    "variables",
]
