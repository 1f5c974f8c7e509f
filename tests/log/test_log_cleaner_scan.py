"""The cleaner's bulk v2 read (kafkafmt.log.cleaner.scan) against its reference decoder and builder.

``scan_v2`` must see each record's offset, key and value presence as ``RecordBatch.records()`` does, and
``rebuild_v2`` must write the bytes :func:`~kafkafmt.log.cleaner.filter.rebuild_batch` writes (the
builder checked against Kafka's cleaner in test_log_cleaner_vs_kafka.py) for any retained subset, with
or without a delete horizon, for every codec and both timestamp types; where it cannot (headers) it
says so and the reference runs.
"""
from __future__ import annotations

import hashlib
import random

import numpy as np
import pytest

from kafkafmt.constants import CompressionType, TimestampType
from kafkafmt.errors import KafkaFmtError
from kafkafmt.log.cleaner.filter import rebuild_batch
from kafkafmt.log.cleaner.scan import R_HCOUNT, as_array, digests, rebuild_legacy, rebuild_v2, scan_legacy, scan_v2
from kafkafmt.records import MemoryRecords, MemoryRecordsBuilder


def _batch(rng: random.Random, codec: str, ts_type: TimestampType, headers: bool = False, pid: int = -1) -> bytes:
    base = rng.randrange(0, 10**6)
    b = MemoryRecordsBuilder(2, CompressionType.from_name(codec), ts_type, base, partition_leader_epoch=3,
                             log_append_time=1_700_000_009_999 if ts_type == TimestampType.LOG_APPEND_TIME else -1,
                             producer_id=pid, producer_epoch=0 if pid >= 0 else -1, base_sequence=7 if pid >= 0 else -1)
    off = base
    for j in range(rng.randrange(1, 30)):
        off += rng.randrange(1, 3)  # gaps, as a cleaned batch has
        ts = 1_700_000_000_000 + rng.randrange(-5000, 5000)  # not in order: the first is not the smallest
        key = None if rng.random() < 0.05 else b"k%d" % rng.randrange(1000) * rng.randrange(1, 40)
        value = None if rng.random() < 0.2 else bytes(rng.randrange(256) for _ in range(rng.randrange(0, 300)))
        hdrs = [("h", b"x")] if headers and rng.random() < 0.5 else []
        b.append_with_offset(off, ts, key, value, hdrs)
    return b.build()


@pytest.mark.parametrize("codec", ["none", "gzip", "lz4", "zstd"])
@pytest.mark.parametrize("ts_type", [TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME])
def test_rebuild_v2_equals_the_builder(codec, ts_type):
    rng = random.Random(hash((codec, int(ts_type))) & 0xFFFF)
    for n in range(40):
        data = _batch(rng, codec, ts_type, pid=7 if n % 3 == 0 else -1)
        (b,) = MemoryRecords(data).batches()
        scan = scan_v2(b, as_array(data), 1 << 30)
        assert scan is not None
        records = list(b.records())
        assert scan.offsets == [r.offset for r in records]
        assert digests(scan) == [None if r.key is None else hashlib.md5(r.key).digest()
                                 for r in records]
        assert [v >= 0 for v in scan.vlen] == [r.value is not None for r in records]
        for _ in range(5):
            keep = sorted(rng.sample(range(len(records)), rng.randrange(1, len(records) + 1)))
            horizon = rng.choice([None, 1_700_000_100_000])
            want = rebuild_batch(b, [records[i] for i in keep], horizon)
            assert rebuild_v2(b, scan, keep, horizon) == want


def test_headers_and_odd_batches_go_to_the_reference():
    rng = random.Random(3)
    data = _batch(rng, "none", TimestampType.CREATE_TIME, headers=True)
    (b,) = MemoryRecords(data).batches()
    scan = scan_v2(b, as_array(data), 1 << 30)
    with_headers = [i for i, h in enumerate(scan.rows[R_HCOUNT].tolist()) if h]
    assert with_headers and rebuild_v2(b, scan, with_headers, None) is None
    bad = bytearray(data)
    bad[57:61] = (b.count + 1).to_bytes(4, "big")  # recordsCount one too many: the reference raises
    (b,) = MemoryRecords(bytes(bad)).batches()
    with pytest.raises(KafkaFmtError):
        list(b.records())
    assert scan_v2(b, as_array(bytes(bad)), 1 << 30) is None


@pytest.mark.parametrize("magic,codec,ts_type", [(0, "gzip", TimestampType.CREATE_TIME), (1, "gzip", TimestampType.CREATE_TIME),
                                                 (1, "lz4", TimestampType.LOG_APPEND_TIME),
                                                 (1, "snappy", TimestampType.CREATE_TIME)])
def test_rebuild_legacy_equals_the_builder(magic, codec, ts_type):
    rng = random.Random(magic * 10 + len(codec))
    for _ in range(30):
        base = rng.randrange(0, 10**6)
        lat = 1_700_000_009_999 if ts_type == TimestampType.LOG_APPEND_TIME else -1
        b = MemoryRecordsBuilder(magic, CompressionType.from_name(codec), ts_type, base, log_append_time=lat)
        off = base
        for _ in range(rng.randrange(1, 30)):
            off += rng.randrange(1, 3)
            key = None if rng.random() < 0.05 else b"k%d" % rng.randrange(1000)
            value = None if rng.random() < 0.2 else bytes(rng.randrange(256) for _ in range(rng.randrange(0, 200)))
            b.append_with_offset(off, 1_700_000_000_000 + rng.randrange(-5000, 5000), key, value)
        data = b.build()
        (batch,) = MemoryRecords(data).batches()
        scan = scan_legacy(batch, 1 << 30)
        records = list(batch.records())
        assert scan.offsets == [r.offset for r in records]
        assert [v >= 0 for v in scan.vlen] == [r.value is not None for r in records]
        for _ in range(5):
            keep = sorted(rng.sample(range(len(records)), rng.randrange(1, len(records) + 1)))
            assert rebuild_legacy(batch, scan, keep) == rebuild_batch(batch, [records[i] for i in keep], None)


def test_md5_kernel_equals_hashlib():
    """The offset map's digests (``SkimpyOffsetMap`` hashes keys with MD5) at every padding boundary."""
    import numpy as np

    from kafkafmt.log.cleaner.scan import md5_digests
    rng = random.Random(5)
    keys = [bytes(rng.randrange(256) for _ in range(n)) for n in list(range(0, 140)) + [1000, 4096]]
    buf = b"".join(keys)
    pos = [sum(len(k) for k in keys[:i]) for i in range(len(keys))]
    got = md5_digests(np.frombuffer(buf, np.uint8), pos + [0], [len(k) for k in keys] + [-1])
    assert got == [hashlib.md5(k).digest() for k in keys] + [None]


# --------------------------------------------------------------------------------------------- compiled runs
def _segment(n_batches: int, *, pid_every: int = 0, seed: int = 5) -> bytes:
    """Consecutive v2 uncompressed batches (some by an idempotent producer) with repeated keys and tombstones."""
    rng, out, off = random.Random(seed), [], 0
    for n in range(n_batches):
        pid = 9 if pid_every and n % pid_every == 0 else -1
        b = MemoryRecordsBuilder(2, CompressionType.NONE, TimestampType.CREATE_TIME, off, producer_id=pid,
                                 producer_epoch=0 if pid >= 0 else -1, base_sequence=off if pid >= 0 else -1)
        for _ in range(10):
            b.append(1_700_000_000_000 + off, b"k%d" % rng.randrange(30), None if rng.random() < 0.1 else b"v%d" % off)
            off += 1
        out.append(b.build())
    return b"".join(out)


def _filter(omap, **kw):
    from kafkafmt.log.cleaner.filter import CleanedTransactionMetadata, CleanerStats, SegmentFilter
    return SegmentFilter(omap, now=1_700_000_000_000, delete_retention_ms=1000, txn=CleanedTransactionMetadata(),
                         stats=CleanerStats(), **kw)


def test_map_run_maps_plain_batches_in_one_call_and_stops_when_full():
    from kafkafmt.log.cleaner.filter import CleanerStats
    from kafkafmt.log.cleaner.kernels import Spans, map_segment_runs
    from kafkafmt.log.cleaner.offset_map import OffsetMap
    data = _segment(20)
    keys = {r.key: r.offset for r in MemoryRecords(data).records()}
    omap, stats = OffsetMap(24 * 100), CleanerStats()
    handed = []
    assert not map_segment_runs(data, as_array(data), Spans(data), omap, 0, 90, stats, handed.append)
    assert handed == [] and stats.map_messages_read == 200 and stats.map_bytes_read == len(data)
    assert omap.size == len(keys) and all(omap.get(k) == o for k, o in keys.items()) and omap.latest_offset == 199
    small = OffsetMap(24 * 100)
    assert map_segment_runs(data, as_array(data), Spans(data), small, 0, 5, CleanerStats(), handed.append)
    assert small.size == 5  # buildOffsetMapForSegment: the map stops at the key that would not fit


def test_filter_run_hands_back_what_it_must_not_decide():
    """A batch an active producer's state may keep empty goes to the per-batch path; the others are
    decided in the compiled run, with the bytes and statistics of that path."""
    from kafkafmt.log.cleaner.clean import _filter_one
    from kafkafmt.log.cleaner.filter import CleanerStats, LastRecord
    from kafkafmt.log.cleaner.kernels import FilterRun, Spans, map_segment_runs
    from kafkafmt.log.cleaner.offset_map import OffsetMap
    data = _segment(30, pid_every=4)
    arr, spans = as_array(data), Spans(data)
    omap = OffsetMap(24 * 1000)
    map_segment_runs(data, arr, spans, omap, 0, 900, CleanerStats(), lambda b: False)
    last = next(b for b in reversed(list(MemoryRecords(data).batches())) if b.producer_id == 9)
    flt = _filter(omap, last_records={9: LastRecord(last.last_offset, 0)})
    handed = []
    run = FilterRun(flt, data, arr, lambda b: handed.append(b.base_offset) or _filter_one(flt, b, arr))
    out, max_offset, meta = run.chunk(spans, 0, len(spans))
    assert handed == [last.base_offset]
    ref = _filter(omap, last_records={9: LastRecord(last.last_offset, 0)})
    pieces = [_filter_one(ref, b, arr) for b in MemoryRecords(data).batches()]
    assert b"".join(out) == b"".join(p for p, _ in pieces)
    assert max_offset == max(m for _, m in pieces)
    assert meta == [[b.size_in_bytes, b.last_offset, b.max_timestamp] for b in MemoryRecords(b"".join(out)).batches()]
    assert (flt.stats.messages_read, flt.stats.messages_written, flt.stats.tombstones_kept) == \
        (ref.stats.messages_read, ref.stats.messages_written, ref.stats.tombstones_kept)
    assert all(b.is_valid() for b in MemoryRecords(b"".join(out)).batches())  # the CRCs written after the run


@pytest.mark.parametrize("damage", ["none", "trailing", "size", "magic", "v0-entries"])
def test_spans_step_as_the_walker(damage):
    """The compiled MEMORY steps (memory_spans) and the walker going on where they stop: the same batches,
    and the walker's own error where it raises."""
    from kafkafmt.log.cleaner.kernels import Spans
    from kafkafmt.records.walker import MEMORY, BatchWalker
    data = bytearray(_segment(12))
    if damage == "v0-entries":
        legacy = MemoryRecordsBuilder(0, CompressionType.NONE, TimestampType.CREATE_TIME, 500)
        for i in range(5):
            legacy.append(-1, b"k", b"v%d" % i)
        data += legacy.build()
    cut = next(b.position for i, b in enumerate(MemoryRecords(bytes(data)).batches()) if i == 7)
    if damage == "trailing":
        data = data[:-5]
    elif damage == "size":
        data[cut + 8:cut + 12] = (3).to_bytes(4, "big")
    elif damage == "magic":
        data[cut + 16] = 7
    data = bytes(data)
    spans = Spans(data)
    walked, error = [], None
    try:
        walked = [(s.position, s.size) for s in BatchWalker(data, 0, len(data), rules=MEMORY)]
    except KafkaFmtError as e:
        error = e
        walked = [(s.position, s.size) for s in BatchWalker(data, 0, cut, rules=MEMORY)]
    assert list(zip(spans.pos.tolist(), spans.size.tolist())) == walked
    assert (type(spans.error), str(spans.error)) == (type(error), str(error))
    assert (error is not None) == (damage in ("size", "magic"))


@pytest.mark.parametrize("magic,codec", [(0, "none"), (1, "none"), (0, "gzip"), (1, "gzip"), (1, "lz4"), (2, "lz4")])
def test_compiled_runs_take_legacy_entries_and_lz4_batches(magic, codec):
    """v0/v1 entries (plain and wrappers) and lz4 v2 batches are decided in the compiled runs, with the
    bytes and statistics of the per-batch path (which test_log_cleaner_vs_kafka.py checks against Kafka)."""
    from kafkafmt.log.cleaner.clean import _filter_one
    from kafkafmt.log.cleaner.filter import CleanerStats
    from kafkafmt.log.cleaner.kernels import FilterRun, Spans, map_segment_runs
    from kafkafmt.log.cleaner.offset_map import OffsetMap
    rng, parts, off = random.Random(magic * 10 + len(codec)), [], 0
    for n in range(25):
        b = MemoryRecordsBuilder(magic, CompressionType.from_name(codec), TimestampType.CREATE_TIME, off)
        for _ in range(1 if codec == "none" and magic < 2 and n % 2 else 8):
            b.append_with_offset(off, 1_700_000_000_000 + off, b"k%d" % rng.randrange(20),
                                 None if rng.random() < 0.15 else b"v%d" % off)
            off += 1
        parts.append(b.build())
    data = b"".join(parts)
    arr, spans = as_array(data), Spans(data)
    omap = OffsetMap(24 * 1000)
    mapped = []
    map_segment_runs(data, arr, spans, omap, 0, 900, CleanerStats(), lambda b: mapped.append(b) or False)
    flt, handed = _filter(omap, last_records={}), []
    out, max_offset, _ = FilterRun(flt, data, arr, lambda b: handed.append(b) or _filter_one(flt, b, arr)).chunk(
        spans, 0, len(spans))
    assert mapped == [] and handed == []
    ref = _filter(omap, last_records={})
    pieces = [_filter_one(ref, b, arr) for b in MemoryRecords(data).batches()]
    assert b"".join(out) == b"".join(p for p, _ in pieces) and max_offset == max(m for _, m in pieces)
    assert (flt.stats.messages_read, flt.stats.messages_written, flt.stats.bytes_written, flt.stats.tombstones_kept,
            flt.stats.invalid_messages, flt.stats.tombstones_removed) == \
        (ref.stats.messages_read, ref.stats.messages_written, ref.stats.bytes_written, ref.stats.tombstones_kept,
         ref.stats.invalid_messages, ref.stats.tombstones_removed)


def test_spans_of_more_batches_than_one_compiled_step(monkeypatch):
    from kafkafmt.log.cleaner import kernels as cleaner_batches
    monkeypatch.setattr(cleaner_batches, "_SPANS_PER_STEP", 7)
    data = _segment(40)
    assert cleaner_batches.Spans(data).pos.tolist() == [b.position for b in MemoryRecords(data).batches()]


@pytest.mark.parametrize("kept", [0, 5, 45, 1 << 20])
def test_the_filter_reads_the_slots_the_map_pass_put_records_in(monkeypatch, kept):
    """Records whose slot the map pass kept (none, a few batches' worth, all) have their key's latest offset
    read from that slot by the filter pass, the rest hashed and probed: the same bytes either way, each
    kept slot holding its record's key, and the memory bounded by SEEN_RECORDS."""
    from kafkafmt.log.cleaner import offset_map as cleaner_map
    from kafkafmt.log.cleaner.clean import _filter_one
    from kafkafmt.log.cleaner.filter import CleanerStats
    from kafkafmt.log.cleaner.kernels import FilterRun, Spans, map_segment_runs
    monkeypatch.setattr(cleaner_map, "SEEN_RECORDS", kept)
    data = _segment(30)
    arr, spans = as_array(data), Spans(data)
    omap = cleaner_map.OffsetMap(24 * 1000)
    map_segment_runs(data, arr, spans, omap, 0, 900, CleanerStats(), lambda b: False, (4, 0))
    batches, slots, state = omap.seen
    assert len(slots) == kept and int(state[1]) == 10 * int(state[0]) == 10 * (kept // 10 if kept < 300 else 30)
    by_position = {b.position: list(b.records()) for b in MemoryRecords(data).batches()}
    for seg, position, first in batches[:state[0]].tolist():
        assert seg == 4
        for j, r in enumerate(by_position[position]):
            assert slots[first + j] == -1 if r.key is None else omap.hashes[slots[first + j]].tobytes() == \
                hashlib.md5(r.key).digest()
    flt = _filter(omap, last_records={})
    out, _, _ = FilterRun(flt, data, arr, lambda b: _filter_one(flt, b, arr), (4, 0)).chunk(spans, 0, len(spans))
    ref = _filter(omap, last_records={})
    want = b"".join(_filter_one(ref, b, arr)[0] for b in MemoryRecords(data).batches())
    assert b"".join(out) == want
    # the filter did read the kept slots: pointed at an empty slot (offset 0), they keep superseded records
    empty = int(np.flatnonzero((omap.offsets == 0) & ~omap.hashes.any(axis=1))[0])
    slots[:state[1]][slots[:state[1]] >= 0] = empty
    state[2] = 0
    flt = _filter(omap, last_records={})
    out, _, _ = FilterRun(flt, data, arr, lambda b: _filter_one(flt, b, arr), (4, 0)).chunk(spans, 0, len(spans))
    assert (b"".join(out) == want) == (kept < 10)


@pytest.mark.parametrize("budget", [0, 300, 1 << 20])
def test_the_filter_takes_the_wrappers_the_map_pass_inflated(monkeypatch, budget):
    """v0/v1 wrapper values the map pass inflated (none, a few, all: KEPT_INFLATED_BYTES) are taken by the
    filter pass instead of inflated again: each wrapper inflated once where kept, twice where not, the
    same bytes either way."""
    from kafkafmt.log.cleaner import kernels as cleaner_batches
    from kafkafmt.log.cleaner import offset_map as cleaner_map
    from kafkafmt.log.cleaner.clean import _filter_one
    from kafkafmt.log.cleaner.filter import CleanerStats
    rng, parts, off = random.Random(8), [], 0
    for _ in range(20):
        b = MemoryRecordsBuilder(1, CompressionType.GZIP, TimestampType.CREATE_TIME, off)
        for _ in range(6):
            b.append_with_offset(off, 1_700_000_000_000 + off, b"k%d" % rng.randrange(15), b"v%d" % off)
            off += 1
        parts.append(b.build())
    data = b"".join(parts)
    arr, spans = as_array(data), cleaner_batches.Spans(data)
    calls = []
    inflate = cleaner_batches.decompress_buffer
    monkeypatch.setattr(cleaner_batches, "decompress_buffer", lambda *a, **k: calls.append(1) or inflate(*a, **k))
    omap = cleaner_map.OffsetMap(24 * 1000)
    omap.inflated = cleaner_map.InflatedValues(budget)
    cleaner_batches.map_segment_runs(data, arr, spans, omap, 0, 900, CleanerStats(), lambda b: False, (7, 0))
    kept = len(omap.inflated.values)
    assert len(calls) == 20 and (kept == 0 if budget == 0 else 0 < kept <= 20) and (kept == 20) == (budget > 1000)
    flt = _filter(omap, last_records={})
    out, _, _ = cleaner_batches.FilterRun(flt, data, arr, lambda b: _filter_one(flt, b, arr), (7, 0)).chunk(
        spans, 0, len(spans))
    assert len(calls) == 40 - kept and not omap.inflated.values
    ref = _filter(omap, last_records={})
    assert b"".join(out) == b"".join(_filter_one(ref, b, arr)[0] for b in MemoryRecords(data).batches())
