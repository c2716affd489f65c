"""`tf.contrib.framework`: argument scopes (`arg_scope`, `add_arg_scope`), as in TF 1.15's
`contrib/framework/python/ops/arg_scope.py`.

`with arg_scope([f, g], k=v):` makes `k=v` the default keyword argument of the functions
`f` and `g` (decorated with `@add_arg_scope`) inside the block; arguments a call passes
override it, and nested scopes update the enclosing one.

The stack of scopes is thread-local (TensorFlow keeps one list per process). It is a
third ambient stack beside the default graph and session: an argument scope is not tied
to a graph in TensorFlow (a graph entered inside an `arg_scope` still sees it), so it
cannot live on the graph, and per-thread state keeps concurrent builders apart.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import threading
from collections.abc import Callable, Iterator
from typing import Any

_KEY_ATTR = "_arg_scope_key"


class _ArgScopeStack(threading.local):
    def __init__(self) -> None:
        self.scopes: list[dict[tuple[str, str], dict[str, Any]]] = [{}]


_STACK = _ArgScopeStack()


def current_arg_scope() -> dict[tuple[str, str], dict[str, Any]]:
    """The innermost scope: `{(module, name) of a function: its default kwargs}`."""
    return _STACK.scopes[-1]


def _key(func: Any) -> tuple[str, str]:
    default = (getattr(func, "__module__", ""), getattr(func, "__name__", repr(func)))
    return getattr(func, _KEY_ATTR, default)


def add_arg_scope(func: Callable[..., Any]) -> Callable[..., Any]:
    """Decorates `func` so that `arg_scope` can set its keyword arguments' defaults.

    Follows `tf.contrib.framework.add_arg_scope`: a call merges the innermost scope's
    keyword arguments for `func` under the call's own.
    """
    key = _key(func)

    @functools.wraps(func)
    def func_with_args(*args: Any, **kwargs: Any) -> Any:
        scoped = current_arg_scope().get(key)
        if scoped is not None:
            kwargs = {**scoped, **kwargs}
        return func(*args, **kwargs)

    setattr(func_with_args, _KEY_ATTR, key)
    return func_with_args


def has_arg_scope(func: Any) -> bool:
    """Whether `func` was decorated with `add_arg_scope`."""
    return hasattr(func, _KEY_ATTR)


def arg_scoped_arguments(func: Callable[..., Any]) -> list[str]:
    """The names of `func`'s arguments that have defaults (those a scope usually sets).

    Raises:
      ValueError: `func` is not decorated with `add_arg_scope`.
    """
    if not has_arg_scope(func):
        raise ValueError(f"{_key(func)} is not decorated with @add_arg_scope")
    params = inspect.signature(inspect.unwrap(func)).parameters.values()
    return [p.name for p in params if p.default is not inspect.Parameter.empty]


@contextlib.contextmanager
def arg_scope(list_ops_or_scope: Any, **kwargs: Any) -> Iterator[dict]:
    """Sets default keyword arguments of decorated functions (`tf.contrib.framework.arg_scope`).

    Args:
      list_ops_or_scope: a list or tuple of functions decorated with `add_arg_scope`, or
        a scope dict yielded by an earlier `arg_scope` (entered again as it was).
      **kwargs: the defaults, for every function of the list.

    Yields:
      The new scope dict (reusable as `list_ops_or_scope`).

    Raises:
      ValueError: kwargs given with a scope dict, or an undecorated function.
      TypeError: `list_ops_or_scope` is neither a list/tuple nor a dict.
    """
    if isinstance(list_ops_or_scope, dict):
        if kwargs:
            raise ValueError("When attempting to re-use a scope by suppling a dictionary, "
                             "kwargs must be empty.")
        scope = dict(list_ops_or_scope)
    elif isinstance(list_ops_or_scope, list | tuple):
        scope = dict(current_arg_scope())
        for op in list_ops_or_scope:
            if not has_arg_scope(op):
                raise ValueError(f"{_key(op)} is not decorated with @add_arg_scope")
            scope[_key(op)] = {**scope.get(_key(op), {}), **kwargs}
    else:
        raise TypeError("list_ops_or_scope must either be a list/tuple or reused scope "
                        "(i.e. dict)")
    _STACK.scopes.append(scope)
    try:
        yield scope
    finally:
        _STACK.scopes.pop()


__all__ = [
    "add_arg_scope", "arg_scope", "arg_scoped_arguments", "current_arg_scope", "has_arg_scope",
]
