"""Op definitions of the Python-function ops: `PyFunc`, `PyFuncStateless`, `EagerPyFunc`
(follows `tensorflow/core/ops/script_ops.cc`). Output shapes are unknown."""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import register_op
from tensorweave.framework.tensor_shape import TensorShape


def _unknown_shapes(op: Any) -> list[TensorShape]:
    return [TensorShape(None) for _ in op.outputs]


_ARGS = dict(inputs=["input: Tin"], outputs=["output: Tout"], shape_fn=_unknown_shapes)
register_op("PyFunc", attrs=["token: string", "Tin: list(type) >= 0",
                             "Tout: list(type) >= 0"], is_stateful=True, **_ARGS)
register_op("PyFuncStateless", attrs=["token: string", "Tin: list(type) >= 0",
                                      "Tout: list(type) >= 0"], **_ARGS)
register_op("EagerPyFunc", attrs=["token: string", "is_async: bool = false",
                                  "Tin: list(type) >= 0", "Tout: list(type) >= 0"],
            is_stateful=True, **_ARGS)
