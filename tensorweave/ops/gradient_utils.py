"""Gradient utilities (follows TF 1.x `tf.custom_gradient`, `tf.grad_pass_through`,
`tf.recompute_grad`, `tf.hessians` and `tf.UnconnectedGradients`), built on `IdentityN`
with a gradient override, as TensorFlow's graph mode builds them."""

from __future__ import annotations

import enum
import functools
import inspect
import itertools
from typing import Any

import numpy as np

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops
from tensorweave.ops.array_ops_more import identity_n
from tensorweave.ops.gradients_impl import RegisterGradient, gradients


class UnconnectedGradients(enum.Enum):
    """What `tf.gradients` returns for an x the ys do not depend on."""

    NONE = "none"
    ZERO = "zero"


# NOTE: gradient names must be unique per process (the gradient registry is global).
_UIDS = itertools.count()


def _flatten(value: Any) -> tuple[list[Any], Any]:
    if isinstance(value, list | tuple):
        return list(value), type(value)
    return [value], None


def custom_gradient(f: Any = None) -> Any:
    """Decorator: `f(*args)` returns `(y, grad_fn)`; the gradient of y with respect to the
    args is `grad_fn(*dys)` instead of backprop through f (follows `tf.custom_gradient`).

    Raises:
      NotImplementedError: (when called) for a `grad_fn` taking `variables=` (gradients
        for variables used inside f are not supported here).
    """
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def decorated(*args: Any, **kwargs: Any) -> Any:
        args = [convert_to_tensor(a) for a in args]
        result, grad_fn = f(*args, **kwargs)
        if "variables" in inspect.signature(grad_fn).parameters:
            raise NotImplementedError(
                "tf.custom_gradient with a grad_fn taking variables= is not supported")
        flat, kind = _flatten(result)
        flat = [convert_to_tensor(t) for t in flat]
        name = f"CustomGradient-{next(_UIDS)}"

        @RegisterGradient(name)
        def _grad(op: Any, *grads: Any) -> list[Any]:
            input_grads = grad_fn(*grads[: len(flat)])
            input_grads, _ = _flatten(input_grads)
            if len(input_grads) != len(args):
                raise ValueError(f"custom_gradient function expected to return {len(args)} "
                                 f"gradients, but returned {len(input_grads)} instead.")
            return [None] * len(flat) + list(input_grads)

        graph = graph_mod.get_default_graph()
        with graph.gradient_override_map({"IdentityN": name}):
            outs = identity_n(flat + args)
        outs = outs[: len(flat)]
        return outs[0] if kind is None else kind(outs)

    return decorated


def grad_pass_through(f: Any) -> Any:
    """`f` in the forward pass with an identity gradient (follows `tf.grad_pass_through`)."""

    @custom_gradient
    def through(*args: Any) -> Any:
        def grad(*dys: Any) -> Any:
            return list(dys) if len(dys) > 1 else dys[0]

        return f(*args), grad

    return through


def recompute_grad(f: Any) -> Any:
    """`f`, whose activations are recomputed in the backward pass instead of kept (follows
    `tf.recompute_grad`; differentiates only with respect to f's tensor arguments)."""

    @custom_gradient
    def recomputing(*args: Any) -> Any:
        result = f(*args)

        def grad(*dys: Any) -> Any:
            with graph_mod.control_dependencies(list(dys)):
                again = f(*[array_ops.identity(a) for a in args])
            flat, _ = _flatten(again)
            grads = gradients(flat, list(args), grad_ys=list(dys))
            return grads if len(grads) > 1 else grads[0]

        return result, grad

    return recomputing


def hessians(ys: Any, xs: Any, name: str = "hessians", colocate_gradients_with_ops: bool = False,
             gate_gradients: bool = False, aggregation_method: Any = None) -> list[Tensor]:
    """For each x, the Hessian of `sum(ys)`: shape `x.shape + x.shape` (follows
    `tf.hessians`; x needs a static shape).

    Raises:
      ValueError: for an x of unknown static shape.
    """
    xs = xs if isinstance(xs, list | tuple) else [xs]
    kwargs = {"colocate_gradients_with_ops": colocate_gradients_with_ops,
              "gate_gradients": gate_gradients, "aggregation_method": aggregation_method}
    out = []
    with graph_mod.name_scope(name, "hessians", list(xs)):
        for x, grad in zip(xs, gradients(ys, xs, **kwargs)):
            if not x.shape.is_fully_defined():
                raise ValueError(f"tf.hessians needs a static shape, got {x.shape} for {x}")
            n = int(np.prod(x.shape.as_list()))
            flat = array_ops.reshape(grad, [-1])
            rows = [gradients(flat[i], x, **kwargs)[0] for i in range(n)]
            rows = [array_ops.zeros_like(x) if r is None else r for r in rows]
            out.append(array_ops.reshape(array_ops.stack(rows), x.shape.as_list() * 2))
    return out


__all__ = [
    "UnconnectedGradients",
    "custom_gradient",
    "grad_pass_through",
    "hessians",
    "recompute_grad",
]
