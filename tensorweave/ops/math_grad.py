"""Gradients of the math ops (follows TensorFlow's `math_grad.py`).

Broadcasting binary ops sum the gradient back to each input's shape. Where the reduction
indices are decidable from the static shapes they are computed while building the graph
(TensorFlow's `SmartBroadcastGradientArgs` does the same for fully defined shapes; here
partially known shapes such as `[None, 10] + [10]` qualify too whenever every dimension's
broadcast is certain), which saves the `Shape`/`BroadcastGradientArgs` ops and, when
nothing of an input's own dimensions is broadcast, the final `Reshape`. Otherwise the
gradient uses `Shape` + `BroadcastGradientArgs` + `Sum` + `Reshape`, as TensorFlow does.

TensorFlow wraps several gradients in `control_dependencies([grad])` only to delay their
computation on GPUs; that scheduling hint is omitted.

The rules live by concept in `math_grad_common` (shared helpers, broadcasting),
`math_grad_binary`, `math_grad_unary` and `math_grad_reduction` (registered by importing
`tensorweave.ops`); this module keeps `static_reduction_indices` at TF's address.
"""

from __future__ import annotations

from tensorweave.ops.math_grad_common import static_reduction_indices

__all__ = ["static_reduction_indices"]
