"""`tf.Print`, `tf.Assert` and the `tf.assert_*` checks.

Follows TF 1.x `logging_ops`, `control_flow_ops.Assert` and `check_ops`.

`Print` and `Assert` are stateful ops, so they are never folded or deduplicated; like any
op they run only when something that is fetched depends on them (use the `Print` output,
or a control dependency on the assert).

The `assert_*` helpers are composites: a condition built from math ops, checked by an
`Assert`. When both sides are statically known, a failing comparison raises
`InvalidArgumentError` while the graph is built, as TensorFlow does; a failing static rank
check raises ValueError.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.tensor_conversion import convert_n_to_tensor, convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import array_ops, control_dependency_ops, math_ops
from tensorweave.ops.gradient_registry import RegisterGradient, no_gradient


@RegisterGradient("Print")
def _print_grad(op: Operation, *grads: Any) -> list[Any]:
    """The gradient flows through `input`; the printed `data` gets none."""
    return list(grads) + [None] * (len(op.inputs) - 1)


no_gradient("Assert")


def Print(  # noqa: N802  (TensorFlow's public name)
    input_: Any,
    data: Any,
    message: str | None = None,
    first_n: int | None = None,
    summarize: int | None = None,
    name: str | None = None,
) -> Tensor:
    """`input_`, printing `message` and `data` to stderr when computed (TF 1.x `tf.Print`).

    The line is `message` followed by `[values]` for each tensor of `data`, e.g.
    `x is [1 2 3...]`; multi-dimensional values print as nested brackets.

    Args:
      input_: the tensor passed through (any dtype and shape).
      data: a list of tensors (or values) to print.
      message: prefix of the printed line (default empty).
      first_n: print only the first `first_n` times the kernel runs (default -1: always).
      summarize: print at most this many entries per tensor (default 3, negative: all).
      name: op name (default "Print").

    Returns:
      A `Tensor` with the value, dtype and shape of `input_`.
    """
    attrs = {
        k: v
        for k, v in (("message", message), ("first_n", first_n), ("summarize", summarize))
        if v is not None
    }
    return apply_op("Print", input=input_, data=list(data), name=name, **attrs)


def Assert(  # noqa: N802  (TensorFlow's public name)
    condition: Any, data: Any, summarize: int | None = None, name: str | None = None
) -> Operation:
    """An op that fails the step unless `condition` is true (follows TF 1.x `tf.Assert`).

    Args:
      condition: bool scalar tensor.
      data: tensors (or values) printed in the error when `condition` is false.
      summarize: print at most this many entries per tensor (default 3, negative: all).
      name: name scope (default "Assert"); the op itself is `<scope>/Assert`.

    Returns:
      The `Assert` `Operation`; use it as a control dependency.

    Raises:
      errors.InvalidArgumentError: at run time when `condition` is false, with the message
        `assertion failed: [d0] [d1] ...`, or when `condition` is not a scalar.
    """
    data = list(data)
    with graph_mod.name_scope(name, "Assert", [condition, *data]):
        xs = convert_n_to_tensor(data)
        condition = convert_to_tensor(condition, name="Condition")
        attrs = {} if summarize is None else {"summarize": summarize}
        return apply_op("Assert", condition=condition, data=xs, name="Assert", **attrs)


# ------------------------------------------------------------------------- check_ops
def _static_string(item: Any) -> str:
    if isinstance(item, Tensor):
        value = constant_value(item)
        return str(item) if value is None else str(value)
    return str(item)


def _assert_static(condition: bool, data: list[Any]) -> None:
    """Raises InvalidArgumentError for a failed static check (`check_ops._assert_static`)."""
    if not condition:
        raise errors.InvalidArgumentError(None, None, "\n".join(_static_string(d) for d in data))


def _binary_assert(
    sym: str,
    opname: str,
    op_func: str,
    static_func: Callable[..., Any],
    x: Any,
    y: Any,
    data: Any,
    summarize: int | None,
    message: str | None,
    name: str | None,
) -> Operation:
    with graph_mod.name_scope(name, opname, [x, y, *(data or [])]):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y")
        if data is None:
            data = [
                f"Condition x {sym} y did not hold element-wise:",
                f"x ({x.name}) = ",
                x,
                f"y ({y.name}) = ",
                y,
            ]
        if message is not None:
            data = [message, *data]
        x_static, y_static = constant_value(x), constant_value(y)
        if x_static is not None and y_static is not None:
            _assert_static(bool(np.all(static_func(x_static, y_static))), data)
        condition = math_ops.reduce_all(getattr(math_ops, op_func)(x, y))
        return Assert(condition, data, summarize=summarize)


def assert_equal(
    x: Any,
    y: Any,
    data: Any = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """Asserts `x == y` element-wise, with broadcasting (follows TF 1.x `tf.assert_equal`).

    Args:
      x: numeric tensor.
      y: numeric tensor of the same dtype, broadcastable with `x`.
      data: tensors to print on failure (default: a message and the first entries of `x`
        and `y`).
      summarize: entries printed per tensor.
      message: prefix of the default message.
      name: name scope (default "assert_equal").

    Returns:
      The `Assert` op (a `NoOp` when `x is y`).

    Raises:
      errors.InvalidArgumentError: now if `x` and `y` are constants that differ, else at
        run time.
    """
    if x is y:
        with graph_mod.name_scope(name, "assert_equal", [x, y]):
            return control_dependency_ops.no_op()
    return _binary_assert(
        "==", "assert_equal", "equal", np.equal, x, y, data, summarize, message, name
    )


def assert_none_equal(
    x: Any,
    y: Any,
    data: Any = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """Asserts `x != y` element-wise (follows `tf.assert_none_equal`); see `assert_equal`."""
    return _binary_assert(
        "!=", "assert_none_equal", "not_equal", np.not_equal, x, y, data, summarize, message, name
    )


def assert_less(
    x: Any,
    y: Any,
    data: Any = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """Asserts `x < y` element-wise (follows `tf.assert_less`); see `assert_equal`."""
    return _binary_assert("<", "assert_less", "less", np.less, x, y, data, summarize, message, name)


def assert_less_equal(
    x: Any,
    y: Any,
    data: Any = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """Asserts `x <= y` element-wise (follows `tf.assert_less_equal`); see `assert_equal`."""
    return _binary_assert(
        "<=", "assert_less_equal", "less_equal", np.less_equal, x, y, data, summarize, message, name
    )


def assert_greater(
    x: Any,
    y: Any,
    data: Any = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """Asserts `x > y` element-wise (follows `tf.assert_greater`); see `assert_equal`."""
    return _binary_assert(
        ">", "assert_greater", "greater", np.greater, x, y, data, summarize, message, name
    )


def assert_greater_equal(
    x: Any,
    y: Any,
    data: Any = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """Asserts `x >= y` element-wise (follows `tf.assert_greater_equal`)."""
    return _binary_assert(
        ">=",
        "assert_greater_equal",
        "greater_equal",
        np.greater_equal,
        x,
        y,
        data,
        summarize,
        message,
        name,
    )


def _sign_assert(
    opname: str,
    sym: str,
    zero_first: bool,
    check: Callable[..., Operation],
    x: Any,
    data: Any,
    summarize: int | None,
    message: str | None,
    name: str | None,
) -> Operation:
    with graph_mod.name_scope(name, opname, [x, *(data or [])]):
        x = convert_to_tensor(x, name="x")
        if data is None:
            data = [
                message or "",
                f"Condition x {sym} did not hold element-wise:",
                f"x ({x.name}) = ",
                x,
            ]
        zero = convert_to_tensor(0, dtype=x.dtype)
        lhs, rhs = (zero, x) if zero_first else (x, zero)
        return check(lhs, rhs, data=data, summarize=summarize)


def assert_positive(
    x: Any,
    data: Any = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """Asserts `x > 0` element-wise (follows `tf.assert_positive`).

    Raises:
      errors.InvalidArgumentError: now for failing constants, else at run time.
    """
    return _sign_assert(
        "assert_positive", "> 0", True, assert_less, x, data, summarize, message, name
    )


def assert_non_negative(
    x: Any,
    data: Any = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """Asserts `x >= 0` element-wise (follows `tf.assert_non_negative`)."""
    return _sign_assert(
        "assert_non_negative", ">= 0", True, assert_less_equal, x, data, summarize, message, name
    )


def assert_negative(
    x: Any,
    data: Any = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """Asserts `x < 0` element-wise (follows `tf.assert_negative`)."""
    return _sign_assert(
        "assert_negative", "< 0", False, assert_less, x, data, summarize, message, name
    )


def assert_non_positive(
    x: Any,
    data: Any = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """Asserts `x <= 0` element-wise (follows `tf.assert_non_positive`)."""
    return _sign_assert(
        "assert_non_positive", "<= 0", False, assert_less_equal, x, data, summarize, message, name
    )


def assert_type(
    tensor: Any, tf_type: Any, message: str | None = None, name: str | None = None
) -> Operation:
    """Statically asserts `tensor.dtype == tf_type` (follows `tf.assert_type`).

    Raises:
      TypeError: if the base dtypes differ.
    """
    tf_type = dtypes.as_dtype(tf_type)
    with graph_mod.name_scope(name, "assert_type", [tensor]):
        tensor = convert_to_tensor(tensor, name="tensor")
        if tensor.dtype.base_dtype != tf_type:
            raise TypeError(f"{message or ''}  {tensor.name} must be of type {tf_type}")
        return control_dependency_ops.no_op("statically_determined_correct_type")


def _rank_condition(
    x: Tensor,
    rank: Tensor,
    static_ok: Callable[[int, int], bool],
    dynamic_op: str,
    make_data: Callable[[], list[Any]],
    summarize: int | None,
) -> Operation:
    """The op checking a rank condition; a `NoOp` when it holds statically.

    `make_data` is only called (building a `Shape` op) when the check must run.

    Raises:
      TypeError: if `rank` is not int32.
      ValueError: "Static rank condition failed" when it fails statically.
    """
    if rank.dtype.base_dtype != dtypes.int32:
        raise TypeError(f"  {rank.name} must be of type {dtypes.int32}")
    rank_static = constant_value(rank)
    if rank_static is not None:
        if np.ndim(rank_static) != 0:
            raise ValueError("Rank must be a scalar.")
        x_rank = x.shape.ndims
        if x_rank is not None:
            if not static_ok(x_rank, int(rank_static)):
                raise ValueError("Static rank condition failed", x_rank, int(rank_static))
            return control_dependency_ops.no_op(name="static_checks_determined_all_ok")
    data = make_data()
    condition = getattr(math_ops, dynamic_op)(array_ops.rank(x), rank)
    if rank_static is None:
        rank_check = assert_rank(rank, 0, data=["Rank must be a scalar. Received rank: ", rank])
        condition = control_dependency_ops.with_dependencies([rank_check], condition)
    return Assert(condition, data, summarize=summarize)


def _assert_rank_impl(
    opname: str,
    what: str,
    static_ok: Callable[[int, int], bool],
    dynamic_op: str,
    x: Any,
    rank: Any,
    data: Any,
    summarize: int | None,
    message: str | None,
    name: str | None,
) -> Operation:
    with graph_mod.name_scope(name, opname, [x, rank, *(data or [])]):
        x = convert_to_tensor(x, name="x")
        rank = convert_to_tensor(rank, name="rank")
        message = message or ""

        def make_data() -> list[Any]:
            if data is not None:
                return list(data)
            return [
                message,
                f"Tensor {x.name} must have {what}",
                rank,
                "Received shape: ",
                array_ops.shape(x),
            ]

        try:
            return _rank_condition(x, rank, static_ok, dynamic_op, make_data, summarize)
        except ValueError as e:
            if e.args and e.args[0] == "Static rank condition failed":
                raise ValueError(
                    f"{message}.  Tensor {x.name} must have {what} {e.args[2]}.  Received "
                    f"rank {e.args[1]}, shape {x.shape}"
                ) from None
            raise


def assert_rank(
    x: Any,
    rank: Any,
    data: Any = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """Asserts that `x` has rank `rank` (follows TF 1.x `tf.assert_rank`).

    Args:
      x: a tensor.
      rank: int32 scalar.
      data: tensors to print on failure (default: a message and the shape of `x`).
      summarize: entries printed per tensor.
      message: prefix of the messages.
      name: name scope (default "assert_rank").

    Returns:
      A `NoOp` when the rank is statically known to match, else an `Assert` op.

    Raises:
      ValueError: if the static rank of `x` differs from a constant `rank`.
      TypeError: if `rank` is not int32.
    """
    return _assert_rank_impl(
        "assert_rank", "rank", lambda a, b: a == b, "equal", x, rank, data, summarize, message, name
    )


def assert_rank_at_least(
    x: Any,
    rank: Any,
    data: Any = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """Asserts that `x` has rank `rank` or more (follows `tf.assert_rank_at_least`)."""
    return _assert_rank_impl(
        "assert_rank_at_least",
        "rank at least",
        lambda a, b: a >= b,
        "greater_equal",
        x,
        rank,
        data,
        summarize,
        message,
        name,
    )


__all__ = [
    "Print",
    "Assert",
    "assert_equal",
    "assert_none_equal",
    "assert_less",
    "assert_less_equal",
    "assert_greater",
    "assert_greater_equal",
    "assert_positive",
    "assert_non_negative",
    "assert_negative",
    "assert_non_positive",
    "assert_type",
    "assert_rank",
    "assert_rank_at_least",
]
