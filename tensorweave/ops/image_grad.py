"""Gradients of `ResizeBilinear`, `ResizeNearestNeighbor` and `RGBToHSV` (follow TF 1.x
`image_grad.py`). The resize gradient ops and `HSVToRGB` are not differentiable, as in
TensorFlow."""

from __future__ import annotations

from typing import Any

from tensorweave.framework import op_defs  # noqa: F401  (registers the ops)
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops.array_ops_join import stack
from tensorweave.ops.array_ops_shape import shape
from tensorweave.ops.cwise_binary_ops import (
    div_no_nan,
    logical_and,
    logical_not,
    logical_or,
    minimum,
)
from tensorweave.ops.cwise_unary_ops import cast
from tensorweave.ops.gradients_impl import RegisterGradient, no_gradient

no_gradient("ResizeBilinearGrad")
no_gradient("ResizeNearestNeighborGrad")


def _flags(op: Any) -> dict[str, bool]:
    return {"align_corners": op.get_attr("align_corners"),
            "half_pixel_centers": op.get_attr("half_pixel_centers")}


@RegisterGradient("ResizeBilinear")
def _resize_bilinear_grad(op: Any, grad: Any) -> tuple[Any, None]:
    return apply_op("ResizeBilinearGrad", grads=grad, original_image=op.inputs[0],
                    **_flags(op)), None


@RegisterGradient("ResizeNearestNeighbor")
def _resize_nearest_neighbor_grad(op: Any, grad: Any) -> tuple[Any, None]:
    image = op.inputs[0]
    static = image.get_shape()[1:3]
    size = static.as_list() if static.is_fully_defined() else shape(image)[1:3]
    return apply_op("ResizeNearestNeighborGrad", grads=grad, size=size, **_flags(op)), None


no_gradient("HSVToRGB")


@RegisterGradient("RGBToHSV")
def _rgb_to_hsv_grad(op: Any, grad: Any) -> Any:
    """The derivative of the piecewise formula of the `RGBToHSV` kernel, with its
    tie-breaking (red, then green, then blue is the largest; blue, then green, then red the
    smallest), zero where the spread (`value - min`) or the value is 0 and, for the
    saturation, where the channel is 0 (equal to TF's rule)."""
    rgb, hsv = op.inputs[0], op.outputs[0]
    dtype = rgb.dtype
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    value = hsv[..., 2]
    low = minimum(minimum(r, g), b)
    spread = value - low
    r_max = logical_and(r >= g, r >= b)
    g_max = logical_and(logical_not(r_max), g >= b)
    b_max = logical_not(logical_or(r_max, g_max))
    b_min = logical_and(b <= r, b <= g)
    g_min = logical_and(logical_not(b_min), g <= r)
    r_min = logical_not(logical_or(b_min, g_min))
    one_max = [cast(m, dtype) for m in (r_max, g_max, b_max)]
    one_min = [cast(m, dtype) for m in (r_min, g_min, b_min)]
    # value = max: its derivative picks the largest channel.
    d_value = one_max
    # saturation = 1 - min / max.
    inv_value = div_no_nan(cast(1.0, dtype), value)
    # NOTE: as TF's rule, a channel at 0 gets no saturation gradient (its one-sided
    # derivative: images do not go below 0).
    d_sat = [(mx * low * inv_value * inv_value - mn * inv_value) * cast(c > 0, dtype)
             for mx, mn, c in zip(one_max, one_min, (r, g, b), strict=True)]
    # hue = numerator / (6 spread) (+ a constant), the numerator chosen by the largest
    # channel: g - b, b - r or r - g.
    numer = (one_max[0] * (g - b) + one_max[1] * (b - r) + one_max[2] * (r - g))
    d_numer = [one_max[1] * -1.0 + one_max[2], one_max[0] - one_max[2],
               one_max[1] - one_max[0]]
    inv_spread = div_no_nan(cast(1.0, dtype), 6.0 * spread)
    d_hue = [dn * inv_spread - numer * (mx - mn) * 6.0 * inv_spread * inv_spread
             for dn, mx, mn in zip(d_numer, one_max, one_min, strict=True)]
    gh, gs, gv = grad[..., 0], grad[..., 1], grad[..., 2]
    return stack([gh * dh + gs * ds + gv * dv
                            for dh, ds, dv in zip(d_hue, d_sat, d_value, strict=True)],
                           axis=-1)
