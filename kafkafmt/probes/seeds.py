"""The seeds' behaviours, each probed on two Kafka lines (:data:`PROBES`), with the verdict between them.

A probe runs one behaviour a seed introduced or discussed on one line and returns a typed
:class:`~kafkafmt.line_verdicts.Outcome`; :func:`seed_outcomes` runs every probe on an older and a newer
line (3.9 and 4.4 by default) and computes the :class:`~kafkafmt.line_verdicts.Verdict` from the two
outcomes and the rows of :mod:`kafkafmt.kafka_lines` the probe meets.
"""
from __future__ import annotations

import hashlib
import shutil
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

from .. import kafka_lines
from ..broker.consumer import consumer_view
from ..broker.fetch import fetch
from ..broker.validator import validate_messages_and_assign_offsets
from ..config import LogConfig
from ..errors import KafkaFmtError
from ..line_verdicts import Outcome, Verdict, verdict
from ..records.builder import build_records
from ..records.memory import MemoryRecords
from ..records.sample_sets import build, sample_records
from .lines import NOW_MS, OLD_FORMAT, broker, topic

__all__ = ["SEEDS", "Probe", "PROBES", "seed_outcomes", "verdict_counts", "mixed_log", "rewrite", "cleaner_rewrite"]

SEEDS = {"000": "KIP-32 (timestamps, message format v1)", "001": "KIP-33 variant (the time index)",
         "002": "KIP-228 (negative timestamps)", "003": "idempotence modes (off/safe/required)",
         "004": "KIP-31 (relative offsets in compressed wrappers)"}


# ================================================================================================
# the probes: one behaviour of a seed, run on a line
def _produce(line: str, magic: int, *, codec: str = "none", mfv: str | None = OLD_FORMAT, produce_version=None,
             ts=None, producer_id: int = -1, records: int = 3) -> Outcome:
    recs = sample_records(records, seed=7)
    if ts is not None:
        recs = [(ts, k, v, h) for _, k, v, h in recs]
    try:  # the producer's own MemoryRecordsBuilder refuses some values before any broker sees them
        data = _idempotent(recs, codec) if producer_id >= 0 else build(magic, codec, recs)
    except KafkaFmtError as e:
        return Outcome.refused(e.kafka_exception or type(e).__name__, by="producer")
    if produce_version is None:  # a v2 producer sends the newest Produce version the line answers (KIP-35), ≤ v9
        produce_version = 2 if magic < 2 else min(9, kafka_lines.value("produce.max_version", line))
    try:
        cfg = topic(line, mfv)
        res = validate_messages_and_assign_offsets(data, cfg, now=NOW_MS, produce_version=produce_version)
    except KafkaFmtError as e:
        return Outcome.refused(e.kafka_exception or type(e).__name__)
    how = "converted" if res.converted else "in place"
    rec = ", recompressed" if res.recompressed else ""
    return Outcome.done(f"stored as v{res.to_magic} ({how}{rec})")


def _idempotent(recs, codec: str) -> bytes:
    return build_records(recs, compression=codec, producer_id=1000, producer_epoch=0, base_sequence=0)


def mixed_log(codec: str = "gzip") -> bytes:
    """v0 messages, then a v1 wrapper (``codec``), then a v2 batch: what a seeds' upgrade left on disk."""
    parts, offset = [], 0
    for magic, n in ((0, 2), (1, 3), (2, 2)):
        parts.append(build(magic, "none" if magic == 0 else codec, sample_records(n, seed=magic), base_offset=offset))
        offset += n
    return b"".join(parts)


def _fetch(line: str, fetch_version: int, client_magic: int, *, codec: str = "gzip") -> Outcome:
    res = fetch(mixed_log(codec), topic_config=topic(line, OLD_FORMAT), fetch_version=fetch_version)
    if res.error is not None:
        closed = ", the broker closes the connection" if res.connection_closed else ""
        return Outcome.refused(f"{res.error}{closed}")
    view = consumer_view(res.records, client_magic=client_magic)
    got = "zero-copy" if res.zero_copy else f"down-converted to v{res.to_magic}"
    magics = sorted({b.magic for b in MemoryRecords(res.records).batches()})
    work = f", {res.cost.compressions} recompression(s)" if res.cost.compressions else ""
    return Outcome.done(f"{got}: {len(view.records)} records in " + "+".join(f"v{m}" for m in magics) + work)


def _topic_key(line: str, name: str, value: str) -> Outcome:
    try:
        LogConfig.from_properties({name: value}, broker=broker(line))
    except KafkaFmtError as e:
        return Outcome.refused(type(e).__name__)
    return Outcome.done(f"{name}={value} accepted")


def _list_offsets_v0(line: str) -> Outcome:
    oldest = kafka_lines.value("list_offsets.min_version", line)
    return Outcome.done("answered") if oldest <= 0 else \
        Outcome.refused(f"UnsupportedVersionException (oldest v{oldest})")


def _time_index(line: str) -> Outcome:
    """The ``.timeindex`` bytes of a log written through the leader in the line's newest format (row
    ``produce.max_magic``): a digest people can compare; a line before KIP-33 (row ``log.time_index``) writes none."""
    if not kafka_lines.value("log.time_index", line):
        row = kafka_lines.change("log.time_index")
        return Outcome.done(f"no time index (it came in {row.release} with {row.source})")
    from ..log import Log, SimulatedClock
    tmp = Path(tempfile.mkdtemp(prefix="kafkafmt-probe-"))
    try:
        cfg = LogConfig(broker=broker(line), segment_bytes=1_048_576, index_interval_bytes=0)
        log = Log(tmp / "t-0", cfg, clock=SimulatedClock(NOW_MS))
        for i in range(12):
            recs = [(NOW_MS + 1000 * i + j, k, v, h) for j, (_, k, v, h) in enumerate(sample_records(2, seed=i))]
            log.append_as_leader(build(min(2, kafka_lines.value("produce.max_magic", line)), "none", recs))
        log.flush()
        log.close()
        files = sorted((tmp / "t-0").glob("*.timeindex"))
        data = b"".join(f.read_bytes() for f in files)
        entries = sum(1 for i in range(0, len(data), 12) if data[i:i + 12] != bytes(12))
        return Outcome.done(f"{entries} entries, sha256 {hashlib.sha256(data).hexdigest()[:12]}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _cleaner(line: str, codec: str = "gzip") -> Outcome:
    before = build(1, codec, sample_records(5, seed=4))
    if not kafka_lines.value("cleaner.legacy_to_v2", line):
        return Outcome.done(f"kept as v1 ({len(before)} bytes)")
    after = rewrite(before)
    magics = sorted({b.magic for b in MemoryRecords(after).batches()})
    return Outcome.done(f"rewritten as v{'+'.join(map(str, magics))} ({len(after)} bytes)")


@dataclass(frozen=True)
class Probe:
    """One behaviour a seed introduced or discussed, probed on a line; ``rows``: the kafka_lines rows it
    meets (where the lines differ, they say why)."""

    seed: str
    behaviour: str
    run: Callable[[str], Outcome]
    rows: tuple[str, ...] = ()


PROBES: tuple[Probe, ...] = (
    Probe("000", "a 0.10 producer sends v1 messages (Produce v2)", lambda ln: _produce(ln, 1),
          ("produce.min_version",)),
    Probe("000", "a current producer's v2 batch (CreateTime timestamps)", lambda ln: _produce(ln, 2, mfv=None)),
    Probe("000", "a record 2 h ahead of the broker's clock", lambda ln: _produce(ln, 2, mfv=None, ts=NOW_MS + 7_200_000),
          ("topic.default.message.timestamp.after.max.ms",)),
    Probe("000", "a 0.9 consumer (Fetch v1) reads the v0+v1+v2 log", lambda ln: _fetch(ln, 1, 0, codec="none"),
          ("fetch.min_version", "fetch.down_conversion")),
    Probe("000", "a current consumer (Fetch v17) reads the v0+v1+v2 log",
          lambda ln: _fetch(ln, 17, 2, codec="none")),
    Probe("000", "topic key message.format.version=0.10.0",
          lambda ln: _topic_key(ln, "message.format.version", "0.10.0"), ("topic.removed.message.format.version",)),
    Probe("001", "ListOffsets v0 (offsets before a time, per segment: what KIP-33 replaced)", _list_offsets_v0,
          ("list_offsets.min_version",)),
    Probe("001", "the time index of v2 appends (one entry per batch)", _time_index, ("log.time_index",)),
    Probe("001", "segment.bytes=2000 (notebook 03's small segments, one time index each)",
          lambda ln: _topic_key(ln, "segment.bytes", "2000"), ("topic.check.segment.bytes",)),
    Probe("002", "a v2 record with timestamp -1 (NO_TIMESTAMP)", lambda ln: _produce(ln, 2, mfv=None, ts=-1)),
    Probe("002", "a producer asked for a timestamp a day before the epoch (-86400000)",
          lambda ln: _produce(ln, 2, mfv=None, ts=-86_400_000)),
    Probe("003", "an idempotent v2 batch to a topic of message.format.version 0.10.0",
          lambda ln: _produce(ln, 2, producer_id=1000), ("produce.record_version",)),
    Probe("004", "a 0.10 producer's gzip v1 wrapper (relative offsets)", lambda ln: _produce(ln, 1, codec="gzip"),
          ("produce.min_version",)),
    Probe("004", "a 0.9 consumer (Fetch v1) reads a log with gzip v1 wrappers", lambda ln: _fetch(ln, 1, 0),
          ("fetch.min_version", "fetch.down_conversion")),
    Probe("004", "the cleaner meets a gzip v1 wrapper on a compacted topic", _cleaner, ("cleaner.legacy_to_v2",)),
)


@lru_cache(maxsize=8)
def _outcomes(older: str, newer: str) -> tuple:
    out = []
    for p in PROBES:
        a, b = p.run(older), p.run(newer)
        rows = [kafka_lines.change(k) for k in p.rows] if a.text != b.text else []
        out.append({"seed": p.seed, "behaviour": p.behaviour, "older": a, "newer": b,
                    "verdict": verdict(a, b, p.rows, older), "rows": tuple(rows)})
    return tuple(out)


def seed_outcomes(seed: str | None = None, older: str = "3.9", newer: str = "4.4") -> list[dict]:
    """Every probe of ``seed`` (default: all seeds) on the ``older`` and ``newer`` lines: ``seed``,
    ``behaviour``, ``older`` / ``newer`` (:class:`~kafkafmt.line_verdicts.Outcome`), ``verdict``
    (:class:`~kafkafmt.line_verdicts.Verdict`) and ``rows`` (the kafka_lines rows that explain a difference)."""
    if seed is not None and seed not in SEEDS:
        raise ValueError(f"seed must be one of {', '.join(SEEDS)}")
    older, newer = kafka_lines.check_line(older), kafka_lines.check_line(newer)
    return [dict(r) for r in _outcomes(older, newer) if seed is None or r["seed"] == seed]


def verdict_counts(older: str = "3.9", newer: str = "4.4") -> dict[str, dict[Verdict, int]]:
    """Per seed: how many probed behaviours the newer line kept, changed, removed and added."""
    out = {s: {v: 0 for v in Verdict} for s in SEEDS}
    for r in seed_outcomes(None, older, newer):
        out[r["seed"]][r["verdict"]] += 1
    return out


# ================================================================================================
# the 4.x cleaner's rewrite, on bytes
def rewrite(legacy: bytes, *, delete_horizon_ms: int = NOW_MS + 86_400_000) -> bytes:
    """What Kafka 4.x's cleaner writes for the v0/v1 entries ``legacy``, every record kept (KAFKA-13093)."""
    from ..log.cleaner.legacy_to_v2 import rewrite_as_v2
    return b"".join(rewrite_as_v2(b, delete_horizon_ms=delete_horizon_ms) for b in MemoryRecords(legacy).batches())


def cleaner_rewrite(magic: int = 1, codec: str = "gzip", records: int = 3) -> dict:
    """A v0/v1 record set before and after the 4.x cleaner's rewrite: bytes, entries and batches."""
    if magic not in (0, 1):
        raise ValueError("the cleaner rewrites v0/v1 entries; pick magic 0 or 1")
    before = build(magic, codec, sample_records(records, seed=4))
    after = rewrite(before)
    return {"magic": magic, "codec": codec, "records": records, "before": before, "after": after,
            "entries_before": sum(1 for _ in MemoryRecords(before).batches()),
            "batches_after": sum(1 for _ in MemoryRecords(after).batches())}
