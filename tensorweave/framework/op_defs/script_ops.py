"""`PyFunc`, `PyFuncStateless` and `EagerPyFunc`: nodes that call a registered Python
function (follows `tensorflow/core/ops/script_ops.cc`)."""

from __future__ import annotations

from tensorweave.framework.op_def import register_op
from tensorweave.framework.tensor_shape import unknown_shape

for _name, _stateful, _extra in (
    ("PyFunc", True, []),
    ("PyFuncStateless", False, []),
    ("EagerPyFunc", True, ["is_async: bool = false"]),
):
    register_op(
        _name,
        inputs=["input: Tin"],
        outputs=["output: Tout"],
        attrs=["token: string", *_extra, "Tin: list(type) >= 0", "Tout: list(type) >= 0"],
        is_stateful=_stateful,
        shape_fn=lambda op: [unknown_shape() for _ in op.outputs],
    )
