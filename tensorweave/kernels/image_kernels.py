"""Kernels of `DecodePng`, `EncodePng`, `DecodeBmp`, `DecodeImage` (PNG and BMP; JPEG and
GIF are not supported) and `DecodeJSONExample`. PNG: 8/16-bit gray, gray+alpha, RGB, RGBA
and 8-bit palette images, non-interlaced, all five scanline filters."""

from __future__ import annotations

import struct
import zlib
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.framework import op_defs  # noqa: F401  (op definitions)
from tensorweave.kernels.registry import KernelNode, register_kernel
from tensorweave.protos import example_pb2

_PNG_SIG = b"\x89PNG\r\n\x1a\n"
_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def _bad(what: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, what)


def _chunks(data: bytes) -> dict[bytes, list[bytes]]:
    out: dict[bytes, list[bytes]] = {}
    pos = 8
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        out.setdefault(kind, []).append(data[pos + 8:pos + 8 + length])
        pos += 12 + length
        if kind == b"IEND":
            break
    return out


def _unfilter(raw: bytes, height: int, stride: int, bpp: int) -> np.ndarray:
    rows = np.zeros((height, stride), np.uint8)
    prev = np.zeros(stride, np.int32)
    pos = 0
    for y in range(height):
        ftype = raw[pos]
        line = np.frombuffer(raw, np.uint8, stride, pos + 1).astype(np.int32)
        pos += stride + 1
        if ftype == 0:
            cur = line
        elif ftype == 2:
            cur = (line + prev) & 0xFF
        else:
            cur = line.copy()
            for x in range(stride):
                a = cur[x - bpp] if x >= bpp else 0
                b = prev[x]
                c = prev[x - bpp] if x >= bpp else 0
                if ftype == 1:
                    pred = a
                elif ftype == 3:
                    pred = (a + b) >> 1
                elif ftype == 4:
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                else:
                    raise _bad(f"Invalid PNG filter type {ftype}")
                cur[x] = (cur[x] + pred) & 0xFF
        rows[y] = cur
        prev = cur
    return rows


def decode_png(data: bytes) -> np.ndarray:
    """The image [height, width, channels] (uint8 or uint16) of PNG bytes."""
    if not data.startswith(_PNG_SIG):
        raise _bad("Invalid PNG data, size " + str(len(data)))
    chunks = _chunks(data)
    width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", chunks[b"IHDR"][0])
    if interlace or color not in _CHANNELS or depth not in (8, 16) or (color == 3 and depth != 8):
        raise errors.UnimplementedError(
            None, None, f"PNG with bit depth {depth}, color type {color}, interlace "
            f"{interlace} is not supported")
    channels = _CHANNELS[color]
    bpp = channels * depth // 8
    raw = zlib.decompress(b"".join(chunks.get(b"IDAT", [])))
    rows = _unfilter(raw, height, width * bpp, bpp)
    if depth == 16:
        image = rows.view(">u2").astype(np.uint16).reshape(height, width, channels)
    else:
        image = rows.reshape(height, width, channels)
    if color == 3:
        palette = np.frombuffer(chunks[b"PLTE"][0], np.uint8).reshape(-1, 3)
        image = palette[image[..., 0]]
    return image


def encode_png(image: np.ndarray, level: int) -> bytes:
    """PNG bytes (filter 0) of a uint8/uint16 [height, width, 1-4] image."""
    height, width, channels = image.shape
    color = {1: 0, 2: 4, 3: 2, 4: 6}[channels]
    depth = 16 if image.dtype == np.uint16 else 8
    pixels = image.astype(">u2") if depth == 16 else image
    rows = pixels.reshape(height, -1).view(np.uint8)
    raw = np.concatenate([np.zeros((height, 1), np.uint8), rows], axis=1).tobytes()

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(
            ">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, depth, color, 0, 0, 0)
    return (_PNG_SIG + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(raw, 6 if level < 0 else level)) + chunk(b"IEND", b""))


def decode_bmp(data: bytes) -> np.ndarray:
    """The uint8 image of an uncompressed 24/32-bit BMP (RGB or RGBA channels)."""
    if data[:2] != b"BM" or len(data) < 54:
        raise _bad("Invalid BMP data")
    offset = struct.unpack("<I", data[10:14])[0]
    width, height = struct.unpack("<ii", data[18:26])
    bits, compression = struct.unpack("<HI", data[28:34])
    if bits not in (24, 32) or compression not in (0, 3):
        raise errors.UnimplementedError(None, None, f"BMP with {bits} bits is not supported")
    channels = bits // 8
    stride = (width * channels + 3) & ~3
    rows = np.frombuffer(data, np.uint8, stride * abs(height), offset).reshape(abs(height), stride)
    image = rows[:, :width * channels].reshape(abs(height), width, channels)
    image = image[::-1] if height > 0 else image
    order = [2, 1, 0, 3][:channels]
    return np.ascontiguousarray(image[..., order])


def _with_channels(image: np.ndarray, channels: int) -> np.ndarray:
    have = image.shape[-1]
    if channels in (0, have):
        return image
    if channels == 1:
        rgb = image[..., :3].astype(np.float64) if have >= 3 else image[..., :1]
        gray = rgb @ [0.2989, 0.587, 0.114] if have >= 3 else rgb[..., 0]
        return np.round(gray).astype(image.dtype)[..., None]
    base = image[..., :1].repeat(3, -1) if have < 3 else image[..., :3]
    if channels == 3:
        return base
    alpha = image[..., -1:] if have in (2, 4) else np.full(
        image.shape[:2] + (1,), np.iinfo(image.dtype).max, image.dtype)
    return np.concatenate([base, alpha], -1)


def _contents(x: Any) -> bytes:
    return bytes(np.asarray(x, np.object_).item())


@register_kernel("DecodePng")
def _decode_png(node: KernelNode) -> Any:
    channels, dt = int(node.attrs.get("channels", 0)), node.attrs["dtype"].as_numpy_dtype

    def compute(ctx: Any, contents: Any) -> np.ndarray:
        image = _with_channels(decode_png(_contents(contents)), channels)
        if image.dtype != dt:
            image = (image.astype(np.uint32) * 257 if dt == np.uint16
                     else image.astype(np.uint32) // 257).astype(dt)
        return image

    return compute


@register_kernel("DecodeBmp")
def _decode_bmp(node: KernelNode) -> Any:
    channels = int(node.attrs.get("channels", 0))
    return lambda ctx, contents: _with_channels(decode_bmp(_contents(contents)), channels)


@register_kernel("DecodeImage")
def _decode_image(node: KernelNode) -> Any:
    channels, dt = int(node.attrs.get("channels", 0)), node.attrs["dtype"].as_numpy_dtype

    def compute(ctx: Any, contents: Any) -> np.ndarray:
        data = _contents(contents)
        if data.startswith(_PNG_SIG):
            image = decode_png(data)
        elif data[:2] == b"BM":
            image = decode_bmp(data)
        else:
            raise errors.UnimplementedError(
                None, None, "Only PNG and BMP images can be decoded (no JPEG/GIF codec)")
        image = _with_channels(image, channels)
        if dt == np.float32:
            return image.astype(np.float32) / np.iinfo(image.dtype).max
        return image.astype(dt)

    return compute


@register_kernel("EncodePng")
def _encode_png(node: KernelNode) -> Any:
    level = int(node.attrs.get("compression", -1))

    def compute(ctx: Any, image: Any) -> Any:
        arr = np.asarray(image)
        if arr.ndim != 3 or arr.shape[-1] not in (1, 2, 3, 4):
            raise _bad(f"image must be 3-dimensional with 1-4 channels, got {list(arr.shape)}")
        out = np.empty((), np.object_)
        out[()] = encode_png(arr, level)
        return out

    return compute


@register_kernel("DecodeJSONExample")
def _decode_json_example(node: KernelNode) -> Any:
    # NOTE: imported by the one kernel that needs it, when a plan uses it: loading
    # json_format costs ~7 ms of every `import tensorweave` (benchmarks/startup.py).
    from google.protobuf import json_format

    def convert(text: Any) -> bytes:
        try:
            return json_format.Parse(bytes(text), example_pb2.Example()).SerializeToString()
        except json_format.ParseError as e:
            raise _bad(f"Error while parsing JSON: {e}") from None

    def compute(ctx: Any, json_examples: Any) -> np.ndarray:
        arr = np.asarray(json_examples, np.object_)
        out = np.empty(arr.shape, np.object_)
        out.reshape(-1)[:] = [convert(t) for t in arr.reshape(-1)] if arr.size else []
        return out

    return compute
