"""Gradients of the complex-number ops and the 1-3 D FFTs (follows TensorFlow's
`math_grad.py` and `fft_ops.py`): for f: C -> R the gradient is conj(df/dz) spread over
real and imaginary parts, as in TensorFlow."""

from __future__ import annotations

from typing import Any

from tensorweave.ops import array_ops, cwise_ops, reduction_ops
from tensorweave.ops.complex_ops import complex, fft, fft2d, fft3d, ifft, ifft2d, ifft3d, imag, real
from tensorweave.ops.gradients_impl import RegisterGradient, no_gradient


def _unbroadcast(grad: Any, x: Any, other: Any) -> Any:
    sx, so = array_ops.shape(x), array_ops.shape(other)
    rx, _ = cwise_ops.broadcast_gradient_args(sx, so)
    return array_ops.reshape(reduction_ops.reduce_sum(grad, rx), sx)


@RegisterGradient("Complex")
def _complex_grad(op: Any, grad: Any) -> Any:
    x, y = op.inputs
    return _unbroadcast(real(grad), x, y), _unbroadcast(imag(grad), y, x)


@RegisterGradient("Real")
def _real_grad(op: Any, grad: Any) -> Any:
    return complex(grad, array_ops.zeros_like(grad))


@RegisterGradient("Imag")
def _imag_grad(op: Any, grad: Any) -> Any:
    return complex(array_ops.zeros_like(grad), grad)


@RegisterGradient("Angle")
def _angle_grad(op: Any, grad: Any) -> Any:
    z = op.inputs[0]
    re, im = real(z), imag(z)
    # d angle = (re d im - im d re) / |z|^2; TensorFlow returns -grad / conj(z) rotated.
    denom = re * re + im * im
    return complex(-grad * im / denom, grad * re / denom)


def _size(grad: Any, rank: int) -> Any:
    dims = array_ops.shape(grad)[-rank:]
    n = reduction_ops.reduce_prod(dims)
    return cwise_ops.cast(n, grad.dtype)


def _fft_grad(inverse_fn: Any, rank: int, scale_up: bool) -> Any:
    def grad_fn(op: Any, grad: Any) -> Any:
        size = _size(grad, rank)
        return inverse_fn(grad) * size if scale_up else inverse_fn(grad) / size

    return grad_fn


RegisterGradient("FFT")(_fft_grad(ifft, 1, True))
RegisterGradient("IFFT")(_fft_grad(fft, 1, False))
RegisterGradient("FFT2D")(_fft_grad(ifft2d, 2, True))
RegisterGradient("IFFT2D")(_fft_grad(fft2d, 2, False))
RegisterGradient("FFT3D")(_fft_grad(ifft3d, 3, True))
RegisterGradient("IFFT3D")(_fft_grad(fft3d, 3, False))
for _op in ("FFTND", "IFFTND", "RFFTND", "IRFFTND"):
    no_gradient(_op)
