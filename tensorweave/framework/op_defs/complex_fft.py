"""Complex-number ops and the FFTs (follows `tensorflow/core/ops/math_ops.cc` and
`spectral_ops.cc`): `Complex`, `Real`, `Imag`, `Angle`, `FFT`/`IFFT` (1-3 D),
`FFTND`/`IFFTND`, `RFFTND`/`IRFFTND`."""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import register_op
from tensorweave.framework.op_defs.array_more import _binary_same
from tensorweave.framework.shape_inference import static_value, with_rank_at_least
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape

_COMPLEX = "Tcomplex: {complex64, complex128} = DT_COMPLEX64"


def _same(op: Any) -> list[TensorShape]:
    return [op.inputs[0].shape]


def _fft_rank(rank: int) -> Any:
    def shape_fn(op: Any) -> list[TensorShape]:
        return [with_rank_at_least(op, op.inputs[0].shape, rank)]

    return shape_fn


def _fftnd_shape(op: Any, real_in: bool, real_out: bool) -> list[TensorShape]:
    x = op.inputs[0].shape
    lengths, axes = static_value(op.inputs[1]), static_value(op.inputs[2])
    if x.ndims is None or lengths is None or axes is None:
        return [unknown_shape(x.ndims)]
    dims = x.as_list()
    for i, (n, a) in enumerate(zip(lengths.tolist(), axes.tolist())):
        last = i == len(axes) - 1
        dims[a] = n // 2 + 1 if real_in and last else int(n)
    return [TensorShape(dims)]


register_op(
    "Complex",
    inputs=["real: T", "imag: T"],
    outputs=["out: Tout"],
    attrs=["T: {float, double} = DT_FLOAT", "Tout: {complex64, complex128} = DT_COMPLEX64"],
    shape_fn=_binary_same,
)
for _name in ("Real", "Imag", "Angle"):
    register_op(
        _name,
        inputs=["input: T"],
        outputs=["output: Tout"],
        attrs=["T: {complex64, complex128} = DT_COMPLEX64", "Tout: {float, double} = DT_FLOAT"],
        shape_fn=_same,
    )
for _name, _rank in (("FFT", 1), ("IFFT", 1), ("FFT2D", 2), ("IFFT2D", 2), ("FFT3D", 3),
                     ("IFFT3D", 3)):
    register_op(
        _name,
        inputs=["input: Tcomplex"],
        outputs=["output: Tcomplex"],
        attrs=[_COMPLEX],
        shape_fn=_fft_rank(_rank),
    )
for _name in ("FFTND", "IFFTND"):
    register_op(
        _name,
        inputs=["input: Tcomplex", "fft_length: int32", "axes: int32"],
        outputs=["output: Tcomplex"],
        attrs=[_COMPLEX],
        shape_fn=lambda op: _fftnd_shape(op, False, False),
    )
register_op(
    "RFFTND",
    inputs=["input: Treal", "fft_length: int32", "axes: int32"],
    outputs=["output: Tcomplex"],
    attrs=["Treal: {float, double} = DT_FLOAT", _COMPLEX],
    shape_fn=lambda op: _fftnd_shape(op, True, False),
)
register_op(
    "IRFFTND",
    inputs=["input: Tcomplex", "fft_length: int32", "axes: int32"],
    outputs=["output: Treal"],
    attrs=["Treal: {float, double} = DT_FLOAT", _COMPLEX],
    shape_fn=lambda op: _fftnd_shape(op, False, True),
)
