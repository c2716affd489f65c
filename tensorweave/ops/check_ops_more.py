"""More check ops (follows TF 1.x `tf.assert_integer`, `tf.assert_near`,
`tf.assert_proper_iterable`, `tf.assert_rank_in`, `tf.assert_same_float_dtype`,
`tf.assert_scalar`, `tf.assert_variables_initialized`, `tf.verify_tensor_all_finite`,
`tf.add_check_numerics_ops`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import (
    array_ops,
    control_flow_ops,
    cwise_ops,
    reduction_ops,
    state_ops,
    variables,
)
from tensorweave.ops.logging_ops import Assert


def assert_integer(x: Any, message: str | None = None, name: str | None = None) -> Operation:
    """A `NoOp`; raises TypeError at graph build if `x` is not of an integer dtype."""
    with graph_mod.name_scope(name, "assert_integer", [x]):
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_integer:
            raise TypeError(f"{message or ''} Expected {x.name} to be integer type, "
                            f"got {x.dtype.name}")
        return control_flow_ops.no_op("statically_determined_was_integer")


def assert_scalar(tensor: Any, name: str | None = None, message: str | None = None) -> Tensor:
    """`tensor`, after checking its static rank is 0 (follows `tf.assert_scalar`).

    Raises:
      ValueError: if the static rank is not 0 or unknown.
    """
    with graph_mod.name_scope(name, "assert_scalar", [tensor]):
        tensor = convert_to_tensor(tensor, name="tensor")
        if tensor.shape.ndims != 0:
            raise ValueError(f"{message or ''}Expected scalar shape for {tensor.name}, saw "
                             f"shape: {tensor.shape}.")
        return tensor


def assert_rank_in(x: Any, ranks: Any, data: Any = None, summarize: int | None = None,
                   message: str | None = None, name: str | None = None) -> Operation:
    """Asserts that `x`'s rank is one of `ranks` (follows `tf.assert_rank_in`).

    Raises:
      ValueError: if the static rank is known and not among static `ranks`.
    """
    with graph_mod.name_scope(name, "assert_rank_in", [x, *ranks]):
        x = convert_to_tensor(x, name="x")
        ranks = [convert_to_tensor(r, dtypes.int32) for r in ranks]
        static = [constant_value(r) for r in ranks]
        if x.shape.ndims is not None and all(s is not None for s in static):
            if x.shape.ndims not in [int(s) for s in static]:
                raise ValueError(f"{message or ''}Tensor {x.name} must have rank in "
                                 f"{[int(s) for s in static]}. Received rank {x.shape.ndims}, "
                                 f"shape {x.shape}")
            return control_flow_ops.no_op("static_checks_determined_all_ok")
        rank = array_ops.rank(x)
        matches = [cwise_ops.equal(rank, r) for r in ranks]
        condition = reduction_ops.reduce_any(array_ops.stack(matches))
        data = data or [message or "", f"Tensor {x.name} must have rank in", *ranks,
                        "Received shape: ", array_ops.shape(x)]
        return Assert(condition, data, summarize=summarize)


def assert_near(x: Any, y: Any, rtol: Any = None, atol: Any = None, data: Any = None,
                summarize: int | None = None, message: str | None = None,
                name: str | None = None) -> Operation:
    """Asserts `|x - y| <= atol + rtol * |y|` element-wise; default tolerances are
    10 * eps of the dtype (follows `tf.assert_near`)."""
    with graph_mod.name_scope(name, "assert_near", [x, y]):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype)
        eps = np.finfo(x.dtype.as_numpy_dtype).eps
        rtol = convert_to_tensor(10 * eps if rtol is None else rtol, x.dtype)
        atol = convert_to_tensor(10 * eps if atol is None else atol, x.dtype)
        tol = atol + rtol * cwise_ops.abs(y)
        diff = cwise_ops.abs(x - y)
        condition = reduction_ops.reduce_all(cwise_ops.less_equal(diff, tol))
        data = data or [message or "", "x and y not equal to tolerance rtol = ", rtol,
                        ", atol = ", atol, f"x (shape={x.shape}) = ", x,
                        f"y (shape={y.shape}) = ", y]
        return Assert(condition, data, summarize=summarize)


def assert_proper_iterable(values: Any) -> None:
    """Raises TypeError unless `values` is a non-string iterable, not a Tensor or array
    (follows `tf.assert_proper_iterable`)."""
    unintentional = (Tensor, SparseTensor, np.ndarray, bytes, str)
    if isinstance(values, unintentional):
        raise TypeError(f"Expected argument 'values' to be a 'proper' iterable.  Found: "
                        f"{type(values)}")
    if not isinstance(values, Iterable):
        raise TypeError(f"Expected argument 'values' to be iterable.  Found: {type(values)}")


def assert_same_float_dtype(tensors: Any = None, dtype: Any = None) -> Any:
    """The common float dtype of `tensors` (and `dtype`), float32 if none is given
    (follows `tf.assert_same_float_dtype`).

    Raises:
      ValueError: for mixed or non-float dtypes.
    """
    if tensors:
        dtype = dtypes.as_dtype(dtype) if dtype is not None else None
        for t in tensors:
            if t is None:
                continue
            t_dtype = t.dtype.base_dtype
            if dtype is None:
                dtype = t_dtype
            elif t_dtype != dtype:
                raise ValueError(f"Tensor conversion requested dtype {dtype.name} for Tensor "
                                 f"with dtype {t_dtype.name}: {t}")
    if dtype is None:
        return dtypes.float32
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"Expected floating point type, got {dtype}.")
    return dtype


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


def verify_tensor_all_finite(t: Any = None, msg: str | None = None, name: str | None = None,
                             x: Any = None, message: str | None = None) -> Tensor:
    """`t`, failing at run time if it holds NaN or Inf (follows
    `tf.verify_tensor_all_finite`)."""
    t = t if t is not None else x
    msg = msg if msg is not None else message
    with graph_mod.name_scope(name, "VerifyFinite", [t]):
        t = convert_to_tensor(t, name="t")
        return cwise_ops.check_numerics(t, message=msg or "")


def add_check_numerics_ops() -> Operation:
    """A group of `CheckNumerics` ops over every float tensor of the default graph
    (follows `tf.add_check_numerics_ops`)."""
    graph = graph_mod.get_default_graph()
    checks = []
    for op in graph.get_operations():
        for output in op.outputs:
            if output.dtype.base_dtype.is_floating and not output.dtype._is_ref_dtype:
                with graph_mod.name_scope(None, "CheckNumerics", []):
                    checks.append(cwise_ops.check_numerics(
                        output, f'{op.name}:{output.value_index} : Tensor had NaN/Inf values'))
    return control_flow_ops.group(*checks)


__all__ = [
    "add_check_numerics_ops",
    "assert_integer",
    "assert_near",
    "assert_proper_iterable",
    "assert_rank_in",
    "assert_same_float_dtype",
    "assert_scalar",
    "assert_variables_initialized",
    "verify_tensor_all_finite",
]
