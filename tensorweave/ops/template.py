"""`tf.make_template`: wraps a function so that every call shares the variables the first
call created (follows TensorFlow's `tensorflow/python/ops/template.py`, graph mode)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from tensorweave.framework import graph as graph_mod
from tensorweave.ops import variable_scope as vs
from tensorweave.ops.variables import GraphKeys


class Template:
    """A function whose variables are created on its first call and reused afterwards.

    Each call runs under the template's variable scope (reusing it after the first call)
    and opens a fresh name scope for its ops (`name`, `name_1`, ...).
    """

    def __init__(self, name: str, func: Callable[..., Any], create_scope_now: bool = False,
                 unique_name: str | None = None, custom_getter: Any = None):
        self._func = func
        self._name = name
        self._unique_name = unique_name
        self._custom_getter = custom_getter
        self._variable_scope: Any = None
        self._variables_created = False
        if create_scope_now:
            # NOTE: a variable scope without a name scope, as TensorFlow's template does.
            scope_name = unique_name or vs._get_unique_variable_scope(name)
            with vs._pure_variable_scope(scope_name, custom_getter=custom_getter) as scope:
                self._variable_scope = scope

    @property
    def name(self) -> str:
        """The name given to `make_template`."""
        return self._name

    @property
    def variable_scope(self) -> Any:
        """The `VariableScope` of the variables (None before the first call, unless the
        scope was created at construction)."""
        return self._variable_scope

    @property
    def variable_scope_name(self) -> str | None:
        """The scope's name with a trailing `/` (as TensorFlow gives it), or None before the
        scope exists."""
        return f"{self._variable_scope.name}/" if self._variable_scope is not None else None

    @property
    def var_scope(self) -> Any:
        """Alias of `variable_scope`."""
        return self._variable_scope

    def _trainable(self) -> list[Any]:
        return graph_mod.get_default_graph().get_collection(GraphKeys.TRAINABLE_VARIABLES)

    def _call_func(self, args: Any, kwargs: Any) -> Any:
        before = len(self._trainable())
        result = self._func(*args, **kwargs)
        if self._variables_created and len(self._trainable()) > before:
            added = [v.name for v in self._trainable()[before:]]
            raise ValueError(
                "Trainable variable created when calling a template after the first time, "
                f"perhaps you used tf.Variable when you meant tf.get_variable: {added}")
        self._variables_created = True
        return result

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._variable_scope is None:
            with vs.variable_scope(self._unique_name, default_name=self._name,
                                   custom_getter=self._custom_getter) as scope:
                self._variable_scope = scope
                return self._call_func(args, kwargs)
        with vs.variable_scope(self._variable_scope, reuse=self._variables_created):
            return self._call_func(args, kwargs)


def make_template(name_: str, func_: Callable[..., Any], create_scope_now_: bool = False,
                  unique_name_: str | None = None, custom_getter_: Any = None,
                  **kwargs: Any) -> Template:
    """`func_` wrapped so that all its calls share variables (follows `tf.make_template`).

    Args:
      name_: the variable scope's name (made unique unless `unique_name_` is given).
      func_: builds ops; creates variables with `tf.get_variable`.
      create_scope_now_: create the variable scope now instead of at the first call.
      unique_name_: the exact scope name to use (shared with other templates that use it).
      custom_getter_: a custom getter for the template's variable scope.
      **kwargs: keyword arguments bound to `func_`.

    Returns:
      A `Template`. A call after the first that creates a trainable variable raises
      ValueError, as does a variable re-created with `tf.get_variable` there (reuse).
    """
    if kwargs:
        func_ = functools.partial(func_, **kwargs)
    return Template(name_, func_, create_scope_now=create_scope_now_,
                    unique_name=unique_name_, custom_getter=custom_getter_)


__all__ = ["make_template"]
