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
from . import MemoryRecords, RecordBatch, dump_legacy
from .memory import span_batch
from .record import Record
from .walker import FILE, BatchWalker

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
             emit: Callable[[str], None] | None = None, kafka_line: str = kafka_lines.DEFAULT_LINE,
             emit_lines: Callable[[list[str]], None] | None = None) -> LogDump:
    """kafka-dump-log's ``dumpLog`` over a buffer.  ``emit`` streams stdout lines as they are made;
    ``emit_lines`` (instead of ``emit``) receives them a list at a time.

    ``kafka_line`` picks the release whose output is imitated (:mod:`kafkafmt.kafka_lines`, area ``dump``): a line
    before 3.x prints the lines of its own DumpLogSegments (row ``dump.format``, :mod:`kafkafmt.records.dump_legacy`);
    ``print_data`` implies ``deep`` from 1.1 on (row ``dump.print_data_deep``); the offsets checked for gaps and the
    report's first line are rows ``dump.non_consecutive_scope`` and ``dump.non_consecutive_header``.

    ``start_offset`` prints the ``Log starting offset`` line (for ``.log`` files).
    """
    result = LogDump()

    def out_lines(lines: list[str]) -> None:
        result.stdout.extend(lines)
        if emit_lines:
            emit_lines(lines)
        elif emit:
            for line in lines:
                emit(line)

    def out(line: str) -> None:
        out_lines([line])

    if print_data and kafka_lines.value("dump.print_data_deep", kafka_line):
        deep = True
    fmt = kafka_lines.value("dump.format", kafka_line)
    every_entry = kafka_lines.value("dump.non_consecutive_scope", kafka_line) == "printed entries, uncompressed"
    legacy = fmt in dump_legacy.LEGACY_FORMATS
    if start_offset is not None:
        out(dump_legacy.start_offset_line(fmt, start_offset) if legacy else f"Log starting offset: {start_offset}")
    end = len(buf) if max_bytes is None else min(len(buf), max_bytes)
    valid = 0
    state = _DeepState(out, out_lines, result, print_data, skip_metadata, kafka_line)
    state.columnar = state.columnar and end >= COLUMNAR_MIN_BYTES
    try:
        for batch in iter_file_batches(buf, end=end):
            if legacy:
                out_lines(dump_legacy.batch_lines(batch, valid, fmt, deep=deep, print_data=print_data,
                                                  decode=string_decoder))
                result.invalid_batches += not batch.is_valid()
                if deep:
                    for record in batch.records():
                        state._offset(record.offset)
                elif every_entry and batch.compression_id == 0:
                    state._offset(batch.last_offset)
                elif every_entry:  # a compressed wrapper printed shallowly: its offset is the last one seen
                    state.last_offset = batch.last_offset
            elif deep and state.columnar and batch.magic == 2 and not batch.is_control:
                state.hold(batch, valid)
            else:
                state.flush(buf)
                state.batch(batch, valid, deep)
            valid += batch.size_in_bytes
            if state.held_bytes >= _COLUMNAR_GROUP_BYTES:
                state.flush(buf)
        state.flush(buf)
    except KafkaFmtError as e:
        # without its traceback: the frames hold views into ``buf`` (an mmap the caller closes)
        result.error = e.with_traceback(None)
    result.valid_bytes = valid
    result.trailing_bytes = end - valid
    if result.error is None and result.trailing_bytes > 0 and max_bytes is None:
        out(f"Found {result.trailing_bytes} invalid bytes at the end of {filename}")
    if state.non_consecutive:
        result.stderr.append(f"{kafka_lines.value('dump.non_consecutive_header', kafka_line)}{abspath or filename}")
        result.stderr.extend(f"  {a} is followed by {b}" for a, b in state.non_consecutive)
    return result


#: batch bytes decoded together by the columnar core before their lines are printed
_COLUMNAR_GROUP_BYTES = 8 << 20
#: a file (or --max-bytes prefix) smaller than this is printed by the reference decoder alone: loading the
#: columnar core (numba, its cached kernels, pyarrow: about 0.6 s and 250 MiB, minutes on a first use that
#: compiles them) costs more than it saves below it (measured on v2 segments, 2-core machine: none 2.4 MiB
#: 0.24 s against 0.9 s, 6 MiB 0.46 s against 0.92 s, 24 MiB 2.4 s against 1.5 s; lz4 2.7 MiB 0.8 s against 1.1 s)
COLUMNAR_MIN_BYTES = 4 << 20


class _DeepState:
    """The record loop of ``dumpLog``: batches and their record lines in file order, the offsets seen.

    v2 data batches are held and decoded a group at a time by the columnar reading core
    (:func:`kafkafmt.records.columnar.records_table`, no Python object per record); their lines are
    the same strings :func:`record_line` makes.  Other batches (v0/v1, control), options the columns
    do not carry (``--print-data-log``, ``--skip-record-metadata``), a non-UTF-8 header key, and a
    group the core rejects go through :meth:`RecordBatch.records` and :func:`record_line`, so errors
    and the lines printed before them are the reference decoder's."""

    def __init__(self, out, out_lines, result: LogDump, print_data: bool, skip_metadata: bool, kafka_line: str):
        self.out, self.out_lines, self.result = out, out_lines, result
        self.print_data, self.skip_metadata, self.kafka_line = print_data, skip_metadata, kafka_line
        self.columnar = not print_data and not skip_metadata
        self.held: list[tuple[RecordBatch, int]] = []
        self.held_bytes = 0
        self.last_offset = -1
        self.non_consecutive: list[tuple[int, int]] = []

    def hold(self, batch: RecordBatch, position: int) -> None:
        self.held.append((batch, position))
        self.held_bytes += batch.size_in_bytes

    def _offset(self, offset: int) -> None:
        if self.last_offset != -1 and offset != self.last_offset + 1:
            self.non_consecutive.insert(0, (self.last_offset, offset))  # Scala list prepend
        self.last_offset = offset

    def batch(self, batch: RecordBatch, position: int, deep: bool = True) -> None:
        """One batch through the reference decoder: its line, then (deep) one line per record."""
        self.out(batch_line(batch, position))
        self.result.invalid_batches += not batch.is_valid()
        if deep:
            for record in batch.records():
                self._offset(record.offset)
                self.out(record_line(batch, record, print_data=self.print_data, skip_metadata=self.skip_metadata,
                                     kafka_line=self.kafka_line))

    def flush(self, buf) -> None:
        """Print the held batches: their record lines from the columnar core, or one by one."""
        held, self.held, self.held_bytes = self.held, [], 0
        if not held:
            return
        lines = _columnar_lines(buf, held)
        if lines is None:
            for batch, position in held:
                self.batch(batch, position)
            return
        group: list[str] = []
        for (batch, position), (offsets, record_lines) in zip(held, lines):
            group.append(batch_line(batch, position))
            self.result.invalid_batches += not batch.is_valid()
            for offset in offsets:
                self._offset(offset)
            group.extend(record_lines)
        self.out_lines(group)


def _columnar_lines(buf, held: list[tuple[RecordBatch, int]]) -> list[tuple[list[int], list[str]]] | None:
    """Per held v2 batch (consecutive in ``buf``): its record offsets and ``record_line`` strings, made
    from :func:`~kafkafmt.records.columnar.records_table` columns; None when the reference decoder
    must print them (the core rejects a batch, or a header key is not UTF-8)."""
    import numpy as np

    from . import fast
    from .columnar import records_table
    start, end = held[0][0].position, held[-1][0].end
    try:
        table = records_table(memoryview(buf)[start:end], include_keys=False, include_values=False,
                              check_crc=False)
    except KafkaFmtError:
        return None
    if table.column("header_key_bytes").null_count != table.num_rows:
        return None
    headers = table.column("headers").combine_chunks()
    bounds = headers.offsets.to_pylist()
    keys = headers.values.field("key").to_pylist() if len(headers.values) else []
    cols = [table.column(c).to_pylist() for c in ("offset", "timestamp_ms", "key_size", "value_size", "sequence")]
    counts = np.bincount(fast.numpy_view(table.column("batch_index")), minlength=len(held))
    out, row = [], 0
    for (batch, _), count in zip(held, counts.tolist()):
        ts_name = batch.timestamp_type.kafka_name
        rows = range(row, row + count)
        offsets = cols[0][row:row + count]
        lines = [f"{RECORD_INDENT} offset: {cols[0][i]} {ts_name}: {cols[1][i]} keySize: {cols[2][i]} "
                 f"valueSize: {cols[3][i]} sequence: {cols[4][i]} headerKeys: "
                 f"[{','.join(keys[bounds[i]:bounds[i + 1]]) if bounds[i] != bounds[i + 1] else ''}]" for i in rows]
        out.append((offsets, lines))
        row += count
    return out


__all__ = ["batch_line", "record_line", "dump_log", "iter_file_batches", "LogDump", "string_decoder",
           "MemoryRecords"]
