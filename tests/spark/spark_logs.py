"""Sample log directories for the Spark tests, built through kafkafmt.log, and a direct decode of them.

The reference decode walks every ``.log`` file with :class:`kafkafmt.records.MemoryRecords` record
objects (not the columnar path the data source uses) and fingerprints each partition.
"""
from __future__ import annotations

import hashlib
import os
import random
from pathlib import Path

from kafkafmt.constants import CompressionType, ControlRecordType, TimestampType
from kafkafmt.log import Log, LogConfig, SimulatedClock
from kafkafmt.records import MemoryRecords, MemoryRecordsBuilder

START = 1_700_000_000_000
CODECS = {0: ["none", "gzip", "snappy", "lz4"], 1: ["none", "gzip", "snappy", "lz4"],
          2: ["none", "gzip", "snappy", "lz4", "zstd"]}
SMALL_SEGMENTS = LogConfig(segment_bytes=6000, index_interval_bytes=300)


def _records(rng: random.Random, n: int, ts: int, magic: int, first: int):
    out = []
    for i in range(n):
        key = None if rng.random() < 0.2 else f"key-{rng.randrange(50)}".encode()
        value = None if rng.random() < 0.05 else bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 60)))
        headers = [] if magic < 2 or rng.random() < 0.5 else [(f"h{j}", f"v{first + i}".encode())
                                                                   for j in range(rng.randint(1, 2))]
        out.append((ts + rng.randint(-500, 500) if magic > 0 else -1, key, value, headers))
    return out


def build_partition(dir: Path, plan: list[tuple[int, str]], *, seed: int, batches_per_step: int = 12,
                    transactional: bool = False, config: LogConfig = SMALL_SEGMENTS) -> Path:
    """A partition whose batches follow ``plan`` = [(magic, codec), ...], each for ``batches_per_step``
    batches; ``transactional`` adds committed and aborted v2 transactions with their markers."""
    rng = random.Random(seed)
    clock = SimulatedClock(START)
    log = Log(dir, config, clock)
    offset = 0
    for magic, codec in plan:
        for b in range(batches_per_step):
            clock.advance(rng.randint(1, 2000))
            txn = transactional and magic == 2 and b % 3 != 0
            pid = 1000 + b % 2 if txn else -1
            builder = MemoryRecordsBuilder(magic, CompressionType.from_name(codec), TimestampType.CREATE_TIME, offset,
                                           producer_id=pid, producer_epoch=0 if txn else -1,
                                           base_sequence=offset if txn else -1, is_transactional=txn,
                                           partition_leader_epoch=0 if magic == 2 else -1)
            for ts, k, v, h in _records(rng, rng.randint(1, 9), clock.now(), magic, offset):
                builder.append(ts, k, v, h)
            log.append_as_follower(builder.build())
            offset = builder.last_offset + 1
            if txn:
                marker = MemoryRecordsBuilder(2, CompressionType.NONE, TimestampType.CREATE_TIME, offset,
                                              producer_id=pid, producer_epoch=0, is_transactional=True,
                                              is_control_batch=True, partition_leader_epoch=0)
                marker.append_end_txn_marker(clock.now(), ControlRecordType.COMMIT if b % 2 else
                                             ControlRecordType.ABORT, 0)
                log.append_as_follower(marker.build())
                offset += 1
    log.close()
    return dir


def build_sample_logs(root: Path) -> Path:
    """``root`` holds ``magic{m}-{codec}-0`` for every magic/codec, ``upgrade-0`` (v0 → v1 → v2 with
    codec changes, as a message-format upgrade) and ``txn-0`` / ``txn-1`` (transactions, markers)."""
    seed = 0
    for magic, codecs in CODECS.items():
        for codec in codecs:
            seed += 1
            build_partition(root / f"magic{magic}-{codec}-0", [(magic, codec)], seed=seed)
    build_partition(root / "upgrade-0", [(0, "gzip"), (1, "none"), (1, "lz4"), (2, "zstd"), (2, "none")], seed=99)
    for p in (0, 1):
        build_partition(root / f"txn-{p}", [(2, "none"), (2, "snappy")], seed=200 + p, transactional=True)
    return root


def direct_decode(partition_dir: Path) -> list[tuple]:
    """``(offset, timestamp, timestamp_type, key, value, headers, is_control)`` of every record, in order."""
    rows = []
    for f in sorted(p for p in Path(partition_dir).iterdir() if p.name.endswith(".log")):
        for batch in MemoryRecords(f.read_bytes(), strict=True).batches():
            for r in batch.records():
                rows.append((r.offset, r.timestamp, int(r.timestamp_type), r.key, r.value,
                             tuple((h.key, h.value) for h in r.headers), batch.is_control))
    return rows


def fingerprint(rows) -> str:
    """A checksum of keys, values and headers (in offset order)."""
    h = hashlib.sha256()
    for _, _, _, k, v, headers, _ in rows:
        for part in (k, v):
            h.update(b"\x00" if part is None else b"\x01" + len(part).to_bytes(4, "big") + part)
        h.update(len(headers).to_bytes(2, "big"))
        for hk, hv in headers:
            h.update(hk.encode() + b"\x00" + (b"\xff" if hv is None else hv))
    return h.hexdigest()


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``root`` with its bytes and mtime (ns): reading must leave this unchanged."""
    out = {}
    for dirpath, _, files in os.walk(root):
        for name in files:
            p = Path(dirpath) / name
            out[str(p)] = (p.read_bytes(), p.stat().st_mtime_ns)
    return out
