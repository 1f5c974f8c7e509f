"""Notebook 08 (KIP-228, seed 002): negative timestamps, the seed's compatibility matrices next to
what Kafka 3.9.2's broker rules and consumer do with the same bytes, and the bytes with and without
the ``isTimestampExtended`` bit.

The seed's cells come from :mod:`kafkafmt.kip228`; the "Kafka 3.9.2" column is computed by running
the bytes through :func:`kafkafmt.broker.validator.validate_messages_and_assign_offsets` and
:func:`kafkafmt.broker.consumer.consumer_view`.
"""
from __future__ import annotations

from .. import kip228
from ..annotate import annotate
from ..broker.consumer import consumer_view
from ..broker.validator import validate_messages_and_assign_offsets
from ..constants import NO_TIMESTAMP, NO_TIMESTAMP_EXTENDED
from ..errors import KafkaFmtError
from ..records import MemoryRecords, MemoryRecordsBuilder

NOW_MS = 1_700_000_000_000
#: the producer matrix's rows: (producer, timestamp sent, isTimestampExtended)
PRODUCER_ROWS = (("old", NO_TIMESTAMP, False), ("new", NO_TIMESTAMP_EXTENDED, True), ("new", -1, True))


def batch(timestamp: int, *, extended: bool) -> bytes:
    """One v2 record stamped ``timestamp``, with or without the KIP-228 bit."""
    b = MemoryRecordsBuilder(2, "none", timestamp_extended=extended)
    b.append(timestamp, b"k", b"v")
    return b.build()


def kafka_broker(timestamp: int, extended: bool, *, now: int = NOW_MS) -> dict:
    """What Kafka 3.9.2's produce path does with the batch: stored timestamp and bit, or the error."""
    try:
        res = validate_messages_and_assign_offsets(batch(timestamp, extended=extended), now=now)
    except KafkaFmtError as e:
        return {"accepted": False, "stored": None, "bit kept": None, "kafka": f"✗ {e.kafka_exception}"}
    b = next(MemoryRecords(res.records).batches())
    stored = next(b.records()).timestamp
    return {"accepted": True, "stored": stored, "bit kept": kip228.is_extended(b),
            "kafka": f"✓ stored {stored}" + (" (bit kept)" if kip228.is_extended(b) else "")}


def producer_table(now: int = NOW_MS):
    """The seed's producer matrix (old/new broker) with a computed Kafka 3.9.2 column."""
    import pandas as pd
    out = []
    for producer, ts, ext in PRODUCER_ROWS:
        row = {"producer": producer, "sends": ts, "isTimestampExtended": int(ext)}
        for broker in ("old", "new"):
            c = kip228.producer_outcome(producer, ts, broker)
            row[f"seed: {broker} broker"] = ("✓ " if c.ok else "✗ ") + c.result
        row["Kafka 3.9.2 broker (computed)"] = kafka_broker(ts, ext, now=now)["kafka"]
        out.append(row)
    return pd.DataFrame(out)


def kafka_consumer(timestamp: int, extended: bool) -> str:
    """What a Kafka 3.9.2 consumer returns for the record (its timestamp and type)."""
    view = consumer_view(batch(timestamp, extended=extended))
    if view.error:
        return f"✗ {view.error}"
    r = view.records[0]
    return f"timestamp {r.timestamp} ({r.timestamp_type.kafka_name})"


def consumer_table():
    """The seed's consumer matrix with a computed Kafka 3.9.2 consumer column."""
    import pandas as pd
    out = []
    for ts, ext in ((NO_TIMESTAMP, False), (NO_TIMESTAMP, True), (NO_TIMESTAMP_EXTENDED, True)):
        row = {"record timestamp": ts, "isTimestampExtended": int(ext)}
        for who in ("old", "new"):
            c = kip228.consumer_interpretation(who, ts, ext)
            row[f"seed: {who} consumer"] = ("✓ " if c.ok else "✗ ") + c.result
        row["Kafka 3.9.2 consumer (computed)"] = kafka_consumer(ts, ext)
        out.append(row)
    return pd.DataFrame(out)


def bit_difference(timestamp: int) -> list[dict]:
    """The bytes that differ between the plain and the extended encoding of the same record, by field."""
    plain, ext = batch(timestamp, extended=False), batch(timestamp, extended=True)
    if len(plain) != len(ext):
        raise ValueError("the two encodings differ in length")  # pragma: no cover - the bit changes no length
    fields = {i: s.path for s in annotate(ext) for i in range(s.start, s.end)}
    return [{"position": i, "field": fields.get(i, "?"), "plain": f"{a:02x}", "extended": f"{b:02x}"}
            for i, (a, b) in enumerate(zip(plain, ext)) if a != b]


def changed_fields(timestamp: int) -> list[str]:
    """The fields :func:`bit_difference` touches (in order)."""
    seen: list[str] = []
    for r in bit_difference(timestamp):
        if r["field"] not in seen:
            seen.append(r["field"])
    return seen


__all__ = ["batch", "kafka_broker", "producer_table", "kafka_consumer", "consumer_table", "bit_difference",
           "changed_fields", "PRODUCER_ROWS"]
