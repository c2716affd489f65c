"""NumPy kernels of `ImageSummary` (PNG) and `AudioSummaryV2` (16-bit PCM WAV); follows
TensorFlow's `summary_image_op.cc`, `summary_audio_op.cc`, `png_io` and `wav_io`.

Float images are scaled per image over their finite values: with no negative value so
that the largest becomes 255, otherwise so that the largest magnitude becomes 127 around
128, truncated to uint8; non-finite pixels take `bad_color`. Audio samples are clamped to
[-1, 1] and stored as round(x * 32768) clamped to int16. Encoders are pure Python (zlib,
struct).
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.kernels.registry import KernelNode, register_kernel
from tensorweave.protos import summary_pb2

_PNG_COLOR_TYPE = {1: 0, 2: 4, 3: 2, 4: 6}  # channels -> gray, gray+alpha, RGB, RGBA


def encode_png(image: np.ndarray) -> bytes:
    """PNG bytes of a uint8 `[height, width, channels]` image (1-4 channels, no filtering)."""
    height, width, channels = image.shape

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = np.concatenate([np.zeros((height, 1), np.uint8),
                           image.reshape(height, width * channels)], axis=1)
    header = struct.pack(">IIBBBBB", width, height, 8, _PNG_COLOR_TYPE[channels], 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(rows.tobytes())) + chunk(b"IEND", b""))


def encode_wav(samples: np.ndarray, sample_rate: int) -> bytes:
    """16-bit PCM WAV bytes of float `[frames, channels]` samples."""
    frames, channels = samples.shape
    pcm = np.clip(np.round(np.clip(samples, -1.0, 1.0) * 32768.0), -32768, 32767)
    data = pcm.astype("<i2").tobytes()
    fmt = struct.pack("<HHIIHH", 1, channels, sample_rate, sample_rate * channels * 2,
                      channels * 2, 16)
    return (b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVE" + b"fmt "
            + struct.pack("<I", 16) + fmt + b"data" + struct.pack("<I", len(data)) + data)


def normalize_image(image: np.ndarray, bad_color: np.ndarray) -> np.ndarray:
    """A float `[h, w, c]` image as uint8, scaled as the module docstring says."""
    image = image.astype(np.float64)
    finite = np.isfinite(image).all(axis=-1)
    values = image[finite]
    lo, hi = (values.min(), values.max()) if values.size else (0.0, 0.0)
    if lo < 0:
        top = max(abs(lo), abs(hi))
        scale, offset = (127.0 / top if top >= 1e-6 else 0.0), 128.0
    else:
        scale, offset = (255.0 / hi if hi >= 1e-6 else 0.0), 0.0
    out = np.zeros(image.shape, np.uint8)
    # NOTE: truncation, as Eigen's cast<uint8> in TensorFlow's kernel.
    out[finite] = np.clip(image[finite] * scale + offset, 0, 255).astype(np.uint8)
    out[~finite] = bad_color[: image.shape[-1]]
    return out


def _tag(tag: Any) -> str:
    tag = np.asarray(tag, dtype=object)
    if tag.ndim != 0:
        raise errors.InvalidArgumentError(
            None, None, f"Tags must be a scalar, got shape {list(tag.shape)}")
    value = tag.item()
    return value.decode() if isinstance(value, bytes) else str(value)


def _pack(summary: Any) -> np.ndarray:
    out = np.empty((), dtype=object)
    out[()] = summary.SerializeToString()
    return out


@register_kernel("ImageSummary")
def _image_summary(node: KernelNode) -> Any:
    max_images = int(node.attr("max_images", 3))
    bad_color = np.asarray(node.attr("bad_color"), np.uint8).reshape(-1)

    def compute(ctx: Any, tag: Any, tensor: Any) -> np.ndarray:
        base, images = _tag(tag), np.asarray(tensor)
        if images.ndim != 4 or images.shape[-1] not in (1, 3, 4):
            raise errors.InvalidArgumentError(
                None, None, "Tensor must be 4-D with last dim 1, 3, or 4, not "
                f"[{','.join(map(str, images.shape))}]")
        if images.shape[-1] > bad_color.size:
            raise errors.InvalidArgumentError(
                None, None, f"bad_color has {bad_color.size} values, fewer than the "
                f"{images.shape[-1]} channels")
        summary = summary_pb2.Summary()
        for i in range(min(max_images, images.shape[0])):
            image = images[i]
            if image.dtype != np.uint8:
                image = normalize_image(image, bad_color)
            value = summary.value.add(tag=f"{base}/image/{i}" if max_images > 1
                                      else f"{base}/image")
            value.image.height, value.image.width, value.image.colorspace = image.shape
            value.image.encoded_image_string = encode_png(np.ascontiguousarray(image))
        return _pack(summary)

    return compute


@register_kernel("AudioSummaryV2")
def _audio_summary(node: KernelNode) -> Any:
    max_outputs = int(node.attr("max_outputs", 3))

    def compute(ctx: Any, tag: Any, tensor: Any, sample_rate: Any) -> np.ndarray:
        base, clips = _tag(tag), np.asarray(tensor, np.float32)
        rate = float(np.asarray(sample_rate))
        if rate <= 0:
            raise errors.InvalidArgumentError(
                None, None, f"sample_rate must be > 0, got {rate}")
        if clips.ndim == 2:
            clips = clips[:, :, np.newaxis]
        if clips.ndim != 3:
            raise errors.InvalidArgumentError(
                None, None, f"Tensor must be 3-D or 2-D, got shape {list(clips.shape)}")
        summary = summary_pb2.Summary()
        for i in range(min(max_outputs, clips.shape[0])):
            value = summary.value.add(tag=f"{base}/audio/{i}" if max_outputs > 1
                                      else f"{base}/audio")
            audio = value.audio
            audio.sample_rate = rate
            audio.num_channels, audio.length_frames = clips.shape[2], clips.shape[1]
            audio.encoded_audio_string = encode_wav(clips[i], int(rate))
            audio.content_type = "audio/wav"
        return _pack(summary)

    return compute
