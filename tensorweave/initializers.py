"""The `tf.initializers` namespace of TF 1.15.

Initializer classes under their snake_case names, the He/LeCun variance-scaling shortcuts,
and the variable-initializer ops.
"""

from __future__ import annotations

from tensorweave.ops.init_ops import (
    Constant as constant,
)
from tensorweave.ops.init_ops import (
    GlorotNormal as glorot_normal,
)
from tensorweave.ops.init_ops import (
    GlorotUniform as glorot_uniform,
)
from tensorweave.ops.init_ops import (
    Identity as identity,
)
from tensorweave.ops.init_ops import (
    Ones as ones,
)
from tensorweave.ops.init_ops import (
    Orthogonal as orthogonal,
)
from tensorweave.ops.init_ops import (
    RandomNormal as random_normal,
)
from tensorweave.ops.init_ops import (
    RandomUniform as random_uniform,
)
from tensorweave.ops.init_ops import (
    TruncatedNormal as truncated_normal,
)
from tensorweave.ops.init_ops import (
    UniformUnitScaling as uniform_unit_scaling,
)
from tensorweave.ops.init_ops import (
    VarianceScaling as variance_scaling,
)
from tensorweave.ops.init_ops import (
    Zeros as zeros,
)
from tensorweave.ops.init_ops import (
    he_normal,
    he_uniform,
    lecun_normal,
    lecun_uniform,
)
from tensorweave.ops.variables import (
    global_variables_initializer as global_variables,
)
from tensorweave.ops.variables import (
    local_variables_initializer as local_variables,
)
from tensorweave.ops.variables import (
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
