"""Nested structures of values (follows `tf.nest` / TF 1.x `util/nest`): lists, tuples,
namedtuples and dicts (visited in sorted key order); everything else is a leaf."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def is_sequence(x: Any) -> bool:
    """True for the containers `nest` descends into."""
    return isinstance(x, list | tuple | Mapping)


def _children(x: Any) -> list[Any]:
    if isinstance(x, Mapping):
        return [x[k] for k in sorted(x)]
    return list(x)


def flatten(structure: Any) -> list[Any]:
    """The leaves of `structure`, depth first; a leaf gives `[leaf]`."""
    if not is_sequence(structure):
        return [structure]
    out: list[Any] = []
    for c in _children(structure):
        out.extend(flatten(c))
    return out


def _rebuild(like: Any, children: list[Any]) -> Any:
    if isinstance(like, Mapping):
        return type(like)((k, v) for k, v in zip(sorted(like), children, strict=True))
    if isinstance(like, tuple) and hasattr(like, "_fields"):
        return type(like)(*children)
    return type(like)(children)


def pack_sequence_as(structure: Any, flat_sequence: list[Any]) -> Any:
    """`flat_sequence` arranged as `structure`.

    Raises:
      ValueError: if the number of leaves differs.
    """
    flat = list(flat_sequence)
    n = len(flatten(structure))
    if len(flat) != n:
        raise ValueError(
            f"Could not pack sequence. Structure had {n} elements, but flat_sequence had "
            f"{len(flat)} elements. Structure: {structure}, flat_sequence: {flat}.")
    pos = [0]

    def build(s: Any) -> Any:
        if not is_sequence(s):
            pos[0] += 1
            return flat[pos[0] - 1]
        return _rebuild(s, [build(c) for c in _children(s)])

    return build(structure)


def assert_same_structure(a: Any, b: Any, check_types: bool = True) -> None:
    """Raises if `a` and `b` do not nest the same way.

    Raises:
      ValueError: different nesting or lengths, naming both structures.
      TypeError: same nesting but different sequence types (when `check_types`).
    """
    def check(x: Any, y: Any) -> None:
        sx, sy = is_sequence(x), is_sequence(y)
        if sx != sy:
            raise ValueError(
                "The two structures don't have the same nested structure.\n\nFirst structure: "
                f"{a}\n\nSecond structure: {b}")
        if not sx:
            return
        if check_types and _seq_type(x) is not _seq_type(y):
            raise TypeError(
                "The two structures don't have the same sequence type. First structure has "
                f"type {type(x)}, while second structure has type {type(y)}.\n\nFirst "
                f"structure: {a}\n\nSecond structure: {b}")
        if isinstance(x, Mapping) and sorted(x) != sorted(y):
            raise ValueError(
                f"The two dictionaries don't have the same set of keys. First structure: {a}, "
                f"second structure: {b}")
        cx, cy = _children(x), _children(y)
        if len(cx) != len(cy):
            raise ValueError(
                "The two structures don't have the same number of elements.\n\nFirst "
                f"structure: {a}\n\nSecond structure: {b}")
        for p, q in zip(cx, cy, strict=True):
            check(p, q)

    check(a, b)


def _seq_type(x: Any) -> type:
    if isinstance(x, Mapping):
        return dict
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)
    return type(x) if type(x) in (list, tuple) else type(x)


def map_structure(fn: Callable[..., Any], *structures: Any, check_types: bool = True) -> Any:
    """`fn` applied leaf-wise to structures of the same nesting."""
    for s in structures[1:]:
        assert_same_structure(structures[0], s, check_types)
    flats = [flatten(s) for s in structures]
    return pack_sequence_as(structures[0], [fn(*xs) for xs in zip(*flats, strict=True)])
