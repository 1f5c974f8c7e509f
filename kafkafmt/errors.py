"""The kafkafmt exception hierarchy.

Every error kafkafmt raises on bad input is a :class:`KafkaFmtError`.  Each class
names the Apache Kafka exception it mirrors (``kafka_exception``) and, where Kafka
maps it to a protocol error, the error code a broker would answer with
(``error_code``, from ``org.apache.kafka.common.protocol.Errors``).

Errors about bytes carry ``position`` (the byte position in the input where the
problem was found, or ``None``) and ``reason`` (a sentence), so a caller can
point at the faulty byte.  ``str(err)`` always includes both.

Hierarchy::

    KafkaFmtError
    ├── CorruptRecordError            CorruptRecordException (2, CORRUPT_MESSAGE)
    │   ├── TruncatedRecordError      input ends inside a declared length
    │   ├── CompressionFramingError   a codec stream is malformed (IOException in Kafka)
    │   └── DecodeLimitError          a decode would exceed a configured limit (kafkafmt.limits)
    │       └── DecompressionLimitError   decompressed data exceeds the configured cap
    ├── InvalidRecordError            InvalidRecordException (87, INVALID_RECORD)
    │   └── RecordValidationError     per-record errors collected by LogValidator
    ├── InvalidTimestampError         InvalidTimestampException (32, INVALID_TIMESTAMP)
    ├── UnsupportedCompressionError   UnsupportedCompressionTypeException (76)
    ├── UnsupportedForMessageFormatError  UnsupportedForMessageFormatException (43)
    ├── TransactionalIdAuthorizationError TransactionalIdAuthorizationException (53)
    ├── IllegalArgumentError          java.lang.IllegalArgumentException (builder misuse)
    ├── RecordTooLargeError           RecordTooLargeException (10)
    ├── RecordBatchTooLargeError      RecordBatchTooLargeException (18)
    ├── OffsetOutOfRangeError         OffsetOutOfRangeException (1)
    ├── InvalidOffsetError            InvalidOffsetException (index append out of order)
    ├── CorruptIndexError             CorruptIndexException (index sanity check)
    ├── IndexFullError                IllegalArgumentException on a full index
    ├── LogSegmentOffsetOverflowError LogSegmentOffsetOverflowException
    ├── IndexOffsetOverflowError      IndexOffsetOverflowException
    ├── OffsetsOutOfOrderError        OffsetsOutOfOrderException (follower append)
    ├── UnexpectedAppendOffsetError   UnexpectedAppendOffsetException (follower append)
    ├── UnsupportedOperationError     java.lang.UnsupportedOperationException
    ├── IllegalStateError             java.lang.IllegalStateException
    ├── KafkaStorageError             a structural log error Kafka raises as KafkaException
    │   └── LogDirLockedError         another process (a broker) holds a log directory's ``.lock``
    ├── CheckpointError               a malformed checkpoint file (IOException in CheckpointFile)
    ├── UnsupportedVersionError       UnsupportedVersionException (a request version 4.x no longer answers)
    ├── ConfigError                   ConfigException (invalid topic/log setting)
    │   └── BrokerConfigRefusedError  IllegalArgumentException: a broker refuses to start (KafkaConfig)
    ├── NoSuchFileError               java.nio.file.NoSuchFileException (also: a directory given as a file)
    ├── FileAccessError               an input file that cannot be read (permissions, I/O error)
    ├── DumpToolError                 kafka-dump-log would stop with the named Java exception
    └── SpecError                     a JSON record-set spec (``kafkafmt build``) is invalid
"""
from __future__ import annotations

from typing import Type  # builtins.type in a signature is an ambiguous cross-reference in the docs


class KafkaFmtError(Exception):
    """Base class of every kafkafmt error."""

    kafka_exception: str = ""
    error_code: int | None = None

    def __init__(self, reason: str, *, position: int | None = None, offset: int | None = None):
        self.reason = reason
        self.position = position
        self.offset = offset
        super().__init__(self._render())

    def _render(self) -> str:
        where = []
        if self.position is not None:
            where.append(f"at byte position {self.position}")
        if self.offset is not None:
            where.append(f"record offset {self.offset}")
        prefix = f"[{', '.join(where)}] " if where else ""
        return f"{prefix}{self.reason}"

    def at(self, base: int) -> "KafkaFmtError":
        """Shift ``position`` by ``base`` (used when a sub-buffer error surfaces in a larger buffer)."""
        if self.position is not None:
            self.position += base
        else:
            self.position = base
        self.args = (self._render(),)
        return self


class CorruptRecordError(KafkaFmtError):
    """Bytes that cannot be a record: bad CRC, impossible size, bad magic (Kafka CorruptRecordException)."""

    kafka_exception = "CorruptRecordException"
    error_code = 2


class TruncatedRecordError(CorruptRecordError):
    """The input ends before a length it declares (a truncated batch, record or stream)."""


class CompressionFramingError(CorruptRecordError):
    """A compressed stream is malformed: bad magic, bad frame descriptor, bad block size."""

    kafka_exception = "KafkaException(IOException)"


class DecodeLimitError(CorruptRecordError):
    """Decoding would exceed a configured work limit (records per batch, decompressed bytes);
    see :mod:`kafkafmt.limits`.  Kafka has no such limits: this is kafkafmt refusing hostile input."""


class DecompressionLimitError(DecodeLimitError):
    """Decompressed data would exceed the configured ``max_decompressed_bytes`` cap."""


class InvalidRecordError(KafkaFmtError):
    """A structurally invalid record or batch (Kafka InvalidRecordException)."""

    kafka_exception = "InvalidRecordException"
    error_code = 87


class RecordValidationError(InvalidRecordError):
    """LogValidator's collected per-record errors (Kafka RecordValidationException).

    ``record_errors`` is a list of ``(batch_index, record_index, message)``; ``cause`` is the
    top-level Kafka exception class name that the broker answers with.
    """

    def __init__(self, reason: str, record_errors, *, cause: Type[KafkaFmtError] | None = None, **kw):
        self.record_errors = list(record_errors)
        self.cause = cause or InvalidRecordError
        super().__init__(reason, **kw)
        self.kafka_exception = self.cause.kafka_exception
        self.error_code = self.cause.error_code


class InvalidTimestampError(KafkaFmtError):
    """A timestamp outside the topic's allowed range, or a forbidden timestamp type."""

    kafka_exception = "InvalidTimestampException"
    error_code = 32


class UnsupportedCompressionError(KafkaFmtError):
    """A codec that this magic, request version or broker does not allow (e.g. zstd with v0/v1)."""

    kafka_exception = "UnsupportedCompressionTypeException"
    error_code = 76


class UnsupportedVersionError(KafkaFmtError):
    """A request version the broker no longer answers (KIP-896, Kafka 4.0): the broker logs
    ``UnsupportedVersionException`` and closes the connection; the client gets no response."""

    kafka_exception = "UnsupportedVersionException"
    error_code = 35


class UnsupportedForMessageFormatError(KafkaFmtError):
    """A feature the topic's message format cannot carry (transactions, idempotence below v2)."""

    kafka_exception = "UnsupportedForMessageFormatException"
    error_code = 43


class TransactionalIdAuthorizationError(KafkaFmtError):
    """A produce request with transactional records but no (authorized) transactional id
    (``KafkaApis.handleProduceRequest``)."""

    kafka_exception = "TransactionalIdAuthorizationException"
    error_code = 53


class IllegalArgumentError(KafkaFmtError, ValueError):
    """A caller asked for something Kafka's builders refuse (java.lang.IllegalArgumentException)."""

    kafka_exception = "IllegalArgumentException"


class RecordTooLargeError(KafkaFmtError):
    kafka_exception = "RecordTooLargeException"
    error_code = 10


class RecordBatchTooLargeError(KafkaFmtError):
    kafka_exception = "RecordBatchTooLargeException"
    error_code = 18


class OffsetOutOfRangeError(KafkaFmtError):
    kafka_exception = "OffsetOutOfRangeException"
    error_code = 1


class InvalidOffsetError(KafkaFmtError):
    kafka_exception = "InvalidOffsetException"


class CorruptIndexError(KafkaFmtError):
    kafka_exception = "CorruptIndexException"


class IndexFullError(KafkaFmtError):
    kafka_exception = "IllegalArgumentException"


class LogSegmentOffsetOverflowError(KafkaFmtError):
    kafka_exception = "LogSegmentOffsetOverflowException"


class IndexOffsetOverflowError(KafkaFmtError):
    """An offset that cannot be stored relative to the index base."""

    kafka_exception = "IndexOffsetOverflowException"


class OffsetsOutOfOrderError(KafkaFmtError):
    """A follower append whose offsets do not increase."""

    kafka_exception = "OffsetsOutOfOrderException"
    error_code = -1


class UnexpectedAppendOffsetError(KafkaFmtError):
    """A follower append starting below the log end offset."""

    kafka_exception = "UnexpectedAppendOffsetException"
    error_code = -1

    def __init__(self, reason: str, first_offset: int | None = None, last_offset: int | None = None, **kw):
        self.first_offset = first_offset
        self.last_offset = last_offset
        super().__init__(reason, **kw)


class UnsupportedOperationError(KafkaFmtError):
    """``java.lang.UnsupportedOperationException`` (not an ApiException: the broker answers UNKNOWN_SERVER_ERROR)."""

    kafka_exception = "UnsupportedOperationException"
    error_code = -1


class IllegalStateError(KafkaFmtError):
    """``java.lang.IllegalStateException`` (e.g. a time index entry with a smaller timestamp)."""

    kafka_exception = "IllegalStateException"


class KafkaStorageError(KafkaFmtError):
    """A structural log error Kafka raises as a plain ``KafkaException`` (e.g. rolling onto an existing segment)."""

    kafka_exception = "KafkaException"


class LogDirLockedError(KafkaStorageError):
    """A log directory's ``.lock`` is held by another process: a running broker, or another kafkafmt writing
    there (Kafka's ``LogManager.lockLogDirs``: "Failed to acquire lock on file .lock in <dir>. A Kafka instance
    in another process or thread is using this directory.").

    Raised before anything is written: the directory keeps every byte and modification time.  ``log_dir`` is
    the directory, ``holder_pid`` the process holding the lock when the kernel says (``F_GETLK``; None for an
    open-file-description lock or when unknown), ``holder`` a short description of that process.  See
    :mod:`kafkafmt.log.lock`.
    """

    def __init__(self, reason: str, *, log_dir=None, holder_pid: int | None = None, holder: str | None = None, **kw):
        super().__init__(reason, **kw)
        self.log_dir = log_dir
        self.holder_pid = holder_pid
        self.holder = holder


class ConfigError(KafkaFmtError, ValueError):
    """An invalid topic/broker/log setting (Kafka ``ConfigException``)."""

    kafka_exception = "ConfigException"


class BrokerConfigRefusedError(ConfigError):
    """A broker's own settings its release refuses to start with: ``KafkaConfig.validateValues``'s
    ``require(...)``, which throws ``IllegalArgumentException("requirement failed: " + reason)``.  ``reason``
    is worded as the release words it; ``row`` names the :mod:`kafkafmt.kafka_lines` row that decided."""

    kafka_exception = "IllegalArgumentException"

    def __init__(self, reason: str, *, row: str = "") -> None:
        self.row = row
        super().__init__(reason)


class NoSuchFileError(KafkaFmtError, FileNotFoundError):
    """A file Kafka expects is missing (``java.nio.file.NoSuchFileException``)."""

    kafka_exception = "NoSuchFileException"


class FileAccessError(KafkaFmtError, OSError):
    """An input file exists but cannot be read (java.io.IOException: permissions, I/O error)."""

    kafka_exception = "IOException"


class CheckpointError(KafkaFmtError, ValueError):
    """A malformed checkpoint file (``CheckpointFile``'s ``IOException``: bad version, line or count)."""

    kafka_exception = "IOException"


class DumpToolError(KafkaFmtError):
    """kafka-dump-log would stop with this Java exception (its name is in ``kafka_exception``)."""

    def __init__(self, reason: str, kafka_exception: str, **kw):
        super().__init__(reason, **kw)
        self.kafka_exception = kafka_exception


class SpecError(KafkaFmtError, ValueError):
    """A JSON record-set spec given to ``kafkafmt build`` is invalid."""
