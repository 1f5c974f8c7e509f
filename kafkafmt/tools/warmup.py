"""``kafkafmt warmup``: compile the numba kernels once, into their on-disk cache.

``make setup`` runs it after installing, so that the first ``records_table`` in a notebook loads
machine code (about 0.5 s) instead of compiling it (3 to 5 s on a 2-core machine).  It decodes every
sample record set with the fast decoder (``records_table`` and ``decode_records``) and builds a few
rows with the column builder and runs the log cleaner's bulk read on one batch, which reaches every kernel
with the one signature its callers use, and checks the tables against the pure-Python reference decoder
(the kernels' CRC-32 against zlib, the cleaner's against the builder and hashlib).
"""
from __future__ import annotations

import time

from . import add_format


def register(sub) -> None:
    p = sub.add_parser("warmup", help="compile the compiled decoder's kernels into numba's cache (make setup runs it)",
                       description="Compile every numba kernel of the columnar decoder and the column builder "
                                   "once, into numba's on-disk cache (beside the package, or $NUMBA_CACHE_DIR), "
                                   "so that the first records_table of later processes loads them instead of "
                                   "compiling; check the decoded sample record sets against the reference decoder. "
                                   "Run it again after upgrading numba or editing a kernel.")
    add_format(p, json_help="one object: kernels, compiled, loaded, cache_dirs, seconds, samples, mismatched")
    p.set_defaults(func=run)


def warm_up() -> dict:
    """Reach every kernel once; return what was compiled, loaded, where the cache is, and the check."""
    t = time.perf_counter()
    from ..records import MemoryRecords, build_v2_batches, decode_records, records_table
    from ..records.fast import jit
    from ..records.sample_sets import sample_record_sets
    samples = sample_record_sets()
    mismatched = []
    for name, (_, data) in samples.items():
        fast = records_table(data)
        if not fast.equals(records_table(data, engine="reference")) or \
                list(decode_records(data)) != list(MemoryRecords(data).records()):
            mismatched.append(name)
    build_v2_batches([0, 1], [b"k", None], [b"v", b""], [[("h", b"x")], []])
    if not _crc32_agrees_with_zlib():
        mismatched.append("CRC-32 (crc32_spans against zlib)")
    if not _cleaner_agrees_with_reference():
        mismatched.append("the cleaner's bulk read (kafkafmt.log.cleaner.scan against the builder and hashlib)")
    compiled, loaded = jit.cache_stats()
    return {"kernels": len(jit.KERNELS), "compiled": compiled, "loaded": loaded, "cache_dirs": jit.cache_dirs(),
            "samples": len(samples), "mismatched": mismatched, "seconds": time.perf_counter() - t}


def _crc32_agrees_with_zlib() -> bool:
    """The kernels' CRC-32 (``fast.crc32_spans``, also reached here) on a few spans, against ``zlib.crc32``."""
    import zlib

    import numpy as np

    from ..records.fast import crc32_spans
    data = bytes(range(256)) * 3
    spans = [(i, i + 7 * i + 1) for i in range(9)]
    crcs = np.zeros(len(spans), np.uint32)
    crc32_spans(np.frombuffer(data, np.uint8), np.array([a for a, _ in spans], np.int64),
                np.array([e for _, e in spans], np.int64), crcs)
    return crcs.tolist() == [zlib.crc32(data[a:e]) for a, e in spans]


def _cleaner_agrees_with_reference() -> bool:
    """The log cleaner's kernels (``kafkafmt.log.cleaner.scan``: the record scan, the MD5 of the keys, the
    rebuild of a batch with records removed; ``kafkafmt.log.cleaner.kernels``), reached on one batch and
    checked against the builder and :mod:`hashlib`."""
    import hashlib

    from ..constants import CompressionType, TimestampType
    from ..log.cleaner.filter import rebuild_batch
    from ..log.cleaner.scan import as_array, digests, rebuild_v2, scan_v2
    from ..records import MemoryRecords, MemoryRecordsBuilder
    b = MemoryRecordsBuilder(2, CompressionType.NONE, TimestampType.CREATE_TIME, 0)
    for i, (key, value) in enumerate([(b"a", b"1"), (b"b", None), (b"a", b"2")]):
        b.append_with_offset(i, 1_700_000_000_000 + i, key, value)
    data = b.build()
    (batch,) = MemoryRecords(data).batches()
    scan = scan_v2(batch, as_array(data), 1 << 20)
    records = list(batch.records())
    return scan is not None and digests(scan) == [hashlib.md5(r.key).digest() for r in records] and \
        rebuild_v2(batch, scan, [1, 2], 1_700_000_100_000) == rebuild_batch(batch, records[1:], 1_700_000_100_000) \
        and _cleaner_runs_agree(data, batch, records)


def _cleaner_runs_agree(data: bytes, batch, records) -> bool:
    """The compiled runs (``kafkafmt.log.cleaner.kernels``: the offset map's table, the map and filter
    runs, v2 and v0/v1 entries) on the same records: the map holds each key's latest offset, the filtered
    batch is the builder's."""
    from ..constants import CompressionType, TimestampType
    from ..log.cleaner.filter import rebuild_batch
    from ..log.cleaner.offset_map import OffsetMap
    from ..records import MemoryRecords, MemoryRecordsBuilder
    now = records[-1].timestamp
    omap, out = _cleaned(data, now)
    one = OffsetMap(24 * 4)  # the per-batch path's put and get, and clear
    one.put(b"y", 1)
    one.clear()
    one.put(b"x", 3)
    legacy = MemoryRecordsBuilder(1, CompressionType.GZIP, TimestampType.CREATE_TIME, 0)
    for r in records:
        legacy.append_with_offset(r.offset, r.timestamp, r.key, r.value)
    v1 = legacy.build()
    (wrapper,) = MemoryRecords(v1).batches()
    return (omap.get(b"a"), omap.get(b"b"), one.get(b"x"), one.get(b"a")) == (2, 1, 3, -1) and \
        out == rebuild_batch(batch, records[1:], now + 100_000) and \
        _cleaned(v1, now)[1] == rebuild_batch(wrapper, list(wrapper.records())[1:], None) and \
        _producer_replay(records) == [[7, 1, 2, now, -1]]


def _producer_replay(records) -> list:
    """The producer state replay (``cleaner.kernels.producer_rows``, ``replay_producers``) of one idempotent
    batch: [producer id, epoch, last data offset, last timestamp, open transaction (-1: none)]."""
    import numpy as np

    from ..constants import CompressionType, TimestampType
    from ..log.cleaner.kernels import NO_OFFSET, PR_PID, producer_rows, replay_producers
    from ..records import MemoryRecordsBuilder
    b = MemoryRecordsBuilder(2, CompressionType.NONE, TimestampType.CREATE_TIME, 0, producer_id=7, producer_epoch=1,
                             base_sequence=0)
    for r in records:
        b.append_with_offset(r.offset, r.timestamp, r.key, r.value)
    rows = producer_rows(b.build())
    out = np.empty((len(rows), 5), np.int64)
    n = replay_producers(rows, np.argsort(rows[:, PR_PID], kind="stable"), out)
    return [[v if v != NO_OFFSET else -1 for v in row] for row in out[:n].tolist()]


def _cleaned(data: bytes, now: int):
    """The offset map and the bytes the compiled runs keep of ``data`` (a 100 s delete retention)."""
    from ..log.cleaner.filter import CleanedTransactionMetadata, CleanerStats, SegmentFilter
    from ..log.cleaner.kernels import FilterRun, Spans, map_segment_runs
    from ..log.cleaner.offset_map import OffsetMap
    from ..log.cleaner.scan import as_array
    omap, arr, spans = OffsetMap(24 * 16), as_array(data), Spans(data)
    map_segment_runs(data, arr, spans, omap, 0, 10, CleanerStats(), lambda b: True)
    flt = SegmentFilter(omap, now=now, delete_retention_ms=100_000, txn=CleanedTransactionMetadata(), last_records={},
                        stats=CleanerStats())
    out, _, _ = FilterRun(flt, data, arr, lambda b: (b"", -1)).chunk(spans, 0, len(spans))
    return omap, b"".join(out)


def run(args) -> int:
    r = warm_up()
    if args.format == "json":
        import json
        print(json.dumps(r, indent=1))
        return 1 if r["mismatched"] else 0
    where = ", ".join(r["cache_dirs"]) or "nowhere (no writable directory: set NUMBA_CACHE_DIR)"
    print(f"kafkafmt warmup: {r['kernels']} kernels ready in {r['seconds']:.1f} s: {r['compiled']} compiled, "
          f"{r['loaded']} loaded from the cache; cache: {where}")
    if r["mismatched"]:
        print(f"kafkafmt warmup: error: the compiled decoder disagrees with the reference on {', '.join(r['mismatched'])}")
        return 1
    print(f"kafkafmt warmup: the compiled decoder agrees with the reference on {r['samples']} sample record sets")
    return 0
