"""The log on disk: segments, indexes, rolling, retention, recovery, timestamp lookup.

A Python re-implementation of Apache Kafka 3.9's local log (``UnifiedLog``, ``LocalLog``,
``LogLoader``, ``LogSegment``, ``OffsetIndex``, ``TimeIndex``, ``FileRecords``), writing files
byte-for-byte as Kafka does, driven by a clock that only moves when told to.

Modules:

=================  ==============================================================================
``clock``          :class:`SimulatedClock`, :class:`SystemClock`
``index``          :class:`OffsetIndex`, :class:`TimeIndex` (file-backed or in memory)
``file_records``   :class:`FileRecords` (a segment's ``.log``), shallow batch iteration
``segment``        :class:`LogSegment`
``log``            :class:`Log` (appends, rolls, lookups, reads, truncation, close/reopen)
``loader``         loading and recovery of a directory (``LogLoader``), mixed into :class:`Log`
``retention``      ``deleteOldSegments`` (time, size, log start offset), mixed into :class:`Log`
``cleaner``        the log cleaner as a package (``LogCleaner``/``Cleaner``): one pass,
                   :func:`~kafkafmt.log.cleaner.clean_log` / ``Log.clean``; its retention rule written
                   once (``cleaner.rules``), the offset map, the kernels, the legacy-to-v2 rewrite
``epoch``          the leader epoch cache and its ``leader-epoch-checkpoint`` file
``kip33``          seed 001's rejected variant: LogAppendTime only in the time index;
                   :func:`companion_partition`
``view``           the one read-only view of a partition (:class:`PartitionView`, :class:`SegmentView`)
``index_dump``     kafka-dump-log's lines for ``.index`` / ``.timeindex`` (on this floor: it reads the
                   indexes and the segment's ``FileRecords``; its sibling for batches,
                   :mod:`kafkafmt.records.dump_log`, needs only records and stays one floor down)
``files``          names, atomic file operations, checkpoint files
``lock``           the log directory's ``.lock``, taken as a broker takes it (``LogManager.lockLogDirs``)
``logdir``         what ``LogManager`` keeps per log directory: the clean-shutdown marker, the recovery-point
                   and log-start checkpoints (one line per partition)
=================  ==============================================================================

Sample-log generation, workloads and the KIP-33 policy comparison live one floor up, in
:mod:`kafkafmt.gen`.

The topic configuration is :class:`kafkafmt.config.LogConfig` (one class for the log and the
broker rules).

Behaviour is that of the Kafka 3.9.2 jars the oracle runs (tests/log/test_log_vs_kafka.py compares
the files byte for byte); ``Log(..., index_granularity="append")`` gives the per-append indexing of
Kafka <= 3.9.0 described in kafka-rules §6.5.
"""
from ..config import BrokerConfig, LogConfig
from .clock import Clock, SimulatedClock, SystemClock
from .file_records import FileBatch, FileRecords, LogOffsetPosition, TimestampAndOffset
from .files import filename_prefix_from_offset, offset_from_file_name
from .index import OffsetIndex, OffsetPosition, TimeIndex, TimestampOffset
from .index_dump import DumpErrors, dump_index, dump_time_index
from .kip33 import companion_partition
from .log import (
                  EARLIEST_LOCAL_TIMESTAMP,
                  EARLIEST_TIMESTAMP,
                  LATEST_TIERED_TIMESTAMP,
                  LATEST_TIMESTAMP,
                  MAX_TIMESTAMP,
                  Log,
                  LogAppendInfo,
)
from .segment import FetchDataInfo, LogOffsetMetadata, LogSegment, RollParams
from .view import PartitionView, SegmentReads, SegmentView, discover

__all__ = [
    "Clock", "SimulatedClock", "SystemClock", "LogConfig", "BrokerConfig", "DumpErrors", "dump_index", "dump_time_index",
    "FileBatch", "FileRecords", "LogOffsetPosition", "TimestampAndOffset", "filename_prefix_from_offset",
    "offset_from_file_name", "OffsetIndex", "OffsetPosition", "TimeIndex", "TimestampOffset",
    "companion_partition", "EARLIEST_LOCAL_TIMESTAMP", "EARLIEST_TIMESTAMP",
    "LATEST_TIERED_TIMESTAMP", "LATEST_TIMESTAMP", "MAX_TIMESTAMP", "Log", "LogAppendInfo", "FetchDataInfo",
    "LogOffsetMetadata", "LogSegment", "RollParams", "PartitionView", "SegmentReads", "SegmentView", "discover",
]
