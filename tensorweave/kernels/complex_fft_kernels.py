"""NumPy kernels of `Complex`, `Real`, `Imag`, `Angle` and the FFT ops (`np.fft`, computed
in double precision and cast to the op's dtype)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.kernels.array_kernels import invalid
from tensorweave.kernels.registry import KernelNode, register_kernel


@register_kernel("Complex")
def _complex(node: KernelNode) -> Any:
    out = node.output_dtypes[0].as_numpy_dtype
    return lambda ctx, re, im: (np.asarray(re) + 1j * np.asarray(im)).astype(out)


def _part(fn: Any) -> Any:
    def builder(node: KernelNode) -> Any:
        out = node.output_dtypes[0].as_numpy_dtype
        return lambda ctx, x: np.asarray(fn(x)).astype(out)

    return builder


register_kernel("Real")(_part(np.real))
register_kernel("Imag")(_part(np.imag))
register_kernel("Angle")(_part(np.angle))


def _fft(rank: int, inverse: bool) -> Any:
    def builder(node: KernelNode) -> Any:
        out = node.output_dtypes[0].as_numpy_dtype

        def compute(ctx: Any, x: Any) -> Any:
            x = np.asarray(x)
            if x.ndim < rank:
                raise invalid(f"Input must have rank of at least {rank} but got: {x.ndim}")
            axes = tuple(range(x.ndim - rank, x.ndim))
            fn = np.fft.ifftn if inverse else np.fft.fftn
            return fn(x, axes=axes).astype(out)

        return compute

    return builder


for _name, _rank, _inverse in (("FFT", 1, False), ("IFFT", 1, True), ("FFT2D", 2, False),
                               ("IFFT2D", 2, True), ("FFT3D", 3, False), ("IFFT3D", 3, True)):
    register_kernel(_name)(_fft(_rank, _inverse))


def _fftnd(fn_name: str) -> Any:
    def builder(node: KernelNode) -> Any:
        out = node.output_dtypes[0].as_numpy_dtype
        # NOTE: looked up here, not at import: `np.fft` loads its submodule on first use
        # (four modules every process paid at start-up).
        fn = getattr(np.fft, fn_name)

        def compute(ctx: Any, x: Any, lengths: Any, axes: Any) -> Any:
            x = np.asarray(x)
            axes = tuple(int(a) for a in np.asarray(axes).reshape(-1))
            lengths = tuple(int(n) for n in np.asarray(lengths).reshape(-1))
            if len(lengths) != len(axes):
                raise invalid("fft_length and axes must have the same length")
            return fn(x, s=lengths, axes=axes).astype(out)

        return compute

    return builder


register_kernel("FFTND")(_fftnd("fftn"))
register_kernel("IFFTND")(_fftnd("ifftn"))
register_kernel("RFFTND")(_fftnd("rfftn"))
register_kernel("IRFFTND")(_fftnd("irfftn"))
