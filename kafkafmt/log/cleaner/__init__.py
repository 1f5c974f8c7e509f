"""Kafka's log cleaner (``LogCleaner``, ``Cleaner``, ``LogCleanerManager``) as a package, one module per part:

=================  ==============================================================================
``clean``          one pass over a partition (``CleanerThread.cleanFilthiestLog``, ``Cleaner.doClean``):
                   the cleanable range, the groups, ``cleanInto``, the segment swap, the checkpoint
``rules``          the retention rule (``Cleaner.shouldRetainRecord``, ``checkBatchRetention``,
                   ``needToSetDeleteHorizon``) written once, in Python, and compiled for the kernels
``filter``         ``MemoryRecords.filterTo`` with the cleaner's ``RecordFilter`` over one batch
                   (:class:`SegmentFilter`), the transaction metadata, ``buildRetainedRecordsInto``
``scan``           the same filter over one batch's records read in bulk (arrays, no object per record)
``kernels``        both passes over runs of plain batches in one compiled call each
``offset_map``     ``CleanerConfig`` and the offset map (``SkimpyOffsetMap``)
``table``          the offset map's table and MD5, compiled, laid out as Kafka's
``legacy_to_v2``   Kafka 4.x's rewrite of a v0/v1 entry as a v2 batch (KAFKA-13093)
=================  ==============================================================================

See ``docs/explanation/cleaner.md`` for how they fit together and what is checked against Kafka.
"""
from .clean import (
                    CLEANER_OFFSET_CHECKPOINT,
                    CleanResult,
                    PassProgress,
                    clean_log,
                    cleanable_offsets,
                    producer_state,
                    read_cleaner_checkpoint,
)
from .filter import AbortedTxn, CleanedTransactionMetadata, CleanerStats, LastRecord, SegmentFilter, rebuild_batch
from .legacy_to_v2 import rewrite_as_v2
from .offset_map import CLEANER_KEYS, CleanerConfig, InflatedValues, OffsetMap, release_offset_map
from .table import BYTES_PER_ENTRY

__all__ = ["CleanerConfig", "CleanResult", "clean_log", "PassProgress", "cleanable_offsets",
           "CLEANER_OFFSET_CHECKPOINT", "read_cleaner_checkpoint", "producer_state", "AbortedTxn",
           "CleanedTransactionMetadata", "CleanerStats", "LastRecord", "SegmentFilter", "rebuild_batch",
           "rewrite_as_v2", "CLEANER_KEYS", "OffsetMap", "InflatedValues", "release_offset_map", "BYTES_PER_ENTRY"]
