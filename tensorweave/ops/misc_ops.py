"""Miscellaneous top-level functions (follows TF 1.x `tf.timestamp`, `tf.print`,
`tf.extract_image_patches`, `tf.extract_volume_patches`, `tf.serialize_sparse`,
`tf.serialize_many_sparse`, `tf.deserialize_many_sparse`, `tf.random_index_shuffle`,
`tf.batch_scatter_update`, `tf.approx_top_k`, `tf.is_symbolic_tensor`), and the names that
cannot apply to a NumPy runtime (custom op libraries, quantized and bfloat16 tensors),
which raise NotImplementedError naming the TensorFlow feature."""

from __future__ import annotations

import sys
from typing import Any

import tensorweave.framework.op_defs  # noqa: F401  (registers the op definitions)
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops
from tensorweave.ops.array_ops_more import _approx_k
from tensorweave.ops.scatter_nd_ops import scatter_nd_update
from tensorweave.ops.sparse_ops import _sp


def timestamp(name: str | None = None) -> Tensor:
    """float64 seconds since the epoch, when the op runs (op `Timestamp`)."""
    return apply_op("Timestamp", name=name)


def _stream_name(stream: Any) -> str:
    if stream is sys.stdout:
        return "stdout"
    if stream is sys.stderr:
        return "stderr"
    if isinstance(stream, str):
        return stream
    raise ValueError(f"Unsupported output stream {stream!r}: use sys.stdout, sys.stderr, "
                     "'log(info)', 'log(warning)', 'log(error)' or 'file://path'")


def extract_image_patches(images: Any, ksizes: Any = None, strides: Any = None,
                          rates: Any = None, padding: Any = None, name: str | None = None,
                          sizes: Any = None) -> Tensor:
    """`ksizes` patches of `images` [batch, rows, cols, depth] every `strides`, sampled every
    `rates`, flattened into the depth dimension (op `ExtractImagePatches`)."""
    ksizes = ksizes if ksizes is not None else sizes
    return apply_op("ExtractImagePatches", images=images, ksizes=list(ksizes),
                    strides=list(strides), rates=list(rates), padding=padding, name=name)


def extract_volume_patches(input: Any, ksizes: Any, strides: Any, padding: Any,  # noqa: A002
                           name: str | None = None) -> Tensor:
    """3-D patches of `input` [batch, planes, rows, cols, depth] (op
    `ExtractVolumePatches`)."""
    return apply_op("ExtractVolumePatches", input=input, ksizes=list(ksizes),
                    strides=list(strides), padding=padding, name=name)


def serialize_sparse(sp_input: Any, name: str | None = None,
                     out_type: Any = dtypes.string) -> Tensor:
    """String [3]: the serialized TensorProtos of indices, values and shape (op
    `SerializeSparse`)."""
    sp = _sp(sp_input)
    return apply_op("SerializeSparse", sparse_indices=sp.indices, sparse_values=sp.values,
                    sparse_shape=sp.dense_shape, out_type=dtypes.as_dtype(out_type), name=name)


def serialize_many_sparse(sp_input: Any, name: str | None = None,
                          out_type: Any = dtypes.string) -> Tensor:
    """String [N, 3]: each of the N minibatch entries serialized (op
    `SerializeManySparse`)."""
    sp = _sp(sp_input)
    return apply_op("SerializeManySparse", sparse_indices=sp.indices, sparse_values=sp.values,
                    sparse_shape=sp.dense_shape, out_type=dtypes.as_dtype(out_type), name=name)


def deserialize_many_sparse(serialized_sparse: Any, dtype: Any, rank: Any = None,
                            name: str | None = None) -> SparseTensor:
    """A `SparseTensor` [N, ...] from N serialized sparse tensors, the dense shape the
    maximum of theirs (op `DeserializeManySparse`)."""
    indices, values, shape = apply_op("DeserializeManySparse",
                                      serialized_sparse=serialized_sparse,
                                      dtype=dtypes.as_dtype(dtype), name=name)
    return SparseTensor(indices, values, shape)


def random_index_shuffle(index: Any, seed: Any, max_index: Any, rounds: int = 4,
                         name: str | None = None) -> Tensor:
    """The position of `index` in a pseudo-random permutation of [0, max_index] fixed by
    `seed` (op `RandomIndexShuffle`; the permutation is not TensorFlow's)."""
    index = convert_to_tensor(index, name="index")
    return apply_op("RandomIndexShuffle", index=index, seed=seed,
                    max_index=convert_to_tensor(max_index, index.dtype), rounds=rounds,
                    name=name)


def batch_scatter_update(ref: Any, indices: Any, updates: Any, use_locking: bool = True,
                         name: str | None = None) -> Tensor:
    """`ref[i..., indices[i..., j]] = updates[i..., j]` for a batched variable (follows
    the deprecated `tf.batch_scatter_update`)."""
    with graph_mod.name_scope(name, "BatchScatterUpdate", [indices, updates]):
        indices = convert_to_tensor(indices, name="indices")
        rank = indices.shape.ndims
        if rank is None:
            raise ValueError("batch_scatter_update needs indices of known rank")
        batch = array_ops.shape(indices, out_type=indices.dtype)
        coords = []
        for i in range(rank - 1):
            shape = [1] * rank
            shape[i] = -1
            coords.append(array_ops.reshape(array_ops.range(batch[i]), shape)
                          + array_ops.zeros_like(indices))
        nd = array_ops.stack(coords + [indices], axis=-1)
        return scatter_nd_update(ref, nd, updates, use_locking=use_locking)


def approx_top_k(input: Any, k: int, reduction_dimension: int = -1,  # noqa: A002
                 recall_target: float = 0.95, is_max_k: bool = True,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True,
                 name: str | None = None) -> Any:
    """`(values, indices)` of the k largest (or smallest) entries along an axis (follows
    `tf.approx_top_k`; exact here)."""
    return _approx_k(input, k, reduction_dimension, is_max_k, name)


def is_symbolic_tensor(tensor: Any) -> bool:
    """True for graph tensors (all tensors here: there is no eager mode)."""
    return isinstance(tensor, Tensor | SparseTensor)


def _unsupported(name: str, feature: str) -> Any:
    def unsupported(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"tf.{name}: {feature} cannot be used with tensorweave's "
                                  "NumPy runtime")

    unsupported.__name__ = name
    unsupported.__doc__ = f"Raises NotImplementedError ({feature})."
    return unsupported


load_library = _unsupported("load_library", "TensorFlow custom op/kernel libraries (.so)")
load_op_library = _unsupported("load_op_library", "TensorFlow custom op libraries (.so)")
load_file_system_library = _unsupported("load_file_system_library",
                                        "TensorFlow file system plugins (.so)")
quantize = _unsupported("quantize", "quantized dtypes (qint8, quint8, qint32, ...)")
quantize_v2 = _unsupported("quantize_v2", "quantized dtypes (qint8, quint8, qint32, ...)")
dequantize = _unsupported("dequantize", "quantized dtypes (qint8, quint8, qint32, ...)")
quantized_concat = _unsupported("quantized_concat", "quantized dtypes (qint8, quint8, ...)")
to_bfloat16 = _unsupported("to_bfloat16", "the bfloat16 dtype")

__all__ = [
    "approx_top_k",
    "batch_scatter_update",
    "dequantize",
    "deserialize_many_sparse",
    "extract_image_patches",
    "extract_volume_patches",
    "is_symbolic_tensor",
    "load_file_system_library",
    "load_library",
    "load_op_library",
    "quantize",
    "quantize_v2",
    "quantized_concat",
    "random_index_shuffle",
    "serialize_many_sparse",
    "serialize_sparse",
    "timestamp",
    "to_bfloat16",
]
