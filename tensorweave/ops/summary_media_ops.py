"""Raw op wrappers of the image and audio summaries (TensorFlow's `gen_logging_ops.
image_summary` / `audio_summary_v2`); `tf.summary.image` and `tf.summary.audio` name the
ops and pick their tags. The op definitions are in `framework/op_defs/summary_media.py`."""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.op_defs import summary_media as _defs  # noqa: F401  (registers)
from tensorweave.ops.gradients_impl import no_gradient

#: TensorFlow's default `bad_color`: opaque red, uint8 RGBA.
DEFAULT_BAD_COLOR = np.array([255, 0, 0, 255], dtype=np.uint8)

for _op_type in ("ImageSummary", "AudioSummaryV2"):
    no_gradient(_op_type)


def image_summary(tag: Any, tensor: Any, max_images: int = 3, bad_color: Any = None,
                  name: str | None = None) -> Any:
    """A `Summary` with up to `max_images` PNG images (follows `gen_logging_ops`).

    Args:
      tag: scalar `string` tensor.
      tensor: `[batch, height, width, channels]` uint8/half/float32/float64, channels 1
        (grayscale), 3 (RGB) or 4 (RGBA).
      max_images: images written at most (the first ones of the batch).
      bad_color: uint8 color of non-finite float pixels (default opaque red).
      name: op name.

    Returns:
      A scalar `string` Tensor: the serialized `Summary`.

    Raises:
      ValueError: if `tensor` is not rank 4.
      TypeError: for other dtypes.
    """
    bad = DEFAULT_BAD_COLOR if bad_color is None else np.asarray(bad_color, np.uint8)
    return apply_op("ImageSummary", tag=tag, tensor=tensor, max_images=max_images,
                    bad_color=bad, name=name)


def audio_summary_v2(tag: Any, tensor: Any, sample_rate: Any, max_outputs: int = 3,
                     name: str | None = None) -> Any:
    """A `Summary` with up to `max_outputs` 16-bit WAV clips (follows `gen_logging_ops`).

    Args:
      tag: scalar `string` tensor.
      tensor: float32 `[batch, frames, channels]` or `[batch, frames]`, values in [-1, 1].
      sample_rate: scalar float32: samples per second.
      max_outputs: clips written at most.
      name: op name.

    Returns:
      A scalar `string` Tensor: the serialized `Summary`.

    Raises:
      ValueError: if `tensor` is not rank 2 or 3, or `sample_rate` not a scalar.
    """
    return apply_op("AudioSummaryV2", tag=tag, tensor=tensor, sample_rate=sample_rate,
                    max_outputs=max_outputs, name=name)
