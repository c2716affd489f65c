"""The string hashes TensorFlow's string ops use, in pure Python (64-bit arithmetic masked):
FarmHash's `Fingerprint64` (farmhashna::Hash64), the legacy `Hash64` (MurmurHash64A with
TensorFlow's seed) and SipHash-2-4 (`StrongKeyedHash`)."""

from __future__ import annotations

import struct

_MASK = (1 << 64) - 1
_K0 = 0xC3A5C85C97CB3127
_K1 = 0xB492B66FBE98F273
_K2 = 0x9AE16A3B2F90404F


def _u64(s: bytes, i: int) -> int:
    return struct.unpack_from("<Q", s, i)[0]


def _u32(s: bytes, i: int) -> int:
    return struct.unpack_from("<I", s, i)[0]


def _ror(v: int, shift: int) -> int:
    return v if shift == 0 else ((v >> shift) | (v << (64 - shift))) & _MASK


def _mix(v: int) -> int:
    return v ^ (v >> 47)


def _len16(u: int, v: int, mul: int) -> int:
    a = ((u ^ v) * mul) & _MASK
    a ^= a >> 47
    b = ((v ^ a) * mul) & _MASK
    b ^= b >> 47
    return (b * mul) & _MASK


def _len0to16(s: bytes) -> int:
    n = len(s)
    if n >= 8:
        mul = (_K2 + n * 2) & _MASK
        a = (_u64(s, 0) + _K2) & _MASK
        b = _u64(s, n - 8)
        c = (_ror(b, 37) * mul + a) & _MASK
        d = ((_ror(a, 25) + b) * mul) & _MASK
        return _len16(c, d, mul)
    if n >= 4:
        mul = (_K2 + n * 2) & _MASK
        return _len16((n + (_u32(s, 0) << 3)) & _MASK, _u32(s, n - 4), mul)
    if n:
        y = s[0] + (s[n >> 1] << 8)
        z = n + (s[n - 1] << 2)
        return (_mix((y * _K2 ^ z * _K0) & _MASK) * _K2) & _MASK
    return _K2


def _len17to32(s: bytes) -> int:
    n = len(s)
    mul = (_K2 + n * 2) & _MASK
    a = (_u64(s, 0) * _K1) & _MASK
    b = _u64(s, 8)
    c = (_u64(s, n - 8) * mul) & _MASK
    d = (_u64(s, n - 16) * _K2) & _MASK
    return _len16((_ror((a + b) & _MASK, 43) + _ror(c, 30) + d) & _MASK,
                  (a + _ror((b + _K2) & _MASK, 18) + c) & _MASK, mul)


def _len33to64(s: bytes) -> int:
    n = len(s)
    mul = (_K2 + n * 2) & _MASK
    a = (_u64(s, 0) * _K2) & _MASK
    b = _u64(s, 8)
    c = (_u64(s, n - 8) * mul) & _MASK
    d = (_u64(s, n - 16) * _K2) & _MASK
    y = (_ror((a + b) & _MASK, 43) + _ror(c, 30) + d) & _MASK
    z = _len16(y, (a + _ror((b + _K2) & _MASK, 18) + c) & _MASK, mul)
    e = (_u64(s, 16) * mul) & _MASK
    f = _u64(s, 24)
    g = ((y + _u64(s, n - 32)) * mul) & _MASK
    h = ((z + _u64(s, n - 24)) * mul) & _MASK
    return _len16((_ror((e + f) & _MASK, 43) + _ror(g, 30) + h) & _MASK,
                  (e + _ror((f + a) & _MASK, 18) + g) & _MASK, mul)


def _weak32(s: bytes, i: int, a: int, b: int) -> tuple[int, int]:
    w, x, y, z = _u64(s, i), _u64(s, i + 8), _u64(s, i + 16), _u64(s, i + 24)
    a = (a + w) & _MASK
    b = _ror((b + a + z) & _MASK, 21)
    c = a
    a = (a + x + y) & _MASK
    b = (b + _ror(a, 44)) & _MASK
    return (a + z) & _MASK, (b + c) & _MASK


def fingerprint64(s: bytes) -> int:
    """FarmHash Fingerprint64 of `s` (TensorFlow's `Fingerprint64`)."""
    n = len(s)
    if n <= 16:
        return _len0to16(s)
    if n <= 32:
        return _len17to32(s)
    if n <= 64:
        return _len33to64(s)
    seed = 81
    v0 = v1 = w0 = w1 = 0
    x = (seed * _K2 + _u64(s, 0)) & _MASK
    y = (seed * _K1 + 113) & _MASK
    z = (_mix((y * _K2 + 113) & _MASK) * _K2) & _MASK
    end = ((n - 1) // 64) * 64
    last = end + ((n - 1) & 63) - 63
    i = 0
    while i < end:
        x = (_ror((x + y + v0 + _u64(s, i + 8)) & _MASK, 37) * _K1) & _MASK
        y = (_ror((y + v1 + _u64(s, i + 48)) & _MASK, 42) * _K1) & _MASK
        x ^= w1
        y = (y + v0 + _u64(s, i + 40)) & _MASK
        z = (_ror((z + w0) & _MASK, 33) * _K1) & _MASK
        v0, v1 = _weak32(s, i, (v1 * _K1) & _MASK, (x + w0) & _MASK)
        w0, w1 = _weak32(s, i + 32, (z + w1) & _MASK, (y + _u64(s, i + 16)) & _MASK)
        x, z = z, x
        i += 64
    mul = (_K1 + ((z & 0xFF) << 1)) & _MASK
    w0 = (w0 + ((n - 1) & 63)) & _MASK
    v0 = (v0 + w0) & _MASK
    w0 = (w0 + v0) & _MASK
    x = (_ror((x + y + v0 + _u64(s, last + 8)) & _MASK, 37) * mul) & _MASK
    y = (_ror((y + v1 + _u64(s, last + 48)) & _MASK, 42) * mul) & _MASK
    x ^= (w1 * 9) & _MASK
    y = (y + v0 * 9 + _u64(s, last + 40)) & _MASK
    z = (_ror((z + w0) & _MASK, 33) * mul) & _MASK
    v0, v1 = _weak32(s, last, (v1 * mul) & _MASK, (x + w0) & _MASK)
    w0, w1 = _weak32(s, last + 32, (z + w1) & _MASK, (y + _u64(s, last + 16)) & _MASK)
    x, z = z, x
    return _len16((_len16(v0, w0, mul) + _mix(y) * _K0 + z) & _MASK,
                  (_len16(v1, w1, mul) + x) & _MASK, mul)


def legacy_hash64(s: bytes, seed: int = 0xDECAFCAFFE) -> int:
    """TensorFlow's `Hash64` (MurmurHash64A), used by `string_to_hash_bucket`."""
    m, r = 0xC6A4A7935BD1E995, 47
    n = len(s)
    h = (seed ^ (n * m)) & _MASK
    i = 0
    while n - i >= 8:
        k = (_u64(s, i) * m) & _MASK
        k ^= k >> r
        k = (k * m) & _MASK
        h = ((h ^ k) * m) & _MASK
        i += 8
    rest = n - i
    if rest:
        for j in range(rest - 1, -1, -1):
            h ^= s[i + j] << (8 * j)
        h = (h * m) & _MASK
    h ^= h >> r
    h = (h * m) & _MASK
    h ^= h >> r
    return h


def _rotl(v: int, b: int) -> int:
    return ((v << b) | (v >> (64 - b))) & _MASK


def siphash24(key0: int, key1: int, s: bytes) -> int:
    """SipHash-2-4 of `s` with the 128-bit key (key0, key1) (`StrongKeyedHash`)."""
    v0 = key0 ^ 0x736F6D6570736575
    v1 = key1 ^ 0x646F72616E646F6D
    v2 = key0 ^ 0x6C7967656E657261
    v3 = key1 ^ 0x7465646279746573

    def rounds(v0: int, v1: int, v2: int, v3: int, count: int) -> tuple[int, int, int, int]:
        for _ in range(count):
            v0 = (v0 + v1) & _MASK
            v1 = _rotl(v1, 13) ^ v0
            v0 = _rotl(v0, 32)
            v2 = (v2 + v3) & _MASK
            v3 = _rotl(v3, 16) ^ v2
            v0 = (v0 + v3) & _MASK
            v3 = _rotl(v3, 21) ^ v0
            v2 = (v2 + v1) & _MASK
            v1 = _rotl(v1, 17) ^ v2
            v2 = _rotl(v2, 32)
        return v0, v1, v2, v3

    n = len(s)
    full = n - n % 8
    for i in range(0, full, 8):
        m = _u64(s, i)
        v3 ^= m
        v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 2)
        v0 ^= m
    last = (n & 0xFF) << 56
    for j, byte in enumerate(s[full:]):
        last |= byte << (8 * j)
    v3 ^= last
    v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 2)
    v0 ^= last
    v2 ^= 0xFF
    v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 4)
    return v0 ^ v1 ^ v2 ^ v3
