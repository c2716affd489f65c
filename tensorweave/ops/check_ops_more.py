"""More `tf.assert_*` checks: `assert_integer`, `assert_scalar`, `assert_same_float_dtype`,
`assert_proper_iterable`, `assert_rank_in`, `assert_near` (follows TensorFlow's
`check_ops.py`; messages as TF 2.21's `tf.compat.v1` words them), and the numerics checks
`verify_tensor_all_finite` and `add_check_numerics_ops` (`numerics.py`)."""

from __future__ import annotations

import collections.abc
from typing import Any

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import (
    array_ops,
    control_flow_ops,
    math_ops,
    reduction_ops,
    state_ops,
    variables,
)
from tensorweave.ops.cwise_unary_ops import check_numerics
from tensorweave.ops.logging_ops import Assert


def _prefix(message: str | None) -> str:
    return f"{message}.  " if message else ""


def assert_integer(x: Any, message: str | None = None, name: str | None = None) -> Operation:
    """Statically asserts that `x` has an integer dtype (follows `tf.assert_integer`).

    Returns:
      A `NoOp` (nothing is checked at run time).

    Raises:
      TypeError: if `x`'s dtype is not an integer type.
    """
    with graph_mod.name_scope(name, "assert_integer", [x]):
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_integer:
            raise TypeError(f'{_prefix(message)}Expected "x" to be integer type.  Found: '
                            f"{x.name} of dtype {x.dtype}")
        return control_flow_ops.no_op("statically_determined_was_integer")


def assert_scalar(tensor: Any, name: str | None = None, message: str | None = None) -> Tensor:
    """`tensor` once its static shape is known to be scalar (follows `tf.assert_scalar`).

    Raises:
      ValueError: if its static rank is known and not 0.
    """
    with graph_mod.name_scope(name, "assert_scalar", [tensor]) as scope:
        tensor = convert_to_tensor(tensor, name=scope)
        shape = tensor.shape
        if shape.ndims != 0:
            raise ValueError(f"{_prefix(message)}Expected scalar shape for {tensor.name}, "
                             f"saw shape: {shape}.")
        return tensor


def assert_same_float_dtype(tensors: Any = None, dtype: Any = None) -> dtypes.DType:
    """The common floating dtype of `tensors` and `dtype` (float32 when neither gives one);
    follows `tf.assert_same_float_dtype`.

    Raises:
      ValueError: for differing dtypes, or a non-floating one.
    """
    if tensors:
        expected = dtypes.as_dtype(dtype).base_dtype if dtype else None
        first = None
        for t in tensors:
            if t is None:
                continue
            if expected is None:
                expected, first = t.dtype.base_dtype, t
            elif t.dtype.base_dtype != expected:
                against = f" as {first.name}" if first is not None else ""
                raise ValueError(f"{t.name}, type={t.dtype}, must be of the same type "
                                 f"({expected}){against}.")
        dtype = expected
    if not dtype:
        return dtypes.float32
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"Expected floating point type, got {dtype}.")
    return dtype


def assert_proper_iterable(values: Any) -> None:
    """Raises TypeError unless `values` is an iterable that is not a tensor, an ndarray or
    a string (follows `tf.assert_proper_iterable`)."""
    unwanted = (Tensor, np.ndarray, str, bytes)
    if isinstance(values, unwanted) or type(values).__name__ == "SparseTensor":
        raise TypeError(f'Expected argument "values" to be a "proper" iterable.  Found: '
                        f"{type(values)}")
    if not isinstance(values, collections.abc.Iterable):
        raise TypeError(f'Expected argument "values" to be iterable.  Found: {type(values)}')


def assert_rank_in(x: Any, ranks: Any, data: Any = None, summarize: int | None = None,
                   message: str | None = None, name: str | None = None) -> Operation:
    """Asserts that the rank of `x` is one of `ranks` (follows `tf.assert_rank_in`).

    Returns:
      A `NoOp` when the rank is statically known to be in `ranks`, else an `Assert` op
      (`InvalidArgumentError` at run time).

    Raises:
      ValueError: if the static rank of `x` is known and not in `ranks`.
    """
    with graph_mod.name_scope(name, "assert_rank_in", [x, *ranks, *(data or [])]):
        x = convert_to_tensor(x, name="x")
        ranks = tuple(int(r) for r in ranks)
        rank = x.shape.ndims
        if rank is not None:
            if rank not in ranks:
                raise ValueError(f"{_prefix(message)}Tensor {x.name} must have rank in "
                                 f"{ranks}.  Received rank {rank}, shape {x.shape}")
            return control_flow_ops.no_op("static_checks_determined_all_ok")
        if data is None:
            data = [message or "", f"Tensor {x.name} must have rank in", list(ranks),
                    "Received shape: ", array_ops.shape(x)]
        x_rank = array_ops.rank(x)
        condition = math_ops.reduce_any(math_ops.equal(x_rank, list(ranks)))
        return Assert(condition, data, summarize=summarize)


def assert_near(x: Any, y: Any, rtol: Any = None, atol: Any = None, data: Any = None,
                summarize: int | None = None, message: str | None = None,
                name: str | None = None) -> Operation:
    """Asserts `|x - y| <= atol + rtol * |y|` element-wise (follows `tf.assert_near`);
    `rtol` and `atol` default to 10 epsilons of the dtype.

    Returns:
      An `Assert` op (`InvalidArgumentError` at run time when the condition fails).
    """
    with graph_mod.name_scope(name, "assert_near", [x, y, rtol, atol]):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype)
        eps = float(np.finfo(x.dtype.real_dtype.as_numpy_dtype).eps)
        rtol = convert_to_tensor(10 * eps if rtol is None else rtol, name="rtol",
                                 dtype=x.dtype.real_dtype)
        atol = convert_to_tensor(10 * eps if atol is None else atol, name="atol",
                                 dtype=x.dtype.real_dtype)
        if data is None:
            data = [message or "", f"x and y not equal to tolerance rtol = {rtol}, "
                    f"atol = {atol}", f"x ({x.name}) = ", x, f"y ({y.name}) = ", y]
        tol = atol + rtol * math_ops.abs(y)
        diff = math_ops.abs(x - y)
        condition = math_ops.reduce_all(math_ops.less_equal(diff, tol))
        return Assert(condition, data, summarize=summarize)


def verify_tensor_all_finite(t: Any = None, msg: str | None = None, name: str | None = None,
                             x: Any = None, message: str | None = None) -> Tensor:
    """`t`, passed on only after a `CheckNumerics` of it (follows
    `tf.verify_tensor_all_finite`; `x`/`message` are the TF2 names of `t`/`msg`).

    Returns:
      A tensor equal to `t`; running it raises `InvalidArgumentError` ("<msg> : Tensor had
      NaN values", or Inf) when `t` is not finite.
    """
    x = t if x is None else x
    message = msg if message is None else message
    with graph_mod.name_scope(name, "VerifyFinite", [x]):
        x = convert_to_tensor(x, name="x")
        with graph_mod.colocate_with(x):
            verify = check_numerics(x, message=message or "")
            return control_flow_ops.with_dependencies([verify], x)


_CHECKED = (dtypes.float16, dtypes.float32, dtypes.float64)


def add_check_numerics_ops() -> Operation:
    """One op checking every float16/32/64 output in the default graph for NaN and Inf,
    the checks chained in graph order (follows `tf.add_check_numerics_ops`); each check's
    message names its tensor (`op_name:index`)."""
    checks: list[Any] = []
    graph = graph_mod.get_default_graph()
    for op in graph.get_operations():
        for output in op.outputs:
            if output.dtype._is_ref_dtype or output.dtype not in _CHECKED:
                continue
            with graph.control_dependencies(checks):
                checks = [check_numerics(output, message=f"{op.name}:{output.value_index}")]
    return control_flow_ops.group(*checks)


def assert_variables_initialized(var_list: Any = None) -> Any:
    """An op failing at run time unless every variable (default: all global and local
    ones) is initialized (follows `tf.assert_variables_initialized`); None without any."""
    if var_list is None:
        var_list = variables.global_variables() + variables.local_variables()
    if not var_list:
        return None
    with graph_mod.name_scope(None, "assert_variables_initialized", []):
        ready = [state_ops.is_variable_initialized(v) for v in var_list]
        return Assert(reduction_ops.reduce_all(array_ops.stack(ready)),
                      ["Not all variables are initialized."])


__all__ = ["add_check_numerics_ops", "assert_integer", "assert_near", "assert_proper_iterable",
           "assert_rank_in", "assert_same_float_dtype", "assert_scalar",
           "assert_variables_initialized", "verify_tensor_all_finite"]
