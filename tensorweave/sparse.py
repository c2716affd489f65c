"""The `tf.sparse` namespace (explicit re-exports of TF 1.x `tf.sparse` names).

The logic lives in `tensorweave.ops.sparse_ops` (and `segment_ops` for the sparse segment
reductions); `SparseTensor` in `tensorweave.framework.sparse_tensor`.
"""

from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.ops.data_flow_accumulators import SparseConditionalAccumulator
from tensorweave.ops.segment_ops import sparse_segment_mean as segment_mean
from tensorweave.ops.segment_ops import sparse_segment_sqrt_n as segment_sqrt_n
from tensorweave.ops.segment_ops import sparse_segment_sum as segment_sum
from tensorweave.ops.sparse_ops import from_dense
from tensorweave.ops.sparse_ops import sparse_add as add
from tensorweave.ops.sparse_ops import sparse_concat as concat
from tensorweave.ops.sparse_ops import sparse_fill_empty_rows as fill_empty_rows
from tensorweave.ops.sparse_ops import sparse_mask as mask
from tensorweave.ops.sparse_ops import sparse_maximum as maximum
from tensorweave.ops.sparse_ops import sparse_minimum as minimum
from tensorweave.ops.sparse_ops import sparse_placeholder as placeholder
from tensorweave.ops.sparse_ops import sparse_reduce_max as reduce_max
from tensorweave.ops.sparse_ops import sparse_reduce_max_sparse as reduce_max_sparse
from tensorweave.ops.sparse_ops import sparse_reduce_sum as reduce_sum
from tensorweave.ops.sparse_ops import sparse_reduce_sum_sparse as reduce_sum_sparse
from tensorweave.ops.sparse_ops import sparse_reorder as reorder
from tensorweave.ops.sparse_ops import sparse_reset_shape as reset_shape
from tensorweave.ops.sparse_ops import sparse_reshape as reshape
from tensorweave.ops.sparse_ops import sparse_retain as retain
from tensorweave.ops.sparse_ops import sparse_slice as slice  # noqa: A004
from tensorweave.ops.sparse_ops import sparse_softmax as softmax
from tensorweave.ops.sparse_ops import sparse_split as split
from tensorweave.ops.sparse_ops import sparse_tensor_dense_matmul as matmul
from tensorweave.ops.sparse_ops import sparse_tensor_dense_matmul as sparse_dense_matmul
from tensorweave.ops.sparse_ops import sparse_tensor_to_dense as to_dense
from tensorweave.ops.sparse_ops import sparse_to_indicator as to_indicator
from tensorweave.ops.sparse_ops import sparse_transpose as transpose
from tensorweave.ops.sparse_ops_more import sparse_bincount as bincount
from tensorweave.ops.sparse_ops_more import sparse_cross as cross
from tensorweave.ops.sparse_ops_more import sparse_cross_hashed as cross_hashed
from tensorweave.ops.sparse_ops_more import sparse_expand_dims as expand_dims
from tensorweave.ops.sparse_ops_more import sparse_eye as eye
from tensorweave.ops.sparse_ops_more import sparse_merge as merge

__all__ = [
    "SparseConditionalAccumulator",
    "SparseTensor",
    "add",
    "bincount",
    "concat",
    "cross",
    "cross_hashed",
    "expand_dims",
    "eye",
    "fill_empty_rows",
    "from_dense",
    "mask",
    "matmul",
    "maximum",
    "merge",
    "minimum",
    "placeholder",
    "reduce_max",
    "reduce_max_sparse",
    "reduce_sum",
    "reduce_sum_sparse",
    "reorder",
    "reset_shape",
    "reshape",
    "retain",
    "segment_mean",
    "segment_sqrt_n",
    "segment_sum",
    "slice",
    "softmax",
    "sparse_dense_matmul",
    "split",
    "to_dense",
    "to_indicator",
    "transpose",
]
