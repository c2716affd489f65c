"""`tf.map_fn`, `tf.scan`, `tf.foldl`, `tf.foldr` (TF 1.x `functional_ops` /
`map_fn`): `while_loop`s over the first dimension of their inputs, with TensorArrays for
the unstacked inputs and the stacked outputs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorweave.framework import dtypes, nest
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops import array_ops, control_flow_ops
from tensorweave.ops.tensor_array_ops import TensorArray


def _unstacked(elems_flat: list[Any], reverse: bool = False) -> tuple[Any, list[TensorArray]]:
    n = elems_flat[0].shape.dims[0].value if elems_flat[0].shape.ndims else None
    n = array_ops.shape(elems_flat[0])[0] if n is None else n
    tas = [TensorArray(e.dtype, size=n, dynamic_size=False, infer_shape=True).unstack(e)
           for e in elems_flat]
    return n, tas


def _as_flat_tensors(elems: Any, name: str) -> list[Any]:
    flat = [convert_to_tensor(e, name="elem") for e in nest.flatten(elems)]
    if not flat:
        raise ValueError(f"{name}: elems must be a Tensor or a (possibly nested) sequence of "
                         "tensors; got an empty sequence")
    for e in flat:
        if e.shape.ndims == 0:
            raise ValueError(f"{name}: elements in elems must be 1+ dimensional; got {e}")
    return flat


def map_fn(fn: Callable[[Any], Any], elems: Any, dtype: Any = None,
           parallel_iterations: int | None = None, back_prop: bool = True,
           swap_memory: bool = False, infer_shape: bool = True,
           name: str | None = None) -> Any:
    """`fn` applied to each slice of `elems` along dimension 0, results stacked (TF 1.x
    `tf.map_fn`).

    Args:
      fn: callable of one element (structured like `elems`).
      elems: a tensor or nested structure of tensors, all with the same first dimension.
      dtype: the structure of dtypes `fn` returns, when it differs from `elems`.
      parallel_iterations: iterations run at once (default 10).
      back_prop: whether gradients flow through.
      swap_memory: accepted.
      infer_shape: whether all results must have one shape.
      name: name scope (default `map`).

    Returns:
      `fn`'s results stacked along a new first dimension, structured like `dtype`.

    Raises:
      TypeError: `fn` is not callable.
      ValueError: empty or scalar `elems`.
    """
    if not callable(fn):
        raise TypeError("fn must be callable.")
    in_graph_mode = parallel_iterations is None
    parallel_iterations = 10 if in_graph_mode else parallel_iterations
    with graph_mod.name_scope(name, "map", nest.flatten(elems)):
        elems_flat = _as_flat_tensors(elems, "map_fn")
        dtype = dtype if dtype is not None else nest.map_structure(lambda e: e.dtype, elems)
        dtype_flat = [dtypes.as_dtype(d) for d in nest.flatten(dtype)]
        n, elems_ta = _unstacked(elems_flat)
        accs_ta = [TensorArray(dt, size=n, dynamic_size=False, infer_shape=infer_shape)
                   for dt in dtype_flat]

        def compute(i: Any, tas: list[TensorArray]) -> Any:
            packed = nest.pack_sequence_as(elems, [ta.read(i) for ta in elems_ta])
            out = fn(packed)
            nest.assert_same_structure(dtype if nest.is_sequence(dtype) else [dtype],
                                       out if nest.is_sequence(out) else [out],
                                       check_types=False)
            flat_out = [convert_to_tensor(v) for v in nest.flatten(out)]
            return i + 1, [ta.write(i, v) for ta, v in zip(tas, flat_out, strict=True)]

        _, r_a = control_flow_ops.while_loop(
            lambda i, _: i < n, compute, (convert_to_tensor(0), accs_ta),
            parallel_iterations=parallel_iterations, back_prop=back_prop,
            swap_memory=swap_memory, maximum_iterations=n)
        results = [r.stack() for r in r_a]
        static_n = elems_flat[0].shape.dims[0].value if elems_flat[0].shape.ndims else None
        for r in results:
            r.set_shape(TensorShape([static_n]).concatenate(r.shape[1:])
                        if r.shape.ndims else r.shape)
        return nest.pack_sequence_as(dtype, results)


def scan(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any = None,
         parallel_iterations: int = 10, back_prop: bool = True, swap_memory: bool = False,
         infer_shape: bool = True, reverse: bool = False, name: str | None = None) -> Any:
    """The running results of `a = fn(a, x)` over `elems` along dimension 0, stacked (TF 1.x
    `tf.scan`).

    Args:
      fn: callable (accumulator, element) -> new accumulator, structured like
        `initializer` (or like `elems` without one).
      elems: a tensor or nested structure of tensors sharing their first dimension.
      initializer: the first accumulator; default: the first element (which is then also
        the first output, as in TensorFlow).
      parallel_iterations: iterations run at once.
      back_prop: whether gradients flow through.
      swap_memory: accepted.
      infer_shape: whether all results must have one shape.
      reverse: scan from the last element to the first.
      name: name scope (default `scan`).

    Raises:
      TypeError: `fn` is not callable.
    """
    if not callable(fn):
        raise TypeError("fn must be callable.")
    with graph_mod.name_scope(name, "scan", nest.flatten(elems)):
        elems_flat = _as_flat_tensors(elems, "scan")
        n, elems_ta = _unstacked(elems_flat)
        if initializer is None:
            a_flat = [e[-1] if reverse else e[0] for e in elems_flat]
            i0 = n - 2 if reverse else 1
            a_struct = elems
        else:
            a_flat = [convert_to_tensor(a) for a in nest.flatten(initializer)]
            i0 = n - 1 if reverse else 0
            a_struct = initializer
        accs_ta = [TensorArray(a.dtype, size=n, dynamic_size=False, infer_shape=infer_shape,
                               element_shape=a.shape if infer_shape else None)
                   for a in a_flat]
        if initializer is None:
            accs_ta = [ta.write(n - 1 if reverse else 0, a) for ta, a in zip(accs_ta, a_flat,
                                                                            strict=True)]

        def compute(i: Any, a_flat: list[Any], tas: list[TensorArray]) -> Any:
            packed_elems = nest.pack_sequence_as(elems, [ta.read(i) for ta in elems_ta])
            packed_a = nest.pack_sequence_as(a_struct, a_flat)
            a_out = fn(packed_a, packed_elems)
            nest.assert_same_structure(a_struct, a_out, check_types=False)
            flat_a_out = [convert_to_tensor(v) for v in nest.flatten(a_out)]
            tas = [ta.write(i, v) for ta, v in zip(tas, flat_a_out, strict=True)]
            return (i - 1 if reverse else i + 1), flat_a_out, tas

        def cond(i: Any, *_: Any) -> Any:
            return i >= 0 if reverse else i < n

        _, _, r_a = control_flow_ops.while_loop(
            cond, compute, (convert_to_tensor(i0), a_flat, accs_ta),
            parallel_iterations=parallel_iterations, back_prop=back_prop,
            swap_memory=swap_memory, maximum_iterations=n)
        results = [r.stack() for r in r_a]
        return nest.pack_sequence_as(a_struct, results)


def _fold(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any, reverse: bool,
          parallel_iterations: int, back_prop: bool, swap_memory: bool,
          default_name: str, name: str | None) -> Any:
    if not callable(fn):
        raise TypeError("fn must be callable.")
    with graph_mod.name_scope(name, default_name, nest.flatten(elems)):
        elems_flat = _as_flat_tensors(elems, default_name)
        n, elems_ta = _unstacked(elems_flat)
        if initializer is None:
            a = nest.pack_sequence_as(elems, [ta.read(n - 1 if reverse else 0)
                                              for ta in elems_ta])
            i0 = n - 2 if reverse else 1
        else:
            a = nest.map_structure(convert_to_tensor, initializer)
            i0 = n - 1 if reverse else 0

        def compute(i: Any, a: Any) -> Any:
            elem = nest.pack_sequence_as(elems, [ta.read(i) for ta in elems_ta])
            return (i - 1 if reverse else i + 1), fn(a, elem)

        def cond(i: Any, a: Any) -> Any:
            return i >= 0 if reverse else i < n

        _, r_a = control_flow_ops.while_loop(
            cond, compute, (convert_to_tensor(i0), a),
            parallel_iterations=parallel_iterations, back_prop=back_prop,
            swap_memory=swap_memory, maximum_iterations=n)
        return r_a


def foldl(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any = None,
          parallel_iterations: int = 10, back_prop: bool = True, swap_memory: bool = False,
          name: str | None = None) -> Any:
    """`fn(...fn(fn(initializer, elems[0]), elems[1])..., elems[n-1])` (TF 1.x `tf.foldl`);
    without `initializer` the first element starts the fold.

    Args:
      fn: callable (accumulator, element) -> accumulator.
      elems: a tensor or nested structure of tensors sharing their first dimension.
      initializer: the first accumulator.
      parallel_iterations: iterations run at once.
      back_prop: whether gradients flow through.
      swap_memory: accepted.
      name: name scope (default `foldl`).

    Raises:
      TypeError: `fn` is not callable.
    """
    return _fold(fn, elems, initializer, False, parallel_iterations, back_prop, swap_memory,
                 "foldl", name)


def foldr(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any = None,
          parallel_iterations: int = 10, back_prop: bool = True, swap_memory: bool = False,
          name: str | None = None) -> Any:
    """`foldl` from the last element to the first (TF 1.x `tf.foldr`).

    Args:
      fn: callable (accumulator, element) -> accumulator.
      elems: a tensor or nested structure of tensors sharing their first dimension.
      initializer: the first accumulator.
      parallel_iterations: iterations run at once.
      back_prop: whether gradients flow through.
      swap_memory: accepted.
      name: name scope (default `foldr`).

    Raises:
      TypeError: `fn` is not callable.
    """
    return _fold(fn, elems, initializer, True, parallel_iterations, back_prop, swap_memory,
                 "foldr", name)


__all__ = ["map_fn", "scan", "foldl", "foldr"]
