"""Reading one split: a byte range of a segment, decoded by kafkafmt's columnar path into Arrow.

The range is read with one ``pread`` from a read-only file descriptor.  Batch headers are walked
once (:func:`~kafkafmt.records.columnar.batches_table`, which also checks each batch's CRC as a
consumer with ``check.crcs=true`` does) and records are decoded by
:func:`~kafkafmt.records.columnar.records_table` in chunks of whole batches, so memory stays
bounded and no per-record Python row is ever built for Spark.

A split that ends where its segment ended when the read was planned (a live broker's active segment)
reads a consistent prefix: a last batch whose bytes are not all there yet, but arriving (the file has
grown past the planned size, now or within 250 ms), is left out, as Kafka's ``FileRecords`` /
``FileLogInputStream`` leave it out, and comes with the next read.  A short last batch that does not grow
(a stopped log's torn tail, which the broker's recovery would truncate) and anything else corrupt,
truncated or CRC-failing raises :class:`~kafkafmt.errors.KafkaFmtError` naming
the segment file and the batch's byte position (``FAILFAST``), or ends the split with one error row
after the rows that precede it (``PERMISSIVE``).
"""
from __future__ import annotations

import os
import time
from typing import Iterator

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import CorruptRecordError, KafkaFmtError, TruncatedRecordError
from ..log.view import OPENED
from ..records.columnar import batches_table, records_table
from ..records.memory import MemoryRecords
from ..records.walker import NeedMore, next_span
from . import columns
from .plan import ReadOptions, Split

#: records are decoded this many bytes of whole batches at a time
CHUNK_BYTES = 8 * 1024 * 1024


def read_range(path: str, start: int, end: int) -> bytes:
    """Bytes ``[start, end)`` of ``path``, read through a read-only descriptor."""
    OPENED.note(path)
    fd = os.open(path, os.O_RDONLY)
    try:
        data = os.pread(fd, end - start, start)
    finally:
        os.close(fd)
    if len(data) != end - start:
        raise CorruptRecordError(f"{path}: expected {end - start} bytes from byte position {start}, "
                                 f"the file ends after {len(data)}", position=start + len(data))
    return data


def _fail(split: Split, position: int, reason: str) -> KafkaFmtError:
    return CorruptRecordError(f"{split.segment}: corrupt batch at byte position {position}: {reason}",
                              position=position)


def _scan(data: bytes, split: Split) -> tuple[pa.Table, tuple[int, str] | None]:
    """The batch headers of the whole batches ``data`` starts with, and where and why they end early."""
    try:
        table = batches_table(MemoryRecords(data, strict=True))
        problem = None
    except KafkaFmtError as e:  # walk again, one batch at a time, to keep what precedes the damage
        good, damaged = 0, False
        try:
            for b in MemoryRecords(data).batches():
                good = b.end
        except KafkaFmtError:
            damaged = True
        table = batches_table(MemoryRecords(data, end=good))
        # a last batch cut short where the segment ended at planning, whose bytes are arriving, is not there
        # yet (a live broker is writing it; FileLogInputStream returns no batch for it)
        not_there_yet = (split.tail and isinstance(e, TruncatedRecordError) and not damaged
                         and _arriving(split, data, good))
        problem = None if not_there_yet else (good, e.reason)
    valid = table.column("is_valid").to_pylist()
    if False in valid:
        bad = valid.index(False)
        pos = table.column("position")[bad].as_py()
        table = table.slice(0, bad)
        problem = (pos, "CRC mismatch (the stored CRC does not match the batch's bytes)")
    if problem is not None:
        problem = (split.start + problem[0], problem[1])
    return table, problem


#: how long a reader waits, once, for the rest of a last batch before calling its tail torn (a writer on a
#: loaded machine can be descheduled for tens of milliseconds between two writes of one batch)
ARRIVAL_GRACE_S = 0.25
#: how often the size is looked at during that wait
ARRIVAL_POLL_S = 0.01


def _arriving(split: Split, data: bytes, position: int) -> bool:
    """Whether the short batch at ``position`` of ``data`` (the split's bytes) is being written: the segment
    file has grown past the size the plan took (now, or within :data:`ARRIVAL_GRACE_S`).  A stopped log's
    torn tail never grows."""
    try:
        step = next_span(data, position, len(data), need_more=True)
    except KafkaFmtError:
        return False
    if not isinstance(step, NeedMore):
        return False
    planned_end = split.start + len(data)
    deadline = time.monotonic() + ARRIVAL_GRACE_S
    while True:
        try:
            if os.stat(split.segment).st_size > planned_end:
                return True
        except OSError:
            return False
        if time.monotonic() >= deadline:
            return False
        time.sleep(ARRIVAL_POLL_S)


def _in_range_mask(rows: pa.RecordBatch, first_col: str, last_col: str, split: Split) -> pa.Array:
    return pc.and_(pc.greater_equal(rows.column(last_col), split.first_offset),
                   pc.less(rows.column(first_col), split.end_offset))


def _in_range(rows: pa.RecordBatch, first_col: str, last_col: str, split: Split) -> pa.RecordBatch:
    keep = _in_range_mask(rows, first_col, last_col, split)
    return rows if pc.all(keep).as_py() else rows.filter(keep)


def _straddling_wrapper(data: bytes, batches: pa.Table, split: Split) -> int | None:
    """Index of the compressed v0/v1 wrapper that may hold ``split.end_offset - 1`` and later offsets.

    A legacy wrapper's header carries only its last offset (its base is that of its first inner
    message), so the offset-range filter cannot see that such a wrapper starts below the range's end.
    Only the first batch reported at or after the end can; its inner messages are decoded
    (nothing else is) and the index is returned when its first offset lies inside the range.
    """
    last = batches.column("last_offset").to_pylist()
    for i, lo in enumerate(last):
        if lo >= split.end_offset:
            if batches.column("magic")[i].as_py() >= 2 or batches.column("compression")[i].as_py() == 0:
                return None
            pos, size = batches.column("position")[i].as_py(), batches.column("size")[i].as_py()
            inner = records_table(MemoryRecords(data, start=pos, end=pos + size), include_data=False)
            first = pc.min(inner.column("offset")).as_py() if inner.num_rows else lo
            return i if first < split.end_offset else None
    return None


def _chunks(positions: list[int], sizes: list[int]) -> Iterator[tuple[int, int, int]]:
    """``(first batch index, start, end)`` groups of whole batches of about :data:`CHUNK_BYTES`."""
    first = 0
    for i in range(len(positions)):
        end = positions[i] + sizes[i]
        if end - positions[first] >= CHUNK_BYTES or i == len(positions) - 1:
            yield first, positions[first], end
            first = i + 1


def _decodable_prefix(data: bytes, positions: list[int], sizes: list[int], first: int, end: int,
                      options: ReadOptions) -> tuple[list[tuple[int, pa.Table]], tuple[int, str]]:
    """PERMISSIVE: decode the chunk batch by batch; the tables before the first failing batch, and it."""
    out = []
    for i in range(first, len(positions)):
        if positions[i] >= end:
            break
        try:
            out.append((i, records_table(MemoryRecords(data, start=positions[i], end=positions[i] + sizes[i]),
                                         include_data=options.include_data)))
        except KafkaFmtError as e:
            return out, (positions[i], e.reason)
    raise AssertionError("a chunk failed to decode but each of its batches decodes")


def read_split(split: Split, options: ReadOptions) -> Iterator[pa.RecordBatch]:
    """The rows of ``split`` (:data:`~kafkafmt.spark.columns.RECORD_SCHEMA` or ``BATCH_SCHEMA``)."""
    data = read_range(split.segment, split.start, split.end)
    batches, problem = _scan(data, split)
    if problem is not None and options.mode == "FAILFAST":
        raise _fail(split, *problem)
    where = dict(topic=split.topic, partition=split.partition, segment=split.segment)
    if options.level == "batch":
        straddling = _straddling_wrapper(data, batches, split)
        batches = batches.set_column(batches.schema.get_field_index("position"), "position",
                                     pc.add(batches.column("position"), split.start))
        if batches.num_rows:
            rows = columns.batch_rows(batches, **where)
            keep = _in_range_mask(rows, "baseOffset", "lastOffset", split).to_numpy(zero_copy_only=False)
            if straddling is not None:
                keep[straddling] = True
            yield rows if keep.all() else rows.filter(pa.array(keep))
    else:
        positions = batches.column("position").to_pylist()
        sizes = batches.column("size").to_pylist()
        for first, lo, hi in _chunks(positions, sizes):
            chunk_failed = False
            try:
                recs = [(first, records_table(MemoryRecords(data, start=lo, end=hi),
                                              include_data=options.include_data))]
            except KafkaFmtError as e:
                if options.mode == "FAILFAST":
                    at = split.start + (e.position if e.position is not None else lo)
                    raise _fail(split, at, e.reason) from e
                recs, broken = _decodable_prefix(data, positions, sizes, first, hi, options)
                problem = (split.start + broken[0], broken[1])
                chunk_failed = True
            for base, table in recs:
                table = table.set_column(table.schema.get_field_index("batch_position"), "batch_position",
                                         pc.add(table.column("batch_position"), split.start))
                rows = _in_range(columns.record_rows(table, batches, batch_index_base=base, **where),
                                 "offset", "offset", split)
                if rows.num_rows:
                    yield rows
            if chunk_failed:
                break
    if problem is not None:
        yield columns.error_row(columns.schema_for(options.level), position=problem[0], reason=problem[1], **where)


def read_all(plan) -> pa.Table:
    """Every row of a :class:`~kafkafmt.spark.plan.Plan`, read in this process (no Spark)."""
    schema = columns.schema_for(plan.options.level)
    return pa.Table.from_batches([b for s in plan.splits for b in read_split(s, plan.options)], schema=schema)
