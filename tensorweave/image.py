"""The `tf.image` namespace (explicit re-exports of TF 1.x `tf.image` names): the PNG/BMP
codecs and the dtype and colour-space conversions.

The logic lives in `tensorweave.ops.image_io_ops` (codecs; JPEG and GIF decoding raise
UnimplementedError) and `tensorweave.ops.image_ops`.
"""

from tensorweave.ops.image_io_ops import decode_bmp, decode_image, decode_png, encode_png
from tensorweave.ops.image_ops import convert_image_dtype, grayscale_to_rgb, rgb_to_grayscale

__all__ = [
    "convert_image_dtype",
    "decode_bmp",
    "decode_image",
    "decode_png",
    "encode_png",
    "grayscale_to_rgb",
    "rgb_to_grayscale",
]
