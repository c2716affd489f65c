"""`tf.compat.v2`: a stub for programs that reach for it; tensorweave has only the TF1 API,
so each attribute is the top-level `tensorweave` attribute of the same name (names that
exist only in TensorFlow 2 are missing).
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
