"""The common shape of a record batch, whatever its magic.

Mirrors ``org.apache.kafka.common.record.RecordBatch``: a v2 ``DefaultRecordBatch`` is a real
batch; a v0/v1 log entry (``AbstractLegacyRecordBatch``) is a "batch" of one message, or of the
inner messages of a compressed wrapper.  Batches are views over a buffer: constructing one reads
only its header (shallow); :meth:`RecordBatch.records` decodes records on demand (deep).
"""
from __future__ import annotations

from typing import Iterator

from ..constants import (
    DEFAULT_MAX_DECOMPRESSED_BYTES,
    LEGACY_COMPRESSION_CODEC_MASK,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    V2_COMPRESSION_CODEC_MASK,
    CompressionType,
    TimestampType,
)
from .record import Record


class RecordBatch:
    """Abstract batch view.  Subclasses: :class:`~kafkafmt.records.legacy.LegacyRecordBatch`,
    :class:`~kafkafmt.records.default.DefaultRecordBatch`."""

    magic: int
    position: int  #: byte position of the batch in the buffer it was read from
    size_in_bytes: int  #: LOG_OVERHEAD + the entry's size field

    # defaults for legacy batches (AbstractLegacyRecordBatch)
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH
    base_sequence: int = NO_SEQUENCE
    last_sequence: int = NO_SEQUENCE
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH
    is_transactional: bool = False
    is_control: bool = False
    delete_horizon_ms: int | None = None
    count: int | None = None
    base_timestamp: int | None = None

    def __init__(self, buf, position: int, size_in_bytes: int):
        self._buf = buf
        self.position = position
        self.size_in_bytes = size_in_bytes

    # --- identity -------------------------------------------------------------------------
    @property
    def buffer(self):
        """The buffer the batch is read from (``position`` and ``end`` are positions in it)."""
        return self._buf

    @property
    def raw(self) -> memoryview:
        """The batch's bytes (a view, nothing copied)."""
        return memoryview(self._buf)[self.position:self.position + self.size_in_bytes]

    @property
    def end(self) -> int:
        return self.position + self.size_in_bytes

    # --- to be provided by subclasses -------------------------------------------------------
    base_offset: int
    last_offset: int
    attributes: int
    compression: CompressionType
    timestamp_type: TimestampType
    max_timestamp: int
    checksum: int

    def compute_checksum(self) -> int:
        raise NotImplementedError

    def is_valid(self) -> bool:
        raise NotImplementedError

    def ensure_valid(self) -> None:
        raise NotImplementedError

    def records(self, *, max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES) -> Iterator[Record]:
        raise NotImplementedError

    @property
    def compression_id(self) -> int:
        """The codec id the attributes hold (0-7; :attr:`compression` raises on the unknown ids 5-7)."""
        return self.attributes & (V2_COMPRESSION_CODEC_MASK if self.magic >= 2 else LEGACY_COMPRESSION_CODEC_MASK)

    @property
    def is_compressed(self) -> bool:
        return self.compression != CompressionType.NONE

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id > -1

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    def __repr__(self) -> str:
        return (f"<{type(self).__name__} magic={self.magic} offsets={self.base_offset}..{self.last_offset} "
                f"codec={self.compression.kafka_name} position={self.position} size={self.size_in_bytes}>")
