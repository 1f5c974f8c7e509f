"""The log cleaner's bulk read: a batch's records as arrays, without a Python object per record: the
per-batch path for what the compiled runs of :mod:`~kafkafmt.log.cleaner.kernels` hand back
(compressed v2 batches, v0/v1 wrappers, batches with producer state to keep).

* v2 data batches: one compiled pass over the records area (:func:`scan_v2_records`) gives each
  record's byte spans, offset and timestamp deltas and key span; v0/v1 compressed wrappers: the columnar
  core's ``decode_legacy_inner`` over the decompressed inner set.  Anything unusual (a control batch,
  non-minimal varints, a malformed records area, any error) returns None and the reference decoder
  runs, whose errors are Kafka's.
* The keys' MD5 digests (``SkimpyOffsetMap.hashInto``) by a compiled MD5 over those spans
  (:func:`~kafkafmt.log.cleaner.table.md5_spans`).
* :func:`filter_v2` / :func:`filter_legacy`: ``SegmentFilter.filter_batch``'s decisions on those
  arrays; a batch with nothing removed is copied whole; one with records removed is re-assembled from
  the retained records' own bytes, which are what ``MemoryRecordsBuilder`` writes
  (:func:`~kafkafmt.log.cleaner.filter.rebuild_batch`): Kafka's ``DefaultRecord.writeTo`` writes
  attributes 0, the timestamp delta against the new ``baseTimestamp`` (the first retained record's
  timestamp, or ``deleteHorizonMs``, KIP-534) and every other field as read; ``LegacyRecord`` entries
  keep their bytes from the magic on, with the inner offset made relative to the first retained one
  (KIP-31).  Where the builder would write more differently (headers, which Kafka re-encodes from Java
  strings; another inner magic or attributes; a bad inner CRC) or refuse, the builder runs.
"""
from __future__ import annotations

import numpy as np

from ... import compression as _compression
from ...constants import NO_TIMESTAMP, RECORD_BATCH_OVERHEAD, V2_COMPRESSION_CODEC_MASK, CompressionType, TimestampType
from ...errors import KafkaFmtError
from ...limits import check_record_count
from ...records import fast
from ...records.default import batch_attributes, encode_default_batch
from ...records.fast.build_kernel import copy_bytes, put_uvarint, uvarint_size
from ...records.fast.jit import inner, kernel
from ...records.fast.kernels import read_varint, read_varlong
from ...records.legacy import codec_of as legacy_codec_of
from ...records.legacy import encode_legacy_entry, legacy_attributes, timestamp_type_of
from ...varint import wrap64
from .filter import empty_batch_header, rebuild_batch
from .rules import DELETE, RETAIN, RETAIN_EMPTY, needs_delete_horizon, record_retention
from .table import md5_spans

__all__ = ["V2Scan", "LegacyScan", "as_array", "scan_v2", "scan_legacy", "filter_legacy", "digests", "rebuild_v2",
           "rebuild_legacy", "filter_v2", "md5_digests", "retained"]

#: the rows of :func:`scan_v2_records`' output
R_START, R_BODY, R_TSD, R_TSD_END, R_TS_DELTA, R_OFF_DELTA, R_KPOS, R_KLEN, R_VLEN, R_HCOUNT, R_END, R_ATTR = range(12)
N_ROWS = 12


@inner
def _size32(v):
    return uvarint_size(np.uint64(((v << np.int64(1)) ^ (v >> np.int64(31))) & np.int64(0xFFFFFFFF)))


@inner
def _size64(v):
    return uvarint_size((np.uint64(v) << np.uint64(1)) ^ np.uint64(v >> np.int64(63)))


@kernel
def scan_v2_records(data, start, end, count, out):
    """``count`` records in ``data[start:end]`` into ``out[:, :count]``; -1 when anything is not as
    ``DefaultRecord.writeTo`` would write it (the caller then uses the reference decoder)."""
    p = start
    for i in range(count):
        rs = p
        length, p = read_varint(data, p, end)
        if p < 0 or length < 1 or p + length > end or p - rs != _size32(length):
            return -1
        body_end = p + length
        out[R_START, i] = rs
        out[R_BODY, i] = p
        out[R_ATTR, i] = data[p]
        p += 1
        q = p
        tsd, p = read_varlong(data, p, body_end)
        if p < 0 or p - q != _size64(tsd):
            return -1
        out[R_TSD, i] = q
        out[R_TSD_END, i] = p
        out[R_TS_DELTA, i] = tsd
        q = p
        od, p = read_varint(data, p, body_end)
        if p < 0 or p - q != _size32(od):
            return -1
        out[R_OFF_DELTA, i] = od
        q = p
        kl, p = read_varint(data, p, body_end)
        if p < 0 or p - q != _size32(kl) or kl < -1 or p + max(kl, 0) > body_end:
            return -1
        out[R_KPOS, i] = p
        out[R_KLEN, i] = kl
        p += max(kl, 0)
        q = p
        vl, p = read_varint(data, p, body_end)
        if p < 0 or p - q != _size32(vl) or vl < -1 or p + max(vl, 0) > body_end:
            return -1
        out[R_VLEN, i] = vl
        p += max(vl, 0)
        q = p
        hc, p = read_varint(data, p, body_end)
        if p < 0 or p - q != _size32(hc) or hc < 0 or (hc == 0 and p != body_end):
            return -1
        out[R_HCOUNT, i] = hc
        out[R_END, i] = body_end
        p = body_end
    if p != end:
        return -1
    return count


@kernel
def rebuild_v2_records(data, out, keep, base_ts, lat, new_base, dest, info):
    """The retained records ``keep`` re-encoded into ``dest`` against ``new_base`` (attributes 0, the
    timestamp delta rewritten, the rest copied).  A record's timestamp is ``base_ts`` plus its delta, or
    ``lat`` when ``info[1]`` is 1 (LogAppendTime).  ``info[0]`` gets the largest timestamp; returns the
    bytes written, or -1 where the builder would refuse or re-encode more (headers, a negative
    timestamp, offsets not increasing)."""
    q = 0
    max_ts = np.int64(-1)
    last = np.int64(0)
    for j in range(keep.shape[0]):
        i = keep[j]
        if out[R_HCOUNT, i] != 0:
            return -1
        od = out[R_OFF_DELTA, i]
        if j > 0 and od <= last:
            return -1
        last = od
        ts = lat if info[1] == 1 else base_ts + out[R_TS_DELTA, i]
        if ts < 0 and ts != -1:
            return -1
        if ts > max_ts:
            max_ts = ts
        delta = ts - new_base
        rest = out[R_END, i] - out[R_TSD_END, i]
        u = (np.uint64(delta) << np.uint64(1)) ^ np.uint64(delta >> np.int64(63))
        body = 1 + uvarint_size(u) + rest
        q = put_uvarint(dest, q, np.uint64(body << 1))  # zigzag of a positive int
        dest[q] = 0
        q = put_uvarint(dest, q + 1, u)
        q = copy_bytes(dest, q, data, out[R_TSD_END, i], rest)
    info[0] = max_ts
    return q


def md5_digests(arr: np.ndarray, kpos, klen) -> list:
    """Each span's MD5 digest as 16 bytes (None for a negative length), computed by :func:`md5_spans`."""
    kpos, klen = np.asarray(kpos, dtype=np.int64), np.asarray(klen, dtype=np.int64)
    n = len(kpos)
    out = np.zeros((n, 16), dtype=np.uint8)
    md5_spans(arr, kpos, klen, out)
    raw = out.tobytes()
    if n and klen.min() < 0:
        return [raw[16 * i:16 * i + 16] if k >= 0 else None for i, k in enumerate(klen.tolist())]
    return [raw[i:i + 16] for i in range(0, 16 * n, 16)]


class V2Scan:
    """One v2 batch's records: the records area (``buf``, ``arr``) and :func:`scan_v2_records`' rows."""

    __slots__ = ("buf", "arr", "rows", "offsets", "kpos", "klen", "vlen")

    def __init__(self, buf, arr: np.ndarray, out: np.ndarray, base_offset: int):
        self.buf, self.arr, self.rows = buf, arr, out
        self.offsets = (out[R_OFF_DELTA] + np.int64(base_offset)).tolist()  # Java long arithmetic (wraps)
        self.kpos, self.klen = out[R_KPOS], out[R_KLEN]
        self.vlen = out[R_VLEN].tolist()


def as_array(data) -> np.ndarray:
    """A segment's bytes as the uint8 array :func:`scan_v2` reads (a view, nothing copied)."""
    return np.frombuffer(data, dtype=np.uint8)


def scan_v2(batch, segment: np.ndarray, max_decompressed_bytes: int) -> V2Scan | None:
    """A data batch's records (``segment``: the batch's input as a uint8 array), or None for the reference
    decoder: a control batch, an unusual count or codec, a decompression error, an unusual record."""
    count = batch.count
    if batch.is_control or count < 0 or batch.attributes & V2_COMPRESSION_CODEC_MASK > CompressionType.ZSTD:
        return None
    try:
        if batch.compression == CompressionType.NONE:
            check_record_count(count, position=batch.position)  # as payload() does first
            buf, arr, start, end = batch.buffer, segment, batch.position + RECORD_BATCH_OVERHEAD, batch.end
        else:
            payload, _ = batch.payload(max_decompressed_bytes=max_decompressed_bytes)
            buf = bytes(payload)
            arr, start, end = np.frombuffer(buf, dtype=np.uint8), 0, len(buf)
    except KafkaFmtError:
        return None
    if count > (end - start) // 7:  # the smallest record is 7 bytes
        return None
    out = np.empty((N_ROWS, count), dtype=np.int64)
    if scan_v2_records(arr, start, end, count, out) < 0:
        return None
    return V2Scan(buf, arr, out, batch.base_offset)


def digests(scan) -> list:
    """Each record's key digest (``SkimpyOffsetMap``'s MD5), None for a null key."""
    return md5_digests(scan.arr, scan.kpos, scan.klen)


def rebuild_v2(batch, scan: V2Scan, keep: list[int], horizon: int | None) -> bytes | None:
    """:func:`~kafkafmt.log.cleaner.filter.rebuild_batch` of a v2 data batch from the bytes of the retained
    records ``keep`` (indices), or None where the builder would raise or re-encode more than the record's
    timestamp delta (headers; producer state the builder refuses; offsets or timestamps it refuses)."""
    pid, transactional = batch.producer_id, batch.is_transactional
    if (transactional and pid == -1) or (pid != -1 and (batch.producer_epoch == -1 or batch.base_sequence < 0)):
        return None
    ts_type = batch.timestamp_type
    lat = ts_type == TimestampType.LOG_APPEND_TIME
    horizon = horizon if horizon is not None and horizon >= 0 else None
    if horizon is not None:
        base_ts = horizon
    elif lat:
        base_ts = batch.max_timestamp
    else:
        base_ts = wrap64(batch.base_timestamp + int(scan.rows[R_TS_DELTA, keep[0]]))
    rows = scan.rows
    dest = np.empty(int(rows[R_END, -1] - rows[R_START, 0]) + 16 * len(keep), dtype=np.uint8)
    info = np.array([0, 1 if lat else 0], dtype=np.int64)
    n = rebuild_v2_records(scan.arr, rows, np.array(keep, dtype=np.int64), batch.base_timestamp,
                           batch.max_timestamp, base_ts, dest, info)
    if n < 0:
        return None
    return encode_rebuilt(batch, horizon is not None, base_ts, batch.max_timestamp if lat else int(info[0]), len(keep),
                          dest[:n].tobytes())


def encode_rebuilt(batch, delete_horizon: bool, base_timestamp: int, max_timestamp: int, count: int,
                   records: bytes) -> bytes:
    """The header ``MemoryRecordsBuilder`` writes for ``batch`` rebuilt with ``count`` retained ``records``
    (encoded, not compressed): base offset, last offset delta and producer state kept, attributes its
    codec, timestamp type and transactional bit (and bit 6 with a delete horizon, KIP-534)."""
    attrs = batch_attributes(batch.compression, batch.timestamp_type, transactional=batch.is_transactional,
                             control=False, delete_horizon=delete_horizon)
    return encode_default_batch(
        base_offset=batch.base_offset, partition_leader_epoch=batch.partition_leader_epoch, attributes=attrs,
        last_offset_delta=batch.last_offset - batch.base_offset, base_timestamp=base_timestamp,
        max_timestamp=max_timestamp, producer_id=batch.producer_id, producer_epoch=batch.producer_epoch,
        base_sequence=batch.base_sequence, records_count=count, records=records)


def filter_v2(flt, batch, scan: V2Scan) -> tuple[bytes, int]:
    """:meth:`~kafkafmt.log.cleaner.filter.SegmentFilter.filter_batch` of a v2 data batch read by
    :func:`scan_v2`: the same decisions and statistics, the retained records' bytes reused, the whole
    batch copied when nothing in it goes."""
    def write(keep: list[int], marker_for_empty_txn: bool) -> tuple[bytes, int | None]:
        need_horizon = needs_delete_horizon(True, any(scan.vlen[i] < 0 for i in keep), marker_for_empty_txn,
                                            batch.delete_horizon_ms is not None)
        horizon = flt.now + flt.delete_retention_ms if need_horizon else batch.delete_horizon_ms
        if len(keep) == len(scan.offsets) and not need_horizon:
            return bytes(batch.raw), horizon
        out = rebuild_v2(batch, scan, keep, horizon)
        return (_rebuilt_by_builder(batch, keep, horizon) if out is None else out), horizon

    return _filter_scanned(flt, batch, scan, write)


def _filter_scanned(flt, batch, scan, write) -> tuple[bytes, int]:
    """``filterTo`` of one scanned batch: the batch's and each record's :mod:`~.rules` decision, the retained
    records written by ``write(keep, marker_for_empty_txn)`` -> (bytes, delete horizon), the statistics."""
    retention, marker_for_empty_txn = flt.check_batch_retention(batch)
    stats = flt.stats
    stats.bytes_read += batch.size_in_bytes
    if retention == DELETE:
        return b"", -1
    offsets, vlen = scan.offsets, scan.vlen
    stats.messages_read += len(offsets)
    keep = [] if flt.discard_records else retained(flt, scan, flt.keeps_tombstones(batch))
    if keep:
        out, horizon = write(keep, marker_for_empty_txn)
        stats.tombstones_kept.extend((offsets[i], horizon) for i in keep if vlen[i] < 0)
        stats.messages_written += len(keep)
        max_offset = max(offsets[i] for i in keep)
    elif retention == RETAIN_EMPTY:
        out = empty_batch_header(batch)
        max_offset = batch.last_offset
    else:
        return b"", -1
    stats.bytes_written += len(out)
    return out, max_offset


def _rebuilt_by_builder(batch, keep: list[int], horizon: int | None) -> bytes:
    """:func:`~.filter.rebuild_batch` of the records ``keep`` (indices), read by the reference decoder."""
    records = list(batch.records())
    return rebuild_batch(batch, [records[i] for i in keep], horizon)


def retained(flt, scan, keep_tombstones: bool) -> list[int]:
    """:func:`~.rules.record_retention` (``shouldRetainRecord``) for each record of a scanned data batch: the
    indices kept, the others counted into ``flt``'s statistics.  ``keep_tombstones``:
    ``flt.keeps_tombstones(batch)``."""
    offsets, vlen = scan.offsets, scan.vlen
    latest_offset = flt.map.latest_offset
    keys = digests(scan)
    keep = []
    for i, (off, latest, v) in enumerate(zip(offsets, flt.map.get_digests(keys), vlen)):
        decision = record_retention(off, latest_offset, keys[i] is not None, latest, v < 0, keep_tombstones)
        if decision == RETAIN:
            keep.append(i)
        else:
            flt.count(decision)
    return keep


# --------------------------------------------------------------------------------------------- v0/v1 wrappers
class LegacyScan:
    """A compressed v0/v1 wrapper's inner messages (``decode_legacy_inner``'s rows) as lists."""

    __slots__ = ("buf", "arr", "offsets", "kpos", "klen", "vlen", "magics", "timestamps", "stored_ts", "attrs", "pos",
                 "sizes")

    def __init__(self, buf, arr: np.ndarray, out: np.ndarray):
        f = fast
        self.buf, self.arr = buf, arr
        self.offsets, self.timestamps = out[f.F_OFFSET].tolist(), out[f.F_TIMESTAMP].tolist()
        self.kpos, self.klen = out[f.F_KEY_POS].tolist(), out[f.F_KEY_LEN].tolist()
        self.vlen = out[f.F_VALUE_LEN].tolist()
        self.magics, self.attrs = out[f.F_MAGIC].tolist(), out[f.F_ATTRIBUTES].tolist()
        self.stored_ts, self.pos, self.sizes = (out[f.F_STORED_TIMESTAMP].tolist(), out[f.F_RECORD_POS].tolist(),
                                                out[f.F_SIZE].tolist())


def scan_legacy(batch, max_decompressed_bytes: int) -> LegacyScan | None:
    """A compressed v0/v1 wrapper's inner messages read by the columnar core's kernel
    (``decode_legacy_inner``, the records ``LegacyRecordBatch.records()`` yields), or None for the
    reference decoder (a plain message, zstd, a null value, any error)."""
    if batch.magic > 1 or not batch.is_compressed:
        return None
    m = batch.message
    if m.value is None or batch.compression == CompressionType.ZSTD:
        return None
    try:
        buf = bytes(batch.decompressed_value(max_decompressed_bytes=max_decompressed_bytes))
    except KafkaFmtError:
        return None
    arr = np.frombuffer(buf, dtype=np.uint8)
    out = np.empty((fast.N_FIELDS, len(buf) // fast.MIN_LEGACY_ENTRY + 1), dtype=np.int64)
    n = fast.decode_legacy_inner(arr, 0, len(buf), m.magic, m.offset, m.timestamp, int(m.timestamp_type), 0, 0, out,
                                 True)
    if n <= 0:
        return None
    return LegacyScan(buf, arr, out[:, :n])


def filter_legacy(flt, batch, scan: LegacyScan) -> tuple[bytes, int]:
    """:meth:`~kafkafmt.log.cleaner.filter.SegmentFilter.filter_batch` of a compressed v0/v1 wrapper read by
    :func:`scan_legacy`: kept whole when every inner message stays (and has the wrapper's magic,
    KAFKA-4298), else rebuilt with the retained messages keeping their offsets (KIP-31's holes)."""
    def write(keep: list[int], marker_for_empty_txn: bool) -> tuple[bytes, None]:
        if len(keep) == len(scan.offsets) and all(m == batch.magic for m in scan.magics):
            return bytes(batch.raw), None
        out = rebuild_legacy(batch, scan, keep)
        return (_rebuilt_by_builder(batch, keep, None) if out is None else out), None

    return _filter_scanned(flt, batch, scan, write)


def rebuild_legacy(batch, scan: LegacyScan, keep: list[int]) -> bytes | None:
    """``rebuild_batch`` of a v0/v1 wrapper from its retained inner messages' bytes (each re-offset:
    v1 relative to the first retained, v0 absolute), or None where ``MemoryRecordsBuilder`` would write
    a message differently (another magic or attributes, a LogAppendTime stamp not yet in it, a bad CRC)
    or refuse it (offsets not increasing, a negative timestamp)."""
    magic = batch.magic
    ts_type = batch.timestamp_type if magic > 0 else TimestampType.NO_TIMESTAMP_TYPE
    lat = batch.max_timestamp if ts_type == TimestampType.LOG_APPEND_TIME else None
    inner_attrs = legacy_attributes(magic, CompressionType.NONE, ts_type)
    offsets, buf, pos, sizes = scan.offsets, scan.buf, scan.pos, scan.sizes
    base = offsets[keep[0]]
    parts, last, max_ts = [], None, NO_TIMESTAMP
    for i in keep:
        t = scan.timestamps[i]
        if (scan.magics[i] != magic or scan.attrs[i] != inner_attrs or (last is not None and offsets[i] <= last)
                or (t < 0 and t != NO_TIMESTAMP) or (lat is not None and scan.stored_ts[i] != lat)):
            return None
        last = offsets[i]
        t = lat if lat is not None else t
        if magic > 0 and t > max_ts:
            max_ts = t
        inner_offset = offsets[i] - base if magic > 0 else offsets[i]
        parts.append(inner_offset.to_bytes(8, "big", signed=True) + buf[pos[i] + 8:pos[i] + sizes[i]])
    positions = np.array([pos[i] for i in keep], dtype=np.int64)
    stored, valid = np.empty(len(keep), np.uint32), np.empty(len(keep), np.bool_)
    fast.legacy_crcs(np.frombuffer(buf, dtype=np.uint8), positions, np.array([sizes[i] for i in keep], np.int64),
                     stored, valid)
    if not valid.all():
        return None
    return encode_rebuilt_legacy(batch, last, lat if lat is not None else max_ts, b"".join(parts))


def encode_rebuilt_legacy(batch, last_offset: int, timestamp: int, messages: bytes) -> bytes:
    """The wrapper ``MemoryRecordsBuilder`` writes for a v0/v1 ``batch`` rebuilt from its retained inner
    ``messages`` (already re-offset): compressed with the batch's codec, at the last retained offset."""
    return encode_rebuilt_wrapper(batch.magic, batch.attributes, last_offset, timestamp, messages)


def encode_rebuilt_wrapper(magic: int, attributes: int, last_offset: int, timestamp: int, messages: bytes) -> bytes:
    """:func:`encode_rebuilt_legacy` from the wrapper's magic and stored ``attributes`` (its codec and, on
    v1, its timestamp type: ``LegacyRecord.computeAttributes`` keeps no other bit)."""
    codec, ts_type = legacy_codec_of(attributes), timestamp_type_of(magic, attributes)
    compressed = _compression.compress(codec, messages, magic=magic)
    return encode_legacy_entry(last_offset, magic, legacy_attributes(magic, codec, ts_type), timestamp, None,
                               compressed)
