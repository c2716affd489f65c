"""`tf.cond`, `tf.case`, `tf.while_loop`, `tf.no_op`, `tf.group`, `tf.tuple` and
`with_dependencies`.

Follows TF 1.x `control_flow_ops`: conds and loops are built from `Switch`/`Merge`/
`Enter`/`Exit`/`NextIteration`/`LoopCond` inside `CondContext`/`WhileContext`
(`control_flow_ctx`), so the GraphDefs are TensorFlow's. The control-dependency helpers
(`no_op`, `group`, `tuple`, `with_dependencies`) live in `control_dependency_ops`, below
the contexts that use them, and are re-exported here; the gradients of the primitives
(`control_flow_grad`) register with the package (`ops/__init__`).
"""

from __future__ import annotations

import builtins
import functools
from collections.abc import Callable
from typing import Any

from tensorweave.framework import dtypes, nest
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops import array_ops, constant_op, logging_ops, math_ops
from tensorweave.ops import control_flow_util as util
from tensorweave.ops.control_dependency_ops import (  # noqa: F401  (TF's module API)
    group,
    no_op,
    tuple,
    with_dependencies,
)
from tensorweave.ops.control_flow_ctx import (
    CondContext,
    WhileContext,
    _convert_flows_to_tensorarrays,
)


# ------------------------------------------------------------------------- cond
def _unpack_if_singleton(res: Any) -> Any:
    if isinstance(res, list | builtins.tuple) and len(res) == 1:
        return res[0]
    return res


def cond(pred: Any, true_fn: Callable[[], Any] | None = None,
         false_fn: Callable[[], Any] | None = None, strict: bool = False,
         name: str | None = None, fn1: Any = None, fn2: Any = None) -> Any:
    """`true_fn()` if `pred` else `false_fn()`, decided when the graph runs (TF 1.x
    `tf.cond`).

    Only the taken branch's ops run (the other branch's values are dead). Both functions
    must return the same nested structure of tensors (or ops) with the same dtypes.

    Args:
      pred: bool scalar tensor.
      true_fn: callable without arguments, built into the true branch.
      false_fn: callable without arguments, built into the false branch.
      strict: when False, a branch result that is a one-element list/tuple is unpacked.
      name: name scope (default `cond`).
      fn1: deprecated alias of `true_fn`.
      fn2: deprecated alias of `false_fn`.

    Returns:
      The merged results, structured as `true_fn`'s.

    Raises:
      TypeError: `pred` is a Python bool, a function is not callable, or the branch
        structures have different sequence types.
      ValueError: a function returns None, or the branches return different structures
        or dtypes (the message shows both).
    """
    true_fn = true_fn if true_fn is not None else fn1
    false_fn = false_fn if false_fn is not None else fn2
    if true_fn is None or false_fn is None:
        raise TypeError("cond(): true_fn and false_fn arguments are required.")
    if not callable(true_fn):
        raise TypeError("true_fn must be callable.")
    if not callable(false_fn):
        raise TypeError("false_fn must be callable.")
    if isinstance(pred, bool):
        raise TypeError("pred must not be a Python bool")
    with graph_mod.name_scope(name, "cond", [pred]):
        pred = convert_to_tensor(pred)
        if pred.dtype.base_dtype != dtypes.bool:
            raise TypeError(f"pred must be a bool tensor, got {pred.dtype.name}")
        if pred.shape.ndims not in (None, 0):
            raise ValueError(f"pred must be a scalar, got shape {pred.shape}")
        p_2, p_1 = util.switch(pred, pred)
        pivot_1 = array_ops.identity(p_1, name="switch_t")
        pivot_2 = array_ops.identity(p_2, name="switch_f")
        pred = array_ops.identity(pred, name="pred_id")
        g = graph_mod.get_default_graph()
        for t in (p_1, p_2, pivot_1, pivot_2, pred):
            g.prevent_fetching(t.op)
        orig_res_t, res_t = _build_branch(CondContext(pred, pivot_1, branch=1), true_fn, "true")
        orig_res_f, res_f = _build_branch(CondContext(pred, pivot_2, branch=0), false_fn,
                                          "false")
        if not strict:
            orig_res_t = _unpack_if_singleton(orig_res_t)
            orig_res_f = _unpack_if_singleton(orig_res_f)
        try:
            nest.assert_same_structure(orig_res_t, orig_res_f)
        except TypeError as e:
            raise TypeError(f"Incompatible return types of true_fn and false_fn: {e}") from None
        except ValueError as e:
            raise ValueError(
                f"Incompatible return values of true_fn and false_fn: {e}") from None
        res_t, res_f = nest.flatten(res_t), nest.flatten(res_f)
        if not res_t:
            raise ValueError("true_fn and false_fn must return at least one result.")
        for x, y in zip(res_t, res_f, strict=True):
            if x.dtype.base_dtype != y.dtype.base_dtype:
                raise ValueError(
                    "Outputs of true_fn and false_fn must have the same type: "
                    f"{x.dtype.name}, {y.dtype.name}")
        merges = [util.merge([f, t])[0] for f, t in zip(res_f, res_t, strict=True)]
        merges = _convert_flows_to_tensorarrays(nest.flatten(orig_res_t), merges)
        merges = nest.pack_sequence_as(orig_res_t, merges)
        return _unpack_if_singleton(merges) if not strict else merges


def _build_branch(ctx: CondContext, fn: Callable[[], Any], which: str):
    try:
        ctx.Enter()
        orig, res = ctx.BuildCondBranch(fn)
        if orig is None:
            raise ValueError(f"{which}_fn must have a return value.")
        ctx.ExitResult(res)
    finally:
        ctx.Exit()
    return orig, res


def case(pred_fn_pairs: Any, default: Callable[[], Any] | None = None,
         exclusive: bool = False, strict: bool = False, name: str = "case") -> Any:
    """The result of the first callable whose predicate is true (TF 1.x `tf.case`), built
    as nested `cond`s.

    Args:
      pred_fn_pairs: a list of (bool scalar tensor, callable) pairs, or a dict.
      default: callable used when no predicate is true (default: the last pair's callable;
        TensorFlow then also asserts at run time that its predicate holds, we do not).
      exclusive: when True, asserts at run time that at most one predicate is true.
      strict: passed to each `cond`.
      name: name scope.

    Raises:
      TypeError: malformed pairs, non-bool predicates or non-callables.
    """
    if isinstance(pred_fn_pairs, dict):
        pred_fn_pairs = list(pred_fn_pairs.items())
    if not isinstance(pred_fn_pairs, list | builtins.tuple):
        raise TypeError("fns must be a list, tuple, or dict")
    predicates, actions = [], []
    for pair in pred_fn_pairs:
        if not isinstance(pair, builtins.tuple) or len(pair) != 2:
            raise TypeError("Each entry in pred_fn_pairs must be a 2-tuple")
        pred, fn = pair
        if not isinstance(pred, Tensor) or pred.dtype.base_dtype != dtypes.bool:
            raise TypeError(f"pred must be Tensor of type bool: {getattr(pred, 'name', pred)}")
        if not callable(fn):
            raise TypeError(f"fn for pred {pred.name} must be callable.")
        predicates.append(pred)
        actions.append(fn)
    with graph_mod.name_scope(name, "case", predicates):
        if default is None:
            if not actions:
                raise ValueError("case() needs at least one pair or a default")
            default, predicates, actions = actions[-1], predicates[:-1], actions[:-1]
        fn = default
        for pred, action in reversed(list(zip(predicates, actions, strict=True))):
            fn = functools.partial(cond, pred, action, fn, strict=strict)
        if exclusive and len(predicates) > 1:
            count = math_ops.reduce_sum(math_ops.cast(array_ops.stack(predicates),
                                                      dtypes.int32))
            check = logging_ops.Assert(
                math_ops.less_equal(count, 1),
                ["Input error: exclusive=True: more than 1 conditions are True:",
                 array_ops.stack(predicates)])
            with graph_mod.get_default_graph().control_dependencies([check]):
                return fn()
        return fn()


# ------------------------------------------------------------------ while_loop
def while_loop(cond: Callable[..., Any], body: Callable[..., Any], loop_vars: Any,  # noqa: A002
               shape_invariants: Any = None, parallel_iterations: int = 10,
               back_prop: bool = True, swap_memory: bool = False, name: str | None = None,
               maximum_iterations: Any = None, return_same_structure: bool = False) -> Any:
    """Repeats `body` while `cond` is true (TF 1.x `tf.while_loop`).

    Args:
      cond: callable of the loop variables returning a bool scalar tensor.
      body: callable of the loop variables returning new values of the same structure,
        dtypes and shapes (or shapes within `shape_invariants`).
      loop_vars: tensors, TensorArrays, or a nested structure of them.
      shape_invariants: shapes each loop variable keeps (e.g. `TensorShape([None])`).
      parallel_iterations: how many iterations may run at once (>= 1).
      back_prop: whether gradients may flow through the loop.
      swap_memory: accepted; values kept for gradients stay in host memory anyway.
      maximum_iterations: int scalar; the loop ends after this many iterations.
      return_same_structure: always return a structure like `loop_vars`.
      name: name scope (default `while`).

    Returns:
      The loop variables' values after the last iteration (a single tensor unpacked
      from a one-element `loop_vars`, unless `return_same_structure`).

    Raises:
      TypeError: `cond`/`body` not callable, `parallel_iterations` < 1, or the body
        changes a loop variable's dtype.
      ValueError: no loop variables, the body returns another structure, or a loop
        variable changes shape without a `shape_invariants` entry allowing it (the
        message names the variable).
    """
    if not callable(cond):
        raise TypeError("cond must be callable.")
    if not callable(body):
        raise TypeError("body must be callable.")
    if parallel_iterations < 1:
        raise TypeError("parallel_iterations must be a positive integer.")
    with graph_mod.name_scope(name, "while", nest.flatten(loop_vars)):
        if loop_vars is None or (isinstance(loop_vars, list | builtins.tuple)
                                 and not loop_vars):
            raise ValueError("No loop variables provided")
        try_to_pack = (isinstance(loop_vars, list | builtins.tuple) and len(loop_vars) == 1
                       and not return_same_structure)
        if not isinstance(loop_vars, list | builtins.tuple):
            loop_vars, try_to_pack = [loop_vars], not return_same_structure
        if maximum_iterations is not None:
            cond, body, loop_vars, shape_invariants = _with_iteration_counter(
                cond, body, loop_vars, shape_invariants, maximum_iterations, try_to_pack)
            try_to_pack = False
        ctx = WhileContext(maximum_iterations=maximum_iterations,
                           parallel_iterations=parallel_iterations, back_prop=back_prop,
                           swap_memory=swap_memory)
        if ctx.outer_context is None:
            graph_mod.get_default_graph().add_to_collection("while_context", ctx)
        result = ctx.BuildLoop(cond, body, loop_vars, shape_invariants,
                               return_same_structure=return_same_structure)
        if maximum_iterations is not None:
            result = result[1]
        return result


def _with_iteration_counter(cond, body, loop_vars, shape_invariants, maximum_iterations,
                            try_to_pack):
    maximum_iterations = convert_to_tensor(maximum_iterations, name="maximum_iterations")
    if maximum_iterations.shape.ndims not in (None, 0):
        raise ValueError(
            "maximum_iterations must be a scalar, saw shape: "
            f"{maximum_iterations.shape}")
    counter = constant_op.constant(0, dtype=maximum_iterations.dtype,
                                   name="iteration_counter")
    orig_cond, orig_body = cond, body
    if try_to_pack:
        new_vars = (counter, loop_vars[0])

        def new_cond(i, lv):
            return math_ops.logical_and(i < maximum_iterations, orig_cond(lv))

        def new_body(i, lv):
            return (i + 1, orig_body(lv))

        if shape_invariants is not None:
            shape_invariants = (TensorShape([]), shape_invariants[0]
                                if isinstance(shape_invariants, list | builtins.tuple)
                                and len(shape_invariants) == 1 else shape_invariants)
    else:
        new_vars = (counter, loop_vars)

        def new_cond(i, lv):
            return math_ops.logical_and(i < maximum_iterations, orig_cond(*lv))

        def new_body(i, lv):
            return (i + 1, orig_body(*lv))

        if shape_invariants is not None:
            shape_invariants = (TensorShape([]), shape_invariants)
    return new_cond, new_body, new_vars, shape_invariants


__all__ = ["no_op", "group", "tuple", "with_dependencies", "cond", "case", "while_loop"]
