"""The log cleaner over a run of plain v2 batches in one compiled call, for its two passes over a
segment (``Cleaner.buildOffsetMapForSegment`` and ``Cleaner.cleanInto`` with ``MemoryRecords.filterTo``).

The batches' positions come from the one batch walker (:class:`~kafkafmt.records.walker.BatchWalker`);
the kernels read each batch's header at those positions (offsets from :data:`kafkafmt.layout.DEFAULT_BATCH`)
and handle the batches whose every rule is the plain one: magic 2, uncompressed, neither control nor
transactional, records as ``DefaultRecord.writeTo`` writes them.  At any other batch (and at one whose
producer state or position could make the cleaner keep it empty, ``RETAIN_EMPTY``) a kernel stops and
returns its index with :data:`HANDBACK`, having changed nothing for it; the caller hands that batch to
the per-batch path (:mod:`~kafkafmt.log.cleaner.scan`, :mod:`~kafkafmt.log.cleaner.filter`) and calls the
kernel again after it.  Transactions need nothing here: only transactional and control batches change
``CleanedTransactionMetadata``, and the aborted transactions a plain batch passes are taken up by the
next batch that asks (``consumeAbortedTxnsUpTo`` is called with a larger offset then).

* :func:`map_run`: each record's key digest into the offset map (:mod:`~kafkafmt.log.cleaner.table`)
  while the map has room; :data:`FULL` when it fills (``buildOffsetMapForSegment`` returns true).
* :func:`filter_run`: ``shouldRetainRecord`` for each record; a batch losing no record (and needing no
  delete horizon) is copied whole, a batch losing all of them dropped, any other one re-encoded from its
  retained records' bytes with the header ``MemoryRecordsBuilder`` writes (base offset and last offset
  delta kept, ``deleteHorizonMs`` as the base timestamp when a tombstone is kept, KIP-534), its CRC left
  for the caller (``crc32c``, hardware-accelerated) at the positions it lists.
"""
from __future__ import annotations

import threading

import numpy as np

from ...compression import compress, decompress_buffer
from ...constants import (
    DEFAULT_MAX_DECOMPRESSED_BYTES,
    INT64_MIN,
    LEGACY_COMPRESSION_CODEC_MASK,
    LEGACY_TIMESTAMP_TYPE_MASK,
    LOG_OVERHEAD,
    MAGIC_VALUE_V2,
    NO_TIMESTAMP,
    RECORD_BATCH_OVERHEAD,
    V2_COMPRESSION_CODEC_MASK,
    V2_CONTROL_FLAG_MASK,
    V2_DELETE_HORIZON_FLAG_MASK,
    V2_TIMESTAMP_TYPE_MASK,
    V2_TRANSACTIONAL_FLAG_MASK,
    CompressionType,
)
from ...crc import crc32c
from ...errors import KafkaFmtError
from ...layout import DEFAULT_BATCH, DEFAULT_BATCH_CRC_START, LEGACY_V0, LEGACY_V1
from ...limits import current_limits
from ...records import fast
from ...records.fast.build_kernel import copy_bytes
from ...records.fast.jit import inner, kernel
from ...records.fast.kernels import (
    MIN_LEGACY_ENTRY,
    be_int,
    crc32_span_range,
    decode_legacy_inner,
    legacy_entry,
    memory_spans,
    stored_legacy_crc,
)
from ...records.fast.lz4_frame import lz4_frame_into
from ...records.memory import MemoryRecords, read_batch
from ...records.walker import MEMORY, BatchWalker
from .rules import (
    DROP_NO_KEY,
    DROP_TOMBSTONE,
    RETAIN,
    RETAIN_EMPTY,
    compiled_batch_retention,
    compiled_needs_delete_horizon,
    compiled_record_retention,
    compiled_tombstones_retained,
)
from .scan import (
    N_ROWS,
    R_KLEN,
    R_KPOS,
    R_OFF_DELTA,
    R_TS_DELTA,
    R_VLEN,
    encode_rebuilt_wrapper,
    rebuild_v2_records,
    scan_v2_records,
)
from .table import DIGEST_SIZE, ENTRIES, LATEST, md5_into, md5_pair_into, table_get, table_put

__all__ = ["DONE", "HANDBACK", "FULL", "map_run", "filter_run", "NO_OFFSET", "Spans", "map_segment_runs",
           "producer_rows", "replay_producers", "FilterRun", "dest_capacity"]

#: what a kernel returns with the index it stopped at
DONE, HANDBACK, FULL, ROOM = 0, 1, 2, 3
#: "no such offset" in the parameters (no batch end to keep, no horizon)
NO_OFFSET = INT64_MIN

_BASE_OFFSET_AT = DEFAULT_BATCH.offset_of("baseOffset")
_LENGTH_AT = DEFAULT_BATCH.offset_of("length")
_MAGIC_BYTE_AT = DEFAULT_BATCH.offset_of("magic")  # a v0/v1 entry's too (LEGACY_V0): how the walker tells them apart
_CRC_FIELD_AT = DEFAULT_BATCH.offset_of("crc")
_LEGACY_ATTRS_AT = LEGACY_V0.offset_of("attributes")
_LEGACY_TS_AT = LEGACY_V1.offset_of("timestamp")
_LEGACY_OFFSET_AT = LEGACY_V0.offset_of("offset")
#: where a legacy entry's bytes after its offset field start (the size field on)
_LEGACY_OFFSET_END = LEGACY_V0.offset_of("size")
_ATTRIBUTES_AT = DEFAULT_BATCH.offset_of("attributes")
_LAST_DELTA_AT = DEFAULT_BATCH.offset_of("lastOffsetDelta")
_BASE_TS_AT = DEFAULT_BATCH.offset_of("baseTimestamp")
_MAX_TS_AT = DEFAULT_BATCH.offset_of("maxTimestamp")
_PID_AT = DEFAULT_BATCH.offset_of("producerId")
_EPOCH_AT = DEFAULT_BATCH.offset_of("producerEpoch")
_BASE_SEQ_AT = DEFAULT_BATCH.offset_of("baseSequence")
_COUNT_AT = DEFAULT_BATCH.offset_of("recordsCount")
_NONE, _LZ4, _ZSTD = int(CompressionType.NONE), int(CompressionType.LZ4), int(CompressionType.ZSTD)
#: room for one lz4 batch's records decoded in a compiled run (a larger batch takes the per-batch path)
PLAIN_ROOM = 1 << 20
#: bytes of batches the map pass takes per compiled call (their v0/v1 wrappers' values decoded first)
MAP_WINDOW = 1 << 20
#: batches the compiled walk steps over per call (its arrays are this long)
_SPANS_PER_STEP = 1 << 16
#: the smallest v2 record (one byte for each of its seven varint or byte fields)
_MIN_RECORD = 7
#: most bytes a re-encoded record can grow by: a timestamp delta of 10 bytes where 1 was, and its length
_GROWTH_PER_RECORD = 10


#: indices of :func:`filter_run`'s ``prm`` array
P_NOW, P_RETENTION, P_RETAIN_AT, P_LATEST_OFFSET, P_MAX_RECORDS, P_LEGACY, P_LEGACY_TOMBSTONES, P_HORIZON = range(8)
N_PARAMS = 8
#: indices of :func:`filter_run`'s ``stats`` array (``CleanerStats`` plus the output's state)
S_MESSAGES_READ, S_BYTES_READ, S_MESSAGES_WRITTEN, S_BYTES_WRITTEN, S_INVALID, S_TOMBSTONES_REMOVED, S_TOMBSTONES, \
    S_DEST, S_REBUILT, S_MAX_OFFSET, S_WRITTEN, S_RECS_POS, S_PENDING = range(13)
N_STATS = 13
#: columns of :func:`filter_run`'s ``pending`` rows: a compressed batch re-encoded into ``recs`` for the caller
#: to compress, where it goes in ``dest``, which batch it is, its header's new values, its ``written`` row
PD_START, PD_END, PD_DEST, PD_INDEX, PD_BASE, PD_MAX_TS, PD_HORIZON, PD_COUNT, PD_WRITTEN = range(9)
N_PENDING = 9
#: indices of :func:`map_run`'s ``stats`` array
M_MESSAGES_READ, M_BYTES_READ = range(2)
N_MAP_STATS = 2


def dest_capacity(nbytes: int) -> int:
    """Bytes :func:`filter_run` may write for ``nbytes`` of input batches (records re-encoded may grow)."""
    return nbytes + (nbytes // _MIN_RECORD + 1) * _GROWTH_PER_RECORD


@inner
def _be16(data, p):
    v = (np.int64(data[p]) << 8) | np.int64(data[p + 1])
    return v - 65536 if v >= 32768 else v


@inner
def _put_be(dest, p, v, n):
    for k in range(n):
        dest[p + n - 1 - k] = np.uint8((v >> np.int64(8 * k)) & np.int64(0xFF))


@inner
def _plain_count(data, p, size, max_records):
    """The record count of a plain batch at ``p`` (see the module docstring), or -1."""
    if data[p + _MAGIC_BYTE_AT] != MAGIC_VALUE_V2:
        return -1
    attrs = _be16(data, p + _ATTRIBUTES_AT)
    codec = attrs & V2_COMPRESSION_CODEC_MASK
    if attrs & (V2_CONTROL_FLAG_MASK | V2_TRANSACTIONAL_FLAG_MASK) or (codec != _NONE and codec != _LZ4):
        return -1
    count = be_int(data, p + _COUNT_AT, 4)
    if count < 0 or count > max_records or (codec == _NONE and count > (size - RECORD_BATCH_OVERHEAD) // _MIN_RECORD):
        return -1
    return count


@inner
def _records_area(data, p, size, plain):
    """Where the batch at ``p`` has its records: (0, start, end) in ``data``, (1, 0, end) in ``plain``
    (an lz4 frame decoded there), or (-1, 0, 0) for the per-batch path."""
    if _be16(data, p + _ATTRIBUTES_AT) & V2_COMPRESSION_CODEC_MASK == _NONE:
        return 0, p + RECORD_BATCH_OVERHEAD, p + size
    n = lz4_frame_into(data, p + RECORD_BATCH_OVERHEAD, p + size, plain, plain.shape[0])
    return (-1, 0, 0) if n < 0 else (1, 0, n)


@inner
def _scanned(src, start, end, count):
    rows = np.empty((N_ROWS, count), np.int64)
    ok = count <= (end - start) // _MIN_RECORD and scan_v2_records(src, start, end, count, rows) >= 0
    return rows, ok


@inner
def _mark_batch(scratch, p, count):
    """Make room to keep where the map pass puts each of the ``count`` records of the batch (or v0/v1
    wrapper) at ``p``, by the batch's place in the log (``scratch[6]``: the segment's base offset and where
    the data starts in it): the index of its record 0 in ``scratch[4]``, every record first marked -1
    (not put), or -1 when there is no room left (``scratch[3:6]``: batches, slots, [batches, slots, read
    position])."""
    batches, slots, state = scratch[3], scratch[4], scratch[5]
    nb, ns = state[0], state[1]
    if nb >= batches.shape[0] or ns + count > slots.shape[0]:
        return -1
    here = scratch[6]
    batches[nb, 0], batches[nb, 1], batches[nb, 2] = here[0], here[1] + p, ns
    for j in range(count):
        slots[ns + j] = -1
    state[0], state[1] = nb + 1, ns + count
    return ns


@inner
def _find_batch(scratch, p):
    """The index of record 0 of the batch at ``p`` among the slots the map pass kept, or -1.  Both passes
    meet the batches in the same order (segments by base offset, batches by position), so the kept
    batches are read forward once."""
    batches, state = scratch[3], scratch[5]
    here = scratch[6]
    seg, at = here[0], here[1] + p
    k = state[2]
    while k < state[0] and (batches[k, 0] < seg or (batches[k, 0] == seg and batches[k, 1] < at)):
        k += 1
    state[2] = k
    if k < state[0] and batches[k, 0] == seg and batches[k, 1] == at:
        return batches[k, 2]
    return -1


@inner
def _latest_offsets(src, offsets, kpos, klen, base, count, latest_offset, first, hashes, offs, scratch):
    """The map's offset for the key of each record ``j`` the filter asks about (at or before
    ``latest_offset``, a non-null key; -1 for the others), ``SkimpyOffsetMap.get``: read from the slot the
    map pass put that very record in when it kept it (``first``: :func:`_find_batch`; a slot never moves,
    so it holds that key's latest offset), else hashed (two at a time) and probed."""
    latest = np.full(count, -1, np.int64)
    need = np.zeros(count, np.bool_)
    slots = scratch[4]
    for j in range(count):
        if base + offsets[j] <= latest_offset and klen[j] >= 0:
            s = slots[first + j] if first >= 0 else -1
            if s >= 0:
                latest[j] = offs[s]
            else:
                need[j] = True
    if need.any():
        digs = _digests_where(src, kpos, klen, need, count, scratch)
        for j in range(count):
            if need[j]:
                latest[j] = table_get(hashes, offs, digs[j])
    return latest


@inner
def _map_records(src, start, end, p, count, base, start_offset, max_entries, hashes, offs, state, stats, scratch):
    """The keys of one batch's records ``src[start:end]`` into the table: :data:`DONE`, :data:`FULL`, or
    :data:`HANDBACK` (nothing changed)."""
    rows, ok = _scanned(src, start, end, count)
    if not ok:
        return HANDBACK
    return _map_keys(src, rows[R_OFF_DELTA], rows[R_KPOS], rows[R_KLEN], base, p, count, start_offset, max_entries,
                     hashes, offs, state, stats, scratch)


@inner
def _digests_where(src, kpos, klen, need, count, scratch):
    """The digests of the keys of the records ``j`` where ``need[j]``, two at a time (:func:`md5_pair_into`):
    row ``j`` for record ``j``."""
    digs = np.empty((count, DIGEST_SIZE), np.uint8)
    w, st, w2, st2 = scratch[0], scratch[1], scratch[7], scratch[8]
    held = -1
    for j in range(count):
        if need[j]:
            if held < 0:
                held = j
            else:
                md5_pair_into(src, kpos[held], klen[held], digs[held], kpos[j], klen[j], digs[j], w, st, w2, st2)
                held = -1
    if held >= 0:
        md5_into(src, kpos[held], klen[held], digs[held], w, st)
    return digs


@inner
def _key_digests(src, offsets, kpos, klen, base, count, start_offset, scratch):
    """The digests of the keys the map takes (non-null, at or after ``start_offset``)."""
    need = np.empty(count, np.bool_)
    for j in range(count):
        need[j] = klen[j] >= 0 and base + offsets[j] >= start_offset
    return _digests_where(src, kpos, klen, need, count, scratch)


@inner
def _map_keys(src, offsets, kpos, klen, base, p, count, start_offset, max_entries, hashes, offs, state, stats,
              scratch):
    """The keys of one batch's (or wrapper's) records into the table: record ``j`` is at offset ``base +
    offsets[j]``, its key ``src[kpos[j]:][:klen[j]]`` (null when negative).  :data:`DONE` or :data:`FULL`."""
    digs = _key_digests(src, offsets, kpos, klen, base, count, start_offset, scratch)
    first = _mark_batch(scratch, p, count)
    slots = scratch[4]
    for j in range(count):
        off = base + offsets[j]
        if klen[j] >= 0 and off >= start_offset:
            if state[ENTRIES] >= max_entries:
                return FULL
            s = table_put(hashes, offs, state, digs[j], off)
            if first >= 0:
                slots[first + j] = s
        stats[M_MESSAGES_READ] += 1
    return DONE


@kernel
def map_run(data, pos, size, i0, i1, start_offset, max_entries, max_records, hashes, offs, state, stats, plain, inner,
            istart, iend, seen_batches, seen_slots, seen_state, place):
    """``buildOffsetMapForSegment`` over the batches ``pos[i0:]``: (index, :data:`DONE` / :data:`HANDBACK`
    / :data:`FULL`).  Keys of records at or after ``start_offset`` go into the table while it holds fewer
    than ``max_entries``; ``state[LATEST]`` follows each batch's last offset; ``plain``: room for an lz4
    batch's records; ``inner[istart[i]:iend[i]]``: v0/v1 wrapper ``i``'s value, decoded by the caller."""
    scratch = (np.empty(16, np.uint64), np.empty(4, np.uint64), np.empty(16, np.uint8), seen_batches, seen_slots,
               seen_state, place, np.empty(16, np.uint64), np.empty(4, np.uint64))
    for i in range(i0, i1):
        p, n = pos[i], size[i]
        if data[p + _MAGIC_BYTE_AT] < MAGIC_VALUE_V2:
            code = _map_legacy_entry(data, p, n, i, start_offset, max_entries, hashes, offs, state, stats, inner,
                                     istart, iend, scratch)
            if code != DONE:
                return i, code
            continue
        count = _plain_count(data, p, n, max_records)
        if count < 0:
            return i, HANDBACK
        where, start, end = _records_area(data, p, n, plain)
        base = be_int(data, p + _BASE_OFFSET_AT, 8)
        if where < 0:
            return i, HANDBACK
        elif where == 0:
            code = _map_records(data, start, end, p, count, base, start_offset, max_entries, hashes, offs, state, stats,
                                scratch)
        else:
            code = _map_records(plain, start, end, p, count, base, start_offset, max_entries, hashes, offs, state,
                                stats, scratch)
        if code != DONE:
            return i, code
        last = base + be_int(data, p + _LAST_DELTA_AT, 4)
        if last >= start_offset:
            state[LATEST] = last
        stats[M_BYTES_READ] += n
    return i1, DONE


@inner
def _map_legacy_entry(data, p, n, i, start_offset, max_entries, hashes, offs, state, stats, inner, istart, iend,
                      scratch):
    where, start, end = _legacy_area(data, p, n, i, inner, istart, iend)
    if where < 0:
        return HANDBACK
    if where == 0:
        rows, count = _legacy_rows(data, start, end, data, p, False)
        if count <= 0:
            return HANDBACK
        code = _map_legacy(data, rows, p, count, start_offset, max_entries, hashes, offs, state, stats, scratch)
    else:
        rows, count = _legacy_rows(inner, start, end, data, p, True)
        if count <= 0:
            return HANDBACK
        code = _map_legacy(inner, rows, p, count, start_offset, max_entries, hashes, offs, state, stats, scratch)
    if code == DONE:
        last = be_int(data, p + _LEGACY_OFFSET_AT, 8)
        if last >= start_offset:
            state[LATEST] = last
        stats[M_BYTES_READ] += n
    return code


@inner
def _member(sorted_values, v):
    k = np.searchsorted(sorted_values, v)
    return k < sorted_values.shape[0] and sorted_values[k] == v


@inner
def _decide(data, rows, p, count, base, keep_tombstones, latest_offset, hashes, offs, keep, counts, scratch):
    """``shouldRetainRecord`` of each record: the retained indices into ``keep``; ``counts``: [kept,
    invalid, tombstones removed, tombstones kept]."""
    _decide_keys(data, rows[R_OFF_DELTA], rows[R_KPOS], rows[R_KLEN], rows[R_VLEN], base, p, count, keep_tombstones,
                 latest_offset, hashes, offs, keep, counts, scratch)


@inner
def _decide_keys(src, offsets, kpos, klen, vlen, base, p, count, keep_tombstones, latest_offset, hashes, offs, keep,
                 counts, scratch):
    """:func:`_decide` with record ``j`` at offset ``base + offsets[j]``, its key ``src[kpos[j]:][:klen[j]]``
    and its value's length ``vlen[j]`` (negative: a tombstone)."""
    latest = _latest_offsets(src, offsets, kpos, klen, base, count, latest_offset, _find_batch(scratch, p), hashes,
                             offs, scratch)
    k = invalid = removed = tombs = 0
    for j in range(count):
        decision = compiled_record_retention(base + offsets[j], latest_offset, klen[j] >= 0, latest[j], vlen[j] < 0,
                                             keep_tombstones)
        if decision == RETAIN:
            keep[k] = j
            k += 1
            if vlen[j] < 0:
                tombs += 1
        elif decision == DROP_NO_KEY:
            invalid += 1
        elif decision == DROP_TOMBSTONE:
            removed += 1
    counts[0], counts[1], counts[2], counts[3] = k, invalid, removed, tombs


@inner
def _new_base(data, p, rows, first, horizon):
    """``MemoryRecordsBuilder``'s base timestamp for the batch at ``p`` rebuilt from record ``first`` on: the
    delete horizon when there is one, else the LogAppendTime stamp or the first retained record's timestamp;
    -1 for the per-batch path (producer state the builder refuses)."""
    pid = be_int(data, p + _PID_AT, 8)
    if pid != -1 and (_be16(data, p + _EPOCH_AT) == -1 or be_int(data, p + _BASE_SEQ_AT, 4) < 0):
        return False, np.int64(0)
    if horizon != NO_OFFSET and horizon >= 0:
        return True, horizon
    if _be16(data, p + _ATTRIBUTES_AT) & V2_TIMESTAMP_TYPE_MASK:
        return True, be_int(data, p + _MAX_TS_AT, 8)
    return True, be_int(data, p + _BASE_TS_AT, 8) + rows[R_TS_DELTA, first]


@inner
def _rebuild(data, p, rows, keep, horizon, dest, q, info):
    """The uncompressed batch at ``p`` with only ``keep`` into ``dest[q:]`` as ``MemoryRecordsBuilder`` writes
    it (CRC left zero): its size, or -1 where the per-batch path must decide."""
    ok, new_base = _new_base(data, p, rows, keep[0], horizon)
    if not ok:
        return -1
    attrs = _be16(data, p + _ATTRIBUTES_AT)
    lat = (attrs & V2_TIMESTAMP_TYPE_MASK) != 0
    max_ts = be_int(data, p + _MAX_TS_AT, 8)
    info[0], info[1] = -1, 1 if lat else 0
    n = rebuild_v2_records(data, rows, keep, be_int(data, p + _BASE_TS_AT, 8), max_ts, new_base,
                           dest[q + RECORD_BATCH_OVERHEAD:], info)
    if n < 0:
        return -1
    for k in range(RECORD_BATCH_OVERHEAD):
        dest[q + k] = data[p + k]
    has_h = horizon != NO_OFFSET and horizon >= 0
    _put_be(dest, q + _LENGTH_AT, RECORD_BATCH_OVERHEAD - LOG_OVERHEAD + n, 4)
    _put_be(dest, q + _CRC_FIELD_AT, 0, 4)
    new_attrs = (attrs & V2_TIMESTAMP_TYPE_MASK) | (V2_DELETE_HORIZON_FLAG_MASK if has_h else 0)
    _put_be(dest, q + _ATTRIBUTES_AT, new_attrs, 2)
    _put_be(dest, q + _BASE_TS_AT, new_base, 8)
    _put_be(dest, q + _MAX_TS_AT, max_ts if lat else info[0], 8)
    _put_be(dest, q + _COUNT_AT, keep.shape[0], 4)
    return RECORD_BATCH_OVERHEAD + n


@inner
def _rebuild_records(data, p, plain, rows, keep, horizon, recs, info):  # recs: the free part of the buffer
    """The retained records of the lz4 batch at ``p`` (read from ``plain``) re-encoded into ``recs`` for the
    caller to compress: their length (``info``: max timestamp, base timestamp), or -1."""
    ok, new_base = _new_base(data, p, rows, keep[0], horizon)
    if not ok:
        return -1
    lat = (_be16(data, p + _ATTRIBUTES_AT) & V2_TIMESTAMP_TYPE_MASK) != 0
    max_ts = be_int(data, p + _MAX_TS_AT, 8)
    info[0], info[1] = -1, 1 if lat else 0
    n = rebuild_v2_records(plain, rows, keep, be_int(data, p + _BASE_TS_AT, 8), max_ts, new_base, recs, info)
    if n >= 0:
        info[0], info[1] = (max_ts if lat else info[0]), new_base
    return n


@inner
def _retains_empty(last, has_producer_id, prm, specials):
    """Whether the batch ending at ``last`` would be kept even when empty (``RETAIN_EMPTY``,
    :func:`~.rules.batch_retention`): an active producer's last batch (its last data offset among
    ``specials``), or the batch that ends where the round's batches must stay (KAFKA-17076).  Such a batch
    is handed back to the per-batch path, which writes its empty header."""
    ends_round = prm[P_RETAIN_AT] != NO_OFFSET and last + 1 == prm[P_RETAIN_AT]
    last_of_producer = has_producer_id and _member(specials, last)
    return compiled_batch_retention(False, has_producer_id, last_of_producer, ends_round) == RETAIN_EMPTY


@inner
def _hand_back(data, p, prm, specials):
    """Whether the plain batch at ``p`` may be kept empty (:func:`_retains_empty`)."""
    last = be_int(data, p + _BASE_OFFSET_AT, 8) + be_int(data, p + _LAST_DELTA_AT, 4)
    return _retains_empty(last, be_int(data, p + _PID_AT, 8) > -1, prm, specials)


@inner
def _note_kept(rows, keep, base, horizon, tombs, stats):
    """The kept tombstones' (offset, horizon) and the largest offset kept."""
    for j in keep:
        if rows[R_VLEN, j] < 0:
            tombs[stats[S_TOMBSTONES], 0], tombs[stats[S_TOMBSTONES], 1] = base + rows[R_OFF_DELTA, j], horizon
            stats[S_TOMBSTONES] += 1
        stats[S_MAX_OFFSET] = max(stats[S_MAX_OFFSET], base + rows[R_OFF_DELTA, j])


@inner
def _count_batch(stats, counts, count, n, written):
    stats[S_MESSAGES_READ] += count
    stats[S_BYTES_READ] += n
    stats[S_MESSAGES_WRITTEN] += counts[0]
    stats[S_BYTES_WRITTEN] += written
    stats[S_INVALID] += counts[1]
    stats[S_TOMBSTONES_REMOVED] += counts[2]


@inner
def _queue(pending, written_rows, stats, recs_end, i, base, max_ts, horizon, count, last_offset):
    """A re-encoded compressed batch (``recs[stats[RECS_POS]:recs_end]``) queued for the caller, at the current
    place in ``dest`` and in ``written`` (its size filled in by the caller)."""
    r, w = stats[S_PENDING], stats[S_WRITTEN]
    pending[r, PD_START], pending[r, PD_END], pending[r, PD_DEST] = stats[S_RECS_POS], recs_end, stats[S_DEST]
    pending[r, PD_INDEX], pending[r, PD_BASE], pending[r, PD_MAX_TS] = i, base, max_ts
    pending[r, PD_HORIZON], pending[r, PD_COUNT], pending[r, PD_WRITTEN] = horizon, count, w
    written_rows[w, 0], written_rows[w, 1], written_rows[w, 2] = -1, last_offset, max_ts
    stats[S_WRITTEN] += 1
    stats[S_PENDING] += 1
    stats[S_RECS_POS] = recs_end


@inner
def _new_header(data, p, dest, q, has_horizon, base_ts, max_ts, count):
    """The header ``MemoryRecordsBuilder`` writes for the batch at ``p`` rebuilt (``dest[q:]``, length and CRC
    left for the caller, who compresses the records after it): attributes its codec, timestamp type and
    transactional bit (and bit 6 with a delete horizon, KIP-534), the new timestamps and count."""
    for k in range(RECORD_BATCH_OVERHEAD):
        dest[q + k] = data[p + k]
    keep = V2_COMPRESSION_CODEC_MASK | V2_TIMESTAMP_TYPE_MASK | V2_TRANSACTIONAL_FLAG_MASK
    attrs = (_be16(data, p + _ATTRIBUTES_AT) & keep) | (V2_DELETE_HORIZON_FLAG_MASK if has_horizon else 0)
    _put_be(dest, q + _ATTRIBUTES_AT, attrs, 2)
    _put_be(dest, q + _BASE_TS_AT, base_ts, 8)
    _put_be(dest, q + _MAX_TS_AT, max_ts, 8)
    _put_be(dest, q + _COUNT_AT, count, 4)
    _put_be(dest, q + _CRC_FIELD_AT, 0, 4)
    return RECORD_BATCH_OVERHEAD


@inner
def _filter_batch(src, data, compressed, start, end, i, p, n, count, prm, hashes, offs, dest, rebuilt, tombs,
                  written_rows, stats, recs, pending, counts, info, scratch):
    """One plain batch whose records are ``src[start:end]`` (``data`` itself, or its decoded lz4 frame when
    ``compressed``): :data:`DONE` (written to ``dest``, or its retained records queued in ``recs``),
    :data:`ROOM` (``recs`` is full) or :data:`HANDBACK`."""
    rows, ok = _scanned(src, start, end, count)
    if not ok:
        return HANDBACK
    now = prm[P_NOW]
    base, base_ts = be_int(data, p + _BASE_OFFSET_AT, 8), be_int(data, p + _BASE_TS_AT, 8)
    has_h = (_be16(data, p + _ATTRIBUTES_AT) & V2_DELETE_HORIZON_FLAG_MASK) != 0
    horizons = prm[P_HORIZON] != 0  # KIP-534 (row cleaner.delete_horizon); before, the segment's mtime rules
    if has_h and not horizons:
        return HANDBACK
    keep_tombstones = compiled_tombstones_retained(has_h, base_ts, now) if horizons else prm[P_LEGACY_TOMBSTONES] != 0
    keep = np.empty(count, np.int64)
    _decide(src, rows, p, count, base, keep_tombstones, prm[P_LATEST_OFFSET], hashes, offs, keep, counts, scratch)
    k, q, written = counts[0], stats[S_DEST], 0
    if k > 0:
        need_h = horizons and compiled_needs_delete_horizon(True, counts[3] > 0, False, has_h)
        horizon = now + prm[P_RETENTION] if need_h else (base_ts if has_h else NO_OFFSET)
        max_ts = be_int(data, p + _MAX_TS_AT, 8)
        if k == count and not need_h:
            copy_bytes(dest, q, data, p, n)
            written = n
        elif compressed:
            r0 = stats[S_RECS_POS]
            if r0 + (end - start) + count * _GROWTH_PER_RECORD > recs.shape[0]:
                return ROOM if r0 > 0 else HANDBACK
            m = _rebuild_records(data, p, src, rows, keep[:k], horizon, recs[r0:], info)
            if m < 0:
                return HANDBACK
            has = horizon != NO_OFFSET and horizon >= 0
            _queue(pending, written_rows, stats, r0 + m, i, info[1], info[0], 1 if has else 0, k,
                   base + be_int(data, p + _LAST_DELTA_AT, 4))
            stats[S_DEST] = q + _new_header(data, p, dest, q, has, info[1], info[0], k)
            _note_kept(rows, keep[:k], base, horizon, tombs, stats)
            _count_batch(stats, counts, count, n, 0)
            return DONE
        else:
            written = _rebuild(data, p, rows, keep[:k], horizon, dest, q, info)
            if written < 0:
                return HANDBACK
            rebuilt[stats[S_REBUILT], 0], rebuilt[stats[S_REBUILT], 1] = q, q + written
            stats[S_REBUILT] += 1
            max_ts = be_int(dest, q + _MAX_TS_AT, 8)
        w = stats[S_WRITTEN]
        written_rows[w, 0], written_rows[w, 1] = written, base + be_int(data, p + _LAST_DELTA_AT, 4)
        written_rows[w, 2] = max_ts
        stats[S_WRITTEN] += 1
        _note_kept(rows, keep[:k], base, horizon, tombs, stats)
    _count_batch(stats, counts, count, n, written)
    stats[S_DEST] = q + written
    return DONE


@inner
def _filter_legacy_entry(data, p, n, i, prm, specials, hashes, offs, dest, tombs, written_rows, stats, recs, pending,
                         inner, istart, iend, counts, info, scratch):
    if prm[P_LEGACY] == 0:
        return HANDBACK
    last = be_int(data, p + _LEGACY_OFFSET_AT, 8)
    if _retains_empty(last, False, prm, specials):
        return HANDBACK
    where, start, end = _legacy_area(data, p, n, i, inner, istart, iend)
    if where < 0:
        return HANDBACK
    if where == 0:
        return _filter_legacy(data, data, False, start, end, i, p, n, prm, hashes, offs, dest, tombs, written_rows,
                              stats, recs, pending, counts, info, scratch)
    return _filter_legacy(inner, data, True, start, end, i, p, n, prm, hashes, offs, dest, tombs, written_rows, stats,
                          recs, pending, counts, info, scratch)


@kernel
def filter_run(data, pos, size, i0, i1, prm, specials, hashes, offs, dest, rebuilt, tombs, written_rows, stats, plain,
               recs, pending, inner, istart, iend, seen_batches, seen_slots, seen_state, place):
    """``filterTo`` of the batches ``pos[i0:i1]`` into ``dest`` from ``stats[DEST]``: (index, :data:`DONE` /
    :data:`HANDBACK` / :data:`ROOM`).  ``rebuilt`` gets the (start, end) of each re-encoded batch (its
    CRC to write), ``tombs`` each kept tombstone's (offset, delete horizon), ``written`` each batch
    written's (size, last offset, max timestamp), what ``LogSegment.append`` indexes; ``plain``: room for
    an lz4 batch's records, ``recs`` for those retained when some go, listed in ``pending`` (the caller
    compresses them and puts them in place: :data:`ROOM` when ``recs`` is full)."""
    scratch = (np.empty(16, np.uint64), np.empty(4, np.uint64), np.empty(16, np.uint8), seen_batches, seen_slots,
               seen_state, place, np.empty(16, np.uint64), np.empty(4, np.uint64))
    counts, info = np.zeros(4, np.int64), np.zeros(2, np.int64)
    for i in range(i0, i1):
        p, n = pos[i], size[i]
        if data[p + _MAGIC_BYTE_AT] < MAGIC_VALUE_V2:
            code = _filter_legacy_entry(data, p, n, i, prm, specials, hashes, offs, dest, tombs, written_rows, stats,
                                        recs, pending, inner, istart, iend, counts, info, scratch)
            if code != DONE:
                return i, code
            continue
        count = _plain_count(data, p, n, prm[P_MAX_RECORDS])
        if count < 0 or _hand_back(data, p, prm, specials):
            return i, HANDBACK
        where, start, end = _records_area(data, p, n, plain)
        if where < 0:
            return i, HANDBACK
        if where == 0:
            code = _filter_batch(data, data, False, start, end, i, p, n, count, prm, hashes, offs, dest, rebuilt,
                                 tombs, written_rows, stats, recs, pending, counts, info, scratch)
        else:
            code = _filter_batch(plain, data, True, start, end, i, p, n, count, prm, hashes, offs, dest, rebuilt,
                                 tombs, written_rows, stats, recs, pending, counts, info, scratch)
        if code != DONE:
            return i, code
    return i1, DONE


# --------------------------------------------------------------------------------------------- v0/v1 entries
@inner
def _legacy_rows(src, start, end, data, p, compressed):
    """The messages of the v0/v1 entry at ``p``: a wrapper's inner messages (its value decoded into
    ``src[start:end]``, ``decode_legacy_inner``) or a plain message itself; (rows, count), count <= 0
    for the per-batch path."""
    magic = data[p + _MAGIC_BYTE_AT]
    rows = np.empty((fast.N_FIELDS, (end - start) // MIN_LEGACY_ENTRY + 1), np.int64)
    if not compressed:
        return rows, decode_legacy_inner(src, start, end, 0, 0, NO_TIMESTAMP, 0, 0, 0, rows, True)
    ts_type = -1
    ts = NO_TIMESTAMP
    if magic == 1:
        ts_type = 1 if data[p + _LEGACY_ATTRS_AT] & LEGACY_TIMESTAMP_TYPE_MASK else 0
        ts = be_int(data, p + _LEGACY_TS_AT, 8)
    return rows, decode_legacy_inner(src, start, end, magic, be_int(data, p + _LEGACY_OFFSET_AT, 8), ts, ts_type,
                                     0, 0, rows, True)


@inner
def _legacy_area(data, p, n, i, inner, istart, iend):
    """Where the v0/v1 entry ``i`` at ``p`` has its messages: (0, p, p + n) itself when plain, (1, start, end)
    in ``inner`` for a wrapper the caller decoded, (-1, 0, 0) otherwise."""
    if data[p + _LEGACY_ATTRS_AT] & LEGACY_COMPRESSION_CODEC_MASK == 0:
        return 0, p, p + n
    if istart[i] < 0:
        return -1, 0, 0
    return 1, istart[i], iend[i]


@inner
def _map_legacy(src, rows, p, count, start_offset, max_entries, hashes, offs, state, stats, scratch):
    return _map_keys(src, rows[fast.F_OFFSET], rows[fast.F_KEY_POS], rows[fast.F_KEY_LEN], np.int64(0), p, count,
                     start_offset, max_entries, hashes, offs, state, stats, scratch)


@inner
def _decide_legacy(src, rows, p, count, keep_tombstones, latest_offset, hashes, offs, keep, counts, scratch):
    """:func:`_decide` over ``decode_legacy_inner``'s rows."""
    _decide_keys(src, rows[fast.F_OFFSET], rows[fast.F_KEY_POS], rows[fast.F_KEY_LEN], rows[fast.F_VALUE_LEN],
                 np.int64(0), p, count, keep_tombstones, latest_offset, hashes, offs, keep, counts, scratch)


@inner
def _rebuild_legacy_into(src, data, p, rows, keep, recs, info):
    """``rebuild_legacy`` in compiled form: the retained inner messages re-offset (v1: relative to the
    first retained, v0: absolute) into ``recs``; their length (``info``: wrapper offset, timestamp), or -1
    where ``MemoryRecordsBuilder`` would write differently or refuse (see ``rebuild_legacy``)."""
    magic = data[p + _MAGIC_BYTE_AT]
    lat = magic == 1 and (data[p + _LEGACY_ATTRS_AT] & LEGACY_TIMESTAMP_TYPE_MASK) != 0
    lat_ts = be_int(data, p + _LEGACY_TS_AT, 8) if lat else NO_TIMESTAMP
    inner_attrs = LEGACY_TIMESTAMP_TYPE_MASK if lat else 0
    base = rows[fast.F_OFFSET, keep[0]]
    starts, ends, crcs = np.empty(keep.shape[0], np.int64), np.empty(keep.shape[0], np.int64), \
        np.empty(keep.shape[0], np.uint32)
    q, last, max_ts = 0, np.int64(0), np.int64(NO_TIMESTAMP)
    for j in range(keep.shape[0]):
        r = keep[j]
        off, t = rows[fast.F_OFFSET, r], rows[fast.F_TIMESTAMP, r]
        pos, n = rows[fast.F_RECORD_POS, r], rows[fast.F_SIZE, r]
        if (rows[fast.F_MAGIC, r] != magic or rows[fast.F_ATTRIBUTES, r] != inner_attrs or (j > 0 and off <= last)
                or (t < 0 and t != NO_TIMESTAMP) or (lat and rows[fast.F_STORED_TIMESTAMP, r] != lat_ts)):
            return -1
        last = off
        t = lat_ts if lat else t
        if magic > 0 and t > max_ts:
            max_ts = t
        _put_be(recs, q, off - base if magic > 0 else off, 8)
        copy_bytes(recs, q + _LEGACY_OFFSET_END, src, pos + _LEGACY_OFFSET_END, n - _LEGACY_OFFSET_END)
        starts[j], ends[j] = pos + _MAGIC_BYTE_AT, pos + n
        q += n
    crc32_span_range(src, starts, ends, 0, keep.shape[0], crcs)
    for j in range(keep.shape[0]):
        if crcs[j] != stored_legacy_crc(src, rows[fast.F_RECORD_POS, keep[j]]):
            return -1
    info[0], info[1] = last, lat_ts if lat else max_ts
    return q


@inner
def _filter_legacy(src, data, compressed, start, end, i, p, n, prm, hashes, offs, dest, tombs, written_rows, stats,
                   recs, pending, counts, info, scratch):
    """One v0/v1 entry (``filter_legacy`` / ``filter_batch``): :data:`DONE` (a rebuilt wrapper's messages
    queued in ``recs``), :data:`ROOM` or :data:`HANDBACK`."""
    rows, count = _legacy_rows(src, start, end, data, p, compressed)
    if count <= 0:
        return HANDBACK
    keep = np.empty(count, np.int64)
    _decide_legacy(src, rows, p, count, prm[P_LEGACY_TOMBSTONES] != 0, prm[P_LATEST_OFFSET], hashes, offs, keep,
                   counts, scratch)
    k, q, written = counts[0], stats[S_DEST], 0
    magic = data[p + _MAGIC_BYTE_AT]
    if k > 0:
        same = True
        for r in range(count):
            same = same and rows[fast.F_MAGIC, r] == magic
        if k == count and same:
            copy_bytes(dest, q, data, p, n)
            written = n
            w = stats[S_WRITTEN]
            written_rows[w, 0], written_rows[w, 1] = n, be_int(data, p + _LEGACY_OFFSET_AT, 8)
            written_rows[w, 2] = be_int(data, p + _LEGACY_TS_AT, 8) if magic == 1 else NO_TIMESTAMP
            stats[S_WRITTEN] += 1
        else:
            r0 = stats[S_RECS_POS]
            if r0 + (end - start) > recs.shape[0]:
                return ROOM if r0 > 0 else HANDBACK
            m = _rebuild_legacy_into(src, data, p, rows, keep[:k], recs[r0:], info) if compressed else -1
            if m < 0:
                return HANDBACK
            _queue(pending, written_rows, stats, r0 + m, i, info[0], info[1], 0, k, info[0])
        for j in keep[:k]:
            if rows[fast.F_VALUE_LEN, j] < 0:
                tombs[stats[S_TOMBSTONES], 0], tombs[stats[S_TOMBSTONES], 1] = rows[fast.F_OFFSET, j], NO_OFFSET
                stats[S_TOMBSTONES] += 1
            stats[S_MAX_OFFSET] = max(stats[S_MAX_OFFSET], rows[fast.F_OFFSET, j])
    _count_batch(stats, counts, count, n, written)
    stats[S_DEST] = q + written
    return DONE


# --------------------------------------------------------------------------------------------- callers
_local = threading.local()
_NO_VALUES = (np.empty(0, np.uint8), np.empty(0, np.int64), np.empty(0, np.int64))


def _scratch() -> tuple[np.ndarray, np.ndarray]:
    """This thread's room for an lz4 batch's records and for those retained (made once per thread)."""
    if not hasattr(_local, "scratch"):
        _local.scratch = (np.empty(PLAIN_ROOM, np.uint8), np.empty(dest_capacity(PLAIN_ROOM), np.uint8))
    return _local.scratch


class Spans:
    """The whole batches of ``data`` as the walker finds them (``MemoryRecords.batches``' rules): their
    positions, sizes and ends as arrays, stepped by the walker's compiled mirror
    (:func:`~kafkafmt.records.fast.kernels.memory_spans`) and, where that stops before the end, by the
    walker itself.  A walk that raises keeps the batches before and the error (``error``), for the
    caller to raise where Kafka would."""

    def __init__(self, data):
        self.data = data
        self.error: Exception | None = None
        arr = np.frombuffer(data, np.uint8)
        room = min(len(data) // MIN_LEGACY_ENTRY + 1, _SPANS_PER_STEP)  # the smallest entry a walk can step over
        pos_parts, size_parts, stop = [], [], 0
        while True:
            pos, size = np.empty(room, np.int64), np.empty(room, np.int64)
            n, stop = memory_spans(arr, stop, len(data), pos, size)
            pos_parts.append(pos[:n])
            size_parts.append(size[:n])
            if n < room:
                break
        pos, size = np.concatenate(pos_parts), np.concatenate(size_parts)
        n = len(pos)
        rest = []
        try:
            for span in BatchWalker(data, stop, len(data), rules=MEMORY):
                rest.append((span.position, span.size))
        except KafkaFmtError as e:
            self.error = e
        if rest:
            pos = np.concatenate([pos[:n], np.array([p for p, _ in rest], np.int64)])
            size = np.concatenate([size[:n], np.array([s for _, s in rest], np.int64)])
            n = len(pos)
        self.pos, self.size = pos[:n], size[:n]
        self.ends = self.pos + self.size

    def __len__(self) -> int:
        return len(self.pos)

    def batch(self, i: int):
        """The batch view of the ``i``-th batch."""
        return read_batch(self.data, int(self.pos[i]), int(self.ends[i]))

    def fitting(self, i: int, limit: int) -> int:
        """The index after the last batch from ``i`` on that ends at or before ``limit``."""
        return max(i, int(np.searchsorted(self.ends, limit, side="right")))


@kernel
def legacy_value_spans(data, positions, out):
    """``out[k]`` = (position, length) of the value of the v0/v1 entry at ``positions[k]`` (``LegacyRecord``'s
    layout, checked as ``legacy_entry`` checks it), or (-1, -1) for a malformed entry or a null value."""
    for k in range(positions.shape[0]):
        end, _, _, vpos, vlen = legacy_entry(data, positions[k], data.shape[0])
        if end < 0 or vlen < 0:
            out[k, 0], out[k, 1] = -1, -1
        else:
            out[k, 0], out[k, 1] = vpos, vlen


def legacy_values(spans: Spans, arr: np.ndarray, i: int, j: int, *, keep=None, take=None,
                  place: tuple[int, int] = (0, 0)) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The values of the compressed v0/v1 wrappers among batches ``i`` to ``j - 1``, decompressed as
    ``LegacyRecordBatch.decompressed_value`` does (null values, zstd, errors and sets it would count
    entry by entry are left out: the per-batch path then decides): (values joined, start and end of
    batch ``k``'s, -1 where there is none).  ``keep`` / ``take``: an
    :class:`~kafkafmt.log.cleaner.offset_map.InflatedValues` the values go into (the map pass) or come from when
    there (the filter pass), by their place in the log (``place``: the segment's base offset and where
    ``spans``' data starts in it)."""
    istart = np.full(len(spans), -1, np.int64)
    iend = np.full(len(spans), -1, np.int64)
    pos = spans.pos[i:j]
    attrs = arr[pos + _LEGACY_ATTRS_AT] & LEGACY_COMPRESSION_CODEC_MASK
    wrappers = np.flatnonzero((arr[pos + _MAGIC_BYTE_AT] < MAGIC_VALUE_V2) & (attrs != 0) & (attrs < _ZSTD))
    if not len(wrappers):
        return _NO_VALUES[0], istart, iend
    where = np.empty((len(wrappers), 2), np.int64)
    legacy_value_spans(arr, pos[wrappers], where)
    limit = current_limits().max_records_per_batch
    view, parts, at = memoryview(spans.data), [], 0
    base, start = place
    for w, (vpos, vlen) in zip(wrappers.tolist(), where.tolist()):
        if vpos < 0:
            continue
        p = int(pos[w])
        value = take.take((base, start + p)) if take is not None else None
        if value is None:
            try:
                value = decompress_buffer(int(arr[p + _LEGACY_ATTRS_AT]) & LEGACY_COMPRESSION_CODEC_MASK,
                                          view[vpos:vpos + vlen], magic=int(arr[p + _MAGIC_BYTE_AT]),
                                          max_bytes=DEFAULT_MAX_DECOMPRESSED_BYTES)
            except KafkaFmtError:
                continue
            if keep is not None:
                keep.keep((base, start + p), value)
        if len(value) // MIN_LEGACY_ENTRY > limit:
            continue
        parts.append(value)
        istart[i + w], iend[i + w] = at, at + len(value)
        at += len(value)
    inner = np.frombuffer(b"".join(parts), np.uint8) if parts else _NO_VALUES[0]
    return inner, istart, iend


#: columns of :func:`producer_rows`: what ``ProducerStateManager`` takes from a batch
PR_PID, PR_EPOCH, PR_CONTROL, PR_TXN, PR_BASE, PR_LAST, PR_MAX_TS = range(7)
N_PRODUCER_COLUMNS = 7
#: columns of :func:`replay_producers`' output: a producer's state after the last of its batches
PS_PID, PS_EPOCH, PS_LAST_DATA, PS_TS, PS_TXN_FIRST = range(5)


@kernel
def _producer_header_rows(data, pos, out):
    for k in range(pos.shape[0]):
        p = pos[k]
        attrs = _be16(data, p + _ATTRIBUTES_AT)
        base = be_int(data, p + _BASE_OFFSET_AT, 8)
        out[k, PR_PID], out[k, PR_EPOCH] = be_int(data, p + _PID_AT, 8), _be16(data, p + _EPOCH_AT)
        out[k, PR_CONTROL] = 1 if attrs & V2_CONTROL_FLAG_MASK else 0
        out[k, PR_TXN] = 1 if attrs & V2_TRANSACTIONAL_FLAG_MASK else 0
        out[k, PR_BASE], out[k, PR_LAST] = base, base + be_int(data, p + _LAST_DELTA_AT, 4)
        out[k, PR_MAX_TS] = be_int(data, p + _MAX_TS_AT, 8)


def producer_rows(data) -> np.ndarray:
    """The v2 batches of ``data`` that carry a producer id (``hasProducerId``), in order, as rows of
    (producer id, epoch, control, transactional, base offset, last offset, max timestamp): every header
    read in one compiled call; a v2 batch too short for its header is read as a batch, which says what
    is wrong."""
    spans = Spans(data)
    if spans.error is not None:
        raise spans.error
    arr = np.frombuffer(data, np.uint8)
    v2 = arr[spans.pos + _MAGIC_BYTE_AT].astype(np.int8) >= MAGIC_VALUE_V2
    for p, e in zip(spans.pos[v2 & (spans.size < RECORD_BATCH_OVERHEAD)].tolist(),
                    spans.ends[v2 & (spans.size < RECORD_BATCH_OVERHEAD)].tolist()):
        read_batch(data, p, e).producer_id  # raises as the batch reader does
    pos = spans.pos[v2]
    rows = np.empty((len(pos), N_PRODUCER_COLUMNS), np.int64)
    _producer_header_rows(arr, pos, rows)
    return rows[rows[:, PR_PID] > -1]


@kernel
def replay_producers(rows, order, out):
    """``ProducerStateManager``'s replay of ``rows`` (:func:`producer_rows`, taken in ``order``: by producer
    id, each producer's batches in log order): each producer's epoch, last data offset (-1 after a
    marker of another epoch), last timestamp and first offset of its open transaction (:data:`NO_OFFSET`:
    none) into ``out``; returns how many producers."""
    n, i = 0, 0
    while i < order.shape[0]:
        first = rows[order[i]]
        pid, epoch, data_offset, ts, txn = first[PR_PID], first[PR_EPOCH], np.int64(-1), np.int64(-1), NO_OFFSET
        while i < order.shape[0] and rows[order[i], PR_PID] == pid:
            b = rows[order[i]]
            if b[PR_CONTROL]:
                if epoch != b[PR_EPOCH]:
                    data_offset = -1
                epoch, ts, txn = b[PR_EPOCH], b[PR_MAX_TS], NO_OFFSET
            else:
                if b[PR_TXN] and txn == NO_OFFSET:
                    txn = b[PR_BASE]
                epoch, data_offset, ts = b[PR_EPOCH], b[PR_LAST], b[PR_MAX_TS]
            i += 1
        out[n, PS_PID], out[n, PS_EPOCH], out[n, PS_LAST_DATA], out[n, PS_TS], out[n, PS_TXN_FIRST] = \
            pid, epoch, data_offset, ts, txn
        n += 1
    return n


def map_segment_runs(data, arr, spans: Spans, omap, start: int, max_entries: int, stats, map_batch,
                     place: tuple[int, int] = (0, 0)) -> bool:
    """``buildOffsetMapForSegment`` over ``spans`` of ``data`` (``arr``: its bytes as uint8): plain runs by
    :func:`map_run`, any other batch by ``map_batch(batch)`` (True when the map filled).  True when the
    map filled.  ``place``: the segment's base offset and where ``data`` starts in it (the filter pass
    finds the digests computed here by that place)."""
    counters = np.zeros(N_MAP_STATS, np.int64)
    max_records = current_limits().max_records_per_batch
    plain, _ = _scratch()
    here = np.array(place, np.int64)
    i = 0
    try:
        while i < len(spans):
            window = spans.fitting(i, int(spans.pos[i]) + MAP_WINDOW) if i < len(spans) else i
            window = max(window, i + 1)
            inner, istart, iend = legacy_values(spans, arr, i, window, keep=omap.inflated, place=place)
            while i < window:
                i, code = map_run(arr, spans.pos, spans.size, i, window, start, max_entries, max_records, omap.hashes,
                                  omap.offsets, omap.state, counters, plain, inner, istart, iend, *omap.seen,
                                  here)
                if code == FULL:
                    return True
                if code == HANDBACK:
                    if map_batch(spans.batch(i)):
                        return True
                    i += 1
    finally:
        stats.map_messages_read += int(counters[M_MESSAGES_READ])
        stats.map_bytes_read += int(counters[M_BYTES_READ])
    if spans.error is not None:
        raise spans.error
    return False


class FilterRun:
    """``filterTo`` over chunks of batches for one :class:`~kafkafmt.log.cleaner.filter.SegmentFilter`:
    plain runs by :func:`filter_run`, any other batch by ``filter_batch(batch)`` -> (bytes, max offset)."""

    def __init__(self, flt, data, arr, filter_batch, place: tuple[int, int] = (0, 0)):
        self.flt, self.data, self.arr, self.filter_batch = flt, data, arr, filter_batch
        self.place = np.array(place, np.int64)  # the segment's base offset, where data starts in it
        self.prm = np.zeros(N_PARAMS, np.int64)
        self.prm[P_NOW], self.prm[P_RETENTION] = flt.now, flt.delete_retention_ms
        retain_at = flt.retain_batch_ending_at
        self.prm[P_RETAIN_AT] = NO_OFFSET if retain_at is None else retain_at
        self.prm[P_LATEST_OFFSET] = flt.map.latest_offset
        self.prm[P_MAX_RECORDS] = current_limits().max_records_per_batch
        # v0/v1 entries compiled unless the line rewrites them as v2 (cleaner.legacy_to_v2) or rebuilds their
        # wrappers in the topic's format (cleaner.legacy_rebuild_magic) or every wrapper (cleaner.keep_whole_wrapper)
        self.prm[P_LEGACY] = 0 if flt.legacy_to_v2 or flt.rebuild_magic is not None or flt.recompress_kept else 1
        self.prm[P_LEGACY_TOMBSTONES] = 1 if flt.retain_legacy_deletes else 0
        # v2 tombstones by their batch's delete horizon (KIP-534), else by the segment's mtime (row
        # cleaner.delete_horizon)
        self.prm[P_HORIZON] = 1 if flt.delete_horizon else 0
        self.specials = np.array(sorted({r.last_data_offset for r in flt.last_records.values()
                                         if r.last_data_offset is not None}), dtype=np.int64)
        self.plain, self.recs = _scratch()

    def chunk(self, spans: Spans, i: int, j: int) -> tuple[list, int, list]:
        """The bytes kept of the batches ``i`` to ``j - 1`` (in order: bytes, or views of a buffer this call
        made for them), the largest offset kept, and each batch written's [size, last offset, max
        timestamp]."""
        nbytes = int(spans.ends[j - 1] - spans.pos[i])
        dest, used = np.empty(dest_capacity(nbytes), np.uint8), 0
        rebuilt = np.empty((j - i, 2), np.int64)
        tombs = np.empty((nbytes // _MIN_RECORD + 1, 2), np.int64)
        written = np.empty((j - i, 3), np.int64)
        pending = np.empty((j - i, N_PENDING), np.int64)
        out, meta, max_offset, k = [], [], -1, i
        inner, istart, iend = legacy_values(spans, self.arr, i, j, take=self.flt.map.inflated,
                                            place=tuple(self.place.tolist())) if self.prm[P_LEGACY] else _NO_VALUES
        while k < j:
            stats = np.zeros(N_STATS, np.int64)
            stats[S_MAX_OFFSET] = -1
            # what is written goes after what the views already out point at (a new buffer when short)
            need = dest_capacity(int(spans.ends[j - 1] - spans.pos[k]))
            if len(dest) - used < need:
                dest, used = np.empty(need, np.uint8), 0
            room = dest[used:]
            k, code = filter_run(self.arr, spans.pos, spans.size, k, j, self.prm, self.specials, self.flt.map.hashes,
                                 self.flt.map.offsets, room, rebuilt, tombs, written, stats, self.plain, self.recs,
                                 pending, inner, istart, iend, *self.flt.map.seen,
                                 self.place)
            out.extend(self._collect(spans, room, rebuilt, tombs, written, pending, stats))
            used += int(stats[S_DEST])
            meta.extend(written[:stats[S_WRITTEN]].tolist())
            max_offset = max(max_offset, int(stats[S_MAX_OFFSET]))
            if code == HANDBACK:
                kept, m = self.filter_batch(spans.batch(k))
                if kept:
                    out.append(kept)
                    meta.extend([b.size_in_bytes, b.last_offset, b.max_timestamp]
                                for b in MemoryRecords(kept).batches())
                    max_offset = max(max_offset, m)
                k += 1
        return out, max_offset, meta

    def _compressed(self, spans, row, view) -> bytes:
        """A queued batch: its re-encoded records (``recs``) compressed, after the header the run wrote in
        ``dest`` (v2) or in a wrapper (v0/v1)."""
        records = self.recs[row[PD_START]:row[PD_END]].tobytes()
        p = int(spans.pos[row[PD_INDEX]])
        if self.arr[p + _MAGIC_BYTE_AT] < MAGIC_VALUE_V2:
            return encode_rebuilt_wrapper(int(self.arr[p + _MAGIC_BYTE_AT]), int(self.arr[p + _LEGACY_ATTRS_AT]),
                                          row[PD_BASE], row[PD_MAX_TS], records)
        at = row[PD_DEST]
        codec = int(self.arr[p + _ATTRIBUTES_AT + 1]) & V2_COMPRESSION_CODEC_MASK
        payload = compress(codec, records, magic=MAGIC_VALUE_V2)
        out = bytearray(view[at:at + RECORD_BATCH_OVERHEAD])
        out += payload
        DEFAULT_BATCH.put(out, 0, "length", len(out) - LOG_OVERHEAD)
        DEFAULT_BATCH.put(out, 0, "crc", crc32c(memoryview(out)[DEFAULT_BATCH_CRC_START:]))
        return bytes(out)

    def _collect(self, spans, dest, rebuilt, tombs, written, pending, stats) -> list[bytes]:
        """One run's output in order (``dest`` with the queued batches compressed into their places), its
        CRCs written and its statistics added."""
        view = memoryview(dest)
        for s, e in rebuilt[:stats[S_REBUILT]].tolist():
            DEFAULT_BATCH.put(view, s, "crc", crc32c(view[s + DEFAULT_BATCH_CRC_START:e]))
        st = self.flt.stats
        st.messages_read += int(stats[S_MESSAGES_READ])
        st.bytes_read += int(stats[S_BYTES_READ])
        st.messages_written += int(stats[S_MESSAGES_WRITTEN])
        st.bytes_written += int(stats[S_BYTES_WRITTEN])
        st.invalid_messages += int(stats[S_INVALID])
        st.tombstones_removed += int(stats[S_TOMBSTONES_REMOVED])
        st.tombstones_kept.extend((o, None if h == NO_OFFSET else h) for o, h in tombs[:stats[S_TOMBSTONES]].tolist())
        pieces, at = [], 0
        for row in pending[:stats[S_PENDING]].tolist():
            if row[PD_DEST] > at:
                pieces.append(view[at:row[PD_DEST]])
                at = row[PD_DEST]
            kept = self._compressed(spans, row, view)
            if self.arr[int(spans.pos[row[PD_INDEX]]) + _MAGIC_BYTE_AT] >= MAGIC_VALUE_V2:
                at += RECORD_BATCH_OVERHEAD  # the header the run wrote
            written[row[PD_WRITTEN], 0] = len(kept)
            st.bytes_written += len(kept)
            pieces.append(kept)
        if stats[S_DEST] > at:
            pieces.append(view[at:stats[S_DEST]])
        return pieces
