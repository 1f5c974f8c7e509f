"""The log cleaner's retention rule, written once: what Kafka's ``RecordFilter`` in ``Cleaner.cleanInto``
decides of a batch and of each of its records (Kafka 3.9 ``Cleaner.shouldRetainRecord``,
``checkBatchRetention``, ``MemoryRecords.filterTo``'s ``needToSetDeleteHorizon``; the same in 4.4.0's
``org.apache.kafka.storage.internals.log.Cleaner``).

Each rule is a plain Python function over scalars.  The per-batch paths (:mod:`kafkafmt.log.cleaner.filter`,
:mod:`kafkafmt.log.cleaner.scan`) call it as it is; the compiled runs (:mod:`kafkafmt.log.cleaner.kernels`)
call its compiled form (the ``compiled_*`` names: the same function, compiled by numba and inlined into each
kernel), so the fast paths compile this one definition rather than restating it.

Per batch (``checkBatchRetention``): :func:`batch_retention` gives :data:`RETAIN_EMPTY` (an empty batch
is written when no record is kept: the batch holding an active producer's last sequence, KAFKA-5196; the
batch whose next offset ends the round, KAFKA-17076), :data:`DELETE` (an aborted transaction's batch, a
marker whose transaction is gone and whose horizon has passed) or :data:`DELETE_EMPTY` (dropped when no
record is kept).

Per record (``shouldRetainRecord``): :func:`record_retention`.  A record past the offset map's latest
offset stays (the map did not reach it); a keyless record goes (counted as invalid); a record stays if
its offset is its key's latest in the map and it has a value, or is a tombstone still inside its delete
horizon (:func:`tombstones_retained`: v2 by the batch's ``deleteHorizonMs``, KIP-534; v0/v1 by the
segment's modification time against ``delete.retention.ms``).

A v2 batch that keeps a tombstone (or a marker of an emptied transaction) and has no delete horizon yet
gets one, ``now + delete.retention.ms`` (:func:`needs_delete_horizon`, KIP-534).
"""
from __future__ import annotations

from ...records.fast.jit import inline

__all__ = ["DELETE", "RETAIN_EMPTY", "DELETE_EMPTY", "RETAIN", "DROP_NO_KEY", "DROP_TOMBSTONE", "DROP_SUPERSEDED",
           "batch_retention", "record_retention", "tombstones_retained", "needs_delete_horizon",
           "compiled_batch_retention", "compiled_record_retention", "compiled_tombstones_retained",
           "compiled_needs_delete_horizon"]

#: ``RecordFilter.BatchRetention``: what is written of a batch when none of its records is kept
DELETE, RETAIN_EMPTY, DELETE_EMPTY = 0, 1, 2

#: what :func:`record_retention` decided of one record: kept, or why it goes (each counted apart in
#: ``CleanerStats``: ``invalidMessage``, tombstones removed, records superseded by a later one of its key)
RETAIN, DROP_NO_KEY, DROP_TOMBSTONE, DROP_SUPERSEDED = 0, 1, 2, 3


def batch_retention(discard: bool, has_producer_id: bool, last_of_producer: bool, ends_round: bool) -> int:
    """``checkBatchRetention``: :data:`RETAIN_EMPTY` for an active producer's last batch
    (``has_producer_id`` and ``last_of_producer``: it holds the producer's last sequence, or is its last
    marker) or the batch whose next offset ends the round (``ends_round``); else :data:`DELETE` when the
    transaction metadata discards it (``discard``), else :data:`DELETE_EMPTY`."""
    if has_producer_id and last_of_producer:
        return RETAIN_EMPTY
    if ends_round:
        return RETAIN_EMPTY
    if discard:
        return DELETE
    return DELETE_EMPTY


def tombstones_retained(has_horizon: bool, horizon_ms: int, now: int) -> bool:
    """Whether a v2 batch's tombstones are still kept: no ``deleteHorizonMs`` set yet, or ``now`` before it."""
    return not has_horizon or now < horizon_ms


def record_retention(offset: int, map_latest_offset: int, has_key: bool, key_latest_offset: int,
                     is_tombstone: bool, keep_tombstones: bool) -> int:
    """``shouldRetainRecord`` for a data record at ``offset``: :data:`RETAIN` or the reason it goes.

    ``map_latest_offset``: the last offset the offset map covers; ``key_latest_offset``: the map's offset for
    the record's key (-1 when not in it); ``keep_tombstones``: :func:`tombstones_retained` for a v2 batch,
    the segment's time rule for v0/v1."""
    if offset > map_latest_offset:
        return RETAIN
    if not has_key:
        return DROP_NO_KEY
    if offset >= key_latest_offset:
        if not is_tombstone or keep_tombstones:
            return RETAIN
        return DROP_TOMBSTONE
    return DROP_SUPERSEDED


def needs_delete_horizon(is_v2: bool, kept_tombstone: bool, kept_empty_txn_marker: bool, has_horizon: bool) -> bool:
    """``needToSetDeleteHorizon``: a v2 batch keeping a tombstone or a marker of an emptied transaction, with
    no delete horizon yet, is rebuilt with ``deleteHorizonMs = now + delete.retention.ms`` (KIP-534)."""
    return is_v2 and (kept_tombstone or kept_empty_txn_marker) and not has_horizon


#: the same rules compiled, inlined into every kernel that calls them
compiled_batch_retention = inline(batch_retention)
compiled_record_retention = inline(record_retention)
compiled_tombstones_retained = inline(tombstones_retained)
compiled_needs_delete_horizon = inline(needs_delete_horizon)
