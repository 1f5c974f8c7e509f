"""Errors of the log layer that :mod:`kafkafmt.errors` does not (yet) define.

Each mirrors the Kafka exception named in ``kafka_exception``.  They subclass
:class:`~kafkafmt.errors.KafkaFmtError` so callers can catch everything kafkafmt raises in one
place.  (Proposed for a move to ``kafkafmt/errors.py``; until then they live here.)
"""
from __future__ import annotations

from ..errors import KafkaFmtError


class IndexOffsetOverflowError(KafkaFmtError):
    """An offset that cannot be stored relative to the index base (``IndexOffsetOverflowException``)."""

    kafka_exception = "IndexOffsetOverflowException"


class IllegalStateError(KafkaFmtError):
    """``java.lang.IllegalStateException`` (e.g. a time index entry with a smaller timestamp)."""

    kafka_exception = "IllegalStateException"


class UnexpectedAppendOffsetError(KafkaFmtError):
    """A follower append whose first offset is below the log end offset (``UnexpectedAppendOffsetException``)."""

    kafka_exception = "UnexpectedAppendOffsetException"

    def __init__(self, reason: str, first_offset: int, last_offset: int):
        self.first_offset = first_offset
        self.last_offset = last_offset
        super().__init__(reason)


class OffsetsOutOfOrderError(KafkaFmtError):
    """Batches of a follower append whose offsets do not increase (``OffsetsOutOfOrderException``)."""

    kafka_exception = "OffsetsOutOfOrderException"


class KafkaStorageError(KafkaFmtError):
    """A structural log error Kafka raises as a plain ``KafkaException`` (e.g. rolling onto an existing segment)."""

    kafka_exception = "KafkaException"


class ConfigError(KafkaFmtError, ValueError):
    """An invalid log/topic configuration value (``ConfigException``)."""

    kafka_exception = "ConfigException"


class NoSuchFileError(KafkaFmtError, FileNotFoundError):
    """A file Kafka expects is missing (``java.nio.file.NoSuchFileException``)."""

    kafka_exception = "NoSuchFileException"


class DumpToolError(KafkaFmtError):
    """kafka-dump-log would stop with this Java exception (its name is in ``kafka_exception``)."""

    def __init__(self, reason: str, kafka_exception: str):
        super().__init__(reason)
        self.kafka_exception = kafka_exception
