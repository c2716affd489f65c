"""A name -> object registry that reports where a duplicate was first registered.

The three registries of the runtime (op definitions, kernels, gradients) are instances of
this class (follows TensorFlow's `tensorflow/python/framework/registry.py`). They are filled
at import time, by decorators next to the registered code, and read-only afterwards.
"""

from __future__ import annotations

import sys
from collections.abc import Hashable, Iterator
from types import CodeType
from typing import Any


class Registry:
    """Maps hashable keys to registered objects."""

    def __init__(self, name: str):
        self._name = name
        self._entries: dict[Hashable, tuple[Any, CodeType, int]] = {}

    @property
    def name(self) -> str:
        """The registry's name, used in error messages."""
        return self._name

    def register(self, obj: Any, key: Hashable) -> None:
        """Registers `obj` under `key`.

        Raises:
          KeyError: if `key` is already registered; the message cites the first location.
        """
        if key in self._entries:
            raise KeyError(
                f"Registering two {self._name} with key {key!r}; "
                f"the first was registered at {_location(*self._entries[key][1:])}"
            )
        # NOTE: the decorator's caller, cheaper than a traceback. Its line number is found
        # only for the error above: `f_lineno` scans the line table of the registering
        # module's code, and the ~2,200 registrations of an import paid ~1% of it.
        frame = sys._getframe(2)
        self._entries[key] = (obj, frame.f_code, frame.f_lasti)

    def lookup(self, key: Hashable) -> Any:
        """Returns the object registered under `key`.

        Raises:
          LookupError: if nothing is registered under `key`.
        """
        try:
            return self._entries[key][0]
        except KeyError:
            raise LookupError(f"{self._name} registry has no entry for: {key!r}") from None

    def get(self, key: Hashable, default: Any = None) -> Any:
        """Returns the object under `key`, or `default`."""
        entry = self._entries.get(key)
        return default if entry is None else entry[0]

    def __contains__(self, key: Hashable) -> bool:
        return key in self._entries

    def keys(self) -> list[Hashable]:
        """All registered keys, in registration order."""
        return list(self._entries)

    def __iter__(self) -> Iterator[Hashable]:
        return iter(list(self._entries))

    def __len__(self) -> int:
        return len(self._entries)


def _location(code: CodeType, lasti: int) -> str:
    """`file:line` of the instruction at byte offset `lasti` of `code`."""
    line = next((n for start, end, n in code.co_lines() if start <= lasti < end), None)
    return f"{code.co_filename}:{line if line is not None else code.co_firstlineno}"
