"""Build uncompressed v2 record batches from columns, in one compiled pass.

The same bytes as :class:`~kafkafmt.records.builder.MemoryRecordsBuilder` appending the rows one
by one (one builder per ``records_per_batch`` rows, uncompressed, magic 2): ``baseOffset`` and
``baseTimestamp`` are each batch's first row, ``maxTimestamp`` the max (CreateTime, at least -1)
or ``log_append_time`` (LogAppendTime), ``baseSequence`` advances by the rows before the batch
(``DefaultRecordBatch.incrementSequence``).  Records are sized and written by
:mod:`kafkafmt.records.fast.build_kernel` straight into the returned buffer, allocated at its exact
size (no over-allocation, no final copy); each header is packed through
:data:`kafkafmt.layout.DEFAULT_BATCH` and sealed with its CRC32C.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pyarrow as pa

from ..constants import (
    INT32_MAX,
    LOG_OVERHEAD,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    CompressionType,
    TimestampType,
)
from ..crc import crc32c
from ..errors import IllegalArgumentError
from ..layout import DEFAULT_BATCH, DEFAULT_BATCH_CRC_START
from ..varint import wrap16
from .default import batch_attributes, encode_headers, increment_sequence
from .fast.build_kernel import v2_record_sizes, write_v2_records
from .record import headers_of

#: the data buffer of a column with no bytes (all null or empty), read-only as every kernel input is
_NO_BYTES = np.frombuffer(b"\x00", np.uint8)


def _readonly(a: np.ndarray) -> np.ndarray:
    """A read-only view: the kernels get read-only buffers only, so each compiles for one signature."""
    a = a.view()
    a.flags.writeable = False
    return a


def _binary_column(values, n: int, what: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(data, positions, lengths with -1 for null) of a list of bytes|None or an Arrow binary array."""
    try:
        arr = values if isinstance(values, (pa.Array, pa.ChunkedArray)) else pa.array(values, pa.binary())
    except (pa.ArrowException, TypeError, ValueError) as e:
        raise IllegalArgumentError(f"{what}: expected bytes or None values: {e}") from None
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if len(arr) != n:
        raise IllegalArgumentError(f"{what}: {len(arr)} values for {n} timestamps")
    if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
        arr = arr.cast(pa.large_binary() if pa.types.is_large_string(arr.type) else pa.binary())
    if not (pa.types.is_binary(arr.type) or pa.types.is_large_binary(arr.type)):
        raise IllegalArgumentError(f"{what}: expected binary values, got {arr.type}")
    _, offs, data = arr.buffers()
    otype = np.int64 if pa.types.is_large_binary(arr.type) else np.int32
    offsets = np.frombuffer(offs, otype)[arr.offset:arr.offset + n + 1].astype(np.int64)
    lengths = np.diff(offsets)
    if arr.null_count:
        lengths[arr.is_null().to_numpy(zero_copy_only=False)] = -1
    buf = _readonly(np.frombuffer(data, np.uint8)) if data is not None and data.size else _NO_BYTES
    return buf, offsets[:-1], lengths


def _header_column(headers, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if headers is None:
        return _NO_BYTES, np.zeros(n, np.int64), np.full(n, -1, np.int64)
    if len(headers) != n:
        raise IllegalArgumentError(f"headers: {len(headers)} values for {n} timestamps")
    encoded = [encode_headers(headers_of(h)) if h else b"\x00" for h in headers]
    lengths = np.fromiter((len(e) for e in encoded), np.int64, n)
    pos = np.zeros(n, np.int64)
    np.cumsum(lengths[:-1], out=pos[1:])
    return np.frombuffer(b"".join(encoded), np.uint8), pos, lengths


def _int64(values, what: str) -> np.ndarray:
    try:
        if isinstance(values, (list, tuple)):
            return np.fromiter(values, np.int64, len(values))
        arr = np.ascontiguousarray(values, dtype=np.int64).reshape(-1)
        return arr if arr.flags.writeable else arr.copy()  # C-contiguous, writable: one kernel signature
    except (OverflowError, TypeError, ValueError) as e:
        raise IllegalArgumentError(f"{what} must be 64-bit integers: {e}") from None


def _output(out, size: int) -> tuple[bytearray | memoryview, memoryview]:
    """(what ``build_v2_batches`` returns, a writable byte view of it) for ``size`` bytes; see ``out``."""
    if out is None:
        result = bytearray(size)
        return result, memoryview(result)
    if isinstance(out, bytearray):
        try:
            if len(out) > size:
                del out[size:]
            elif len(out) < size:
                out.extend(bytes(size - len(out)))
        except BufferError as e:
            raise IllegalArgumentError(f"out: cannot resize the bytearray ({e}); release its views first") from None
        return out, memoryview(out)
    try:
        view = memoryview(out)
    except TypeError:
        raise IllegalArgumentError(f"out: expected a bytearray or a writable buffer, got {type(out).__name__}") from None
    if view.readonly or not view.c_contiguous:
        raise IllegalArgumentError("out: the buffer must be writable and contiguous")
    view = view.cast("B") if view.format != "B" or view.ndim != 1 else view
    if view.nbytes < size:
        raise IllegalArgumentError(f"out: {size} bytes needed, the buffer holds {view.nbytes}")
    return view[:size], view[:size]


def build_v2_batches(timestamps, keys, values, headers: Sequence | None = None, *, base_offset: int = 0,
                     offsets=None, records_per_batch: int = 1000,
                     timestamp_type: TimestampType = TimestampType.CREATE_TIME, log_append_time: int = NO_TIMESTAMP,
                     producer_id: int = NO_PRODUCER_ID, producer_epoch: int = NO_PRODUCER_EPOCH,
                     base_sequence: int = NO_SEQUENCE, is_transactional: bool = False,
                     partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
                     out=None) -> bytearray | memoryview:
    """Uncompressed v2 batches of ``records_per_batch`` rows each, concatenated.

    ``keys``/``values``: lists of ``bytes | None`` or Arrow binary arrays; ``headers``: None or one
    sequence of ``(key, value)`` pairs / :class:`Header` per row; ``offsets``: increasing offsets
    (default ``base_offset, base_offset + 1, ...``).  The checks are ``MemoryRecordsBuilder``'s.

    Returns the records in a new ``bytearray`` of exactly their size (as aiokafka's builders do; it
    compares equal to the same ``bytes``, and ``MemoryRecords``, ``Log.append_*`` and ``bytes()`` take
    it).  ``out`` reuses a buffer instead: a ``bytearray`` is resized in place to the records' size,
    filled and returned (its memory is kept when it is large enough); any other writable contiguous
    buffer (``memoryview``, NumPy array, ``mmap``) must hold the records and gets them from its first
    byte, and a ``memoryview`` of the written bytes is returned.
    """
    ts = _int64(timestamps, "timestamps")
    n = len(ts)
    if records_per_batch < 1:
        raise IllegalArgumentError(f"records_per_batch must be positive, got {records_per_batch}")
    if n == 0:
        result, buf = _output(out, 0)
        return result
    bad = np.flatnonzero((ts < 0) & (ts != NO_TIMESTAMP))
    if len(bad):
        raise IllegalArgumentError(f"Invalid negative timestamp {int(ts[bad[0]])}")
    if offsets is None:
        offs = _int64([base_offset, base_offset + n - 1], "offsets")[0] + np.arange(n, dtype=np.int64)
    else:
        offs = _int64(offsets, "offsets")
    if len(offs) != n:
        raise IllegalArgumentError(f"offsets: {len(offs)} values for {n} timestamps")
    if n > 1 and not bool(np.all(offs[1:] > offs[:-1])):
        i = int(np.flatnonzero(offs[1:] <= offs[:-1])[0])
        raise IllegalArgumentError(f"Illegal offset {int(offs[i + 1])} following previous offset {int(offs[i])} "
                                   "(Offsets must increase monotonically).")
    if is_transactional and producer_id == NO_PRODUCER_ID:
        raise IllegalArgumentError("Cannot write transactional messages without a valid producer ID")
    if producer_id != NO_PRODUCER_ID and (producer_epoch == NO_PRODUCER_EPOCH or base_sequence < 0):
        raise IllegalArgumentError("Invalid negative producer epoch" if producer_epoch == NO_PRODUCER_EPOCH
                                   else "Invalid negative sequence number used")
    first = np.arange(0, n, records_per_batch)
    last_deltas = offs[np.minimum(first + records_per_batch, n) - 1] - offs[first]  # offsets increase
    if int(last_deltas.max()) > INT32_MAX:
        raise IllegalArgumentError(f"Maximum offset delta exceeded, base offset: {int(offs[0])}")
    kd, kp, kl = _binary_column(keys, n, "keys")
    vd, vp, vl = _binary_column(values, n, "values")
    hd, hp, hl = _header_column(headers, n)
    body = np.empty(n, np.int64)
    starts = np.empty(len(first) + 1, np.int64)
    total = v2_record_sizes(ts, offs, kl, vl, hl, records_per_batch, body, starts)
    result, buf = _output(out, total)
    write_v2_records(np.frombuffer(buf, np.uint8, total), body, ts, offs, kd, kp, kl, vd, vp, vl, hd, hp, hl,
                     records_per_batch)
    attrs = wrap16(batch_attributes(CompressionType.NONE, TimestampType(timestamp_type), transactional=is_transactional))
    log_append = TimestampType(timestamp_type) == TimestampType.LOG_APPEND_TIME
    bounds, firsts = starts.tolist(), ts[first].tolist()
    max_ts = (np.full(len(first), log_append_time, np.int64) if log_append
              else np.maximum(np.maximum.reduceat(ts, first), NO_TIMESTAMP))
    for b, lo in enumerate(first.tolist()):
        pos, size = bounds[b], bounds[b + 1] - bounds[b]
        seq = base_sequence if base_sequence == NO_SEQUENCE else increment_sequence(base_sequence, lo)
        DEFAULT_BATCH.pack_into(buf, pos, int(offs[lo]), size - LOG_OVERHEAD, partition_leader_epoch, 2, 0, attrs,
                                int(last_deltas[b]), firsts[b], int(max_ts[b]), producer_id, producer_epoch, seq,
                                min(records_per_batch, n - lo))
        DEFAULT_BATCH.put(buf, pos, "crc", crc32c(buf[pos + DEFAULT_BATCH_CRC_START:pos + size]))
    if result is not buf:
        buf.release()  # a bytearray stays resizable once returned
    return result
