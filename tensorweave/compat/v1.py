"""`tf.compat.v1`: tensorweave's own namespace under its TensorFlow 2 name.

Every attribute is the top-level `tensorweave` attribute of the same name
(`tf.compat.v1.Session is tf.Session`, `tf.compat.v1.train is tf.train`), resolved on use
so the lazily loaded namespaces stay lazy.
"""

from __future__ import annotations

from typing import Any

import tensorweave as _tensorweave


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    return getattr(_tensorweave, name)


def __dir__() -> list[str]:
    return dir(_tensorweave)
