"""Gradients of the TensorArray ops (TF 1.x `tensor_array_grad`).

The gradient of a read is a write into the gradient TensorArray (one per gradient
source, created by `TensorArrayGradV3` next to the forward array), and the other way
round; gather/scatter and concat/split likewise.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.ops import array_ops
from tensorweave.ops.gradient_registry import RegisterGradient, no_gradient
from tensorweave.ops.tensor_array_ops import TensorArray

for _op in ("TensorArrayV3", "TensorArrayGradV3", "TensorArraySizeV3", "TensorArrayCloseV3"):
    no_gradient(_op)


def _grad_source(op_or_tensor: Any) -> str:
    """The `gradients...` name-scope prefix of a gradient op or tensor (TF's
    `_GetGradSource`), which names the gradient TensorArray.

    Raises:
      ValueError: the name has no `gradients` component.
    """
    tokens = op_or_tensor.name.split("/")
    pos = [i for i, t in enumerate(tokens) if t.startswith("gradients")]
    if not pos:
        raise ValueError("Expected op/tensor name to start with gradients (excluding scope), "
                         f"got: {op_or_tensor.name}")
    return "/".join(tokens[: pos[-1] + 1])


def _grad_ta(op: Operation, dtype: Any, flow: Tensor, source: str):
    ta = TensorArray(dtype, handle=op.inputs[0], flow=flow,
                     colocate_with_first_write_call=False)
    return ta.grad(source=source, flow=flow)


@RegisterGradient("TensorArrayReadV3")
def _read_grad(op: Operation, grad: Any):
    flow = op.inputs[2]
    g = _grad_ta(op, op.get_attr("dtype"), flow, _grad_source(grad))
    return [None, None, g.write(op.inputs[1], grad).flow]


@RegisterGradient("TensorArrayWriteV3")
def _write_grad(op: Operation, flow: Any):
    source = _grad_source(flow)
    flow_out = array_ops.identity(op.outputs[0], "flow_out")
    # NOTE: the gradient array must be created after the forward write it reads.
    with graph_mod.get_default_graph().control_dependencies([flow_out]):
        flow = array_ops.identity(flow, "write_barrier")
    g = _grad_ta(op, op.get_attr("T"), flow, source)
    return [None, None, g.read(op.inputs[1]), flow]


@RegisterGradient("TensorArrayGatherV3")
def _gather_grad(op: Operation, grad: Any):
    flow = op.inputs[2]
    g = _grad_ta(op, op.get_attr("dtype"), flow, _grad_source(grad))
    return [None, None, g.scatter(op.inputs[1], grad).flow]


@RegisterGradient("TensorArrayScatterV3")
def _scatter_grad(op: Operation, flow: Any):
    g = _grad_ta(op, op.get_attr("T"), flow, _grad_source(flow))
    return [None, None, g.gather(op.inputs[1]), flow]


@RegisterGradient("TensorArrayConcatV3")
def _concat_grad(op: Operation, grad: Any, unused_lengths_grad: Any):
    flow = op.inputs[1]
    g = _grad_ta(op, op.get_attr("dtype"), flow, _grad_source(grad))
    return [None, g.split(grad, op.outputs[1]).flow]


@RegisterGradient("TensorArraySplitV3")
def _split_grad(op: Operation, flow: Any):
    g = _grad_ta(op, op.get_attr("T"), flow, _grad_source(flow))
    return [None, g.concat(), None, flow]
