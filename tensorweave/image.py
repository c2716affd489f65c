"""The `tf.image` namespace (explicit re-exports of TF 1.x `tf.image` names): the PNG/BMP
codecs, the dtype and colour-space conversions, resizing and flipping, cropping, padding and
rotating, the brightness/contrast/gamma/hue/saturation adjustments of input pipelines, and
image measures (`total_variation`, `image_gradients`, `psnr`).

The logic lives in `tensorweave.ops.image_io_ops` (codecs; JPEG and GIF decoding raise
UnimplementedError), `tensorweave.ops.image_ops`, `tensorweave.ops.image_resize_ops`,
`tensorweave.ops.image_crop_ops`, `tensorweave.ops.image_adjust_ops`,
`tensorweave.ops.image_color_ops` and `tensorweave.ops.image_metrics_ops` (`random_crop` is
`tf.random_crop`).

NOTE: JPEG decoding is left out on purpose. TensorFlow's default `dct_method` ("") decodes
with libjpeg's IFAST inverse DCT; Pillow decodes with ISLOW and cannot be switched, so its
pixels differ from TF 2.21's default by up to 9 levels (they equal TF's
`dct_method="INTEGER_ACCURATE"` exactly).
"""

from tensorweave.ops.image_adjust_ops import (
    adjust_brightness,
    adjust_contrast,
    adjust_gamma,
    per_image_standardization,
    random_brightness,
    random_contrast,
)
from tensorweave.ops.image_color_ops import (
    adjust_hue,
    adjust_saturation,
    hsv_to_rgb,
    random_hue,
    random_saturation,
    rgb_to_hsv,
)
from tensorweave.ops.image_crop_ops import (
    central_crop,
    crop_to_bounding_box,
    pad_to_bounding_box,
    resize_image_with_crop_or_pad,
    resize_with_crop_or_pad,
    rot90,
    transpose,
    transpose_image,
)
from tensorweave.ops.image_io_ops import decode_bmp, decode_image, decode_png, encode_png
from tensorweave.ops.image_metrics_ops import image_gradients, psnr, total_variation
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
from tensorweave.ops.random_more_ops import random_crop

__all__ = [
    "ResizeMethod",
    "adjust_brightness",
    "adjust_contrast",
    "adjust_gamma",
    "adjust_hue",
    "adjust_saturation",
    "central_crop",
    "convert_image_dtype",
    "crop_to_bounding_box",
    "decode_bmp",
    "decode_image",
    "decode_png",
    "encode_png",
    "flip_left_right",
    "flip_up_down",
    "grayscale_to_rgb",
    "hsv_to_rgb",
    "image_gradients",
    "pad_to_bounding_box",
    "per_image_standardization",
    "psnr",
    "random_brightness",
    "random_contrast",
    "random_crop",
    "random_flip_left_right",
    "random_flip_up_down",
    "random_hue",
    "random_saturation",
    "resize",
    "resize_bilinear",
    "resize_image_with_crop_or_pad",
    "resize_images",
    "resize_nearest_neighbor",
    "resize_with_crop_or_pad",
    "rgb_to_grayscale",
    "rgb_to_hsv",
    "rot90",
    "total_variation",
    "transpose",
    "transpose_image",
]
