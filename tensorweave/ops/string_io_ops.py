"""File and string-codec ops of `tf.io`: `read_file`, `write_file`, `matching_files`,
`decode_compressed`, `decode_base64`, `encode_base64`, `serialize_tensor`, `parse_tensor`
(TensorFlow's `io_ops.cc`, `parsing_ops.cc`, `string_ops.cc`)."""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes as dtypes_lib
from tensorweave.framework import graph as graph_mod
from tensorweave.framework import op_defs  # noqa: F401  (registers the ops)
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import variables
from tensorweave.ops.gradients_impl import no_gradient

for _op in ("ReadFile", "WriteFile", "MatchingFiles", "DecodeCompressed", "DecodeBase64",
            "EncodeBase64", "SerializeTensor", "ParseTensor"):
    no_gradient(_op)


def _s(x: Any) -> Any:
    return convert_to_tensor(x, dtype=dtypes_lib.string)


def read_file(filename: Any, name: str | None = None) -> Any:
    """String []: the contents of a file (`tf.io.read_file`); NotFoundError if missing."""
    return apply_op("ReadFile", filename=_s(filename), name=name)


def write_file(filename: Any, contents: Any, name: str | None = None) -> Any:
    """Writes `contents` (string []) to `filename` (`tf.io.write_file`); an Operation."""
    return apply_op("WriteFile", filename=_s(filename), contents=_s(contents), name=name)


def matching_files(pattern: Any, name: str | None = None) -> Any:
    """String [n]: the sorted files matching a glob pattern (`tf.io.matching_files`)."""
    return apply_op("MatchingFiles", pattern=_s(pattern), name=name)


def decode_compressed(input_bytes: Any = None, compression_type: str = "",
                      name: str | None = None, bytes: Any = None) -> Any:  # noqa: A002
    """Decompresses each string ("", "ZLIB" or "GZIP"; `tf.io.decode_compressed`).

    Raises DataLossError at run time for corrupted data."""
    data = input_bytes if input_bytes is not None else bytes
    return apply_op("DecodeCompressed", bytes=_s(data), compression_type=compression_type,
                    name=name)


def decode_base64(input: Any, name: str | None = None) -> Any:  # noqa: A002
    """Web-safe base64 decoding of each string (`tf.io.decode_base64`)."""
    return apply_op("DecodeBase64", input=_s(input), name=name)


def encode_base64(input: Any, pad: bool = False, name: str | None = None) -> Any:  # noqa: A002
    """Web-safe base64 encoding of each string (`tf.io.encode_base64`)."""
    return apply_op("EncodeBase64", input=_s(input), pad=pad, name=name)


def serialize_tensor(tensor: Any, name: str | None = None) -> Any:
    """String []: the tensor as a serialized `TensorProto` (`tf.io.serialize_tensor`)."""
    return apply_op("SerializeTensor", tensor=convert_to_tensor(tensor), name=name)


def parse_tensor(serialized: Any, out_type: Any, name: str | None = None) -> Any:
    """The tensor of a serialized `TensorProto` (`tf.io.parse_tensor`).

    Raises InvalidArgumentError at run time for bad bytes or another dtype."""
    return apply_op("ParseTensor", serialized=_s(serialized),
                    out_type=dtypes_lib.as_dtype(out_type), name=name)


__all__ = [
    "decode_base64",
    "decode_compressed",
    "encode_base64",
    "matching_files",
    "parse_tensor",
    "read_file",
    "serialize_tensor",
    "write_file",
]


def match_filenames_once(pattern: Any, name: str | None = None) -> Any:
    """A local variable holding the files matching `pattern`, computed once when local
    variables are initialized (`tf.io.match_filenames_once`)."""
    with graph_mod.name_scope(name, "matching_filenames", [pattern]) as scope:
        return variables.Variable(
            matching_files(pattern), trainable=False, validate_shape=False,
            collections=[variables.GraphKeys.LOCAL_VARIABLES], name=scope.rstrip("/"))


__all__ += ["match_filenames_once"]
