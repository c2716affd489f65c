"""Math ops: the public `tf.*` math functions and `Tensor`'s operator overloads.

Follows TF 1.x `math_ops`.

The ops themselves are declared in `cwise_ops` (element-wise, casts), `reduction_ops`
(reductions, `add_n`, segment sums, cumulative ops) and `matmul_ops`; this module
re-exports their public names and installs `+ - * / // % ** @ & | ^ ~`, unary `-`/`abs` and
`< <= > >=` on `Tensor`. `==`/`!=` keep identity semantics, as in TensorFlow 1.x.
Importing it also registers the gradients (`math_grad`).
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import cwise_ops, matmul_ops, reduction_ops
from tensorweave.ops.cwise_ops import *  # noqa: F403  (re-exports the public names)

# NOTE: add_v2, broadcast_gradient_args, neg, batch_matmul and reduced_shape are module API
# that TensorFlow keeps out of the top-level namespace (not in __all__).
from tensorweave.ops.cwise_ops import (  # noqa: F401  (module API, see NOTE)
    _add_dispatch,
    add_v2,
    broadcast_gradient_args,
    neg,
    truediv,
)
from tensorweave.ops.matmul_ops import *  # noqa: F403  (re-exports the public names)
from tensorweave.ops.matmul_ops import batch_matmul  # noqa: F401  (module API)
from tensorweave.ops.reduction_ops import *  # noqa: F403  (re-exports the public names)
from tensorweave.ops.reduction_ops import reduced_shape  # noqa: F401  (module API)


# --------------------------------------------------------- operator overloads
def _binary_operator(func: Any, op_name: str) -> tuple[Any, Any]:
    """TensorFlow's `binary_op_wrapper` / `r_binary_op_wrapper` pair for `func`.

    The other operand is converted with this tensor's base dtype, inside an `<op_name>`
    name scope.
    """

    def binary_op_wrapper(x: Tensor, y: Any) -> Any:
        with graph_mod.name_scope(None, op_name, [x, y]) as name:
            if not isinstance(y, Tensor):
                try:
                    y = convert_to_tensor(y, dtype=x.dtype.base_dtype, name="y")
                except TypeError:
                    # NOTE: let objects that know how to handle tensors try their reflected op.
                    if hasattr(type(y), f"__r{op_name}__"):
                        return NotImplemented
                    raise
            return func(x, y, name=name)

    def r_binary_op_wrapper(y: Tensor, x: Any) -> Any:
        with graph_mod.name_scope(None, op_name, [x, y]) as name:
            x = convert_to_tensor(x, dtype=y.dtype.base_dtype, name="x")
            return func(x, y, name=name)

    binary_op_wrapper.__name__ = f"__{op_name}__"
    r_binary_op_wrapper.__name__ = f"__r{op_name}__"
    return binary_op_wrapper, r_binary_op_wrapper


def _install_operators() -> None:
    for func, op_name in (
        (_add_dispatch, "add"),
        (cwise_ops.subtract, "sub"),
        (cwise_ops.multiply, "mul"),
        (truediv, "truediv"),
        (cwise_ops.floordiv, "floordiv"),
        (cwise_ops.floormod, "mod"),
        (cwise_ops.pow, "pow"),
        (matmul_ops.matmul, "matmul"),
        (cwise_ops.logical_and, "and"),
        (cwise_ops.logical_or, "or"),
        (cwise_ops.logical_xor, "xor"),
    ):
        forward, reflected = _binary_operator(func, op_name)
        Tensor._override_operator(f"__{op_name}__", forward)
        Tensor._override_operator(f"__r{op_name}__", reflected)
    Tensor._override_operator("__neg__", lambda x: cwise_ops.negative(x))
    Tensor._override_operator("__abs__", lambda x: cwise_ops.abs(x))
    Tensor._override_operator("__invert__", lambda x: cwise_ops.logical_not(x))
    Tensor._override_operator("__lt__", lambda x, y: cwise_ops.less(x, y))
    Tensor._override_operator("__le__", lambda x, y: cwise_ops.less_equal(x, y))
    Tensor._override_operator("__gt__", lambda x, y: cwise_ops.greater(x, y))
    Tensor._override_operator("__ge__", lambda x, y: cwise_ops.greater_equal(x, y))


_install_operators()

__all__ = sorted({*cwise_ops.__all__, *matmul_ops.__all__, *reduction_ops.__all__})
