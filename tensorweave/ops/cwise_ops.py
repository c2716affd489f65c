"""Element-wise math ops: arithmetic, comparisons, logic, casts and unary functions.

Follows TF 1.x `math_ops` / `gen_math_ops`. The ops are declared by concept in
`cwise_common` (scope helpers), `cwise_binary_ops` (arithmetic, comparisons,
logic, `BroadcastGradientArgs`) and `cwise_unary_ops` (math functions, casts, numerics
checks); this module is their import point and re-exports their names. Everything public is
re-exported again by `math_ops`.
"""

from __future__ import annotations

from tensorweave.ops import cwise_binary_ops, cwise_unary_ops
from tensorweave.ops.cwise_binary_ops import *  # noqa: F403  (re-exports the public names)

# NOTE: module API kept out of `__all__` (as in TensorFlow), imported from here by `math_ops`
# and the other op modules.
from tensorweave.ops.cwise_binary_ops import (  # noqa: F401  (module API, see NOTE)
    _add_dispatch,
    add_v2,
    broadcast_gradient_args,
)
from tensorweave.ops.cwise_unary_ops import *  # noqa: F403  (re-exports the public names)
from tensorweave.ops.cwise_unary_ops import neg  # noqa: F401  (module API, see NOTE)

__all__ = sorted({*cwise_binary_ops.__all__, *cwise_unary_ops.__all__})
