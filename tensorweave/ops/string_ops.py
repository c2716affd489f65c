"""String functions (follows TF 1.x `tf.as_string`, `tf.reduce_join`, `tf.regex_replace`,
`tf.string_join`, `tf.string_split`, `tf.string_strip`, `tf.string_to_number`,
`tf.string_to_hash_bucket(_fast|_strong)`, `tf.substr`, `tf.encode_base64`,
`tf.decode_base64`, `tf.fingerprint`). The hashes equal TensorFlow's (FarmHash
Fingerprint64, the legacy Hash64 and SipHash-2-4)."""

from __future__ import annotations

from typing import Any

import tensorweave.framework.op_defs  # noqa: F401  (registers the op definitions)
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops
from tensorweave.ops.gradients_impl import no_gradient
from tensorweave.ops.io_ops import string_join


def _strings(x: Any, name: str = "input") -> Tensor:
    return convert_to_tensor(x, dtypes.string, name=name)


def as_string(input: Any, precision: int = -1, scientific: bool = False,  # noqa: A002
              shortest: bool = False, width: int = -1, fill: str = "",
              name: str | None = None) -> Tensor:
    """Each element formatted as a string: ints as `%d`, floats as `%f` (`%e` with
    `scientific`, `%g` with `shortest`), bools as true/false (op `AsString`)."""
    return apply_op("AsString", input=input, precision=precision, scientific=scientific,
                    shortest=shortest, width=width, fill=fill, name=name)


def reduce_join(inputs: Any, axis: Any = None, keep_dims: Any = None, separator: str = "",
                name: str | None = None, reduction_indices: Any = None,
                keepdims: Any = None) -> Tensor:
    """Strings joined with `separator` along `axis` (all axes by default) (op
    `ReduceJoin`)."""
    axis = axis if axis is not None else reduction_indices
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with graph_mod.name_scope(name, "ReduceJoin", [inputs]):
        inputs = _strings(inputs, "inputs")
        if axis is None:
            axis = array_ops.range(array_ops.rank(inputs))
        return apply_op("ReduceJoin", inputs=inputs,
                        reduction_indices=convert_to_tensor(axis, dtypes.int32),
                        keep_dims=keep, separator=separator)


def regex_replace(input: Any, pattern: Any, rewrite: Any, replace_global: bool = True,  # noqa: A002
                  name: str | None = None) -> Tensor:
    r"""Matches of the regex `pattern` replaced by `rewrite` (`\1` back-references), all of
    them or the first (op `RegexReplace`)."""
    return apply_op("RegexReplace", input=_strings(input), pattern=_strings(pattern, "pattern"),
                    rewrite=_strings(rewrite, "rewrite"), replace_global=replace_global,
                    name=name)


def string_split(source: Any, sep: Any = None, skip_empty: bool = True, delimiter: Any = None,
                 result_type: str = "SparseTensor", name: str | None = None) -> Any:
    """Splits each string of the 1-D `source` on any character of `delimiter` (default a
    space; "" splits into bytes) into a `SparseTensor` [len(source), max parts] (follows
    TF 1.x `tf.string_split`, op `StringSplit`).

    Raises:
      ValueError: for a `result_type` other than "SparseTensor".
    """
    if result_type != "SparseTensor":
        raise ValueError("tf.string_split supports result_type='SparseTensor' here")
    delim = sep if sep is not None else (delimiter if delimiter is not None else " ")
    with graph_mod.name_scope(name, "StringSplit", [source]):
        indices, values, shape = apply_op(
            "StringSplit", input=_strings(source, "source"),
            delimiter=_strings(delim, "delimiter"), skip_empty=skip_empty)
        return SparseTensor(indices, values, shape)


def string_strip(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Leading and trailing whitespace removed (op `StringStrip`)."""
    return apply_op("StringStrip", input=_strings(input), name=name)


def string_to_number(string_tensor: Any, out_type: Any = dtypes.float32,
                     name: str | None = None) -> Tensor:
    """Strings parsed as numbers of `out_type` (op `StringToNumber`).

    Raises:
      InvalidArgumentError: at run time, for a string that is not a number.
    """
    return apply_op("StringToNumber", string_tensor=_strings(string_tensor, "string_tensor"),
                    out_type=dtypes.as_dtype(out_type), name=name)


def string_to_hash_bucket(string_tensor: Any, num_buckets: int,
                          name: str | None = None) -> Tensor:
    """`Hash64(s) % num_buckets`, int64 (op `StringToHashBucket`, TensorFlow's legacy
    hash)."""
    return apply_op("StringToHashBucket", string_tensor=_strings(string_tensor, "string_tensor"),
                    num_buckets=num_buckets, name=name)


def string_to_hash_bucket_fast(input: Any, num_buckets: int,  # noqa: A002
                               name: str | None = None) -> Tensor:
    """`Fingerprint64(s) % num_buckets`, int64 (op `StringToHashBucketFast`)."""
    return apply_op("StringToHashBucketFast", input=_strings(input), num_buckets=num_buckets,
                    name=name)


def string_to_hash_bucket_strong(input: Any, num_buckets: int, key: Any,  # noqa: A002
                                 name: str | None = None) -> Tensor:
    """`SipHash-2-4(key, s) % num_buckets`, int64, with a two-int `key` (op
    `StringToHashBucketStrong`)."""
    return apply_op("StringToHashBucketStrong", input=_strings(input), num_buckets=num_buckets,
                    key=[int(k) for k in key], name=name)


def substr(input: Any, pos: Any, len: Any, name: str | None = None,  # noqa: A002
           unit: str = "BYTE") -> Tensor:
    """`len` bytes (or UTF-8 characters) from `pos` (negative counts from the end) of each
    string (op `Substr`).

    Raises:
      InvalidArgumentError: at run time, for `pos` outside the string.
    """
    pos = convert_to_tensor(pos, name="pos")
    return apply_op("Substr", input=_strings(input), pos=pos,
                    len=convert_to_tensor(len, pos.dtype, name="len"), unit=unit, name=name)


def encode_base64(input: Any, pad: bool = False, name: str | None = None) -> Tensor:  # noqa: A002
    """Web-safe base64 (`-` and `_`), unpadded unless `pad` (op `EncodeBase64`)."""
    return apply_op("EncodeBase64", input=_strings(input), pad=pad, name=name)


def decode_base64(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """The bytes of web-safe base64 strings, padded or not (op `DecodeBase64`)."""
    return apply_op("DecodeBase64", input=_strings(input), name=name)


def fingerprint(data: Any, method: str = "farmhash64", name: str | None = None) -> Tensor:
    """uint8 [data.shape[0], 8]: the FarmHash Fingerprint64 of each row's bytes, little
    endian (strings: of each string, combined per row) (op `Fingerprint`)."""
    return apply_op("Fingerprint", data=data, method=_strings(method, "method"), name=name)


for _op in ("AsString", "ReduceJoin", "RegexReplace", "StringSplit", "StringStrip",
            "StringToNumber", "StringToHashBucket", "StringToHashBucketFast",
            "StringToHashBucketStrong", "Substr",
            "Fingerprint"):
    no_gradient(_op)

__all__ = [
    "as_string",
    "decode_base64",
    "encode_base64",
    "fingerprint",
    "reduce_join",
    "regex_replace",
    "string_join",
    "string_split",
    "string_strip",
    "string_to_hash_bucket",
    "string_to_hash_bucket_fast",
    "string_to_hash_bucket_strong",
    "string_to_number",
    "substr",
]
