"""Complex numbers and FFTs (follows TF 1.x `tf.complex`, `tf.real`, `tf.imag`,
`tf.angle`, `tf.to_complex64`, `tf.fft`, `tf.ifft`, `tf.fft2d`, ..., `tf.fftnd`,
`tf.rfftnd`, `tf.irfftnd`)."""

from __future__ import annotations

from typing import Any

import tensorweave.framework.op_defs  # noqa: F401  (registers the op definitions)
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, cwise_ops


def complex(real: Any, imag: Any, name: str | None = None) -> Tensor:  # noqa: A001
    """`real + 1j * imag`: float32 -> complex64, float64 -> complex128 (op `Complex`).

    Raises:
      TypeError: if real and imag have different dtypes.
    """
    with graph_mod.name_scope(name, "Complex", [real, imag]) as scope:
        real = convert_to_tensor(real, name="real")
        imag = convert_to_tensor(imag, dtype=real.dtype, name="imag")
        tout = dtypes.complex128 if real.dtype == dtypes.float64 else dtypes.complex64
        return apply_op("Complex", real=real, imag=imag, Tout=tout, name=scope)


def _part(op_type: str, x: Any, name: Any) -> Tensor:
    x = convert_to_tensor(x, name="input")
    if not x.dtype.is_complex:
        return x if op_type == "Real" else cwise_ops.multiply(x, 0, name=name) \
            if op_type == "Imag" else array_ops.zeros_like(x, name=name)
    tout = dtypes.float64 if x.dtype == dtypes.complex128 else dtypes.float32
    return apply_op(op_type, input=x, Tout=tout, name=name)


def real(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """The real parts (float32/64) of a complex tensor; real tensors pass through
    (op `Real`)."""
    return _part("Real", input, name)


def imag(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """The imaginary parts of a complex tensor; zeros for real tensors (op `Imag`)."""
    return _part("Imag", input, name)


def angle(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """The arguments (radians) of a complex tensor; zeros for real tensors (op `Angle`)."""
    return _part("Angle", input, name)


def to_complex64(x: Any, name: str = "ToComplex64") -> Tensor:
    """`tf.cast(x, tf.complex64)` (follows the deprecated `tf.to_complex64`)."""
    return cwise_ops.cast(x, dtypes.complex64, name=name)


def to_complex128(x: Any, name: str = "ToComplex128") -> Tensor:
    """`tf.cast(x, tf.complex128)` (follows the deprecated `tf.to_complex128`)."""
    return cwise_ops.cast(x, dtypes.complex128, name=name)


def _fft(op_type: str) -> Any:
    def fn(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
        # Converted first so a complex128 array stays complex128 (not the attr default).
        return apply_op(op_type, input=convert_to_tensor(input, name="input"), name=name)

    rank = {"FFT": 1, "IFFT": 1}.get(op_type, int(op_type[-2]) if op_type[-1] == "D" else 1)
    kind = "inverse " if op_type.startswith("I") else ""
    fn.__doc__ = (f"The {kind}{rank}-D discrete Fourier transform over the innermost {rank} "
                  f"dimension(s) of a complex tensor (op `{op_type}`).")
    fn.__name__ = op_type.lower()
    return fn


fft = _fft("FFT")
ifft = _fft("IFFT")
fft2d = _fft("FFT2D")
ifft2d = _fft("IFFT2D")
fft3d = _fft("FFT3D")
ifft3d = _fft("IFFT3D")


def _nd_args(x: Tensor, fft_length: Any, axes: Any) -> tuple[Any, Any]:
    rank = x.shape.ndims
    if axes is None:
        if rank is None:
            raise ValueError("fftnd needs axes or an input of known rank")
        axes = list(range(rank))
    if fft_length is None:
        shape = array_ops.shape(x)
        fft_length = array_ops.gather(shape, axes)
    return convert_to_tensor(fft_length, dtypes.int32), convert_to_tensor(axes, dtypes.int32)


def fftnd(input: Any, fft_length: Any = None, axes: Any = None,  # noqa: A002
          norm: Any = None, name: str | None = None) -> Tensor:
    """The N-D DFT over `axes` with lengths `fft_length` (op `FFTND`)."""
    x = convert_to_tensor(input, name="input")
    lengths, axes = _nd_args(x, fft_length, axes)
    return apply_op("FFTND", input=x, fft_length=lengths, axes=axes, name=name)


def ifftnd(input: Any, fft_length: Any = None, axes: Any = None,  # noqa: A002
           norm: Any = None, name: str | None = None) -> Tensor:
    """The inverse N-D DFT over `axes` (op `IFFTND`)."""
    x = convert_to_tensor(input, name="input")
    lengths, axes = _nd_args(x, fft_length, axes)
    return apply_op("IFFTND", input=x, fft_length=lengths, axes=axes, name=name)


def rfftnd(input_tensor: Any, fft_length: Any = None, axes: Any = None, norm: Any = None,
           name: str | None = None) -> Tensor:
    """The N-D DFT of a real tensor, keeping the non-negative frequencies of the last axis
    (op `RFFTND`)."""
    x = convert_to_tensor(input_tensor, name="input_tensor")
    lengths, axes = _nd_args(x, fft_length, axes)
    tc = dtypes.complex128 if x.dtype == dtypes.float64 else dtypes.complex64
    return apply_op("RFFTND", input=x, fft_length=lengths, axes=axes, Tcomplex=tc, name=name)


def irfftnd(input_tensor: Any, fft_length: Any = None, axes: Any = None, norm: Any = None,
            name: str | None = None) -> Tensor:
    """The inverse of `rfftnd`: a real tensor (op `IRFFTND`).

    Raises:
      ValueError: without `fft_length` (the real length is ambiguous).
    """
    if fft_length is None:
        raise ValueError("irfftnd needs fft_length")
    x = convert_to_tensor(input_tensor, name="input_tensor")
    lengths, axes = _nd_args(x, fft_length, axes)
    tr = dtypes.float64 if x.dtype == dtypes.complex128 else dtypes.float32
    return apply_op("IRFFTND", input=x, fft_length=lengths, axes=axes, Treal=tr, name=name)


__all__ = [
    "angle",
    "complex",
    "fft",
    "fft2d",
    "fft3d",
    "fftnd",
    "ifft",
    "ifft2d",
    "ifft3d",
    "ifftnd",
    "imag",
    "irfftnd",
    "real",
    "rfftnd",
    "to_complex128",
    "to_complex64",
]
