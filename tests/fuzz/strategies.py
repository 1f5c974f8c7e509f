"""Hypothesis strategies that mutate valid record sets the way a hostile input would.

Mutations: bit flips, truncations, splices of two inputs, extreme lengths and counts written into
the length/count fields, overlong varints, wrappers nested many levels, and CRCs recomputed
afterwards (:func:`fix_crcs`) so that a mutation gets past the checksum to the record decoder.
"""
from __future__ import annotations

import struct

from hypothesis import strategies as st

import seeds
from kafkafmt.compression import compress
from kafkafmt.constants import CompressionType, TimestampType
from kafkafmt.crc import crc32, crc32c
from kafkafmt.layout import LOG_ENTRY
from kafkafmt.records import MemoryRecordsBuilder
from kafkafmt.records.legacy import encode_legacy_entry

EXTREME_INTS = [0, 1, -1, 13, 14, 2**31 - 1, -2**31, 2**15, 2**16 + 1, 61, 0x7FFFFFF0]
#: v2 batch header fields that are counts or lengths: (byte offset, struct format)
V2_FIELDS = [(8, ">i"), (23, ">i"), (57, ">i"), (0, ">q"), (27, ">q"), (35, ">q"), (43, ">q"), (53, ">i")]
#: legacy message fields: size, key length (v0 at 18, v1 at 26)
LEGACY_FIELDS = [(8, ">i"), (18, ">i"), (26, ">i")]


def fix_crcs(data: bytes) -> bytes:
    """Recompute the CRC of every whole top-level entry (CRC32C for v2, CRC32 for v0/v1)."""
    buf = bytearray(data)
    pos = 0
    while len(buf) - pos >= 17:
        size = LOG_ENTRY.unpack_from(buf, pos)[1]
        end = pos + 12 + size
        if size < 14 or end > len(buf):
            break
        magic = buf[pos + 16]
        if magic == 2 and size >= 49:
            struct.pack_into(">I", buf, pos + 17, crc32c(memoryview(buf)[pos + 21:end]))
        elif magic in (0, 1):
            struct.pack_into(">I", buf, pos + 12, crc32(memoryview(buf)[pos + 16:end]))
        pos = end
    return bytes(buf)


def overlong_varint(value: int, length: int) -> bytes:
    """``value`` (zigzag) as a varint padded to ``length`` bytes with continuation bits (up to 10+)."""
    z = (value << 1) ^ (value >> 63)
    out = bytearray()
    for _ in range(length - 1):
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z & 0x7F)
    return bytes(out)


def nested_wrapper(levels: int, codec: CompressionType, magic: int) -> bytes:
    """A v0/v1 compressed wrapper whose only inner message is itself a wrapper, ``levels`` deep."""
    inner = encode_legacy_entry(0, magic, 0, 1, b"k", b"v")
    for _ in range(levels):
        inner = encode_legacy_entry(0, magic, int(codec), 1, None, compress(codec, inner, magic=magic))
    return inner


@st.composite
def built_record_sets(draw) -> bytes:
    """A fresh record set from kafkafmt's builder: any magic, codec, keys, values, headers."""
    magic = draw(st.sampled_from([0, 1, 2]))
    codecs = [c for c in CompressionType if magic == 2 or c != CompressionType.ZSTD]
    codec = draw(st.sampled_from(codecs))
    ts_type = TimestampType.NO_TIMESTAMP_TYPE if magic == 0 else TimestampType.CREATE_TIME
    b = MemoryRecordsBuilder(magic, codec, ts_type, draw(st.integers(0, 2**40)))
    small = st.one_of(st.none(), st.binary(max_size=20))
    for _ in range(draw(st.integers(1, 6))):
        headers = draw(st.lists(st.tuples(st.text(max_size=5), small), max_size=2)) if magic == 2 else ()
        b.append(draw(st.integers(0, 2**41)), draw(small), draw(small), headers)
    return b.build()


def base_inputs() -> st.SearchStrategy[bytes]:
    nested = st.builds(nested_wrapper, st.integers(1, 40),
                       st.sampled_from([CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4]),
                       st.sampled_from([0, 1]))
    return st.one_of(st.sampled_from(seeds.record_sets()), built_record_sets(), nested)


@st.composite
def mutated(draw, base: st.SearchStrategy[bytes] | None = None) -> bytes:
    """A valid input with one to four hostile mutations, CRCs recomputed or not."""
    data = bytearray(draw(base if base is not None else base_inputs()))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "truncate", "splice", "field", "varint", "byte"]))
        n = len(data)
        if n == 0:
            break
        pos = draw(st.integers(0, n - 1))
        if kind == "flip":
            data[pos] ^= 1 << draw(st.integers(0, 7))
        elif kind == "byte":
            data[pos] = draw(st.integers(0, 255))
        elif kind == "truncate":
            del data[pos:]
        elif kind == "splice":
            other = draw(st.sampled_from(seeds.record_sets()))
            cut = draw(st.integers(0, len(other)))
            data[pos:] = data[pos:pos + draw(st.integers(0, 64))] + other[cut:]
        elif kind == "field":
            at, fmt = draw(st.sampled_from(V2_FIELDS if n > 60 and data[16] == 2 else LEGACY_FIELDS))
            width = struct.calcsize(fmt)
            if at + width <= n:
                value = draw(st.sampled_from(EXTREME_INTS + [2**63 - 1, -2**63] * (width == 8)))
                struct.pack_into(fmt, data, at, value)
        elif kind == "varint":
            value = draw(st.sampled_from([0, -1, 1, 2**31 - 1, -2**31, 2**63 - 1, -2**63]))
            data[pos:pos + draw(st.integers(1, 3))] = overlong_varint(value, draw(st.integers(1, 12)))
    out = bytes(data)
    return fix_crcs(out) if draw(st.booleans()) else out


def spec_mutations() -> st.SearchStrategy[bytes]:
    """Structural mutations of JSON specs: a field of each batch replaced by a value of another JSON type."""
    import json

    values = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=True),
                       st.text(max_size=8), st.lists(st.integers(), max_size=2),
                       st.dictionaries(st.sampled_from(["utf8", "hex", "base64", "x"]), st.text(max_size=6),
                                       max_size=2))

    @st.composite
    def strategy(draw) -> bytes:
        text = draw(st.sampled_from(seeds.seeds_for("build"))).decode()
        lines = [json.loads(line) for line in text.splitlines()]
        obj = draw(st.sampled_from(lines))
        target = obj
        if obj.get("records") and draw(st.booleans()):
            target = draw(st.sampled_from(obj["records"]))
        key = draw(st.sampled_from(sorted(target) + ["magic", "records", "headers", "key"]))
        target[key] = draw(values)
        return "\n".join(json.dumps(x) for x in lines).encode()

    return strategy()
