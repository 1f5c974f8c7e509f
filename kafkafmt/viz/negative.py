"""Notebook 08 (KIP-228, seed 002): negative timestamps, the seed's compatibility matrices next to
what Kafka 3.9.2's broker rules and consumer do with the same bytes, and the bytes with and without
the ``isTimestampExtended`` bit.

The matrices are computed by :mod:`kafkafmt.scenarios.matrices` (each cell a scenario on real bytes);
:func:`kafka_broker` and :func:`kafka_consumer` run one batch straight through
:func:`kafkafmt.broker.validator.validate_messages_and_assign_offsets` and
:func:`kafkafmt.broker.consumer.consumer_view` for the byte view.
"""
from __future__ import annotations

from ..broker.consumer import consumer_view
from ..broker.validator import validate_messages_and_assign_offsets
from ..constants import (
    NO_TIMESTAMP,
    NO_TIMESTAMP_EXTENDED,
    V2_DELETE_HORIZON_FLAG_MASK,
    V2_TIMESTAMP_EXTENDED_FLAG_MASK,
)
from ..crc import crc32c
from ..errors import KafkaFmtError
from ..layout import DEFAULT_BATCH
from ..records import MemoryRecords, build_records, kip228
from ..records.annotate import annotate

NOW_MS = 1_700_000_000_000
#: the producer matrix's rows: (producer, timestamp sent, isTimestampExtended)
PRODUCER_ROWS = (("old", NO_TIMESTAMP, False), ("new", NO_TIMESTAMP_EXTENDED, True), ("new", -1, True))


def batch(timestamp: int, *, extended: bool) -> bytes:
    """One v2 record stamped ``timestamp``, with or without the KIP-228 bit."""
    return build_records([(timestamp, b"k", b"v")], timestamp_extended=extended)


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


# ------------------------------------------------------------------------------------------------
# seed 002's bit 6 against KIP-534's hasDeleteHorizonMs
#: seed 002's diagram puts isTimestampExtended on attribute bit 6 (0x40); KIP-534 (Kafka 3.1) gave that
#: bit to hasDeleteHorizonMs; kafkafmt's KIP-228 experiment uses the next free bit, 0x80
SEED_BIT, KAFKAFMT_BIT = V2_DELETE_HORIZON_FLAG_MASK, V2_TIMESTAMP_EXTENDED_FLAG_MASK


def bit6_batch(timestamp: int, *, bit: int = SEED_BIT, base_offset: int = 0) -> bytes:
    """A v2 batch of a record (key ``a``) and a tombstone (key ``gone``) stamped ``timestamp``, with the
    extended-timestamp flag on ``bit`` (seed 002's 0x40 or kafkafmt's 0x80), CRC recomputed."""
    data = bytearray(build_records([(timestamp, b"a", b"v"), (timestamp, b"gone", None)], base_offset=base_offset,
                                   partition_leader_epoch=0, timestamp_extended=True))
    attrs = DEFAULT_BATCH.field("attributes")
    value = (int.from_bytes(data[attrs.offset:attrs.offset + 2], "big") & ~KAFKAFMT_BIT) | bit
    data[attrs.offset:attrs.offset + 2] = value.to_bytes(2, "big")
    crc = DEFAULT_BATCH.field("crc")
    data[crc.offset:crc.offset + 4] = crc32c(bytes(data[attrs.offset:])).to_bytes(4, "big")
    return bytes(data)


def bit6_read(timestamp: int, bit: int = SEED_BIT) -> dict:
    """What Kafka 3.9's reader (``DefaultRecordBatch``) makes of the batch: the delete horizon it sees
    (``deleteHorizonMs()`` = the base timestamp when bit 6 is set) and the records' timestamps."""
    b = next(MemoryRecords(bit6_batch(timestamp, bit=bit)).batches())
    return {"attributes": f"0x{b.attributes:02x}", "deleteHorizonMs": b.delete_horizon_ms,
            "timestamps": [r.timestamp for r in b.records()], "extended (kafkafmt)": kip228.is_extended(b)}


def bit6_clean(timestamp: int, bit: int = SEED_BIT, *, now: int = NOW_MS,
               delete_retention_ms: int = 86_400_000) -> dict:
    """The batch replicated into a compacted partition (a follower's append), then one pass of Kafka 3.9's
    cleaner at ``now``: is the tombstone kept, and with which attributes and delete horizon."""
    from .compaction import append, batches, clean, new_partition, topic_props
    props = topic_props(2, **{"delete.retention.ms": delete_retention_ms})
    # the filler rolls the segment: the batch becomes cleanable
    filler = build_records([(now - 1000, b"f", b"x" * 900)], base_offset=2, partition_leader_epoch=0)
    with new_partition() as d:
        append(d, props, [bit6_batch(timestamp, bit=bit), filler], now - 1000)
        try:
            result = clean(d, props, now)
        except KafkaFmtError as e:  # the cleaner thread's LogCleaningException: the partition is marked uncleanable
            return {"cleaned": False, "tombstone": f"✗ pass fails: {e.reason}", "error": e.kafka_exception,
                    "keys kept": None, "attributes after": None, "deleteHorizonMs after": None}
        first = next((b for _, _, b in batches(d) if b.base_offset < 2), None)
        keys = [] if first is None else [bytes(r.key).decode() for r in first.records()]
    return {"cleaned": result.cleaned, "tombstone": "kept" if "gone" in keys else "removed", "keys kept": keys,
            "attributes after": None if first is None else f"0x{first.attributes:02x}",
            "deleteHorizonMs after": None if first is None else first.delete_horizon_ms}


#: the timestamps the table tries: one day before 1970 (what the bit is for) and one hour before "now"
BIT6_TIMESTAMPS = (-86_400_000, NOW_MS - 3_600_000)


def bit6_table(timestamps=BIT6_TIMESTAMPS, *, now: int = NOW_MS):
    """Seed 002's layout (bit 6) beside kafkafmt's (0x80): Kafka 3.9's reader and one pass of its cleaner on
    a compacted topic (``delete.retention.ms`` one day), for each timestamp."""
    import pandas as pd
    rows = []
    for timestamp, (name, bit) in ((t, nb) for t in timestamps
                                   for nb in (("seed 002: bit 6 (0x40)", SEED_BIT), ("kafkafmt: 0x80", KAFKAFMT_BIT))):
        read, cleaned = bit6_read(timestamp, bit), bit6_clean(timestamp, bit, now=now)
        rows.append({"timestamp": timestamp, "isTimestampExtended on": name, "attributes": read["attributes"],
                     "Kafka reader: deleteHorizonMs": read["deleteHorizonMs"],
                     "Kafka cleaner: tombstone": cleaned["tombstone"],
                     "attributes after cleaning": cleaned["attributes after"],
                     "deleteHorizonMs after cleaning": cleaned["deleteHorizonMs after"]})
    return pd.DataFrame(rows, dtype=object)  # object: a missing horizon stays None, the others ints


__all__ += ["bit6_batch", "bit6_read", "bit6_clean", "bit6_table", "SEED_BIT", "KAFKAFMT_BIT"]
