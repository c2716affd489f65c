"""Gradient-check cases of the issue-12 ops: segment, scatter_nd, matrix, linalg, special
functions and sparse ops, and of the image resize ops and `RGBToHSV` (consumed by the
gradient checker tests). `ResizeBilinear` always outputs float32, so its cases cast back to
float64."""

from __future__ import annotations

import numpy as np

from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.ops import array_ops_misc as ma
from tensorweave.ops import array_ops_more as am
from tensorweave.ops import complex_ops as co
from tensorweave.ops import constant_op, math_ops
from tensorweave.ops import image_color_ops as ic
from tensorweave.ops import image_resize_ops as ir
from tensorweave.ops import linalg_ops as la
from tensorweave.ops import linalg_tridiagonal as lt
from tensorweave.ops import matrix_ops as mo
from tensorweave.ops import misc_ops as mi
from tensorweave.ops import random_more_ops as rm
from tensorweave.ops import scatter_nd_ops as sn
from tensorweave.ops import segment_ops as so
from tensorweave.ops import sparse_ops as sp
from tensorweave.ops import special_math_ops as sm
from tensorweave.testing.gradient_case import GradientCase as C

_IDS = np.array([0, 0, 2, 2, 3], np.int32)
_UIDS = np.array([1, -1, 1, 0, 3], np.int32)
_ND = np.array([[0, 1], [2, 0], [0, 1]], np.int64)
_SPI = np.array([[0, 0], [0, 2], [1, 1], [2, 3]], np.int64)
_POS = (0.5, 2.0)


def _spd(x):
    return math_ops.matmul(x, x, transpose_b=True) + 3.0 * mo.eye(3, dtype=x.dtype)


def _sym(x):
    return x + mo.matrix_transpose(x)


def _svd_uv(x, full):
    """A sign-invariant function of u and v (column pairs may flip together): the
    product u diag(s**2) v^T, whose gradient flows through u, s and v."""
    s, u, v = la.svd(x, full_matrices=full)
    k = min(x.shape.as_list())
    return math_ops.matmul(u[:, :k] * (s * s), v[:, :k], transpose_b=True)


def _sparse(v):
    return SparseTensor(_SPI, v, np.array([3, 4], np.int64))


SEGMENT_CASES = [
    C("SegmentSum", lambda x: so.segment_sum(x, _IDS), ((5, 2),)),
    C("SegmentMean", lambda x: so.segment_mean(x, _IDS), ((5, 2),)),
    C("SegmentMax", lambda x: so.segment_max(x, _IDS), ((5, 2),)),
    C("SegmentMin", lambda x: so.segment_min(x, _IDS), ((5, 2),)),
    C("SegmentProd", lambda x: so.segment_prod(x, _IDS), ((5, 2),)),
    C("UnsortedSegmentMax", lambda x: so.unsorted_segment_max(x, _UIDS, 4), ((5, 2),)),
    C("UnsortedSegmentMin", lambda x: so.unsorted_segment_min(x, _UIDS, 4), ((5, 2),)),
    C("UnsortedSegmentProd", lambda x: so.unsorted_segment_prod(x, _UIDS, 4), ((5, 2),)),
    C("SparseSegmentSum", lambda x: so.sparse_segment_sum(x, [0, 2, 2], [0, 0, 1]), ((3, 2),)),
    C("SparseSegmentMean", lambda x: so.sparse_segment_mean(x, [0, 2, 1], [0, 0, 1]), ((3, 2),)),
    C("SparseSegmentSqrtN", lambda x: so.sparse_segment_sqrt_n(x, [0, 2, 1], [0, 0, 1]),
      ((3, 2),)),
]
SCATTER_CASES = [
    C("GatherNd", lambda x: sn.gather_nd(x, _ND), ((3, 2, 2),)),
    C("ScatterNd", lambda u: sn.scatter_nd(_ND, u, np.array([3, 2, 2], np.int64)), ((3, 2),)),
    C("TensorScatterUpdate", lambda t, u: sn.tensor_scatter_nd_update(t, _ND[:2], u),
      ((3, 2, 2), (2, 2))),
    C("TensorScatterAdd", lambda t, u: sn.tensor_scatter_nd_add(t, _ND, u), ((3, 2, 2), (3, 2))),
    C("TensorScatterSub", lambda t, u: sn.tensor_scatter_nd_sub(t, _ND, u), ((3, 2, 2), (3, 2))),
    C("TensorScatterMax", lambda t, u: sn.tensor_scatter_nd_max(t, _ND[:2], u),
      ((3, 2, 2), (2, 2))),
    C("TensorScatterMin", lambda t, u: sn.tensor_scatter_nd_min(t, _ND[:2], u),
      ((3, 2, 2), (2, 2))),
]
ARRAY_CASES = [
    C("ReverseSequence", lambda x: am.reverse_sequence(x, [2, 0, 3], seq_axis=1, batch_axis=0),
      ((3, 4, 2),)),
    C("BroadcastTo", lambda x: am.broadcast_to(x, [2, 3, 4]), ((3, 1),)),
    C("Roll", lambda x: am.roll(x, [1, -2], [0, 1]), ((3, 4),)),
    C("IdentityN", lambda x, y: am.identity_n([x, y])[0] * am.identity_n([x, y])[1],
      ((2, 3), (2, 3))),
    C("MatrixBandPart", lambda x: mo.matrix_band_part(x, 1, 0), ((2, 3, 3),)),
    C("MatrixDiag", mo.matrix_diag, ((2, 3),)),
    C("MatrixDiagPart", mo.matrix_diag_part, ((2, 3, 4),)),
    C("MatrixSetDiag", mo.matrix_set_diag, ((2, 3, 4), (2, 3))),
    C("Diag", mo.diag, ((2, 3),)),
    C("DiagPart", mo.diag_part, ((2, 3, 2, 3),)),
    C("Einsum", lambda a, b: mo.einsum("ij,jk->ik", a, b), ((2, 3), (3, 4)), "matmul"),
    C("Einsum", lambda a, b: mo.einsum("bij,bj->bi", a, b), ((2, 3, 4), (2, 4)), "batch"),
    C("Einsum", lambda a: mo.einsum("ij->j", a), ((2, 3),), "sum"),
    C("Einsum", lambda a, b: mo.einsum("...ij,j->...i", a, b), ((2, 3, 4), (4,)), "ellipsis"),
    C("Einsum", lambda a: mo.einsum("aab->a", a), ((3, 3, 2),), "repeated_in"),
    C("Einsum", lambda a: mo.einsum("ii", a), ((3, 3),), "trace"),
    C("Einsum", lambda a, b: mo.einsum("ijj,k->ik", a, b), ((2, 3, 3), (4,)), "diag_outer"),
    C("Einsum", lambda a: mo.einsum("a->aa", a), ((3,),), "repeated_out"),
    C("Einsum", lambda a, b: mo.einsum("...ij,...jk->...ik", a, b), ((1, 2, 3), (3, 5)),
      "broadcast"),
    C("Einsum", lambda a, b: mo.einsum("i...j,j...k->...ik", a, b), ((2, 1, 3, 1, 3),
                                                                     (3, 1, 2, 2)),
      "broadcast_mid"),
    C("Cross", mo.cross, ((2, 3), (2, 3))),
]
LINALG_CASES = [
    C("MatrixInverse", lambda x: la.matrix_inverse(_spd(x)), ((3, 3),)),
    C("MatrixDeterminant", lambda x: la.matrix_determinant(_spd(x)), ((3, 3),)),
    C("LogMatrixDeterminant", lambda x: la.slogdet(_spd(x))[1], ((3, 3),)),
    C("Cholesky", lambda x: la.cholesky(_spd(x)), ((3, 3),)),
    C("MatrixSolve", lambda x, b: la.matrix_solve(_spd(x), b), ((3, 3), (3, 2))),
    C("MatrixSolve", lambda x, b: la.matrix_solve(_spd(x), b, adjoint=True), ((3, 3), (3, 2)),
      "adjoint"),
    C("MatrixTriangularSolve",
      lambda x, b: la.matrix_triangular_solve(_spd(x), b, lower=True), ((3, 3), (3, 2))),
    C("MatrixTriangularSolve",
      lambda x, b: la.matrix_triangular_solve(_spd(x), b, lower=False, adjoint=True),
      ((3, 3), (3, 2)), "upper_adjoint"),
    C("Qr", lambda x: la.qr(x)[0], ((4, 3),), "q"),
    C("Qr", lambda x: la.qr(x)[1], ((4, 3),), "r"),
    C("Qr", lambda x: la.qr(x)[0], ((3, 3),), "square_q"),
    C("Svd", lambda x: la.svd(x, compute_uv=False), ((4, 3),)),
    C("Svd", lambda x: _svd_uv(x, False), ((3, 3),), "uv_square"),
    C("Svd", lambda x: _svd_uv(x, False), ((4, 3),), "uv_tall"),
    C("Svd", lambda x: _svd_uv(x, False), ((3, 4),), "uv_wide"),
    C("Svd", lambda x: _svd_uv(x, True), ((3, 4),), "uv_wide_full"),
    C("Svd", lambda x: la.svd(x)[0], ((3, 3),), "s_with_uv"),
    C("Svd", lambda x: math_ops.abs(la.svd(x, full_matrices=True)[2][:, 3:]), ((3, 4),),
      "null_space_v"),
    C("Svd", lambda x: math_ops.abs(la.svd(x)[1]), ((4, 3),), "abs_u_tall"),
    C("SelfAdjointEigV2", lambda x: la.self_adjoint_eigvals(_sym(x)), ((3, 3),), "values"),
    C("SelfAdjointEigV2",
      lambda x: math_ops.abs(la.self_adjoint_eig(_sym(x) + mo.diag(np.array([1.0, 3.0, 6.0])))[1]),
      ((3, 3),), "vectors", (-0.2, 0.2)),
]
SPECIAL_CASES = [
    C("Erfinv", sm.erfinv, ((2, 3),), input_range=(-0.9, 0.9)),
    C("Ndtri", sm.ndtri, ((2, 3),), input_range=(0.05, 0.95)),
    C("BesselI0", sm.bessel_i0, ((2, 3),), input_range=(-3.0, 3.0)),
    C("BesselI1", sm.bessel_i1, ((2, 3),), input_range=(-3.0, 3.0)),
    C("BesselI0e", sm.bessel_i0e, ((2, 3),), input_range=(0.1, 3.0)),
    C("BesselI1e", sm.bessel_i1e, ((2, 3),), input_range=(-3.0, -0.1)),
    C("Lgamma", sm.lgamma, ((2, 3),), input_range=_POS),
    C("Digamma", sm.digamma, ((2, 3),), input_range=_POS),
    C("Erf", sm.erf, ((2, 3),)),
    C("Erfc", sm.erfc, ((2, 3),)),
    C("Igamma", lambda x: sm.igamma(constant_op.constant([[1.5], [2.5]], "float64"), x),
      ((2, 3),), input_range=_POS),
    C("Igamma", lambda a, x: sm.igamma(a, x), ((2, 1), (2, 3)), "in_a", input_range=_POS),
    C("Igammac", lambda a, x: sm.igammac(a, x), ((3,), (2, 3)), "in_a", input_range=_POS),
    C("Igammac", lambda x: sm.igammac(constant_op.constant(1.5, "float64"), x), ((2, 3),),
      input_range=_POS),
    C("Betainc", lambda x: sm.betainc(constant_op.constant(2.0, "float64"),
                                      constant_op.constant(3.0, "float64"), x),
      ((2, 3),), input_range=(0.1, 0.9)),
    C("Zeta", lambda q: sm.zeta(constant_op.constant(3.0, "float64"), q), ((2, 3),),
      input_range=_POS),
    C("Polygamma", lambda x: sm.polygamma(constant_op.constant(1.0, "float64"), x), ((2, 3),),
      input_range=_POS),
]
SPARSE_CASES = [
    C("SparseToDense", lambda v: sp.sparse_tensor_to_dense(_sparse(v)), ((4,),)),
    C("SparseTensorDenseMatMul", lambda v, b: sp.sparse_tensor_dense_matmul(_sparse(v), b),
      ((4,), (4, 2))),
    C("SparseTensorDenseMatMul",
      lambda v, b: sp.sparse_tensor_dense_matmul(_sparse(v), b, adjoint_a=True, adjoint_b=True),
      ((4,), (2, 3)), "adjoint"),
    C("SparseTensorDenseAdd", lambda v, b: sp.sparse_add(_sparse(v), b), ((4,), (3, 4))),
    C("SparseReduceSum", lambda v: sp.sparse_reduce_sum(_sparse(v), 1), ((4,),)),
    C("SparseReorder",
      lambda v: sp.sparse_reorder(SparseTensor(_SPI[::-1].copy(), v, [3, 4])).values, ((4,),)),
    C("SparseAdd", lambda a, b: sp.sparse_add(_sparse(a), _sparse(b)).values, ((4,), (4,))),
    C("SparseFillEmptyRows",
      lambda v, d: sp.sparse_fill_empty_rows(SparseTensor(_SPI, v, [5, 4]), d)[0].values,
      ((4,), ())),
    C("SparseSlice", lambda v: sp.sparse_slice(_sparse(v), [0, 1], [2, 3]).values, ((4,),)),
    C("SparseSoftmax", lambda v: sp.sparse_softmax(_sparse(v)).values, ((4,),)),
]

MISC_CASES = [
    C("SelectV2", lambda x, y: ma.where_v2([[True], [False]], x, y), ((2, 3), (3,))),
    C("DynamicPartition", lambda x: ma.dynamic_partition(x, [1, 0, 1, 2], 3)[1], ((4, 2),)),
    C("EnsureShape", lambda x: ma.ensure_shape(x, [None, 3]), ((2, 3),)),
    C("GuaranteeConst", ma.guarantee_const, ((2, 3),)),
    C("SpaceToDepth", lambda x: ma.space_to_depth(x, 2), ((1, 4, 2, 3),)),
    C("DepthToSpace", lambda x: ma.depth_to_space(x, 2), ((1, 2, 1, 8),)),
    C("SpaceToBatchND", lambda x: ma.space_to_batch_nd(x, [2, 2], [[0, 1], [1, 1]]),
      ((1, 3, 2, 1),)),
    C("BatchToSpaceND", lambda x: ma.batch_to_space_nd(x, [2, 2], [[0, 1], [1, 0]]),
      ((4, 2, 2, 1),)),
    C("SpaceToBatch", lambda x: apply_op("SpaceToBatch", input=x, paddings=[[1, 0], [0, 1]],
                                         block_size=2), ((1, 3, 3, 2),)),
    C("BatchToSpace", lambda x: apply_op("BatchToSpace", input=x, crops=[[1, 0], [0, 1]],
                                         block_size=2), ((4, 2, 2, 1),)),
]


def _z(x, y):
    return co.complex(x, y)


COMPLEX_CASES = [
    C("Complex", lambda x, y: co.real(_z(x, y)) + 3.0 * co.imag(_z(x, y)), ((2, 3), (3,))),
    C("Real", lambda x, y: co.real(_z(x, y)), ((2, 3), (2, 3))),
    C("Imag", lambda x, y: co.imag(_z(x, y)), ((2, 3), (2, 3))),
    C("Angle", lambda x, y: co.angle(_z(x, y)), ((2, 3), (2, 3)), input_range=(0.5, 2.0)),
    C("FFT", lambda x, y: co.real(co.fft(_z(x, y))) + co.imag(co.fft(_z(x, y))) * 2.0,
      ((2, 4), (2, 4))),
    C("IFFT", lambda x, y: co.imag(co.ifft(_z(x, y))), ((2, 4), (2, 4))),
    C("FFT2D", lambda x, y: co.real(co.fft2d(_z(x, y))), ((2, 3, 2), (2, 3, 2))),
    C("IFFT2D", lambda x, y: co.imag(co.ifft2d(_z(x, y))), ((3, 2), (3, 2))),
    C("FFT3D", lambda x, y: co.imag(co.fft3d(_z(x, y))), ((2, 2, 3), (2, 2, 3))),
    C("IFFT3D", lambda x, y: co.real(co.ifft3d(_z(x, y))), ((2, 2, 2), (2, 2, 2))),
]

RANDOM_CASES = [
    C("StatelessRandomGammaV2",
      lambda a: rm.stateless_random_gamma([4, 3], [1, 2], a, dtype="float64"), ((3,),),
      input_range=_POS),
]

TRIDIAGONAL_CASES = [
    C("TridiagonalMatMul", lambda d, x: lt.tridiagonal_matmul(d, x), ((2, 3, 4), (2, 4, 2))),
    C("TridiagonalSolve",
      lambda d, x: lt.tridiagonal_solve(d + constant_op.constant(
          [[0.0] * 4, [4.0] * 4, [0.0] * 4], "float64"), x), ((3, 4), (4, 2))),
]

PATCH_CASES = [
    C("ExtractImagePatches", lambda x: mi.extract_image_patches(
        x, [1, 2, 2, 1], [1, 1, 2, 1], [1, 1, 1, 1], "SAME"), ((2, 3, 4, 2),)),
    C("ExtractImagePatches", lambda x: mi.extract_image_patches(
        x, [1, 2, 2, 1], [1, 1, 1, 1], [1, 2, 1, 1], "VALID"), ((1, 4, 3, 1),), "rates"),
    C("ExtractVolumePatches", lambda x: mi.extract_volume_patches(
        x, [1, 2, 1, 2, 1], [1, 1, 1, 2, 1], "SAME"), ((1, 2, 2, 3, 2),)),
]


def _bilinear(size: list[int], **flags: bool) -> object:
    return lambda x: math_ops.cast(ir.resize_bilinear(x, size, **flags), "float64")


def _nearest(size: list[int], **flags: bool) -> object:
    return lambda x: ir.resize_nearest_neighbor(x, size, **flags)


RESIZE_CASES = [
    C("ResizeBilinear", _bilinear([5, 7]), ((2, 3, 4, 2),), "up"),
    C("ResizeBilinear", _bilinear([2, 3], align_corners=True), ((1, 4, 5, 1),), "down_corners"),
    C("ResizeBilinear", _bilinear([5, 3], half_pixel_centers=True), ((1, 3, 4, 2),), "half"),
    C("ResizeNearestNeighbor", _nearest([5, 7]), ((2, 3, 4, 2),), "up"),
    C("ResizeNearestNeighbor", _nearest([2, 3], align_corners=True), ((1, 4, 5, 1),),
      "down_corners"),
    C("ResizeNearestNeighbor", _nearest([5, 3], half_pixel_centers=True), ((1, 3, 4, 2),),
      "half"),
    # Inputs in (0.05, 1): no ties between channels and no zero channel, where the
    # piecewise formula has no derivative.
    C("RGBToHSV", ic.rgb_to_hsv, ((2, 4, 3),), "generic", input_range=(0.05, 1.0)),
]
