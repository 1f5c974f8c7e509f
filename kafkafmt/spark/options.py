"""The options of the ``kafkafmt`` data source, as data: their names as Spark spells them, their defaults and
what they do.  :class:`~kafkafmt.spark.plan.ReadOptions` and :class:`~kafkafmt.spark.write.WriteOptions` parse
them; the documentation's option tables are drawn from these tuples.

Reader option names and meanings follow Spark's Kafka source (``KafkaSourceProvider``,
``KafkaOffsetRangeLimit``) and Spark's file sources (``mode``); the writer's columns and ``topic`` option
follow Spark's Kafka sink (``KafkaWriter``).  Spark's option names are case-insensitive.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SparkOption:
    """One option: ``name`` as Spark spells it, its ``default`` as a reader sees it, ``meaning``."""

    name: str
    default: str
    meaning: str


#: ``spark.read.format("kafkafmt").option(...)``
READ_OPTIONS = (
    SparkOption("startingOffsets", "earliest",
                "``earliest`` (the log start offset, with the log-start checkpoint as Kafka loads it) or JSON "
                "``{\"topic\": {\"0\": 23, \"1\": -2}}`` with -2 = earliest; as in Spark's batch queries "
                "``latest`` cannot start a read. Partitions the JSON leaves out read from the earliest offset "
                "(Spark requires every partition; kafkafmt is lenient)."),
    SparkOption("endingOffsets", "latest",
                "``latest`` (the log end) or JSON as ``startingOffsets`` with -1 = latest; exclusive; "
                "``earliest`` cannot end a read."),
    SparkOption("startingTimestamp", "(none)",
                "milliseconds; each partition starts at the offset ListOffsets (``offsetsForTimes``) would answer, "
                "found through the ``.timeindex`` and ``.index`` as ``UnifiedLog.fetchOffsetByTimestamp`` does: "
                "segments wholly before it are never opened and the read starts mid-segment. No answer: the read "
                "is empty. Takes precedence over ``startingOffsets``."),
    SparkOption("endingTimestamp", "(none)",
                "milliseconds, as ``startingTimestamp``, for the end (exclusive; no answer: the log end). "
                "Takes precedence over ``endingOffsets``."),
    SparkOption("maxBytesPerPartition", "134217728",
                "the largest byte range one Spark partition reads (128 MiB, as "
                "``spark.sql.files.maxPartitionBytes``); larger segment ranges are cut at batch boundaries "
                "taken from the ``.index``, small ranges of one topic-partition packed together up to it (each "
                "topic-partition gets at least one Spark partition, as in Spark's Kafka source)."),
    SparkOption("minPartitions", "(none)",
                "at least this many Spark partitions where the data allows it (as Spark's Kafka source)."),
    SparkOption("level", "record", "``record``, or ``batch``: one row per batch, nothing decompressed."),
    SparkOption("includeData", "true", "``false`` leaves ``key``, ``value`` and ``headers`` null (offsets and "
                "timestamps only)."),
    SparkOption("mode", "FAILFAST",
                "``FAILFAST``: a corrupt, truncated or CRC-failing batch fails the job with kafkafmt's "
                "``CorruptRecordError`` naming the file and byte position. ``PERMISSIVE``: the rows before it are "
                "kept and one row with ``error`` set reports the rest of that byte range."),
)

#: ``df.write.format("kafkafmt").option(...)``
WRITE_OPTIONS = (
    SparkOption("magic", "2", "the message format written: 0, 1 or 2."),
    SparkOption("codec", "none", "``none``, ``gzip``, ``snappy``, ``lz4`` or ``zstd`` (magic 2 only, KIP-110)."),
    SparkOption("batchSize", "16384", "bytes of record data per batch (as the producer's ``batch.size``)."),
    SparkOption("segmentBytes", "1073741824", "``segment.bytes`` of the logs written (1 GiB, Kafka's default)."),
    SparkOption("topic", "(the topic column)", "the topic of every row; wins over the ``topic`` column, as in "
                "Spark's Kafka sink."),
    SparkOption("defaultTimestamp", "(the commit's time)",
                "milliseconds, for rows without a ``timestamp`` (default: the time of the commit, read once from "
                "the system clock)."),
)


def default(options: tuple[SparkOption, ...], name: str) -> str:
    """The documented default of option ``name``."""
    return next(o.default for o in options if o.name == name)


__all__ = ["SparkOption", "READ_OPTIONS", "WRITE_OPTIONS", "default"]
