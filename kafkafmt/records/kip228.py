"""KIP-228 (seed 002): negative record timestamps.  EXPERIMENTAL — proposed, never adopted by Kafka.

The proposal adds an ``isTimestampExtended`` bit to the v2 batch attributes (the next free bit,
``0x80``); in an extended batch ``NO_TIMESTAMP`` is ``Long.MIN_VALUE`` and every other value,
``-1`` included, is a real time in ms (-1 = 1969-12-31T23:59:59.999Z).  Nothing here is used unless
asked for: kafkafmt's builder sets the bit only with ``timestamp_extended=True``.

:func:`interpret_timestamp` is the reading rule of an old (Kafka) and a new (KIP-228) consumer, and
:func:`convert_to_extended` is what the seed's "new broker" does to an old batch ("Broker should
convert old NO_TIMESTAMP=−1L to new NO_TIMESTAMP_EXTENDED=Long.MIN_VALUE").  The seed's two
compatibility matrices are not typed here: :mod:`kafkafmt.scenarios.matrices` computes every cell
by running producers, brokers and consumers on real bytes, beside the seed's cell and Kafka 3.9.
"""
from __future__ import annotations

from ..constants import NO_TIMESTAMP, NO_TIMESTAMP_EXTENDED, V2_TIMESTAMP_EXTENDED_FLAG_MASK, TimestampType
from . import MemoryRecords, MemoryRecordsBuilder

EXTENDED_BIT = V2_TIMESTAMP_EXTENDED_FLAG_MASK
SOURCE = "seed 002 (KIP-228)"


def interpret_timestamp(timestamp: int, extended: bool, *, aware: bool) -> tuple[int, str]:
    """How a consumer reads one record's timestamp: ``(value, "NO_TIMESTAMP" | "time")``.

    ``aware=False`` is Kafka's own consumer (every release, 3.9 included): it knows no
    ``isTimestampExtended`` bit, and ``ConsumerRecord.NO_TIMESTAMP`` is -1, so -1 means "no timestamp"
    and every other value, Long.MIN_VALUE included, is a time.  ``aware=True`` is seed 002's new
    consumer: in an extended batch Long.MIN_VALUE is NO_TIMESTAMP and -1 is a real time; in an old batch
    -1 is NO_TIMESTAMP, reported as Long.MIN_VALUE ("Interpret as NO_TIMESTAMP (Long.MIN_VALUE)").
    The seed's matrices are computed from this rule and real bytes in :mod:`kafkafmt.scenarios.matrices`.
    """
    if not aware:
        return timestamp, "NO_TIMESTAMP" if timestamp == NO_TIMESTAMP else "time"
    if extended:
        return timestamp, "NO_TIMESTAMP" if timestamp == NO_TIMESTAMP_EXTENDED else "time"
    if timestamp == NO_TIMESTAMP:
        return NO_TIMESTAMP_EXTENDED, "NO_TIMESTAMP"
    return timestamp, "time"


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


__all__ = ["EXTENDED_BIT", "interpret_timestamp", "is_extended", "convert_to_extended", "TimestampType"]
