"""The `tf.image` namespace (explicit re-exports of TF 1.x `tf.image` names): the PNG/BMP
codecs, the dtype and colour-space conversions, resizing and flipping.

The logic lives in `tensorweave.ops.image_io_ops` (codecs; JPEG and GIF decoding raise
UnimplementedError), `tensorweave.ops.image_ops` and `tensorweave.ops.image_resize_ops`.

NOTE: JPEG decoding is left out on purpose. TensorFlow's default `dct_method` ("") decodes
with libjpeg's IFAST inverse DCT; Pillow decodes with ISLOW and cannot be switched, so its
pixels differ from TF 2.21's default by up to 9 levels (they equal TF's
`dct_method="INTEGER_ACCURATE"` exactly).
"""

from tensorweave.ops.image_io_ops import decode_bmp, decode_image, decode_png, encode_png
from tensorweave.ops.image_ops import convert_image_dtype, grayscale_to_rgb, rgb_to_grayscale
from tensorweave.ops.image_resize_ops import (
    ResizeMethod,
    flip_left_right,
    flip_up_down,
    random_flip_left_right,
    random_flip_up_down,
    resize,
    resize_bilinear,
    resize_images,
    resize_nearest_neighbor,
)

__all__ = [
    "ResizeMethod",
    "convert_image_dtype",
    "decode_bmp",
    "decode_image",
    "decode_png",
    "encode_png",
    "flip_left_right",
    "flip_up_down",
    "grayscale_to_rgb",
    "random_flip_left_right",
    "random_flip_up_down",
    "resize",
    "resize_bilinear",
    "resize_images",
    "resize_nearest_neighbor",
    "rgb_to_grayscale",
]
