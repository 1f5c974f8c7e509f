"""Constants and small enums of Kafka's record formats.

Values from ``org.apache.kafka.common.record.RecordBatch``, ``Records``, ``TimestampType``,
``CompressionType`` and ``LegacyRecord`` / ``DefaultRecordBatch``.
"""
from __future__ import annotations

import enum

from .layout import DEFAULT_BATCH, LEGACY_V0, LEGACY_V1, LEGACY_VALUE_LENGTH, LOG_ENTRY

# RecordBatch
NO_TIMESTAMP = -1
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_PARTITION_LEADER_EPOCH = -1
MAGIC_VALUE_V0 = 0
MAGIC_VALUE_V1 = 1
MAGIC_VALUE_V2 = 2
CURRENT_MAGIC_VALUE = MAGIC_VALUE_V2

INT32_MAX = 2**31 - 1
INT32_MIN = -(2**31)
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)

# Records: every entry starts offset:int64 size:int32 (layout.LOG_ENTRY); the magic byte sits at the
# same place in every format.  Derived from the layouts as Kafka derives them from field lengths
# (``Records.LOG_OVERHEAD = SIZE_OFFSET + SIZE_LENGTH``, ``HEADER_SIZE_UP_TO_MAGIC = MAGIC_OFFSET +
# MAGIC_LENGTH``); tests/records/test_walker.py ties each one to the layout and to Kafka's value.
OFFSET_OFFSET = LOG_ENTRY.offset_of("offset")  # 0
SIZE_OFFSET = LOG_ENTRY.offset_of("size")  # 8
LOG_OVERHEAD = SIZE_OFFSET + LOG_ENTRY.field("size").size  # 12
MAGIC_OFFSET = DEFAULT_BATCH.offset_of("magic")  # 16 (= LEGACY_V0/V1 "magic")
HEADER_SIZE_UP_TO_MAGIC = MAGIC_OFFSET + DEFAULT_BATCH.field("magic").size  # 17

# LegacyRecord: HEADER_SIZE_V0 = CRC_LENGTH + MAGIC_LENGTH + ATTRIBUTE_LENGTH, V1 adds TIMESTAMP_LENGTH;
# RECORD_OVERHEAD = HEADER_SIZE + KEY_SIZE_LENGTH + VALUE_SIZE_LENGTH.
LEGACY_HEADER_SIZE_V0 = LEGACY_V0.offset_of("keyLength") - LEGACY_V0.offset_of("crc")  # 6
LEGACY_HEADER_SIZE_V1 = LEGACY_V1.offset_of("keyLength") - LEGACY_V1.offset_of("crc")  # 14
LEGACY_RECORD_OVERHEAD_V0 = (LEGACY_HEADER_SIZE_V0 + LEGACY_V0.field("keyLength").size
                             + LEGACY_VALUE_LENGTH.size)  # 14
LEGACY_RECORD_OVERHEAD_V1 = (LEGACY_HEADER_SIZE_V1 + LEGACY_V1.field("keyLength").size
                             + LEGACY_VALUE_LENGTH.size)  # 22
LEGACY_COMPRESSION_CODEC_MASK = 0x07
LEGACY_TIMESTAMP_TYPE_MASK = 0x08

# DefaultRecordBatch (v2): RECORD_BATCH_OVERHEAD = RECORDS_OFFSET = RECORDS_COUNT_OFFSET + RECORDS_COUNT_LENGTH
RECORD_BATCH_OVERHEAD = DEFAULT_BATCH.offset_of("recordsCount") + DEFAULT_BATCH.field("recordsCount").size  # 61
V2_COMPRESSION_CODEC_MASK = 0x07
V2_TIMESTAMP_TYPE_MASK = 0x08
V2_TRANSACTIONAL_FLAG_MASK = 0x10
V2_CONTROL_FLAG_MASK = 0x20
V2_DELETE_HORIZON_FLAG_MASK = 0x40
#: KIP-228 (seed 002, never adopted): the proposed ``isTimestampExtended`` bit, the next free bit.
V2_TIMESTAMP_EXTENDED_FLAG_MASK = 0x80
#: KIP-228's NO_TIMESTAMP for extended batches (Long.MIN_VALUE).
NO_TIMESTAMP_EXTENDED = INT64_MIN
DEFAULT_RECORD_MAX_OVERHEAD = 21

#: Default cap on the bytes one decompression may produce (kafkafmt's own guard, configurable).
DEFAULT_MAX_DECOMPRESSED_BYTES = 256 * 1024 * 1024  # the default of kafkafmt.limits (see there)
#: kafka-dump-log / broker default max.message.bytes (1 MiB + LOG_OVERHEAD).
DEFAULT_MAX_MESSAGE_BYTES = 1048588


class TimestampType(enum.IntEnum):
    """``org.apache.kafka.common.record.TimestampType``."""

    NO_TIMESTAMP_TYPE = -1
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1

    @property
    def kafka_name(self) -> str:
        return _TS_NAMES[self]

    @classmethod
    def from_name(cls, name: str) -> "TimestampType":
        for member, text in _TS_NAMES.items():
            if name in (text, member.name):
                return member
        raise ValueError(f"unknown timestamp type {name!r}")

    def __str__(self) -> str:  # as Kafka's toString()
        return self.kafka_name


_TS_NAMES = {
    TimestampType.NO_TIMESTAMP_TYPE: "NoTimestampType",
    TimestampType.CREATE_TIME: "CreateTime",
    TimestampType.LOG_APPEND_TIME: "LogAppendTime",
}


class CompressionType(enum.IntEnum):
    """``org.apache.kafka.common.record.CompressionType``; ids 5-7 are unknown."""

    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4

    @property
    def kafka_name(self) -> str:
        """The lower-case name Kafka prints (``compresscodec: gzip``)."""
        return self.name.lower()

    @classmethod
    def from_name(cls, name: str) -> "CompressionType":
        try:
            return cls[name.upper()]
        except KeyError:
            raise ValueError(f"unknown compression type {name!r}") from None

    def __str__(self) -> str:
        return self.kafka_name


class ControlRecordType(enum.IntEnum):
    """``org.apache.kafka.common.record.ControlRecordType``."""

    UNKNOWN = -1
    ABORT = 0
    COMMIT = 1
    LEADER_CHANGE = 2
    SNAPSHOT_HEADER = 3
    SNAPSHOT_FOOTER = 4
    KRAFT_VERSION = 5
    KRAFT_VOTERS = 6
