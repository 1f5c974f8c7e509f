"""Zigzag varints and varlongs as Kafka writes them (``org.apache.kafka.common.utils.ByteUtils``).

A value is zigzag-encoded, then written as little-endian groups of 7 bits with the high bit
set on every byte but the last.  A varint takes at most 5 bytes, a varlong at most 10; a
longer encoding is an error (``IllegalArgumentException`` in Kafka, which record parsing
turns into ``InvalidRecordException``).  Decoding keeps Java's two's-complement wrap-around,
so every byte string decodes to exactly the value Kafka's reader returns.
"""
from __future__ import annotations

from .errors import InvalidRecordError

_M32 = 0xFFFFFFFF
_M64 = 0xFFFFFFFFFFFFFFFF


def _signed(v: int, bits: int) -> int:
    return v - (1 << bits) if v >> (bits - 1) else v


def wrap64(n: int) -> int:
    """``n`` as a Java long: two's-complement wrap-around into [-2**63, 2**63)."""
    return ((n + 2**63) & _M64) - 2**63


def wrap16(n: int) -> int:
    """``n`` as a Java short (the ``(short)`` cast): the low 16 bits, two's complement (a v2 batch's
    ``attributes`` field)."""
    return _signed(n & 0xFFFF, 16)


def wrap8(n: int) -> int:
    """``n`` as a Java byte (the ``(byte)`` cast): the low 8 bits, two's complement."""
    return _signed(n & 0xFF, 8)


def zigzag32(n: int) -> int:
    return ((n << 1) ^ (n >> 31)) & _M32


def zigzag64(n: int) -> int:
    return ((n << 1) ^ (n >> 63)) & _M64


def _encode_unsigned(u: int) -> bytes:
    out = bytearray()
    while u >= 0x80:
        out.append((u & 0x7F) | 0x80)
        u >>= 7
    out.append(u)
    return bytes(out)


def encode_varint(n: int) -> bytes:
    """Encode an int32 as a zigzag varint (``ByteUtils.writeVarint``)."""
    if not -(2**31) <= n < 2**31:
        raise OverflowError(f"varint out of int32 range: {n}")
    return _encode_unsigned(zigzag32(n))


def encode_varlong(n: int) -> bytes:
    """Encode an int64 as a zigzag varlong (``ByteUtils.writeVarlong``)."""
    if not -(2**63) <= n < 2**63:
        raise OverflowError(f"varlong out of int64 range: {n}")
    return _encode_unsigned(zigzag64(n))


def _unsigned_size(u: int) -> int:
    return max(1, (u.bit_length() + 6) // 7)


def size_of_varint(n: int) -> int:
    """Bytes ``encode_varint(n)`` takes (``ByteUtils.sizeOfVarint``)."""
    return _unsigned_size(zigzag32(n))


def size_of_varlong(n: int) -> int:
    """Bytes ``encode_varlong(n)`` takes (``ByteUtils.sizeOfVarlong``)."""
    return _unsigned_size(zigzag64(n))


def _decode(buf, pos: int, end: int, max_bytes: int, bits: int, what: str) -> tuple[int, int]:
    raw = 0
    shift = 0
    start = pos
    while True:
        if pos >= end:
            raise InvalidRecordError(f"Found invalid record structure: {what} runs past the end of its buffer",
                                     position=start)
        b = buf[pos]
        pos += 1
        raw |= (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
        if pos - start >= max_bytes:
            raise InvalidRecordError(
                f"Found invalid record structure: {what} is too long, the most significant bit in the "
                f"{max_bytes}th byte is set", position=start)
    mask = (1 << bits) - 1
    raw &= mask
    value = (raw >> 1) ^ -(raw & 1)
    return _signed(value & mask, bits), pos


def decode_varint(buf, pos: int = 0, end: int | None = None) -> tuple[int, int]:
    """Read a varint at ``pos``; return ``(value, next_pos)``.  Raises InvalidRecordError."""
    return _decode(buf, pos, len(buf) if end is None else end, 5, 32, "varint")


def decode_varlong(buf, pos: int = 0, end: int | None = None) -> tuple[int, int]:
    """Read a varlong at ``pos``; return ``(value, next_pos)``.  Raises InvalidRecordError."""
    return _decode(buf, pos, len(buf) if end is None else end, 10, 64, "varlong")
