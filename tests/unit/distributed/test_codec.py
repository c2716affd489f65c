"""Tensor encoding on the wire: TensorFlow's encodings decode (strings in `tensor_content`)."""

from __future__ import annotations

import pytest

import tensorweave as tf
from tensorweave.distributed.transport import codec as codec_mod
from tensorweave.protos import tensor_pb2


def test_strings_in_tensor_content_as_tensorflow_sends_them():
    """TF's C++ runtime puts string tensors in `tensor_content`: varint32 lengths, then bytes."""
    proto = tensor_pb2.TensorProto(dtype=7)  # DT_STRING
    proto.tensor_shape.dim.add(size=2)
    proto.tensor_shape.dim.add(size=2)
    long = b"x" * 300  # a two-byte varint length
    proto.tensor_content = bytes([2, 0]) + b"\xac\x02" + bytes([1]) + b"ab" + long + b"z"
    got = codec_mod.decode(proto)
    assert got.shape == (2, 2) and list(got.reshape(-1)) == [b"ab", b"", long, b"z"]
    proto.tensor_content = proto.tensor_content[:-1]
    with pytest.raises(tf.errors.DataLossError, match="does not hold 4 strings"):
        codec_mod.decode(proto)
