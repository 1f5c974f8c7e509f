"""kafka-dump-log's lines as the DumpLogSegments of Kafka 0.9 … 2.8 printed them.

``kafka.tools.DumpLogSegments`` changed its line format five times before the one :mod:`kafkafmt.records.dump_log`
prints (Kafka 3.x); each format is a value of row ``dump.format`` of :mod:`kafkafmt.kafka_lines`:

``"0.9"`` (0.9.0.1, 0.10.0.1)
    one line per message (deep: per inner message): ``offset: O position: P isvalid: true payloadsize: N
    magic: M compresscodec: NoCompressionCodec crc: C keysize: K key: … payload: …``; ``position`` is the
    position of the shallow message holding it; ``keysize`` only when there is a key.
``"0.10.1"`` (KAFKA-3163)
    the same with ``TimestampType: T`` after the position.
``"0.10.2"`` (KAFKA-4390)
    the same with the compression types of the Records API: ``NONE``, ``GZIP``, ``SNAPPY``, ``LZ4``.
``"0.11"`` (KIP-98)
    deep: one line per record, ``keysize``/``valuesize`` always, the batch's magic, codec and timestamp type,
    then the producer fields and header keys (v2) or the record's ``crc`` (v0/v1); shallow: one line per
    batch.
``"2.0"``
    the same, the shallow batch line with ``count`` and ``isControl`` (2.0.0, KAFKA-7467 in 2.0.1).
``"2.8"`` (KAFKA-7687 in 2.2, KAFKA-6181 in 2.8)
    every batch's line first, deep or not, then ``| offset: …`` record lines holding every field.

Keys and values are printed as in each release's ``DecoderMessageParser``: before 2.8 a record without a
value prints neither its key nor a payload; from 2.8 its key alone.  Read at the release tags of
apache/kafka (``core/src/main/scala/kafka/tools/DumpLogSegments.scala``) and compared, in
tests/history/test_old_releases_live.py, with what each release's own tool prints.
"""
from __future__ import annotations

from typing import Callable

from ..constants import CompressionType
from ..errors import UnsupportedForMessageFormatError
from .batch import RecordBatch
from .legacy import codec_of
from .record import Record

__all__ = ["LEGACY_FORMATS", "batch_lines", "start_offset_line"]

#: the values of row ``dump.format`` this module prints ("3.9" is :mod:`kafkafmt.records.dump_log`'s own)
LEGACY_FORMATS = ("0.9", "0.10.1", "0.10.2", "0.11", "2.0", "2.8")
#: ``kafka.message.CompressionCodec`` names (0.9.0.1 … 0.10.1.1)
_CODECS = {0: "NoCompressionCodec", 1: "GZIPCompressionCodec", 2: "SnappyCompressionCodec",
           3: "LZ4CompressionCodec"}
_MESSAGE_FORMATS = ("0.9", "0.10.1", "0.10.2")


def _b(v: bool) -> str:
    return "true" if v else "false"


def _codec(fmt: str, compression_id: int) -> str:
    if fmt in ("0.9", "0.10.1"):
        return _CODECS.get(compression_id, str(compression_id))
    return CompressionType(compression_id).name


def start_offset_line(fmt: str, start_offset: int) -> str:
    """``Starting offset: N`` (``Log starting offset: N`` from 3.3, KAFKA-13845, in format "3.9")."""
    return f"Starting offset: {start_offset}"


def batch_lines(batch: RecordBatch, position: int, fmt: str, *, deep: bool, print_data: bool,
                decode: Callable[[bytes], str]) -> list[str]:
    """The lines release format ``fmt`` prints for one batch (shallow entry) at ``position``."""
    if fmt in _MESSAGE_FORMATS:
        if batch.magic >= 2:
            raise UnsupportedForMessageFormatError(f"a magic {batch.magic} batch: Kafka before 0.11 reads message "
                                                   f"formats v0 and v1 only", position=position)
        if deep:
            return [_message_line(fmt, r, int(codec_of(r.attributes)), position, print_data, decode)
                    for r in batch.records()]
        return [_wrapper_line(fmt, batch, position, print_data, decode)]
    if fmt in ("0.11", "2.0"):
        if not deep:
            return [_batch_line_0_11(fmt, batch, position)]
        return [_record_line_0_11(batch, r, position, print_data, decode) for r in batch.records()]
    if fmt == "2.8":
        lines = [_batch_line_2_8(batch, position)]
        if deep:
            lines += [_record_line_2_8(batch, r, position, print_data, decode) for r in batch.records()]
        return lines
    raise ValueError(f"no legacy dump format {fmt!r}: {', '.join(LEGACY_FORMATS)}")


def _message_line(fmt: str, r: Record, codec_id: int, position: int, print_data: bool, decode) -> str:
    """``dumpLog``'s print of one message (0.9.0.1 … 0.10.2.2)."""
    ts = "" if fmt == "0.9" else f" {r.timestamp_type.kafka_name}: {r.timestamp}"
    out = [f"offset: {r.offset} position: {position}{ts} isvalid: {_b(bool(r.crc_valid))} payloadsize: "
           f"{r.value_size} magic: {r.magic} compresscodec: {_codec(fmt, codec_id)} crc: {r.crc}"]
    if r.key is not None:
        out.append(f" keysize: {r.key_size}")
    if print_data and r.value is not None:
        if r.key is not None:
            out.append(f" key: {decode(r.key)}")
        out.append(f" payload: {decode(r.value)}")
    return "".join(out)


def _wrapper_line(fmt: str, batch: RecordBatch, position: int, print_data: bool, decode) -> str:
    """A shallow message (a compressed wrapper as it is): the same print, of the wrapper's own fields; with
    ``--print-data-log`` (no deep iteration before 1.1, row ``dump.print_data_deep``) its key and value as the
    release's ``DecoderMessageParser`` reads them, a wrapper's value being its compressed bytes."""
    m = batch.message
    w = m.to_record(batch.last_offset, m.timestamp if m.magic >= 1 else -1, m.timestamp_type, position)
    return _message_line(fmt, w, batch.compression_id, position, print_data, decode)


def _batch_line_0_11(fmt: str, batch: RecordBatch, position: int) -> str:
    if batch.magic >= 2:
        count = f" count: {batch.count}" if fmt == "2.0" else ""
        control = f" isControl: {_b(batch.is_control)}" if fmt == "2.0" else ""
        head = (f"baseOffset: {batch.base_offset} lastOffset: {batch.last_offset}{count} "
                f"baseSequence: {batch.base_sequence} lastSequence: {batch.last_sequence} "
                f"producerId: {batch.producer_id} producerEpoch: {batch.producer_epoch} "
                f"partitionLeaderEpoch: {batch.partition_leader_epoch} isTransactional: "
                f"{_b(batch.is_transactional)}{control}")
    else:
        head = f"offset: {batch.last_offset}"
    return (f"{head} position: {position} {batch.timestamp_type.kafka_name}: {batch.max_timestamp} "
            f"isvalid: {_b(batch.is_valid())} size: {batch.size_in_bytes} magic: {batch.magic} "
            f"compresscodec: {CompressionType(batch.compression_id).name} crc: {batch.checksum}")


def _control(batch: RecordBatch, r: Record) -> str:
    if not (batch.is_control and r.control is not None):
        return ""
    c = r.control
    if c.coordinator_epoch is not None:
        return f" endTxnMarker: {c.type.name} coordinatorEpoch: {c.coordinator_epoch}"
    return f" controlType: {c.name}({c.raw_type})"


def _record_valid(batch: RecordBatch, r: Record) -> bool:
    return True if batch.magic >= 2 else bool(r.crc_valid)  # DefaultRecord.isValid is always true


def _record_line_0_11(batch: RecordBatch, r: Record, position: int, print_data: bool, decode) -> str:
    """``dumpLog``'s record print of 0.11.0 … 2.1 (deep iteration)."""
    out = [f"offset: {r.offset} position: {position} {batch.timestamp_type.kafka_name}: {r.timestamp} "
           f"isvalid: {_b(_record_valid(batch, r))} keysize: {r.key_size} valuesize: {r.value_size} "
           f"magic: {batch.magic} compresscodec: {CompressionType(batch.compression_id).name}"]
    if batch.magic >= 2:
        out.append(f" producerId: {batch.producer_id} producerEpoch: {batch.producer_epoch} sequence: {r.sequence} "
                   f"isTransactional: {_b(batch.is_transactional)} headerKeys: [{','.join(h.key for h in r.headers)}]")
    else:
        out.append(f" crc: {r.crc}")
    if batch.is_control:
        out.append(_control(batch, r))
    elif print_data and r.value is not None:
        if r.key is not None:
            out.append(f" key: {decode(r.key)}")
        out.append(f" payload: {decode(r.value)}")
    return "".join(out)


def _batch_line_2_8(batch: RecordBatch, position: int) -> str:
    """``printBatchLevel`` of 2.2 … 2.8 (no ``deleteHorizonMs``; the codec upper-case; ``isvalid`` last)."""
    if batch.magic >= 2:
        head = (f"baseOffset: {batch.base_offset} lastOffset: {batch.last_offset} count: {batch.count} "
                f"baseSequence: {batch.base_sequence} lastSequence: {batch.last_sequence} "
                f"producerId: {batch.producer_id} producerEpoch: {batch.producer_epoch} "
                f"partitionLeaderEpoch: {batch.partition_leader_epoch} isTransactional: {_b(batch.is_transactional)} "
                f"isControl: {_b(batch.is_control)}")
    else:
        head = f"offset: {batch.last_offset}"
    return (f"{head} position: {position} {batch.timestamp_type.kafka_name}: {batch.max_timestamp} "
            f"size: {batch.size_in_bytes} magic: {batch.magic} compresscodec: "
            f"{CompressionType(batch.compression_id).name} crc: {batch.checksum} isvalid: {_b(batch.is_valid())}")


def _record_line_2_8(batch: RecordBatch, r: Record, position: int, print_data: bool, decode) -> str:
    """``dumpLog``'s ``|`` record line of 2.8 (KAFKA-6181: every field of the record and its batch)."""
    crc = "null" if batch.magic >= 2 else r.crc
    out = [f"| offset: {r.offset} isValid: {_b(_record_valid(batch, r))} crc: {crc} keySize: {r.key_size} "
           f"valueSize: {r.value_size} {batch.timestamp_type.kafka_name}: {r.timestamp} baseOffset: "
           f"{batch.base_offset} lastOffset: {batch.last_offset} baseSequence: {batch.base_sequence} lastSequence: "
           f"{batch.last_sequence} producerEpoch: {batch.producer_epoch} partitionLeaderEpoch: "
           f"{batch.partition_leader_epoch} batchSize: {batch.size_in_bytes} magic: {batch.magic} compressType: "
           f"{CompressionType(batch.compression_id).name} position: {position}"]
    if batch.magic >= 2:
        out.append(f" sequence: {r.sequence} headerKeys: [{','.join(h.key for h in r.headers)}]")
    else:
        out.append(f" crc: {r.crc} isvalid: {_b(bool(r.crc_valid))}")
    out.append(_control(batch, r))
    if print_data and not batch.is_control:
        if r.key is not None:
            out.append(f" key: {decode(r.key)}")
        if r.value is not None:
            out.append(f" payload: {decode(r.value)}")
    return "".join(out)
