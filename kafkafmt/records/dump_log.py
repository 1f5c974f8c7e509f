"""kafka-dump-log's output, line for line (``kafka.tools.DumpLogSegments``), and its JSON twin.

Text lines follow ``printBatchLevel`` and the record loop of ``dumpLog`` exactly, so scripts
written against ``kafka-dump-log.sh --files X --deep-iteration --print-data-log`` keep working.
:func:`batch_to_json` gives the same information as one JSON object per batch (JSON Lines), with
the same field names, every header field needed to rebuild the batch, and lossless bytes (see
:mod:`kafkafmt.spec`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterator

from .. import kafka_lines
from ..errors import KafkaFmtError
from . import MemoryRecords, RecordBatch
from .memory import span_batch
from .walker import FILE, BatchWalker
from .record import Record

RECORD_INDENT = "|"


def _b(v: bool) -> str:
    return "true" if v else "false"


def string_decoder(data: bytes) -> str:
    """``org.apache.kafka.tools.api.StringDecoder``: UTF-8 with replacement characters."""
    return data.decode("utf-8", "replace")


def iter_file_batches(buf, *, end: int | None = None) -> Iterator[RecordBatch]:
    """Batches of a ``.log`` file, by ``FileLogInputStream.nextBatch`` rules (:data:`~kafkafmt.records.walker.FILE`).

    Stops when 17 or fewer bytes remain or at a partial batch; a size below 14 is corrupt.
    Unlike the in-memory reader there is no upper bound on the magic byte.
    """
    for span in BatchWalker(buf, 0, end, rules=FILE):
        yield span_batch(buf, span)


def batch_line(batch: RecordBatch, position: int) -> str:
    """``DumpLogSegments.printBatchLevel``."""
    if batch.magic >= 2:
        dh = "OptionalLong.empty" if batch.delete_horizon_ms is None else f"OptionalLong[{batch.delete_horizon_ms}]"
        head = (f"baseOffset: {batch.base_offset} lastOffset: {batch.last_offset} count: {batch.count} "
                f"baseSequence: {batch.base_sequence} lastSequence: {batch.last_sequence} "
                f"producerId: {batch.producer_id} producerEpoch: {batch.producer_epoch} "
                f"partitionLeaderEpoch: {batch.partition_leader_epoch} isTransactional: {_b(batch.is_transactional)} "
                f"isControl: {_b(batch.is_control)} deleteHorizonMs: {dh}")
    else:
        head = f"offset: {batch.last_offset}"
    return (f"{head} position: {position} {batch.timestamp_type.kafka_name}: {batch.max_timestamp} "
            f"size: {batch.size_in_bytes} magic: {batch.magic} compresscodec: {batch.compression.kafka_name} "
            f"crc: {batch.checksum} isvalid: {_b(batch.is_valid())}")


def record_line(batch: RecordBatch, record: Record, *, print_data: bool = False, skip_metadata: bool = False,
                key_decoder: Callable[[bytes], str] = string_decoder,
                value_decoder: Callable[[bytes], str] = string_decoder,
                kafka_line: str = kafka_lines.DEFAULT_LINE) -> str:
    """One ``|`` record line of ``dumpLog`` (deep iteration).

    ``kafka_line``: whose kafka-dump-log to imitate; a v0/v1 record line ends with a stray ``}`` in
    3.9's Scala tool and without it in 4.4's Java one (row ``dump.legacy_record_brace``)."""
    out = []
    prefix = f"{RECORD_INDENT} "
    if not skip_metadata:
        out.append(f"{prefix}offset: {record.offset} {batch.timestamp_type.kafka_name}: {record.timestamp} "
                   f"keySize: {record.key_size} valueSize: {record.value_size}")
        prefix = " "
        if batch.magic >= 2:
            out.append(f" sequence: {record.sequence} headerKeys: [{','.join(h.key for h in record.headers)}]")
        else:
            brace = "}" if kafka_lines.value("dump.legacy_record_brace", kafka_line) else ""
            out.append(f" isValid: {_b(bool(record.crc_valid))} crc: {record.crc}{brace}")
        if batch.is_control and record.control is not None:
            c = record.control
            if c.coordinator_epoch is not None:
                out.append(f" endTxnMarker: {c.type.name} coordinatorEpoch: {c.coordinator_epoch}")
            else:
                out.append(f" controlType: {c.name}({c.raw_type})")
    if print_data and not batch.is_control:
        if record.key is not None:
            out.append(f"{prefix}key: {key_decoder(record.key)}")
            prefix = " "
        if record.value is not None:
            out.append(f" payload: {value_decoder(record.value)}")
    return "".join(out)


@dataclass
class LogDump:
    """Result of dumping one record-set file: stdout lines, stderr lines, and an error if reading stopped."""

    stdout: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)
    error: KafkaFmtError | None = None
    valid_bytes: int = 0
    trailing_bytes: int = 0
    #: batches printed with ``isvalid: false`` (kafka-dump-log reports them and still exits 0)
    invalid_batches: int = 0


def dump_log(buf, *, filename: str, abspath: str | None = None, deep: bool = False, print_data: bool = False,
             skip_metadata: bool = False, max_bytes: int | None = None, start_offset: int | None = None,
             emit: Callable[[str], None] | None = None, kafka_line: str = kafka_lines.DEFAULT_LINE) -> LogDump:
    """kafka-dump-log's ``dumpLog`` over a buffer.  ``emit`` streams stdout lines as they are made.

    ``kafka_line`` picks the release whose output is imitated (:mod:`kafkafmt.kafka_lines`, area ``dump``).

    ``start_offset`` prints the ``Log starting offset`` line (for ``.log`` files).
    """
    result = LogDump()

    def out(line: str) -> None:
        result.stdout.append(line)
        if emit:
            emit(line)

    if print_data:
        deep = True
    if start_offset is not None:
        out(f"Log starting offset: {start_offset}")
    end = len(buf) if max_bytes is None else min(len(buf), max_bytes)
    valid = 0
    last_offset = -1
    non_consecutive: list[tuple[int, int]] = []
    try:
        for batch in iter_file_batches(buf, end=end):
            out(batch_line(batch, valid))
            result.invalid_batches += not batch.is_valid()
            if deep:
                for record in batch.records():
                    if last_offset == -1:
                        last_offset = record.offset
                    elif record.offset != last_offset + 1:
                        non_consecutive.insert(0, (last_offset, record.offset))  # Scala list prepend
                    last_offset = record.offset
                    out(record_line(batch, record, print_data=print_data, skip_metadata=skip_metadata,
                                    kafka_line=kafka_line))
            valid += batch.size_in_bytes
    except KafkaFmtError as e:
        # without its traceback: the frames hold views into ``buf`` (an mmap the caller closes)
        result.error = e.with_traceback(None)
    result.valid_bytes = valid
    result.trailing_bytes = end - valid
    if result.error is None and result.trailing_bytes > 0 and max_bytes is None:
        out(f"Found {result.trailing_bytes} invalid bytes at the end of {filename}")
    if non_consecutive:
        result.stderr.append(f"Non-consecutive offsets in {abspath or filename}")
        result.stderr.extend(f"  {a} is followed by {b}" for a, b in non_consecutive)
    return result


__all__ = ["batch_line", "record_line", "dump_log", "iter_file_batches", "LogDump", "string_decoder",
           "MemoryRecords"]
