"""Gradient-check cases of the control-flow primitives (consumed by the gradient checker
tests): conds and while loops built as `tf.cond`/`tf.while_loop` build them, in float64.

The `Ref*` primitives share their plain twin's gradient function (as in TensorFlow); the
checker counts them covered by the twin's cases (`REF_TWINS`).
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.ops import array_ops, constant_op, control_flow_ops, math_ops
from tensorweave.testing.gradient_case import GradientCase

REF_TWINS = {
    "RefSwitch": "Switch", "RefMerge": "Merge", "RefEnter": "Enter", "RefExit": "Exit",
    "RefNextIteration": "NextIteration",
}


def _cond(taken: bool) -> Any:
    def build(x: Any, y: Any) -> Any:
        return control_flow_ops.cond(constant_op.constant(taken),
                                     lambda: x * y + math_ops.sin(x),
                                     lambda: math_ops.square(y) - x)
    return build


def _loop(x: Any, w: Any) -> Any:
    """Three iterations of v <- tanh(v * w) + x (x and w loop invariants)."""
    def body(i: Any, v: Any) -> Any:
        return i + 1, math_ops.tanh(v * w) + x
    return control_flow_ops.while_loop(lambda i, v: i < 3, body,
                                       [constant_op.constant(0), x])[1]


def _loop_matmul(a: Any, m: Any) -> Any:
    def body(i: Any, v: Any) -> Any:
        return i + 1, math_ops.matmul(v, m)
    return control_flow_ops.while_loop(lambda i, v: i < 4, body,
                                       [constant_op.constant(0), a])[1]


def _nested(x: Any) -> Any:
    def outer(i: Any, v: Any) -> Any:
        inner = control_flow_ops.while_loop(
            lambda j, u: j < 2, lambda j, u: (j + 1, math_ops.sin(u) * v),
            [constant_op.constant(0), v])[1]
        return i + 1, inner
    return control_flow_ops.while_loop(lambda i, v: i < 2, outer,
                                       [constant_op.constant(0), x])[1]


def _cond_in_loop(x: Any) -> Any:
    def body(i: Any, v: Any) -> Any:
        even = math_ops.equal(i % 2, 0)
        return i + 1, control_flow_ops.cond(even, lambda: v * x, lambda: math_ops.sin(v))
    return control_flow_ops.while_loop(lambda i, v: i < 4, body,
                                       [constant_op.constant(0), x])[1]


def _unknown_shape_loop(x: Any) -> Any:
    x = array_ops.placeholder_with_default(x, [None])

    def body(i: Any, v: Any) -> Any:
        return i + 1, v * math_ops.cos(v)
    return control_flow_ops.while_loop(lambda i, v: i < 3, body,
                                       [constant_op.constant(0), x])[1]


def _loop_of_two(x: Any, y: Any) -> Any:
    """Loop variables that feed each other; only one leaves the loop as the result."""
    def body(i: Any, a: Any, b: Any) -> Any:
        return i + 1, a * b, math_ops.cast(0.5, dtypes.float64) * a + b
    _, a, _ = control_flow_ops.while_loop(lambda i, a, b: i < 3, body,
                                          [constant_op.constant(0), x, y])
    return a


CASES = [
    GradientCase("Switch", _cond(True), ((3,), (3,)), "cond_true"),
    GradientCase("Merge", _cond(False), ((3,), (3,)), "cond_false"),
    GradientCase("Enter", _loop, ((2, 2), (2, 2)), "loop_invariants"),
    GradientCase("Exit", _loop_matmul, ((2, 3), (3, 3)), "matmul_loop"),
    GradientCase("NextIteration", _nested, ((3,),), "nested_loops"),
    GradientCase("Merge", _cond_in_loop, ((2,),), "cond_in_loop"),
    GradientCase("NextIteration", _unknown_shape_loop, ((4,),), "unknown_shape"),
    GradientCase("Switch", _loop_of_two, ((2,), (2,)), "two_vars"),
]


# ----------------------------------------------------------------- TensorArrays
def _ta_read_write(x: Any) -> Any:
    from tensorweave.ops.tensor_array_ops import TensorArray

    ta = TensorArray(dtypes.float64, size=2).write(0, x * 2.0).write(1, math_ops.sin(x))
    return ta.read(0) * ta.read(1)


def _ta_gather_scatter(x: Any) -> Any:
    from tensorweave.ops.tensor_array_ops import TensorArray

    return TensorArray(dtypes.float64, size=3).scatter([2, 0, 1], x * x).gather([1, 2])


def _ta_concat_split(x: Any) -> Any:
    from tensorweave.ops.tensor_array_ops import TensorArray

    return TensorArray(dtypes.float64, size=2).split(math_ops.tanh(x), [1, 3]).concat()


TENSOR_ARRAY_CASES = [
    GradientCase("TensorArrayReadV3", _ta_read_write, ((2,),), "read"),
    GradientCase("TensorArrayWriteV3", _ta_read_write, ((2, 2),), "write"),
    GradientCase("TensorArrayGatherV3", _ta_gather_scatter, ((3, 2),), "gather"),
    GradientCase("TensorArrayScatterV3", _ta_gather_scatter, ((3,),), "scatter"),
    GradientCase("TensorArrayConcatV3", _ta_concat_split, ((4, 2),), "concat"),
    GradientCase("TensorArraySplitV3", _ta_concat_split, ((4,),), "split"),
]


def _reverse_sequence(x: Any) -> Any:
    from tensorweave.ops.array_ops_more import reverse_sequence

    return reverse_sequence(x * x, [3, 1], seq_axis=1, batch_axis=0)


REVERSE_SEQUENCE_CASE = GradientCase("ReverseSequence", _reverse_sequence, ((2, 3, 2),))
