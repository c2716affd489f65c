"""Image codecs of `tf.io` / `tf.image` (PNG and BMP; TensorFlow's `image_ops.cc`) and
`tf.io.decode_json_example`."""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes as dtypes_lib
from tensorweave.framework import op_defs  # noqa: F401  (registers the ops)
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.gradients_impl import no_gradient

for _op in ("DecodePng", "EncodePng", "DecodeBmp", "DecodeImage", "DecodeJSONExample"):
    no_gradient(_op)


def _s(x: Any) -> Any:
    return convert_to_tensor(x, dtype=dtypes_lib.string)


def decode_png(contents: Any, channels: int = 0, dtype: Any = dtypes_lib.uint8,
               name: str | None = None) -> Any:
    """A decoded PNG, dtype [height, width, channels] (`tf.io.decode_png`).

    Raises InvalidArgumentError (bad data) / UnimplementedError (interlaced) at run time."""
    return apply_op("DecodePng", contents=_s(contents), channels=channels,
                    dtype=dtypes_lib.as_dtype(dtype), name=name)


def decode_bmp(contents: Any, channels: int = 0, name: str | None = None) -> Any:
    """uint8 [height, width, channels]: a decoded 24/32-bit BMP (`tf.io.decode_bmp`)."""
    return apply_op("DecodeBmp", contents=_s(contents), channels=channels, name=name)


def decode_image(contents: Any, channels: Any = None, dtype: Any = dtypes_lib.uint8,
                 name: str | None = None, expand_animations: bool = True) -> Any:
    """A decoded PNG or BMP image (`tf.io.decode_image`); JPEG/GIF raise
    UnimplementedError at run time."""
    return apply_op("DecodeImage", contents=_s(contents), channels=int(channels or 0),
                    dtype=dtypes_lib.as_dtype(dtype), expand_animations=expand_animations,
                    name=name)


def encode_png(image: Any, compression: int = -1, name: str | None = None) -> Any:
    """PNG bytes (string []) of a uint8/uint16 [height, width, 1-4] image (`tf.io.encode_png`)."""
    return apply_op("EncodePng", image=convert_to_tensor(image), compression=compression,
                    name=name)


def decode_json_example(json_examples: Any, name: str | None = None) -> Any:
    """Binary `Example`s from their JSON form (`tf.io.decode_json_example`).

    Raises InvalidArgumentError at run time for JSON that is not an Example."""
    return apply_op("DecodeJSONExample", json_examples=_s(json_examples), name=name)


__all__ = ["decode_bmp", "decode_image", "decode_json_example", "decode_png", "encode_png"]
