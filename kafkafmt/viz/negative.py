"""Notebook 08 (KIP-228, seed 002): negative timestamps, the seed's compatibility matrices next to
what Kafka 3.9.2's broker rules and consumer do with the same bytes, and the bytes with and without
the ``isTimestampExtended`` bit.

The matrices are computed by :mod:`kafkafmt.scenarios.matrices` (each cell a scenario on real bytes);
:func:`kafka_broker` and :func:`kafka_consumer` run one batch straight through
:func:`kafkafmt.broker.validator.validate_messages_and_assign_offsets` and
:func:`kafkafmt.broker.consumer.consumer_view` for the byte view.
"""
from __future__ import annotations

from ..records import kip228
from ..records.annotate import annotate
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


def matrix(name: str):
    """A seed-002 matrix computed cell by cell by :mod:`kafkafmt.scenarios.matrices` (the seed's cell, the
    computed outcome, which of the seed's readings it agrees with, and Kafka 3.9.2's), as a DataFrame."""
    import pandas as pd
    from ..scenarios.matrices import matrix_table
    if name not in ("seed002-producer", "seed002-consumer"):
        raise ValueError("name must be seed002-producer or seed002-consumer")
    headers, rows = matrix_table(name)
    return pd.DataFrame(rows, columns=headers)


def producer_table():
    """Seed 002's producer matrix: old/new producer × old/new broker, computed, beside Kafka 3.9.2."""
    return matrix("seed002-producer")


def kafka_consumer(timestamp: int, extended: bool) -> str:
    """What a Kafka 3.9.2 consumer returns for the record (its timestamp and type)."""
    view = consumer_view(batch(timestamp, extended=extended))
    if view.error:
        return f"✗ {view.error}"
    r = view.records[0]
    return f"timestamp {r.timestamp} ({r.timestamp_type.kafka_name})"


def consumer_table():
    """Seed 002's consumer matrix: record timestamp × bit × old/new consumer, computed, beside Kafka 3.9.2."""
    return matrix("seed002-consumer")


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


# ------------------------------------------------------------------------------------------------
# the notebook's panel
def encode(timestamp: int, extended: bool) -> dict:
    """The record's bytes and what Kafka 3.9.2's produce path does with them."""
    return {"bytes": batch(timestamp, extended=extended), "kafka": kafka_broker(timestamp, extended),
            "timestamp": timestamp, "extended": extended}


def bits_caption(d: dict, values: dict) -> str:
    """What the bit changes here and what Kafka does; where the builder turns it down."""
    from .tables import iso_time
    k = d["kafka"]
    when = iso_time(values["timestamp"]) + " UTC" if values["timestamp"] != -1 else "no timestamp (-1)"
    if values["timestamp"] >= -1:
        bit = (f"Here the bit changes {len(bit_difference(values['timestamp']))} bytes (attributes and CRC) "
               "and nothing else.")
    else:
        bit = "Before 1970 the bit is what makes the record encodable: without it Kafka's builder refuses it."
    return f"Timestamp {values['timestamp']} ms = {when}. <b>Kafka 3.9.2 produce path: {k['kafka']}</b>. {bit}"


def bits_view(d: dict):
    from . import byteview
    return byteview.byte_view_html(d["bytes"])


def bits_panel():
    """Notebook 08's one v2 record: a typed timestamp and the isTimestampExtended bit."""
    import ipywidgets as w
    from .widgets import Panel
    return Panel({"timestamp": w.IntText(value=-86_400_000, description="timestamp ms",
                                         style={"description_width": "initial"}),
                  "extended": w.Checkbox(value=True, description="isTimestampExtended")},
                 encode, bits_view, title="one v2 record", caption=bits_caption)


__all__ = ["encode", "bits_panel", "bits_view", "bits_caption", "batch", "kafka_broker", "matrix", "producer_table",
           "kafka_consumer", "consumer_table", "bit_difference", "changed_fields", "PRODUCER_ROWS"]
