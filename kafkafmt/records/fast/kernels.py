"""The compiled loops of the columnar decoder (numba ``@njit``, cached on disk).

Each kernel walks an *uncompressed* records area once and writes plain integers: per record its
offset, timestamp, timestamp type, sequence, the positions and lengths of key and value in the
buffer, and where its headers start.  No Python object is made per record.  The kernels never
raise: on anything they do not expect they stop and return the failing batch, and the caller
hands that batch to the pure-Python reference decoder, whose errors (message and position) are
Kafka's.  A kernel therefore only has to be right when it succeeds, and it is written to be
*stricter* than the reference, never looser.

Rules mirrored: ``DefaultRecord.readFrom`` and ``DefaultRecordBatch.RecordIterator`` (v2, KIP-98,
KIP-82), ``LegacyRecord`` and ``AbstractLegacyRecordBatch.DeepRecordsIterator`` (v0/v1, KIP-31,
KIP-32).  All offset and timestamp arithmetic is int64 and wraps as Java's ``long`` does.
Wire offsets come from :mod:`kafkafmt.layout`, masks and sentinels from :mod:`kafkafmt.constants`
(numba folds module globals into compile-time constants), never restated here.
"""
from __future__ import annotations

import numpy as np

from ...constants import (
    INT32_MAX,
    INT64_MIN,
    LEGACY_COMPRESSION_CODEC_MASK,
    LEGACY_RECORD_OVERHEAD_V0,
    LEGACY_TIMESTAMP_TYPE_MASK,
    LOG_OVERHEAD,
    MAGIC_VALUE_V2,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    RECORD_BATCH_OVERHEAD,
    V2_COMPRESSION_CODEC_MASK,
    V2_CONTROL_FLAG_MASK,
    CompressionType,
)
from ...layout import DEFAULT_BATCH, LEGACY_V0, LEGACY_V1, LEGACY_VALUE_LENGTH
from .jit import inline, inner, kernel
from .lz4_frame import lz4_frame_bound, lz4_frame_into

# rows of the ``out`` matrix every kernel fills (one column per record)
F_OFFSET, F_TIMESTAMP, F_TSTYPE, F_SEQUENCE, F_KEY_POS, F_KEY_LEN, F_VALUE_POS, F_VALUE_LEN, \
    F_HEADERS_POS, F_HEADERS_COUNT, F_BATCH, F_RECORD_POS, F_SIZE, F_ATTRIBUTES, F_MAGIC, F_TS_DELTA, \
    F_OFFSET_DELTA, F_STORED_TIMESTAMP, F_STORED_OFFSET = range(19)
N_FIELDS = 19

#: the smallest v2 record: length, attributes, timestampDelta, offsetDelta, keyLength, valueLength and
#: headerCount, one byte each.  A declared count above payload/7 cannot be real: the reference decides.
MIN_V2_RECORD = 7
#: the smallest legacy entry: LOG_OVERHEAD + LegacyRecord.RECORD_OVERHEAD_V0
MIN_LEGACY_ENTRY = LOG_OVERHEAD + LEGACY_RECORD_OVERHEAD_V0

_SIZE_AT = LEGACY_V0.offset_of("size")
_MAGIC_AT = LEGACY_V0.offset_of("magic")
_ATTRS_AT = LEGACY_V0.offset_of("attributes")
_CRC_AT = LEGACY_V0.offset_of("crc")
_TS_AT = LEGACY_V1.offset_of("timestamp")
_HDR_V0 = LEGACY_V0.size  # offset of the key (after keyLength)
_HDR_V1 = LEGACY_V1.size
_VLEN = LEGACY_VALUE_LENGTH.size

#: the v2 header fields :func:`v2_run` reads, each at its place in :data:`DEFAULT_BATCH`: rows ``H_*`` of its
#: ``heads`` matrix (one column per batch), then where the batch lies and where its records area lies in its piece
_HEAD_FIELDS = ("baseOffset", "partitionLeaderEpoch", "crc", "attributes", "baseTimestamp", "maxTimestamp",
                "producerId", "producerEpoch", "baseSequence", "recordsCount")
H_BASE_OFFSET, H_PLE, H_CRC, H_ATTRIBUTES, H_BASE_TS, H_MAX_TS, H_PID, H_EPOCH, H_BASE_SEQ, H_COUNT, \
    H_POSITION, H_END, H_AREA_START, H_AREA_END = range(14)
N_HEAD_FIELDS = 14
_HEAD_AT = np.array([DEFAULT_BATCH.offset_of(f) for f in _HEAD_FIELDS], np.int64)
_HEAD_SIZE = np.array([DEFAULT_BATCH.field(f).size for f in _HEAD_FIELDS], np.int64)
_LENGTH_AT = DEFAULT_BATCH.offset_of("length")
_ATTRIBUTES_AT = DEFAULT_BATCH.offset_of("attributes")
_COUNT_AT = DEFAULT_BATCH.offset_of("recordsCount")
_LZ4 = CompressionType.LZ4.value
#: why :func:`v2_run` stopped: a batch it does not take (the walker and the per-batch path go on), its
#: byte budget or ``heads`` full, or an arena too small for the next lz4 batch (grow it and call again)
RUN_OTHER, RUN_BUDGET, RUN_ROOM = 0, 1, 2


@inner
def be_int(data, p, n):
    """Big-endian signed integer of ``n`` (2, 4 or 8) bytes at ``p``."""
    v = np.int64(0)
    q = np.uint64(p)  # unsigned: no negative-index test per byte (positions are never negative)
    for i in range(n):
        v = (v << np.int64(8)) | np.int64(data[q + np.uint64(i)])
    if n == 4 and v >= 2**31:
        v -= np.int64(2**32)
    elif n == 2 and v >= 2**15:
        v -= np.int64(2**16)
    return v


@inline
def _uvarint(data, p, end, max_bytes):
    """Raw 7-bit groups at ``p`` (``ByteUtils.readVarint``/``readVarlong``); next position -1 on error."""
    raw = np.uint64(0)
    shift = np.uint64(0)
    start = p
    while True:
        if p >= end:
            return raw, -1
        b = data[np.uint64(p)]  # unsigned: no negative-index test per byte (``p`` is never negative)
        p += 1
        raw |= np.uint64(b & 0x7F) << shift
        if b < 0x80:
            return raw, p
        shift += np.uint64(7)
        if p - start >= max_bytes:
            return raw, -1


@inline
def read_varint(data, p, end):
    """A zigzag varint as a Java int (5 bytes at most)."""
    raw, p = _uvarint(data, p, end, np.int64(5))  # not a literal 5: one compilation serves both
    u = raw & np.uint64(0xFFFFFFFF)
    v = (u >> np.uint64(1)) ^ ((np.uint64(0) - (u & np.uint64(1))) & np.uint64(0xFFFFFFFF))
    s = np.int64(v)
    if s >= 2**31:
        s -= np.int64(2**32)
    return s, p


@inline
def read_varlong(data, p, end):
    """A zigzag varlong as a Java long (10 bytes at most)."""
    raw, p = _uvarint(data, p, end, np.int64(10))
    v = (raw >> np.uint64(1)) ^ (np.uint64(0) - (raw & np.uint64(1)))
    return np.int64(v), p  # bit-for-bit reinterpretation, as Java's long


@inline
def _sized(data, p, end):
    """A varint length and the bytes it counts (``Utils.sizeDelimited``: any negative length is null,
    reported as -1): ``(position, length, next position)``, next position -1 if they overrun ``end``."""
    n, p = read_varint(data, p, end)
    if p < 0 or p + n > end:
        return 0, 0, -1
    if n < 0:
        return p, -1, p
    return p, n, p + n


@inline
def _v2_headers(data, p, rend, count):
    """Past ``count`` headers (key, value) of a v2 record ending at ``rend``: the next position, or -1 when
    one overruns the record or has a null key (Kafka: "Invalid negative header key size")."""
    for _ in range(count):
        _, hk, p = _sized(data, p, rend)
        if p < 0 or hk < 0:
            return -1
        _, _, p = _sized(data, p, rend)
        if p < 0:
            return -1
    return p


#: what :func:`_v2_record` returns for a record it does not take (its end -1)
_V2_RECORD_FAILED = (-1, 0, 0, 0, 0, 0, 0, 0, 0, 0)


@inline
def _v2_record(data, p, end):
    """One v2 record's framing from ``p`` (``DefaultRecord.readFrom``): ``(end of the record, attributes,
    timestamp delta, offset delta, key position, key length, value position, value length, headers position,
    header count)``, the end -1 when the record overruns ``end``, its headers overrun or do not fill it, or a
    length is out of range (lengths -1 for null keys and values)."""
    body_len, p = read_varint(data, p, end)
    if p < 0 or body_len < 0 or body_len > end - p:
        return _V2_RECORD_FAILED
    rend = p + body_len
    if p >= rend:
        return _V2_RECORD_FAILED
    attributes = data[p]  # unused by Kafka's reader, kept for the record view
    ts_delta, p = read_varlong(data, p + 1, rend)
    if p < 0:
        return _V2_RECORD_FAILED
    offset_delta, p = read_varint(data, p, rend)
    if p < 0:
        return _V2_RECORD_FAILED
    kpos, klen, p = _sized(data, p, rend)
    if p < 0:
        return _V2_RECORD_FAILED
    vpos, vlen, p = _sized(data, p, rend)
    if p < 0:
        return _V2_RECORD_FAILED
    nh, p = read_varint(data, p, rend)
    if p < 0 or nh < 0 or nh > rend - p:
        return _V2_RECORD_FAILED
    hpos = p
    if _v2_headers(data, p, rend, nh) != rend:
        return _V2_RECORD_FAILED
    return rend, attributes, ts_delta, offset_delta, kpos, klen, vpos, vlen, hpos, nh


@inline
def _v2_sequence(base_seq, offset_delta):
    """``DefaultRecordBatch.incrementSequence(baseSequence, offsetDelta)`` for ``offset_delta >= 0``, wrapping
    past ``Integer.MAX_VALUE`` to 0; -1 (NO_SEQUENCE) when the batch has no base sequence."""
    if base_seq < 0:
        return NO_SEQUENCE
    if base_seq > INT32_MAX - offset_delta:
        return offset_delta - (INT32_MAX - base_seq) - 1
    return base_seq + offset_delta


@inner
def _v2_wire(out, row, attributes, rstart, rend, ts_delta, offset_delta):
    """The wire details of a v2 record that only ``Record`` objects need (``wire=True``)."""
    out[F_ATTRIBUTES, row] = attributes
    out[F_RECORD_POS, row] = rstart
    out[F_SIZE, row] = rend - rstart
    out[F_MAGIC, row] = MAGIC_VALUE_V2
    out[F_TS_DELTA, row] = ts_delta
    out[F_OFFSET_DELTA, row] = offset_delta


@inline
def copy_span(dest, d, data, s, n):
    """``dest[d:d+n] = data[s:s+n]`` (``n > 0``).  Unsigned indices: no negative-index wrap-around test, so
    LLVM vectorises the copy (measured 15x faster than signed indices, 4x faster than a slice assignment)."""
    d = np.uint64(d)
    s = np.uint64(s)
    for j in range(np.uint64(n)):
        dest[d + j] = data[s + j]


@inline
def _append_value(dest, offsets, row, used, nulls, data, pos, length):
    """Row ``row``'s value (``length`` bytes at ``pos``; negative: null) appended to an Arrow binary column's
    ``dest`` at ``used`` and its end offset written: ``(used, nulls)`` after it."""
    if length > 0:
        copy_span(dest, used, data, pos, length)
        used += length
    elif length < 0:
        nulls += 1
    offsets[row + 1] = used
    return used, nulls


@kernel
def decode_v2(data, starts, ends, counts, base_offsets, base_timestamps, log_append_times, base_sequences,
              batch_ids, first, last, row, out, wire, copy_keys, copy_values, key_dest, value_dest, used, key_offsets,
              value_offsets):
    """Decode the records of v2 batches ``first..last-1`` (records areas ``data[starts[b]:ends[b]]``); write rows
    from ``row`` on; return ``(failed batch or -1, next row)``.  ``log_append_times[b]``: the batch maxTimestamp
    of a LogAppendTime batch, else ``INT64_MIN`` (``base_timestamps[b]`` applies).  Control batches never reach
    it.  ``wire=False`` leaves out what only ``Record`` objects read (attributes, position, size, deltas).

    ``copy_keys``/``copy_values``: each key/value is appended to ``key_dest``/``value_dest`` from
    ``used[0]``/``used[1]`` while in the first-level cache (a second pass measured ~30% of a decode), with its
    Arrow offset (``key_offsets[row + 1]``; a null adds one to ``used[2]``/``used[3]``), instead of its
    position.  ``used`` moves only past whole batches: a failed batch's bytes and rows are overwritten."""
    lat_none = np.int64(INT64_MIN)
    key_used = used[0]
    value_used = used[1]
    key_nulls = used[2]
    value_nulls = used[3]
    for b in range(first, last):
        p = starts[b]
        end = ends[b]
        count = counts[b]
        base_offset = base_offsets[b]
        base_ts = base_timestamps[b]
        lat = log_append_times[b]
        base_seq = base_sequences[b]
        bid = batch_ids[b]
        row0 = row
        for i in range(count):
            rstart = p
            rend, attributes, ts_delta, offset_delta, kpos, klen, vpos, vlen, hpos, nh = _v2_record(data, p, end)
            if rend < 0:
                return b, row0
            p = rend
            out[F_KEY_LEN, row] = klen
            out[F_VALUE_LEN, row] = vlen
            # (written out here, not in a helper taking the arrays: numba's inlining would then count references
            # to them per record, measured 1.8x slower)
            if copy_keys:
                if klen > 0:
                    copy_span(key_dest, key_used, data, kpos, klen)
                    key_used += klen
                elif klen < 0:
                    key_nulls += 1
                key_offsets[row + 1] = key_used
            else:
                out[F_KEY_POS, row] = kpos
            if copy_values:
                if vlen > 0:
                    copy_span(value_dest, value_used, data, vpos, vlen)
                    value_used += vlen
                elif vlen < 0:
                    value_nulls += 1
                value_offsets[row + 1] = value_used
            else:
                out[F_VALUE_POS, row] = vpos
            out[F_HEADERS_POS, row] = hpos
            out[F_HEADERS_COUNT, row] = nh
            out[F_OFFSET, row] = base_offset + offset_delta  # int64: wraps as Java's long
            if lat != lat_none:
                out[F_TIMESTAMP, row] = lat
                out[F_TSTYPE, row] = 1
            else:
                out[F_TIMESTAMP, row] = base_ts + ts_delta  # wraps as Java's long
                out[F_TSTYPE, row] = 0
            if base_seq >= 0 and offset_delta < 0:
                return b, row0  # incrementSequence with a negative delta: let the reference decide
            out[F_SEQUENCE, row] = _v2_sequence(base_seq, offset_delta)
            out[F_BATCH, row] = bid
            if wire:
                _v2_wire(out, row, attributes, rstart, rend, ts_delta, offset_delta)
            row += 1
        if count > 0 and p != end:
            return b, row0
        used[0] = key_used
        used[1] = value_used
        used[2] = key_nulls
        used[3] = value_nulls
    return -1, row


@inner
def legacy_entry(data, p, end):
    """Check the legacy entry at ``p`` as ``LegacyRecord`` does; return its end, key and value
    (position, length; -1 = null) or an end of -1."""
    size = be_int(data, p + _SIZE_AT, 4)
    entry_end = p + LOG_OVERHEAD + size
    if size < LEGACY_RECORD_OVERHEAD_V0 or entry_end > end:
        return -1, 0, 0, 0, 0
    magic = data[p + _MAGIC_AT]
    if magic > 1:
        return -1, 0, 0, 0, 0
    hdr = _HDR_V1 if magic == 1 else _HDR_V0
    if hdr + _VLEN > LOG_OVERHEAD + size:
        return -1, 0, 0, 0, 0
    q = p + hdr
    klen = be_int(data, q - 4, 4)
    kpos = q
    if klen >= 0:
        if q + klen > entry_end:
            return -1, 0, 0, 0, 0
        q += klen
    else:
        klen = -1
    if q + _VLEN > entry_end:
        return -1, 0, 0, 0, 0
    vlen = be_int(data, q, 4)
    q += _VLEN
    if vlen >= 0:
        if q + vlen > entry_end:
            return -1, 0, 0, 0, 0
    else:
        vlen = -1
    return entry_end, kpos, klen, q, vlen


@inner
def _legacy_row(data, p, entry_end, kpos, klen, vpos, vlen, batch_id, row, out, wire):
    """The fields every legacy entry stores, whatever its place (``wire``: also those only ``Record``
    objects need, as in :func:`decode_v2`)."""
    out[F_OFFSET, row] = be_int(data, p, 8)
    out[F_SEQUENCE, row] = -1
    out[F_KEY_POS, row] = kpos
    out[F_KEY_LEN, row] = klen
    out[F_VALUE_POS, row] = vpos
    out[F_VALUE_LEN, row] = vlen
    out[F_HEADERS_COUNT, row] = 0
    out[F_BATCH, row] = batch_id
    if wire:
        magic = data[p + _MAGIC_AT]
        out[F_STORED_OFFSET, row] = out[F_OFFSET, row]
        out[F_STORED_TIMESTAMP, row] = _legacy_timestamp(data, p)
        out[F_HEADERS_POS, row] = 0
        out[F_RECORD_POS, row] = p
        out[F_SIZE, row] = entry_end - p
        out[F_ATTRIBUTES, row] = data[p + _ATTRS_AT]
        out[F_MAGIC, row] = magic
        out[F_TS_DELTA, row] = 0
        out[F_OFFSET_DELTA, row] = 0


@inner
def _legacy_timestamp(data, p):
    """The timestamp a legacy entry stores (v1), or -1 (v0 has none)."""
    return be_int(data, p + _TS_AT, 8) if data[p + _MAGIC_AT] == 1 else NO_TIMESTAMP


@kernel
def decode_legacy_plain(data, start, end, max_bytes, first_batch_id, row, out, wire):
    """Uncompressed v0/v1 log entries filling ``data[start:end]`` exactly: one record each (offset,
    timestamp and type as stored).  Stops after the entry that reaches ``start + max_bytes`` (the caller
    gathers those rows' keys and values while they are in cache, then goes on from there).  Returns
    ``(index of the failed entry or -1, next row, position of the next entry)``."""
    p = start
    k = 0
    while p < end and p - start < max_bytes:
        if end - p < LOG_OVERHEAD:
            return k, row, p
        entry_end, kpos, klen, vpos, vlen = legacy_entry(data, p, end)
        if entry_end < 0 or data[p + _ATTRS_AT] & LEGACY_COMPRESSION_CODEC_MASK != 0:
            return k, row, p
        _legacy_row(data, p, entry_end, kpos, klen, vpos, vlen, first_batch_id + k, row, out, wire)
        if data[p + _MAGIC_AT] == 1:
            out[F_TIMESTAMP, row] = be_int(data, p + _TS_AT, 8)
            out[F_TSTYPE, row] = 1 if data[p + _ATTRS_AT] & LEGACY_TIMESTAMP_TYPE_MASK else 0
        else:
            out[F_TIMESTAMP, row] = NO_TIMESTAMP
            out[F_TSTYPE, row] = -1
        row += 1
        k += 1
        p = entry_end
    return -1, row, p


def _crc32_tables() -> np.ndarray:
    """CRC-32 (IEEE, reflected polynomial 0xEDB88320: zlib's, ``java.util.zip.CRC32``) tables for
    slicing-by-8: row 0 is the byte table, row k advances a byte k more positions."""
    t = np.zeros((8, 256), dtype=np.uint32)
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0xEDB88320 if c & 1 else c >> 1
        t[0, n] = c
    for k in range(1, 8):
        for n in range(256):
            t[k, n] = (int(t[k - 1, n]) >> 8) ^ int(t[0, int(t[k - 1, n]) & 0xFF])
    return t


_CRC32_TABLES = _crc32_tables()


#: CRC-32 spans checked per step of :func:`legacy_plain_run`: its messages are still in cache when checked
_CRC_BLOCK = 256
_ONES = np.uint32(0xFFFFFFFF)
_LOW = np.uint32(0xFF)


@inline
def _le_word(data, p):
    """Little-endian uint32 at ``p`` (an unsigned index: no negative-index test per byte load)."""
    q = np.uint64(p)
    return np.uint32(data[q]) | (np.uint32(data[q + np.uint64(1)]) << np.uint32(8)) | \
        (np.uint32(data[q + np.uint64(2)]) << np.uint32(16)) | (np.uint32(data[q + np.uint64(3)]) << np.uint32(24))


@inline
def _crc32_step8(t, c, data, p):
    """The CRC register ``c`` advanced over ``data[p:p+8]`` (slicing-by-8: eight table lookups)."""
    one = c ^ _le_word(data, p)
    two = _le_word(data, p + 4)
    return t[7, one & _LOW] ^ t[6, (one >> np.uint32(8)) & _LOW] ^ t[5, (one >> np.uint32(16)) & _LOW] ^ \
        t[4, one >> np.uint32(24)] ^ t[3, two & _LOW] ^ t[2, (two >> np.uint32(8)) & _LOW] ^ \
        t[1, (two >> np.uint32(16)) & _LOW] ^ t[0, two >> np.uint32(24)]


@inline
def _crc32_finish(t, c, data, p, end):
    """The CRC-32 of a span whose register is ``c`` at ``p``: the rest eight bytes a step, then bytewise."""
    while p + 8 <= end:
        c = _crc32_step8(t, c, data, p)
        p += 8
    while p < end:
        c = t[0, (c ^ np.uint32(data[np.uint64(p)])) & _LOW] ^ (c >> np.uint32(8))
        p += 1
    return c ^ _ONES


@inner
def crc32_span_range(data, starts, ends, first, last, crcs):
    """``crcs[i]`` = CRC-32 of ``data[starts[i]:ends[i]]`` for ``first <= i < last``
    (``LegacyRecord.computeChecksum``, ``java.util.zip.CRC32``).  Four spans at a time over their common length: four
    independent register chains the CPU overlaps (measured 1.8x faster than one span after the other)."""
    t = _CRC32_TABLES
    i = first
    while i + 4 <= last:
        a, b, c, d = starts[i], starts[i + 1], starts[i + 2], starts[i + 3]
        ea, eb, ec, ed = ends[i], ends[i + 1], ends[i + 2], ends[i + 3]
        ra = rb = rc = rd = _ONES
        for _ in range(min(min(ea - a, eb - b), min(ec - c, ed - d)) // 8):
            ra = _crc32_step8(t, ra, data, a)
            rb = _crc32_step8(t, rb, data, b)
            rc = _crc32_step8(t, rc, data, c)
            rd = _crc32_step8(t, rd, data, d)
            a += 8
            b += 8
            c += 8
            d += 8
        crcs[i] = _crc32_finish(t, ra, data, a, ea)
        crcs[i + 1] = _crc32_finish(t, rb, data, b, eb)
        crcs[i + 2] = _crc32_finish(t, rc, data, c, ec)
        crcs[i + 3] = _crc32_finish(t, rd, data, d, ed)
        i += 4
    while i < last:
        crcs[i] = _crc32_finish(t, _ONES, data, starts[i], ends[i])
        i += 1


@kernel
def crc32_spans(data, starts, ends, crcs):
    """``crcs[i]`` = CRC-32 (zlib's, Java's ``CRC32``) of ``data[starts[i]:ends[i]]`` for every i."""
    crc32_span_range(data, starts, ends, 0, starts.shape[0], crcs)


@inner
def stored_legacy_crc(data, p):
    """The CRC field of the legacy entry at ``p``, unsigned."""
    return np.uint32(be_int(data, p + _CRC_AT, 4) & 0xFFFFFFFF)


@kernel
def legacy_crcs(data, positions, sizes, stored, valid):
    """The stored CRC of each legacy message at ``positions[i]`` (``sizes[i]`` bytes with its log
    overhead) and whether it matches the CRC-32 of magic..end (``LegacyRecord.isValid``)."""
    n = positions.shape[0]
    starts = positions + _MAGIC_AT
    ends = positions + sizes
    crcs = np.empty(n, np.uint32)
    crc32_span_range(data, starts, ends, 0, n, crcs)
    for i in range(n):
        stored[i] = stored_legacy_crc(data, positions[i])
        valid[i] = stored[i] == crcs[i]


@kernel
def legacy_plain_run(data, start, end, max_message_size, max_bytes, positions, magics, timestamps):
    """How many uncompressed v0/v1 log entries follow each other from ``start``, each one a message the
    batch walker (MEMORY rules: ``ByteBufferLogInputStream.nextBatch``) yields whole and the columnar
    decoder takes as it is: size field at least ``RECORD_OVERHEAD_V0`` and within ``max_message_size``
    (-1: none), magic 0 or 1, the entry inside ``end``, no codec, a well-formed message and a valid CRC.
    The run stops before the first entry that is anything else (the walker and the reference decoder
    then take it), after ``max_bytes`` or when ``positions`` is full.  Writes each entry's position,
    magic and timestamp (-1 for v0); returns ``(count, end of the run)``.  Entries are parsed
    ``_CRC_BLOCK`` at a time, then their CRCs checked together (:func:`crc32_span_range`)."""
    starts = np.empty(_CRC_BLOCK, np.int64)
    ends = np.empty(_CRC_BLOCK, np.int64)
    crcs = np.empty(_CRC_BLOCK, np.uint32)
    p = start
    k = 0
    more = True
    while more:
        k0 = k
        while True:
            if k - k0 == _CRC_BLOCK:
                break
            more = False
            if k >= positions.shape[0] or p - start >= max_bytes or end - p < _MAGIC_AT + 1:
                break
            size = be_int(data, p + _SIZE_AT, 4)
            if size < LEGACY_RECORD_OVERHEAD_V0 or (max_message_size >= 0 and size > max_message_size):
                break
            magic = data[p + _MAGIC_AT]
            if magic > 1 or size > end - p - LOG_OVERHEAD:
                break
            if magic == 1 and size < _HDR_V1 - LOG_OVERHEAD + _VLEN:
                break
            if data[p + _ATTRS_AT] & LEGACY_COMPRESSION_CODEC_MASK != 0:
                break
            entry_end, _, _, _, _ = legacy_entry(data, p, end)
            if entry_end < 0:
                break
            more = True
            positions[k] = p
            magics[k] = magic
            timestamps[k] = _legacy_timestamp(data, p)
            starts[k - k0] = p + _MAGIC_AT
            ends[k - k0] = entry_end
            k += 1
            p = entry_end
        crc32_span_range(data, starts, ends, 0, k - k0, crcs)
        for i in range(k - k0):
            if crcs[i] != stored_legacy_crc(data, positions[k0 + i]):
                return k0 + i, positions[k0 + i]
    return k, p


@kernel
def decode_legacy_inner(data, start, end, wrapper_magic, wrapper_offset, wrapper_timestamp, wrapper_ts_type,
                        batch_id, row, out, wire):
    """The inner entries of a decompressed wrapper value ``data[start:end]`` (``DataLogInputStream``:
    a partial last entry ends the set).  Returns the next row, or -1 to hand the wrapper over."""
    p = start
    row0 = row
    while end - p >= LOG_OVERHEAD:
        size = be_int(data, p + _SIZE_AT, 4)
        if size < LEGACY_RECORD_OVERHEAD_V0:
            return -1
        if p + LOG_OVERHEAD + size > end:
            break
        entry_end, kpos, klen, vpos, vlen = legacy_entry(data, p, end)
        if entry_end < 0 or data[p + _ATTRS_AT] & LEGACY_COMPRESSION_CODEC_MASK != 0:
            return -1
        _legacy_row(data, p, entry_end, kpos, klen, vpos, vlen, batch_id, row, out, wire)  # offset as stored: see below
        if data[p + _MAGIC_AT] == 1:
            out[F_TSTYPE, row] = wrapper_ts_type
            out[F_TIMESTAMP, row] = wrapper_timestamp if wrapper_ts_type == 1 else be_int(data, p + _TS_AT, 8)
        else:
            out[F_TSTYPE, row] = -1
            out[F_TIMESTAMP, row] = NO_TIMESTAMP
        row += 1
        p = entry_end
    if row == row0:
        return -1
    if wrapper_magic == 1 and wrapper_offset != 0:
        last_inner = out[F_OFFSET, row - 1]
        if wrapper_offset < last_inner:
            return -1
        base = wrapper_offset - last_inner
        for r in range(row0, row):
            out[F_OFFSET, r] = base + out[F_OFFSET, r]  # wraps as Java's long
    return row


@kernel
def header_spans(data, headers_pos, headers_count, total, key_pos, key_len, value_pos, value_len):
    """Key and value spans of every header (the records were checked by :func:`decode_v2`)."""
    h = 0
    for r in range(headers_pos.shape[0]):
        p = headers_pos[r]
        for _ in range(headers_count[r]):
            hk, p = read_varint(data, p, data.shape[0])
            key_pos[h] = p
            key_len[h] = hk
            p += hk
            hv, p = read_varint(data, p, data.shape[0])
            value_pos[h] = p
            value_len[h] = hv if hv >= 0 else -1
            if hv > 0:
                p += hv
            h += 1


@kernel
def gather(data, pos, lengths, offsets, dest):
    """Copy ``data[pos[i]:pos[i]+lengths[i]]`` to ``dest[offsets[i]:]`` (null: negative length)."""
    for i in range(pos.shape[0]):
        if lengths[i] > 0:
            copy_span(dest, offsets[i], data, pos[i], lengths[i])


@kernel
def gather_rows(data, out, row0, row1, copy_keys, copy_values, key_dest, value_dest, used, key_offsets, value_offsets):
    """Append the keys and/or values of rows ``row0..row1-1`` of ``out`` as :func:`decode_v2` does as it goes
    (its ``copy_*``, ``*_dest``, ``used`` and ``*_offsets``)."""
    key_used, value_used, key_nulls, value_nulls = used[0], used[1], used[2], used[3]
    for r in range(row0, row1):
        if copy_keys:
            key_used, key_nulls = _append_value(key_dest, key_offsets, r, key_used, key_nulls, data, out[F_KEY_POS, r],
                                                out[F_KEY_LEN, r])
        if copy_values:
            value_used, value_nulls = _append_value(value_dest, value_offsets, r, value_used, value_nulls, data,
                                                    out[F_VALUE_POS, r], out[F_VALUE_LEN, r])
    used[0], used[1], used[2], used[3] = key_used, value_used, key_nulls, value_nulls


@kernel
def memory_spans(data, start, end, positions, sizes):
    """The batch walker's MEMORY steps (``ByteBufferLogInputStream.nextBatch``) from ``start``, while each
    entry is whole and plainly valid: size field at least ``RECORD_OVERHEAD_V0``, magic 0..2, inside
    ``end``.  Writes each entry's position and size (``LOG_OVERHEAD`` + its size field); returns
    ``(count, position)``: where the run stopped, for :class:`~kafkafmt.records.walker.BatchWalker` to go
    on from (it raises or records the trailing bytes with Kafka's messages)."""
    p = start
    k = 0
    while k < positions.shape[0] and end - p > _MAGIC_AT:
        size = be_int(data, p + _SIZE_AT, 4)
        magic = data[p + _MAGIC_AT]
        if size < LEGACY_RECORD_OVERHEAD_V0 or magic > MAGIC_VALUE_V2 or size > end - p - LOG_OVERHEAD:
            break
        positions[k] = p
        sizes[k] = size + LOG_OVERHEAD
        k += 1
        p += size + LOG_OVERHEAD
    return k, p


@inner
def _v2_run_takes(data, p, end, max_message_size, max_records, codec):
    """The whole v2 batch at ``p`` as the walker yields it (MEMORY rules, ``ByteBufferLogInputStream.nextBatch``)
    and one :func:`v2_run` takes: its end, or -1 for anything else (fewer bytes than a v2 header, a size the walker refuses or
    below ``RECORD_BATCH_OVERHEAD``, another magic, a control batch, another codec than ``codec`` (none or lz4),
    an lz4 batch over ``max_records``, an uncompressed one declaring more records than its bytes can hold)."""
    if end - p < RECORD_BATCH_OVERHEAD:  # not a whole v2 header
        return -1
    size = be_int(data, p + _LENGTH_AT, 4)
    if size < LEGACY_RECORD_OVERHEAD_V0 or (max_message_size >= 0 and size > max_message_size):
        return -1
    whole = size + LOG_OVERHEAD
    if data[p + _MAGIC_AT] != MAGIC_VALUE_V2 or whole > end - p or whole < RECORD_BATCH_OVERHEAD:
        return -1
    attributes = be_int(data, p + _ATTRIBUTES_AT, 2)
    if attributes & V2_CONTROL_FLAG_MASK or attributes & V2_COMPRESSION_CODEC_MASK != codec:
        return -1
    count = be_int(data, p + _COUNT_AT, 4)
    if count < 0 or (codec == _LZ4 and count > max_records):
        return -1
    if codec != _LZ4 and count > (whole - RECORD_BATCH_OVERHEAD) // MIN_V2_RECORD:
        return -1
    return p + whole


@kernel
def v2_run(data, start, end, codec, max_message_size, max_records, max_bytes, heads, arena, arena_used, lz4_cap):
    """The v2 batches of codec ``codec`` (none or lz4) that follow each other from ``start``, read in one pass
    (no Python step per batch): each batch's header fields into ``heads`` (``H_*`` rows, read at
    :data:`DEFAULT_BATCH`'s offsets; the stored CRC unchecked) and where its records area lies: in ``data``
    (none, relative to ``start``) or decompressed into ``arena`` from ``arena_used`` (lz4, relative to
    ``arena_used``, each frame at most ``lz4_cap`` bytes: :func:`lz4_frame_into`).  Stops before a batch
    :func:`_v2_run_takes` refuses or an lz4 frame :func:`lz4_frame_into` refuses (the per-batch path then
    decides, with Kafka's errors), after ``max_bytes`` of input or of output, or when ``heads`` is full.
    Returns ``(count, end of the run, arena bytes used, RUN_* reason, arena bytes the next batch needs)``."""
    k = 0
    p = start
    used0 = arena_used
    while k < heads.shape[1]:
        if p - start >= max_bytes or arena_used - used0 >= max_bytes:
            break
        q = _v2_run_takes(data, p, end, max_message_size, max_records, codec)
        if q < 0:
            return k, p, arena_used, RUN_OTHER, 0
        if codec == _LZ4:
            room = min(lz4_cap, arena.shape[0] - arena_used)
            need = lz4_frame_bound(data, p + RECORD_BATCH_OVERHEAD, q)
            if need > room and room < lz4_cap:
                return k, p, arena_used, RUN_ROOM, min(need, lz4_cap)
            n = lz4_frame_into(data, p + RECORD_BATCH_OVERHEAD, q, arena[arena_used:], room) if need >= 0 else -1
            if n < 0:
                return k, p, arena_used, RUN_OTHER, 0
            heads[H_AREA_START, k] = arena_used - used0
            arena_used += n
            heads[H_AREA_END, k] = arena_used - used0
        else:
            heads[H_AREA_START, k] = p + RECORD_BATCH_OVERHEAD - start
            heads[H_AREA_END, k] = q - start
        for f in range(H_COUNT + 1):
            heads[f, k] = be_int(data, p + _HEAD_AT[f], _HEAD_SIZE[f])
        heads[H_CRC, k] &= 0xFFFFFFFF
        heads[H_POSITION, k] = p
        heads[H_END, k] = q
        p = q
        k += 1
    return k, p, arena_used, RUN_BUDGET, 0
