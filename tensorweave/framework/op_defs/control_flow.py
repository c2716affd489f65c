"""Control-flow primitives (TensorFlow's `core/ops/control_flow_ops.cc`): `Switch`,
`Merge`, `Enter`, `Exit`, `NextIteration`, their `Ref*` forms, `LoopCond` and
`ControlTrigger`.

Frames and deadness are the executor's business (`runtime/frame_executor.py`); these are
only the definitions and static shapes.
"""

from __future__ import annotations

from tensorweave.framework.op_def import register_op
from tensorweave.framework.shape_inference import op_error
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape


def _passthrough(op) -> list[TensorShape]:
    return [op.inputs[0].shape]


def _switch_shape(op) -> list[TensorShape]:
    pred = op.inputs[1].shape
    if pred.ndims not in (None, 0):
        raise op_error(op, f"Shape must be rank 0 but is rank {pred.ndims}")
    return [op.inputs[0].shape, op.inputs[0].shape]


def _merge_shape(op) -> list[TensorShape]:
    shapes = [t.shape for t in op.inputs]
    out = shapes[0]
    for s in shapes[1:]:
        if out.ndims is None or s.ndims is None or out.ndims != s.ndims:
            out = unknown_shape()
            break
        out = TensorShape([a.value if a.value == b.value else None
                           for a, b in zip(out.dims, s.dims, strict=True)])
    return [out, TensorShape([])]


def _scalar_pred(op) -> list[TensorShape]:
    s = op.inputs[0].shape
    if s.ndims not in (None, 0):
        raise op_error(op, f"Shape must be rank 0 but is rank {s.ndims}")
    return [TensorShape([])]


_FRAME_ATTRS = ["T: type", "frame_name: string", "is_constant: bool = false",
                "parallel_iterations: int = 10"]

register_op("Switch", inputs=["data: T", "pred: bool"],
            outputs=["output_false: T", "output_true: T"], attrs=["T: type"],
            shape_fn=_switch_shape)
register_op("RefSwitch", inputs=["data: Ref(T)", "pred: bool"],
            outputs=["output_false: Ref(T)", "output_true: Ref(T)"], attrs=["T: type"],
            shape_fn=_switch_shape, allows_uninitialized_input=True)
register_op("Merge", inputs=["inputs: N * T"], outputs=["output: T", "value_index: int32"],
            attrs=["T: type", "N: int >= 1"], shape_fn=_merge_shape)
register_op("RefMerge", inputs=["inputs: Ref(N * T)"],
            outputs=["output: Ref(T)", "value_index: int32"],
            attrs=["T: type", "N: int >= 1"], shape_fn=_merge_shape)
register_op("Enter", inputs=["data: T"], outputs=["output: T"], attrs=_FRAME_ATTRS,
            shape_fn=_passthrough)
register_op("RefEnter", inputs=["data: Ref(T)"], outputs=["output: Ref(T)"],
            attrs=_FRAME_ATTRS, shape_fn=_passthrough)
register_op("Exit", inputs=["data: T"], outputs=["output: T"], attrs=["T: type"],
            shape_fn=_passthrough)
register_op("RefExit", inputs=["data: Ref(T)"], outputs=["output: Ref(T)"],
            attrs=["T: type"], shape_fn=_passthrough)
register_op("NextIteration", inputs=["data: T"], outputs=["output: T"], attrs=["T: type"],
            shape_fn=_passthrough)
register_op("RefNextIteration", inputs=["data: Ref(T)"], outputs=["output: Ref(T)"],
            attrs=["T: type"], shape_fn=_passthrough)
register_op("LoopCond", inputs=["input: bool"], outputs=["output: bool"],
            shape_fn=_scalar_pred)
register_op("ControlTrigger", shape_fn=lambda op: [])
