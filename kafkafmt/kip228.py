"""KIP-228 (seed 002): negative record timestamps.  EXPERIMENTAL — proposed, never adopted by Kafka.

The proposal adds an ``isTimestampExtended`` bit to the v2 batch attributes (the next free bit,
``0x80``); in an extended batch ``NO_TIMESTAMP`` is ``Long.MIN_VALUE`` and every other value,
``-1`` included, is a real time in ms (-1 = 1969-12-31T23:59:59.999Z).  Nothing here is used unless
asked for: kafkafmt's builder sets the bit only with ``timestamp_extended=True``.

The seed's two compatibility matrices are :data:`PRODUCER_MATRIX` and :data:`CONSUMER_MATRIX`;
:func:`producer_outcome` and :func:`consumer_interpretation` look cells up, and
:func:`convert_to_extended` is what the seed's "new broker" does to an old batch ("Broker should
convert old NO_TIMESTAMP=−1L to new NO_TIMESTAMP_EXTENDED=Long.MIN_VALUE").
"""
from __future__ import annotations

from dataclasses import dataclass

from .constants import (NO_TIMESTAMP, NO_TIMESTAMP_EXTENDED, V2_TIMESTAMP_EXTENDED_FLAG_MASK, TimestampType)
from .errors import IllegalArgumentError
from .records import MemoryRecords, MemoryRecordsBuilder

EXTENDED_BIT = V2_TIMESTAMP_EXTENDED_FLAG_MASK
SOURCE = "seed 002 (KIP-228)"


@dataclass(frozen=True)
class Cell:
    """One cell of a seed matrix."""

    ok: bool  #: the seed's tick (True) or cross (False)
    result: str  #: what the seed says happens
    stored: int | None  #: the timestamp stored/interpreted, when the seed names one
    means_no_timestamp: bool


# (producer, what it sends, extended bit) -> {broker: Cell}
PRODUCER_MATRIX: dict[tuple[str, str], dict[str, Cell]] = {
    ("old", "NO_TIMESTAMP (-1L), isTimestampExtended = 0"): {
        "old": Cell(True, "Records this as NO_TIMESTAMP (-1L)", NO_TIMESTAMP, True),
        "new": Cell(True, "Records this as NO_TIMESTAMP (Long.MIN_VALUE)", NO_TIMESTAMP_EXTENDED, True),
    },
    ("new", "NO_TIMESTAMP (Long.MIN_VALUE), isTimestampExtended = 1"): {
        "old": Cell(False, "Error or records this as NO_TIMESTAMP (-1L)", NO_TIMESTAMP, True),
        "new": Cell(True, "Records this as NO_TIMESTAMP (Long.MIN_VALUE)", NO_TIMESTAMP_EXTENDED, True),
    },
    ("new", "-1L ms, isTimestampExtended = 1"): {
        "old": Cell(False, "Error or records this as NO_TIMESTAMP (-1L)", NO_TIMESTAMP, True),
        "new": Cell(True, "Records this as -1L ms", -1, False),
    },
}

# (record timestamp, extended bit) -> {consumer: Cell}
CONSUMER_MATRIX: dict[tuple[str, int], dict[str, Cell]] = {
    ("-1L", 0): {"old": Cell(True, "Interpret as NO_TIMESTAMP (-1L)", NO_TIMESTAMP, True),
                 "new": Cell(True, "Interpret as NO_TIMESTAMP (Long.MIN_VALUE)", NO_TIMESTAMP_EXTENDED, True)},
    ("-1L", 1): {"old": Cell(False, "Error or NO_TIMESTAMP", None, True),
                 "new": Cell(True, "Interpret as -1L ms", -1, False)},
    ("Long.MIN_VALUE", 1): {"old": Cell(False, "Error or NO_TIMESTAMP", None, True),
                            "new": Cell(True, "Interpret as NO_TIMESTAMP (Long.MIN_VALUE)", NO_TIMESTAMP_EXTENDED, True)},
}


def producer_outcome(producer: str, sends: int, broker: str) -> Cell:
    """Seed 002's producer matrix: an ``old``/``new`` producer sends timestamp ``sends`` to an
    ``old``/``new`` broker.  An old producer never sets the bit; a new one always does."""
    if producer == "old":
        if sends != NO_TIMESTAMP:
            raise IllegalArgumentError("the seed's producer matrix lists the old producer sending -1 only")
        key = ("old", "NO_TIMESTAMP (-1L), isTimestampExtended = 0")
    elif sends == NO_TIMESTAMP_EXTENDED:
        key = ("new", "NO_TIMESTAMP (Long.MIN_VALUE), isTimestampExtended = 1")
    elif sends == -1:
        key = ("new", "-1L ms, isTimestampExtended = 1")
    else:
        raise IllegalArgumentError("the seed's producer matrix covers -1 and Long.MIN_VALUE only")
    return PRODUCER_MATRIX[key][broker]


def consumer_interpretation(consumer: str, timestamp: int, extended: bool) -> Cell:
    """Seed 002's consumer matrix; other timestamps read as themselves for both consumers."""
    if timestamp == NO_TIMESTAMP:
        return CONSUMER_MATRIX[("-1L", int(extended))][consumer]
    if timestamp == NO_TIMESTAMP_EXTENDED and extended:
        return CONSUMER_MATRIX[("Long.MIN_VALUE", 1)][consumer]
    if timestamp < 0 and consumer == "old":
        return Cell(False, "negative timestamp not representable for an old client", None, False)
    return Cell(True, "a timestamp in ms", timestamp, False)


def producer_matrix_rows() -> list[dict]:
    return [{"producer": p, "sends": s, "broker": b, "ok": c.ok, "result": c.result}
            for (p, s), row in PRODUCER_MATRIX.items() for b, c in row.items()]


def consumer_matrix_rows() -> list[dict]:
    return [{"record timestamp": ts, "isTimestampExtended": bit, "consumer": who, "ok": c.ok, "result": c.result}
            for (ts, bit), row in CONSUMER_MATRIX.items() for who, c in row.items()]


def is_extended(batch) -> bool:
    return batch.magic >= 2 and bool(batch.attributes & EXTENDED_BIT)


def convert_to_extended(data: bytes) -> bytes:
    """The seed's new broker: rebuild each non-extended v2 batch as extended, turning ``-1``
    (old NO_TIMESTAMP) into ``Long.MIN_VALUE``.  Extended batches and v0/v1 are kept as they are."""
    out = []
    for batch in MemoryRecords(data).batches():
        if batch.magic < 2 or is_extended(batch) or batch.is_control:
            out.append(bytes(batch.raw))
            continue
        b = MemoryRecordsBuilder(2, batch.compression, batch.timestamp_type, batch.base_offset,
                                 log_append_time=batch.max_timestamp, producer_id=batch.producer_id,
                                 producer_epoch=batch.producer_epoch, base_sequence=batch.base_sequence,
                                 is_transactional=batch.is_transactional,
                                 partition_leader_epoch=batch.partition_leader_epoch, timestamp_extended=True)
        for r in batch.records():
            ts = NO_TIMESTAMP_EXTENDED if r.timestamp == NO_TIMESTAMP else r.timestamp
            b.append_with_offset(r.offset, ts, r.key, r.value, r.headers)
        out.append(b.build())
    return b"".join(out)


__all__ = ["EXTENDED_BIT", "Cell", "PRODUCER_MATRIX", "CONSUMER_MATRIX", "producer_outcome", "consumer_interpretation",
           "producer_matrix_rows", "consumer_matrix_rows", "is_extended", "convert_to_extended", "TimestampType"]
