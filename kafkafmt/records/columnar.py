"""Bulk decoding into Arrow columns, for Spark, pandas and plots.

:func:`records_table` decodes every record of a record set into one ``pyarrow.Table``
(:data:`RECORD_SCHEMA`); :func:`batches_table` reads only batch headers (shallow, nothing is
decompressed) into :data:`BATCH_SCHEMA`.

**The record schema.**  The first eight columns are those of Spark's Kafka source
(``KafkaRecordToRowConverter.kafkaSchema``), with the same names and types, so a DataFrame can be
built on them directly::

    key binary, value binary, topic string, partition int32, offset int64,
    timestamp timestamp[ms], timestampType int32, headers list<struct<key string, value binary>>

``topic`` and ``partition`` are what the caller passes (null otherwise); ``timestampType`` is
Kafka's ``TimestampType`` id (-1 none (v0), 0 CreateTime, 1 LogAppendTime).  Then, kafkafmt's own:
``header_key_bytes`` (list<binary>: a record's raw header keys when one of them is not UTF-8, else
null; ``headers.key`` then holds Java's U+FFFD reading), ``timestamp_ms`` (the raw int64, safe for
timestamps outside what datetime libraries accept), ``timestamp_type`` (the same id as int8),
``key_size``/``value_size`` (-1 = null), ``sequence``, and the batch's metadata repeated per
record (``batch_index``, ``batch_position``, ``magic``, ``compression``, ``producer_id``,
``producer_epoch``, ``partition_leader_epoch``, ``is_transactional``, ``is_control``,
``batch_max_timestamp``, ``crc_valid``).

**Trust.**  ``crc_valid`` is the stored CRC of the record's batch (v2) or log entry/wrapper
(v0/v1) checked against its bytes.  By default (``check_crc=True``) an invalid one raises
:class:`~kafkafmt.errors.CorruptRecordError`, as Kafka's consumer does with ``check.crcs=true``;
``check_crc=False`` keeps the rows and ``crc_valid`` says which ones to doubt.  Offsets and
timestamps are computed with Java's 64-bit wrap-around.

**Speed.**  Batches are decoded by the compiled kernels of :mod:`kafkafmt.records.fast` (one pass
over each decompressed records area; keys, values and headers gathered into Arrow buffers; no
Python object per record).  On anything unexpected a batch is handed to the pure-Python reference
decoder (``engine="reference"`` uses it for every batch), so errors and their positions are
exactly the reference's, which are Kafka's.
"""
from __future__ import annotations

from itertools import islice, repeat
from typing import Iterable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..compression import decompress_lz4_into, max_bytes_in_force
from ..constants import (
    DEFAULT_MAX_DECOMPRESSED_BYTES,
    LEGACY_COMPRESSION_CODEC_MASK,
    LOG_OVERHEAD,
    MAGIC_VALUE_V2,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_TIMESTAMP,
    RECORD_BATCH_OVERHEAD,
    V2_COMPRESSION_CODEC_MASK,
    V2_TIMESTAMP_TYPE_MASK,
    V2_TRANSACTIONAL_FLAG_MASK,
    CompressionType,
    TimestampType,
)
from ..crc import crc32, crc32c
from ..errors import KafkaFmtError
from ..layout import DEFAULT_BATCH, DEFAULT_BATCH_CRC_START, LEGACY_V0, LEGACY_V1
from ..limits import check_record_count, current_limits
from . import fast
from .batch import RecordBatch
from .legacy import record_overhead
from .memory import MemoryRecords, span_batch
from .record import Header, Record
from .walker import MEMORY, BatchSpan, BatchWalker, span_at

HEADER_TYPE = pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))
HEADER_KEY_BYTES_TYPE = pa.list_(pa.binary())

#: one row per record (Spark's Kafka-source columns first; see the module docstring)
RECORD_SCHEMA = pa.schema([
    ("key", pa.binary()),
    ("value", pa.binary()),
    ("topic", pa.string()),
    ("partition", pa.int32()),
    ("offset", pa.int64()),
    ("timestamp", pa.timestamp("ms")),
    ("timestampType", pa.int32()),
    ("headers", HEADER_TYPE),
    ("header_key_bytes", HEADER_KEY_BYTES_TYPE),
    ("timestamp_ms", pa.int64()),
    ("timestamp_type", pa.int8()),  # TimestampType id: -1 none, 0 CreateTime, 1 LogAppendTime
    ("key_size", pa.int32()),
    ("value_size", pa.int32()),
    ("sequence", pa.int32()),
    ("batch_index", pa.int32()),
    ("batch_position", pa.int64()),
    ("magic", pa.int8()),
    ("compression", pa.int8()),  # CompressionType id
    ("producer_id", pa.int64()),
    ("producer_epoch", pa.int16()),
    ("partition_leader_epoch", pa.int32()),
    ("is_transactional", pa.bool_()),
    ("is_control", pa.bool_()),
    ("batch_max_timestamp", pa.int64()),
    ("crc_valid", pa.bool_()),
])

#: the per-batch columns of RECORD_SCHEMA, repeated on each of the batch's records
_BATCH_COLUMNS = ("batch_index", "batch_position", "magic", "compression", "producer_id", "producer_epoch",
                  "partition_leader_epoch", "is_transactional", "is_control", "batch_max_timestamp", "crc_valid")

#: one row per batch (headers only)
BATCH_SCHEMA = pa.schema([
    ("batch_index", pa.int32()),
    ("position", pa.int64()),
    ("size", pa.int32()),
    ("magic", pa.int8()),
    ("base_offset", pa.int64()),
    ("last_offset", pa.int64()),
    ("count", pa.int32()),  # null for v0/v1
    ("compression", pa.int8()),
    ("timestamp_type", pa.int8()),
    ("max_timestamp", pa.int64()),
    ("base_timestamp", pa.int64()),  # null for v0/v1
    ("producer_id", pa.int64()),
    ("producer_epoch", pa.int16()),
    ("base_sequence", pa.int32()),
    ("partition_leader_epoch", pa.int32()),
    ("is_transactional", pa.bool_()),
    ("is_control", pa.bool_()),
    ("crc", pa.uint32()),
    ("is_valid", pa.bool_()),
])

#: records-area bytes decoded per Arrow record batch: bounds the memory of one step and keeps every
#: binary column far below Arrow's 2 GiB per-array limit
DEFAULT_CHUNK_BYTES = 16 << 20


def _batches(source) -> Iterable[RecordBatch]:
    if isinstance(source, MemoryRecords):
        return source.batches()
    return MemoryRecords(source).batches()


def _walk(source) -> tuple[object, BatchWalker]:
    """The buffer of ``source`` and the one batch walker over it, with ``MemoryRecords``' rules."""
    if isinstance(source, MemoryRecords):
        return source.buf, BatchWalker(source.buf, source.start, source.end, rules=MEMORY, strict=source.strict,
                                       max_message_size=source.max_message_size)
    return source, BatchWalker(source, rules=MEMORY)


def batches_table(source, *, check_crc: bool = True) -> pa.Table:
    """Batch headers of ``source`` (bytes-like or MemoryRecords) as an Arrow table (shallow)."""
    cols = {f.name: [] for f in BATCH_SCHEMA}
    for i, b in enumerate(_batches(source)):
        legacy = b.magic < 2
        row = (i, b.position, b.size_in_bytes, b.magic, b.last_offset if legacy else b.base_offset, b.last_offset,
               b.count, b.compression_id, int(b.timestamp_type), b.max_timestamp,
               None if legacy else b.base_timestamp, b.producer_id, b.producer_epoch, b.base_sequence,
               b.partition_leader_epoch, b.is_transactional, b.is_control, b.checksum,
               b.is_valid() if check_crc else None)
        for name, v in zip(cols, row):
            cols[name].append(v)
    return pa.table(cols, schema=BATCH_SCHEMA)


def records_table(source, *, topic: str | None = None, partition: int | None = None,
                  include_keys: bool = True, include_values: bool = True, include_headers: bool = True,
                  include_data: bool | None = None, control_records: bool = True, check_crc: bool = True,
                  max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES, engine: str = "fast",
                  chunk_bytes: int = DEFAULT_CHUNK_BYTES) -> pa.Table:
    """Every record of ``source`` (bytes-like, mmap or MemoryRecords) as an Arrow table (deep).

    ``include_keys``/``include_values``/``include_headers=False`` leave that column null (sizes
    stay), for offset/timestamp analysis of large logs; ``include_data=False`` does all three.
    ``control_records=False`` drops control batches (transaction markers) without decoding them, as
    a consumer does.  ``check_crc`` raises on the first batch whose CRC is invalid (see the module
    docstring).  ``engine="reference"`` decodes every batch with the pure-Python reference decoder.
    """
    if include_data is not None:
        include_keys = include_values = include_headers = include_data
    if engine not in ("fast", "reference"):
        raise ValueError(f"engine must be 'fast' or 'reference', not {engine!r}")
    opts = _Options(topic, partition, include_keys, include_values, include_headers, max_decompressed_bytes)
    buf, walk = _walk(source)
    chunk = _Chunk(buf, opts, reference_only=engine == "reference", chunk_bytes=chunk_bytes)
    tables = []
    try:
        i = -1
        for span in walk:
            i += 1
            taken = chunk.add_plain_and_run(i, span, walk, check_crc=True, raise_on_invalid=check_crc) or \
                chunk.add_v2_run(i, span, walk, check_crc=True, raise_on_invalid=check_crc)
            if taken:
                i += taken - 1
            else:
                b = span_batch(buf, span)
                valid = b.is_valid()
                if check_crc and not valid:
                    b.ensure_valid()
                if b.is_control and not control_records:
                    continue
                chunk.add(i, b, valid)
            if chunk.pending_bytes >= chunk_bytes:
                tables.extend(chunk.flush())
    except KafkaFmtError:
        # a consumer meets errors in batch order: an error in an earlier batch of the chunk comes first
        chunk.flush()
        raise
    tables.extend(chunk.flush())
    return concat_tables(tables)


def concat_tables(tables: Iterable[pa.Table]) -> pa.Table:
    """Record tables one after the other (an empty :data:`RECORD_SCHEMA` table for none)."""
    tables = list(tables)
    return pa.concat_tables(tables) if tables else RECORD_SCHEMA.empty_table()


class _Options:
    __slots__ = ("topic", "partition", "keys", "values", "headers", "max_decompressed_bytes")

    def __init__(self, topic, partition, keys, values, headers, max_decompressed_bytes):
        self.topic, self.partition = topic, partition
        self.keys, self.values, self.headers = keys, values, headers
        self.max_decompressed_bytes = max_decompressed_bytes


def _meta(i: int, b: RecordBatch, valid: bool) -> tuple:
    """The per-batch column values, in ``_BATCH_COLUMNS`` order."""
    return (i, b.position, b.magic, b.compression_id, b.producer_id, b.producer_epoch, b.partition_leader_epoch,
            b.is_transactional, b.is_control, b.max_timestamp, valid)


_LAT_NONE = -2**63
#: the arena argument of ``fast.v2_run`` for uncompressed batches
_NO_ARENA = np.empty(0, np.uint8)
#: marks a piece held in the chunk's arena (decompressed straight into it)
_ARENA = object()
#: the arena's room beyond ``chunk_bytes``: the frames of the batch that crosses it (``fast.lz4_frame_bound``: 64 KiB
#: a compressed block), whole for batches of up to 1 MiB
_ARENA_SLACK = 1 << 20
_TS_TYPES = {t.value: t for t in TimestampType}
_TS_TYPE_BY_ID_PLUS_1 = np.array([_TS_TYPES[i - 1] for i in range(len(_TS_TYPES))], dtype=object)
_LEGACY_CRC_START = LEGACY_V0.offset_of("magic")  # LegacyRecord: the CRC covers magic..end


#: plain v0/v1 messages decoded by one kernel call (``decode_legacy_plain``) when keys and values are gathered
#: right after it, so that the gather finds them in cache (measured on 200k plain v1 messages: 1-2 MiB 5-7% faster
#: than one call, 256 KiB 3% slower; the machine has 1 MiB of L2 per core, 32 MiB L3).  v2 records need no
#: such groups: ``decode_v2`` copies each key and value itself as it reads the record
_GATHER_BYTES = 2 << 20
#: a run's positions are sized for ``max_bytes`` plus one more message of any size
_MAX_LEGACY_ENTRY_GUESS = 1 << 20
_BATCH_DTYPES = [RECORD_SCHEMA.field(name).type.to_pandas_dtype() for name in _BATCH_COLUMNS]
#: the codecs of the v2 batches one compiled pass reads (``fast.v2_run``); others go batch by batch
_RUN_CODECS = (CompressionType.NONE, CompressionType.LZ4)
#: v2 batches read by one ``fast.v2_run`` call at most (its ``heads`` matrix)
_RUN_BATCHES = 1024


class _Metas:
    """The per-batch column values of a chunk's batches, by local batch id (``_BATCH_COLUMNS`` order):
    a tuple per batch, or column arrays for a compiled run of plain v0/v1 messages."""

    def __init__(self):
        self.blocks: list = []  # a list of tuples, or a tuple of column arrays (a run)
        self.single: dict[int, tuple] = {}
        self.n = 0

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, local: int) -> tuple:
        if local in self.single:
            return self.single[local]
        for start, cols in self._runs():
            if start <= local < start + len(cols[0]):
                return tuple(col[local - start].item() for col in cols)
        raise IndexError(local)

    def _runs(self):
        at = 0
        for block in self.blocks:
            if isinstance(block, tuple):
                yield at, block
                at += len(block[0])
            else:
                at += len(block)

    def append(self, meta: tuple) -> None:
        if not self.blocks or isinstance(self.blocks[-1], tuple):
            self.blocks.append([])
        self.blocks[-1].append(meta)
        self.single[self.n] = meta
        self.n += 1

    def append_run(self, index: int, positions: np.ndarray, magics: np.ndarray, timestamps: np.ndarray) -> None:
        """Messages ``index``, ``index + 1``... of the record set at ``positions``: uncompressed, no
        producer state, valid CRCs (``fast.legacy_plain_run`` checked them)."""
        n = len(positions)
        const = lambda dtype, v: np.full(n, v, dtype=dtype)  # noqa: E731
        d = _BATCH_DTYPES
        self.append_columns((np.arange(index, index + n, dtype=d[0]), positions, magics, const(d[3], 0),
                             const(d[4], NO_PRODUCER_ID), const(d[5], NO_PRODUCER_EPOCH),
                             const(d[6], NO_PARTITION_LEADER_EPOCH), const(d[7], False), const(d[8], False),
                             timestamps, const(d[10], True)))

    def append_columns(self, cols: tuple) -> None:
        """Batches given as one array per column (``_BATCH_COLUMNS`` order): a compiled run."""
        self.blocks.append(cols)
        self.n += len(cols[0])

    def columns(self) -> list[np.ndarray]:
        """Each column's values for every local batch id."""
        parts = [[] for _ in _BATCH_COLUMNS]
        for block in self.blocks:
            cols = block if isinstance(block, tuple) else [np.array(v, dtype=dt) for v, dt in zip(zip(*block), _BATCH_DTYPES)]
            for part, col in zip(parts, cols):
                part.append(col)
        return [np.concatenate(p).astype(dt, copy=False) if p else np.empty(0, dt) for p, dt in zip(parts, _BATCH_DTYPES)]


def _run_metas(index: int, heads: np.ndarray, valid: np.ndarray) -> tuple:
    """The per-batch columns (``_BATCH_COLUMNS`` order) of a compiled run of v2 batches from its ``heads``."""
    n = heads.shape[1]
    d = _BATCH_DTYPES
    attributes = heads[fast.H_ATTRIBUTES]
    return (np.arange(index, index + n, dtype=d[0]), heads[fast.H_POSITION], np.full(n, MAGIC_VALUE_V2, d[2]),
            (attributes & V2_COMPRESSION_CODEC_MASK).astype(d[3]), heads[fast.H_PID], heads[fast.H_EPOCH].astype(d[5]),
            heads[fast.H_PLE].astype(d[6]), (attributes & V2_TRANSACTIONAL_FLAG_MASK) != 0, np.zeros(n, d[8]),
            heads[fast.H_MAX_TS], valid)


class _KernelCalls:
    """The kernel calls of a :class:`_Chunk`: its pieces in one buffer, each planned step run by its
    compiled kernel (``decode_v2``, ``decode_legacy_plain``, ``decode_legacy_inner``), the rows committed
    and their keys and values gathered.  Reads the chunk's plan (``pieces``, ``steps``, ``batches``,
    ``capacity``, ``gather``, the arena)."""

    def _buffer(self):
        """One uint8 array holding every piece, and each piece's start in it."""
        if self.all_source or self.all_arena:
            data = np.frombuffer(self.source, dtype=np.uint8) if self.all_source else self.arena[:self.arena_used]
            data.flags.writeable = False  # a bytearray source too: one kernel specialisation for every input
            return data, [s for _, s, _ in self.pieces]
        total = sum(e - s for _, s, e in self.pieces)
        data = np.empty(total, dtype=np.uint8)
        starts, at = [], 0
        for buf, s, e in self.pieces:
            src = self.arena if buf is _ARENA else np.frombuffer(buf, dtype=np.uint8, count=e - s, offset=s)
            data[at:at + e - s] = src[s:e] if buf is _ARENA else src
            starts.append(at)
            at += e - s
        data.flags.writeable = False  # one kernel specialisation: source buffers are read-only too
        return data, starts

    def _run(self, *, wire: bool):
        """Run the kernels over every step: the buffer, each piece's start in it, the filled rows, and
        the record order as ("fast", row0, row1) | ("ref", local batch id) items.  ``wire``: fill the
        rows only ``Record`` objects need (see ``fast.decode_v2``)."""
        order: list = []
        data, starts = self._buffer() if self.pieces else (np.frombuffer(b"", np.uint8), [])
        out = fast.pool_empty((fast.N_FIELDS, self.capacity), np.int64)
        row = 0
        for step in self.steps:
            kind = step[0]
            if kind == "ref":
                order.append(("ref", step[1]))
            elif kind == "v2":
                row = self._run_v2(data, starts, step[1], step[2], out, row, order, wire)
            elif kind == "v2run":
                row = self._run_v2_run(data, starts, step, out, row, order, wire)
            elif kind == "plain":
                row = self._run_plain(data, starts, step, out, row, order, wire)
            else:
                _, local, piece = step
                b = self.batches[local]
                m = b.message
                s = starts[piece]
                ts_type = int(m.timestamp_type)
                nxt = fast.decode_legacy_inner(data, s, s + self.pieces[piece][2], m.magic, m.offset, m.timestamp,
                                               ts_type, local, row, out, wire)
                if nxt < 0:
                    order.append(("ref", local))
                else:
                    row = self._commit(data, out, row, nxt, order)
        return data, starts, out[:, :row], order

    def _commit(self, data, out, row, nxt, order, *, gathered: bool = False) -> int:
        """Rows ``row..nxt-1`` are filled for good: record them in ``order`` (and gather their keys and
        values while they are in cache, unless the kernel did: ``gathered``); the next row."""
        order.append(("fast", row, nxt))
        if self.gather is not None and not gathered:
            self.gather.rows(data, out, row, nxt)
        return nxt

    def _run_v2(self, data, starts, locals_, pieces, out, row, order, wire: bool) -> int:
        bs = [self.batches[i] for i in locals_]
        st = np.array([starts[p] for p in pieces], dtype=np.int64)
        en = st + np.array([self.pieces[p][2] - self.pieces[p][1] for p in pieces], dtype=np.int64)
        counts = np.array([b.count for b in bs], dtype=np.int64)
        base_offsets = np.array([b.base_offset for b in bs], dtype=np.int64)
        base_ts = np.array([b.base_timestamp for b in bs], dtype=np.int64)
        lat = np.array([b.max_timestamp if b.attributes & V2_TIMESTAMP_TYPE_MASK else _LAT_NONE  # LogAppendTime
                        for b in bs], dtype=np.int64)
        seqs = np.array([b.base_sequence for b in bs], dtype=np.int64)
        ids = np.array(locals_, dtype=np.int64)
        return self._decode_v2(data, (st, en, counts, base_offsets, base_ts, lat, seqs), ids, out, row, order, wire)

    def _run_v2_run(self, data, starts, step, out, row, order, wire: bool) -> int:
        """A compiled run's batches (:meth:`add_v2_run`): its arrays, records areas placed where its piece is."""
        _, local0, piece, (area_start, area_end, *rest) = step
        at = starts[piece]
        ids = np.arange(local0, local0 + len(area_start), dtype=np.int64)
        return self._decode_v2(data, (area_start + at, area_end + at, *rest), ids, out, row, order, wire)

    def _decode_v2(self, data, arrays: tuple, ids: np.ndarray, out, row, order, wire: bool) -> int:
        """``fast.decode_v2`` over the batches of ``arrays`` (records areas' starts and ends in ``data``, counts,
        base offsets, base timestamps, LogAppendTimes, base sequences); a batch it hands over goes to the
        reference decoder."""
        dests = fast.NO_GATHER if self.gather is None else self.gather.kernel_args()  # the kernel copies keys, values
        first, last = 0, len(ids)
        while first < last:
            failed, nxt = fast.decode_v2(data, *arrays, ids, first, last, row, out, wire, *dests)
            if nxt > row:
                row = self._commit(data, out, row, nxt, order, gathered=True)
            if failed < 0:
                break
            order.append(("ref", int(ids[failed])))
            first = failed + 1
        return row

    def _run_plain(self, data, starts, step, out, row, order, wire: bool) -> int:
        _, local0, n, piece = step
        s = starts[piece]
        e = s + self.pieces[piece][2] - self.pieces[piece][1]
        # about _GATHER_BYTES of messages a call when keys and values are gathered right after it
        max_bytes = _GATHER_BYTES if self.gather is not None else e - s
        done, begin = 0, s
        while done < n:
            failed, nxt, begin = fast.decode_legacy_plain(data, begin, e, max_bytes, local0 + done, row, out, wire)
            done += nxt - row  # one row per message
            if nxt > row:
                row = self._commit(data, out, row, nxt, order)
            if failed < 0:
                if begin >= e:
                    break
                continue
            order.append(("ref", local0 + done))
            done += 1
            if done < n:  # restart after the failed entry: the next message's batch knows where it starts
                b = self._batch_or_position(local0 + done)
                begin = s + ((b if isinstance(b, int) else b.position) - self.pieces[piece][1])
        return row


class _ArrowAssembly:
    """The Arrow assembly of a :class:`_Chunk`: the kernels' rows as a record table (per-batch columns
    run-end decoded), as :class:`Record` objects, or a batch through the reference decoder."""

    def _fast_table(self, data, out) -> pa.Table:
        o = self.opts
        n = out.shape[1]
        cols = {}
        ids = out[fast.F_BATCH]
        key_len, value_len = out[fast.F_KEY_LEN], out[fast.F_VALUE_LEN]
        gathered = iter(self.gather.arrays(out) if self.gather is not None else ())
        cols["key"] = next(gathered) if o.keys else pa.nulls(n, pa.binary())
        cols["value"] = next(gathered) if o.values else pa.nulls(n, pa.binary())
        cols["topic"] = pa.nulls(n, pa.string()) if o.topic is None else pa.repeat(pa.scalar(o.topic, pa.string()), n)
        cols["partition"] = pa.nulls(n, pa.int32()) if o.partition is None else \
            pa.repeat(pa.scalar(o.partition, pa.int32()), n)
        cols["offset"] = fast.numpy_array(out[fast.F_OFFSET], pa.int64())
        ts = fast.numpy_array(out[fast.F_TIMESTAMP], pa.int64())
        cols["timestamp"] = ts.view(pa.timestamp("ms"))
        tstype = out[fast.F_TSTYPE]
        cols["timestampType"] = fast.numpy_array(fast.pool_astype(tstype, np.int32), pa.int32())
        if o.headers:
            cols["headers"], cols["header_key_bytes"] = fast.header_arrays(
                data, out[fast.F_HEADERS_POS], fast.pool_astype(out[fast.F_HEADERS_COUNT], np.int32), HEADER_TYPE,
                HEADER_KEY_BYTES_TYPE)
        else:
            cols["headers"], cols["header_key_bytes"] = pa.nulls(n, HEADER_TYPE), pa.nulls(n, HEADER_KEY_BYTES_TYPE)
        cols["timestamp_ms"] = ts
        cols["timestamp_type"] = fast.numpy_array(fast.pool_astype(tstype, np.int8), pa.int8())
        cols["key_size"] = fast.numpy_array(fast.pool_astype(key_len, np.int32), pa.int32())
        cols["value_size"] = fast.numpy_array(fast.pool_astype(value_len, np.int32), pa.int32())
        cols["sequence"] = fast.numpy_array(fast.pool_astype(out[fast.F_SEQUENCE], np.int32), pa.int32())
        # the kernels write rows batch after batch, so a batch's values repeat over its run of rows: each
        # column is run-end encoded and decoded by Arrow (measured 5x faster than np.repeat + pa.array)
        # (v0/v1 plain messages are one record per "batch": then each value is its row's, nothing to decode)
        rows_per_batch = np.bincount(ids, minlength=len(self.metas))
        has_rows = rows_per_batch > 0
        if has_rows.all():
            has_rows = slice(None)  # no copy of each column through a mask
        ends = np.cumsum(rows_per_batch[has_rows])
        run_ends = None if len(ends) == n else fast.numpy_array(ends.astype(np.int64, copy=False), pa.int64())
        for name, values in zip(_BATCH_COLUMNS, self.metas.columns()):
            type_ = RECORD_SCHEMA.field(name).type
            per_batch = fast.numpy_array(values[has_rows], type_)
            cols[name] = per_batch if run_ends is None else pc.run_end_decode(
                pa.Array.from_buffers(pa.run_end_encoded(pa.int64(), type_), n, [None], children=[run_ends, per_batch]))
        return pa.table(cols, schema=RECORD_SCHEMA)

    def _fast_records(self, data, starts, out) -> Iterator[Record]:
        """Record objects equal to the reference decoder's, from the kernels' rows (made as they are
        consumed: a chunk's records are never all alive at once, so the garbage collector has few
        young objects to visit)."""
        shift = {}  # local batch id -> input position minus buffer position (None: decompressed bytes)
        piece_of = dict(self.piece_of)
        for local0, n, piece in self.run_pieces:
            piece_of.update(dict.fromkeys(range(local0, local0 + n), piece))
        for local, piece in piece_of.items():
            src, s, _ = self.pieces[piece]
            shift[local] = s - starts[piece] if src is self.source else None
        f = fast
        buf = self.source if self.all_source and isinstance(self.source, bytes) else None
        has_headers = bool(out[f.F_HEADERS_COUNT].any())
        if buf is None and has_headers:
            buf = data.tobytes()
        headers = _header_tuples(data, buf, out) if has_headers else None
        shifts = set(shift.values())
        magics = out[f.F_MAGIC]
        if out.shape[1] and (int(magics.min()) == 2 or int(magics.max()) < 2) and \
                (None not in shifts or shifts == {None}):
            return _mapped_records(data, out, shift if None not in shifts else None, headers)
        if buf is None:
            buf = data.tobytes()
        cols = out.tolist()
        hdr_count = cols[f.F_HEADERS_COUNT]
        recs = []
        ts_types = _TS_TYPES
        h = 0
        for i, (offset, ts, tstype, seq, kpos, klen, vpos, vlen, nh, bid, rpos, size, attrs, magic, ts_delta,
                offset_delta, stored_ts, stored_offset) in enumerate(zip(
                cols[f.F_OFFSET], cols[f.F_TIMESTAMP], cols[f.F_TSTYPE], cols[f.F_SEQUENCE], cols[f.F_KEY_POS],
                cols[f.F_KEY_LEN], cols[f.F_VALUE_POS], cols[f.F_VALUE_LEN], hdr_count, cols[f.F_BATCH],
                cols[f.F_RECORD_POS], cols[f.F_SIZE], cols[f.F_ATTRIBUTES], cols[f.F_MAGIC], cols[f.F_TS_DELTA],
                cols[f.F_OFFSET_DELTA], cols[f.F_STORED_TIMESTAMP], cols[f.F_STORED_OFFSET])):
            key = None if klen < 0 else buf[kpos:kpos + klen]
            value = None if vlen < 0 else buf[vpos:vpos + vlen]
            sh = shift[bid]
            if magic == 2:
                recs.append(Record(offset, ts, ts_types[tstype], key, value, headers[h:h + nh] if nh else (), seq, 2,
                                   attrs, size, None if sh is None else rpos + sh, ts_delta, offset_delta))
                h += nh
            else:
                crc = LEGACY_V0.get(buf, rpos, "crc")
                recs.append(Record(offset, ts, ts_types[tstype], key, value, (), -1, magic, attrs, size,
                                   None if sh is None else rpos + sh, stored_offset=stored_offset,
                                   stored_timestamp=stored_ts if magic == 1 else None, crc=crc,
                                   crc_valid=crc == crc32(buf[rpos + _LEGACY_CRC_START:rpos + size])))
        return iter(recs)

    def _reference_table(self, local: int) -> pa.Table:
        return reference_records_table(self.batch(local), self.metas[local], self.opts)


class _Chunk(_KernelCalls, _ArrowAssembly):
    """Batches waiting to be decoded together: the plan (their records areas, views into the source or
    decompressed bytes, and the kernel call each needs), then :meth:`flush` / :meth:`flush_records`
    run the kernels (:class:`_KernelCalls`) and assemble the result (:class:`_ArrowAssembly`)."""

    def __init__(self, source, opts: _Options, *, reference_only: bool = False,
                 chunk_bytes: int = DEFAULT_CHUNK_BYTES):
        self.source = source
        self.chunk_bytes = chunk_bytes
        self.opts = opts
        self.reference_only = reference_only
        self.arena: np.ndarray | None = None  # kept across flushes: its pages are reused
        self._reset()

    def _reset(self):
        self.metas = _Metas()
        self.batches: dict = {}  # local batch id -> RecordBatch or BatchSpan (not a compiled run's messages: _Metas)
        self.pieces: list = []  # (buffer, start, end): buffer is self.source or decompressed bytes
        self.piece_of: dict[int, int] = {}  # local batch id -> its piece
        self.run_pieces: list[tuple[int, int, int]] = []  # (first local id, count, piece) of compiled runs
        # ("v2", [local ids], [piece ids]) | ("plain", local id0, n, piece) | ("inner", id, piece) | ("ref", id)
        self.steps: list = []
        self.capacity = 0
        self.gather: fast.ValueGather | None = None  # keys and values copied as rows are filled (flush)
        self.pending_bytes = 0
        self.all_source = True
        self.all_arena = True
        self.arena_used = 0  # bytes of self.arena holding decompressed records areas (pieces of _ARENA)

    def _piece(self, buf, start: int, end: int) -> int:
        if buf is not self.source:
            self.all_source = False
        if buf is not _ARENA:
            self.all_arena = False
        self.pieces.append((buf, start, end))
        self.pending_bytes += end - start
        return len(self.pieces) - 1

    def add(self, index: int, b: RecordBatch, valid: bool) -> None:
        local = len(self.metas)
        self.metas.append(_meta(index, b, valid))
        self.batches[local] = b
        if self.reference_only:
            self.steps.append(("ref", local))
        elif b.magic >= 2:
            self._add_v2(local, b)
        elif not b.is_compressed:
            self._add_plain_step(local, b.position, b.end)
        else:
            self._add_wrapper(local, b)

    def add_plain(self, index: int, span: BatchSpan, *, check_crc: bool = False, raise_on_invalid: bool = False) -> bool:
        """Take an uncompressed v0/v1 message straight from its walker span (no batch object: a v0/v1
        record set holds one "batch" per message).  False: not such a message (or one to refuse, or too
        short to read its header), for :meth:`add` to take as a batch."""
        if span.magic >= 2 or self.reference_only:
            return False
        buf, pos, end = self.source, span.position, span.end
        if span.size - LOG_OVERHEAD < record_overhead(span.magic) or \
                LEGACY_V0.get(buf, pos, "attributes") & LEGACY_COMPRESSION_CODEC_MASK:
            return False
        valid = True
        if check_crc:
            valid = LEGACY_V0.get(buf, pos, "crc") == crc32(buf[pos + _LEGACY_CRC_START:end])
            if not valid and raise_on_invalid:
                return False  # the batch path raises Kafka's error
        local = len(self.metas)
        timestamp = LEGACY_V1.get(buf, pos, "timestamp") if span.magic == 1 else NO_TIMESTAMP
        self.metas.append((index, pos, span.magic, 0, NO_PRODUCER_ID, NO_PRODUCER_EPOCH, NO_PARTITION_LEADER_EPOCH,
                           False, False, timestamp, valid))
        self.batches[local] = span
        self._add_plain_step(local, pos, end)
        return True

    def add_plain_and_run(self, index: int, span: BatchSpan, walk: BatchWalker, **crc) -> int:
        """:meth:`add_plain`, then the compiled run of the plain messages after it (the walker resumes
        after the run): how many messages were taken, 0 if ``span`` is not one for :meth:`add_plain`."""
        if not self.add_plain(index, span, **crc):
            return 0
        n, run_end = self.add_plain_run(index + 1, span.end, walk.end, walk.max_message_size,
                                        max(self.chunk_bytes - self.pending_bytes, 1))
        if n:
            walk.resume_at(run_end)
        return 1 + n

    def add_plain_run(self, index: int, position: int, end: int, max_message_size: int | None,
                      max_bytes: int) -> tuple[int, int]:
        """Take the uncompressed v0/v1 messages that follow each other from ``position`` (up to about
        ``max_bytes``) as one compiled run (``fast.legacy_plain_run``): the messages the walker would
        yield one by one and :meth:`add_plain` take, with no Python step per message.  Returns how many
        and where the run ends: the walker goes on from there."""
        if self.reference_only or end - position < fast.MIN_LEGACY_ENTRY:
            return 0, position
        data = np.frombuffer(self.source, dtype=np.uint8)
        data.flags.writeable = False
        bound = min(end - position, max_bytes + _MAX_LEGACY_ENTRY_GUESS) // fast.MIN_LEGACY_ENTRY + 1
        positions, timestamps = np.empty(bound, np.int64), np.empty(bound, np.int64)
        magics = np.empty(bound, np.int8)
        n, run_end = fast.legacy_plain_run(data, position, end, -1 if max_message_size is None else max_message_size,
                                           max_bytes, positions, magics, timestamps)
        del data
        if n == 0:
            return 0, position
        local = len(self.metas)
        self.metas.append_run(index, positions[:n], magics[:n], timestamps[:n])
        self._add_plain_step(local, position, run_end, n)
        return n, run_end

    def add_v2_run(self, index: int, span: BatchSpan, walk: BatchWalker, *, check_crc: bool = False,
                   raise_on_invalid: bool = False) -> int:
        """The v2 batches from ``span`` on that one compiled pass reads (``fast.v2_run``: uncompressed or lz4
        batches of one codec, no control batch), with no Python step per batch but each one's CRC-32C (when
        ``check_crc``; ``raise_on_invalid``: the run ends before an invalid one, and the batch path raises Kafka's
        error); the walker resumes after them.  How many were taken (0: none, :meth:`add` takes ``span``)."""
        if span.magic != MAGIC_VALUE_V2 or self.reference_only or span.size < RECORD_BATCH_OVERHEAD:
            return 0
        codec = DEFAULT_BATCH.get(self.source, span.position, "attributes") & V2_COMPRESSION_CODEC_MASK
        if codec not in _RUN_CODECS:
            return 0
        used0 = self.arena_used
        heads, run_end, arena_used = self._v2_heads(span.position, walk, codec)
        valid = self._crcs_valid(heads) if check_crc else np.ones(heads.shape[1], np.bool_)
        if raise_on_invalid and not valid.all():
            n = int(np.argmin(valid))
            run_end, arena_used = int(heads[fast.H_POSITION, n]), used0 + int(heads[fast.H_AREA_START, n])
            heads, valid = heads[:, :n], valid[:n]
        n = heads.shape[1]
        if n == 0:
            return 0
        local = len(self.metas)
        self.metas.append_columns(_run_metas(index, heads, valid))
        if codec == CompressionType.LZ4:
            piece = self._piece(_ARENA, used0, arena_used)
            self.arena_used = arena_used
        else:
            piece = self._piece(self.source, span.position, run_end)
        self.run_pieces.append((local, n, piece))
        h = heads
        lat = np.where(h[fast.H_ATTRIBUTES] & V2_TIMESTAMP_TYPE_MASK, h[fast.H_MAX_TS], _LAT_NONE)  # LogAppendTime
        self.steps.append(("v2run", local, piece, tuple(np.ascontiguousarray(a) for a in (
            h[fast.H_AREA_START], h[fast.H_AREA_END], h[fast.H_COUNT], h[fast.H_BASE_OFFSET], h[fast.H_BASE_TS], lat,
            h[fast.H_BASE_SEQ]))))
        self.capacity += int(h[fast.H_COUNT].sum())
        walk.resume_at(run_end)
        return n

    def _v2_heads(self, position: int, walk: BatchWalker, codec: int) -> tuple[np.ndarray, int, int]:
        """``fast.v2_run`` from ``position`` (the arena grown when an lz4 frame needs more room than it has):
        the run's ``heads`` (one column per batch), where it ends, the arena bytes used after it."""
        data = np.frombuffer(self.source, dtype=np.uint8)
        data.flags.writeable = False
        heads = np.empty((fast.N_HEAD_FIELDS, _RUN_BATCHES), np.int64)
        lz4 = codec == CompressionType.LZ4
        if lz4:
            self._reserve(0)
        arena = self.arena if lz4 else _NO_ARENA
        max_bytes = max(self.chunk_bytes - self.pending_bytes, 1)
        lz4_cap = max_bytes_in_force(self.opts.max_decompressed_bytes)
        while True:
            n, run_end, used, reason, need = fast.v2_run(
                data, position, walk.end, codec, -1 if walk.max_message_size is None else walk.max_message_size,
                current_limits().max_records_per_batch, max_bytes, heads, arena, self.arena_used, lz4_cap)
            if reason != fast.RUN_ROOM or n:
                break
            self._reserve(need)
            arena = self.arena
        del data
        return heads[:, :n], run_end, used

    def _crcs_valid(self, heads: np.ndarray) -> np.ndarray:
        """Whether each batch's stored CRC is the CRC-32C of its bytes from its attributes on
        (``DefaultRecordBatch.isValid``)."""
        with memoryview(self.source) as mv:
            computed = [crc32c(mv[p + DEFAULT_BATCH_CRC_START:e]) for p, e in
                        zip(heads[fast.H_POSITION].tolist(), heads[fast.H_END].tolist())]
        return np.array(computed, np.int64) == heads[fast.H_CRC]

    def _add_plain_step(self, local: int, position: int, end: int, n: int = 1) -> None:
        """Uncompressed v0/v1 messages side by side are decoded by one kernel call."""
        last = self.steps[-1] if self.steps else None
        if last is not None and last[0] == "plain" and self.pieces[last[3]][2] == position \
                and self.pieces[last[3]][0] is self.source and last[3] == len(self.pieces) - 1:
            buf, s, _ = self.pieces[last[3]]
            self.pieces[last[3]] = (buf, s, end)
            self.pending_bytes += end - position
            self.steps[-1] = ("plain", last[1], last[2] + n, last[3])
        else:
            self.steps.append(("plain", local, n, self._piece(self.source, position, end)))
        if n == 1:
            self.piece_of[local] = self.steps[-1][3]
        else:
            self.run_pieces.append((local, n, self.steps[-1][3]))
        self.capacity += n

    def _batch_or_position(self, local: int):
        """A waiting batch (RecordBatch or BatchSpan), or the position of a message of a compiled run (kept
        only in the run's ``_Metas`` column: no Python int per message)."""
        b = self.batches.get(local)
        return self.metas[local][1] if b is None else b

    def batch(self, local: int) -> RecordBatch:
        """The batch view of a waiting batch (made from its span for plain legacy messages)."""
        b = self._batch_or_position(local)
        if isinstance(b, int):  # a message of a compiled run
            b = span_at(self.source, b, rules=MEMORY)
        return span_batch(self.source, b) if isinstance(b, BatchSpan) else b

    def _add_v2(self, local: int, b) -> None:
        count = b.count
        if b.is_control or count < 0 or b.compression_id > CompressionType.ZSTD:
            self.steps.append(("ref", local))
            return
        if b.compression == CompressionType.LZ4:
            piece = self._decompress_into_arena(b)
        elif b.is_compressed:
            data, _ = b.payload(max_decompressed_bytes=self.opts.max_decompressed_bytes)
            piece = self._piece(data, 0, len(data))
        else:
            piece = self._piece(self.source, b.position + RECORD_BATCH_OVERHEAD, b.end)
        self.piece_of[local] = piece
        _, s, e = self.pieces[piece]
        if count > (e - s) // fast.MIN_V2_RECORD:
            self.steps.append(("ref", local))
            return
        if self.steps and self.steps[-1][0] == "v2":
            self.steps[-1][1].append(local)
            self.steps[-1][2].append(piece)
        else:
            self.steps.append(("v2", [local], [piece]))
        self.capacity += count

    def _reserve(self, n: int) -> np.ndarray:
        """At least ``n`` writable bytes at the end of the arena (grown by doubling)."""
        need = self.arena_used + n
        if self.arena is None or need > len(self.arena):
            # a chunk flushes once its pieces reach chunk_bytes, so one allocation of that size and room for the
            # frames of the batch that crosses it (pages are only touched when written) rarely grows (growing
            # copies the bytes decompressed so far: measured 6% of an lz4 decode when the first size was chunk_bytes)
            grown = fast.pool_empty(max(need, 2 * len(self.arena) if self.arena is not None else
                                        need + self.chunk_bytes + _ARENA_SLACK), np.uint8)
            if self.arena is not None:
                grown[:self.arena_used] = self.arena[:self.arena_used]
            self.arena = grown
        return self.arena[self.arena_used:]

    def _decompress_into_arena(self, b) -> int:
        """An lz4 batch's records area decompressed straight into the arena (no join, no copy into the
        kernels' buffer); on any error the reference codec runs, and raises Kafka's error."""
        start = b.position + RECORD_BATCH_OVERHEAD
        try:
            check_record_count(b.count, position=b.position)  # as DefaultRecordBatch.payload does first
            n = decompress_lz4_into(memoryview(self.source)[start:b.end], self._reserve,
                                    max_bytes=self.opts.max_decompressed_bytes)
        except KafkaFmtError:
            data, _ = b.payload(max_decompressed_bytes=self.opts.max_decompressed_bytes)  # the reference's error
            return self._piece(data, 0, len(data))
        at = self.arena_used
        self.arena_used += n
        return self._piece(_ARENA, at, at + n)

    def _add_wrapper(self, local: int, b) -> None:
        m = b.message
        if m.value is None or b.compression == CompressionType.ZSTD:
            self.steps.append(("ref", local))
            return
        data = b.decompressed_value(max_decompressed_bytes=self.opts.max_decompressed_bytes)
        piece = self._piece(data, 0, len(data))
        self.piece_of[local] = piece
        self.steps.append(("inner", local, piece))
        self.capacity += len(data) // fast.MIN_LEGACY_ENTRY + 1

    # --- decoding --------------------------------------------------------------------------
    def flush(self) -> list[pa.Table]:
        """Decode the waiting batches into tables, in record order."""
        if not self.metas:
            return []
        try:
            keys, values = self.opts.keys, self.opts.values
            self.gather = fast.ValueGather(keys, values, sum(e - s for _, s, e in self.pieces), self.capacity) \
                if keys or values else None
            data, starts, out, order = self._run(wire=False)
            fast_table = self._fast_table(data, out) if out.shape[1] else None
            del data  # no view of the source outlives the decode (an mmap must be closable)
            tables = [fast_table.slice(item[1], item[2] - item[1]) if item[0] == "fast"
                      else self._reference_table(item[1]) for item in order]
            return [t for t in tables if t.num_rows]
        finally:
            self._reset()

    def flush_records(self) -> Iterator[Record]:
        """Decode the waiting batches into :class:`Record` objects, in order (a generator: records
        before an error are yielded first, as the reference decoder's generator does)."""
        if not self.metas:
            return
        try:
            data, starts, out, order = self._run(wire=True)
            fast_records = self._fast_records(data, starts, out) if out.shape[1] else iter(())
            del data
            for item in order:
                if item[0] == "fast":  # fast rows come in row order, one run after the other
                    yield from islice(fast_records, item[2] - item[1])
                else:
                    yield from self.batch(item[1]).records(max_decompressed_bytes=self.opts.max_decompressed_bytes)
        finally:
            self._reset()


def _mapped_records(data, out, shift: dict | None, headers) -> Iterator[Record]:
    """:meth:`_Chunk._fast_records` for rows that are all v2 records or all v0/v1 messages: one
    ``Record`` per row made by ``map`` over whole columns (no Python loop body per record).  ``shift``:
    per batch, input position minus buffer position (None: every batch was decompressed)."""
    f = fast
    n = out.shape[1]
    col = lambda field: out[field].tolist()  # noqa: E731  (only the rows a Record needs)
    magics = out[f.F_MAGIC]
    if int(magics[0]) < 2:  # legacy wire details: stored offset and timestamp, CRC
        stored_crc, crc_valid = np.empty(n, np.uint32), np.empty(n, np.bool_)
        fast.legacy_crcs(data, out[f.F_RECORD_POS], out[f.F_SIZE], stored_crc, crc_valid)
        stored_ts = out[f.F_STORED_TIMESTAMP].astype(object)
        stored_ts[magics != 1] = None  # a v0 message has no timestamp field
        legacy = (col(f.F_STORED_OFFSET), stored_ts.tolist(), stored_crc.tolist(), crc_valid.tolist())
        deltas = (repeat(None, n), repeat(None, n))
        sequences = repeat(-1, n)
    else:
        legacy = tuple(repeat(None, n) for _ in range(4))
        deltas = (col(f.F_TS_DELTA), col(f.F_OFFSET_DELTA))
        sequences = col(f.F_SEQUENCE)
    keys = _bytes_objects(data, out[f.F_KEY_POS], out[f.F_KEY_LEN])
    values = _bytes_objects(data, out[f.F_VALUE_POS], out[f.F_VALUE_LEN])
    if headers is None:
        hdrs = repeat((), n)
    else:
        counts = col(f.F_HEADERS_COUNT)
        starts = np.concatenate(([0], np.cumsum(out[f.F_HEADERS_COUNT])[:-1])).tolist()
        hdrs = [headers[a:a + c] if c else () for a, c in zip(starts, counts)]
    if shift is None:
        positions = repeat(None, n)
    else:
        per_batch = np.zeros(int(out[f.F_BATCH].max()) + 1, np.int64)
        for local, sh in shift.items():
            if local < len(per_batch):
                per_batch[local] = sh
        positions = (out[f.F_RECORD_POS] + per_batch[out[f.F_BATCH]]).tolist()
    ts_types = _TS_TYPE_BY_ID_PLUS_1[out[f.F_TSTYPE] + 1].tolist()
    return map(Record, col(f.F_OFFSET), col(f.F_TIMESTAMP), ts_types, keys, values, hdrs, sequences, magics.tolist(),
               col(f.F_ATTRIBUTES), col(f.F_SIZE), positions, *deltas, *legacy)


def _bytes_objects(data, pos, lengths) -> list[bytes | None]:
    """``data[pos[i]:pos[i]+lengths[i]]`` as ``bytes`` (None for a negative length): one gather into an
    Arrow ``large_binary`` array, then Arrow's C loop makes the objects (measured 1.5x faster than
    slicing a ``bytes`` copy of ``data`` in a list comprehension, and no such copy is needed)."""
    return fast.binary_array(data, pos, lengths, pa.large_binary()).to_numpy(zero_copy_only=False).tolist()


def _header_tuples(data, buf, out) -> tuple[Header, ...]:
    """Every header of the rows, in order (keys read as the reference does: UTF-8, surrogateescape)."""
    counts = out[fast.F_HEADERS_COUNT]
    total = int(counts.sum())
    kpos, klen, vpos, vlen = (np.empty(total, np.int64) for _ in range(4))
    fast.header_spans(data, out[fast.F_HEADERS_POS], counts.astype(np.int32), total, kpos, klen, vpos, vlen)
    return tuple(Header(buf[kp:kp + kl].decode("utf-8", "surrogateescape"), None if vl < 0 else buf[vp:vp + vl])
                 for kp, kl, vp, vl in zip(kpos.tolist(), klen.tolist(), vpos.tolist(), vlen.tolist()))


def decode_records(source, *, max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
                   chunk_bytes: int = DEFAULT_CHUNK_BYTES) -> Iterator[Record]:
    """Every record of ``source`` as :class:`Record` objects, equal to ``MemoryRecords(source).records()``
    (the reference decoder, which stays the definition), decoded by the compiled kernels: the deep
    decode for callers that want objects rather than a table.  Errors, their positions and the records
    yielded before them are the reference's."""
    opts = _Options(None, None, True, True, True, max_decompressed_bytes)
    buf, walk = _walk(source)
    chunk = _Chunk(buf, opts, chunk_bytes=chunk_bytes)
    try:
        i = -1
        for span in walk:
            i += 1
            taken = chunk.add_plain_and_run(i, span, walk) or chunk.add_v2_run(i, span, walk)
            if taken:
                i += taken - 1
            else:
                chunk.add(i, span_batch(buf, span), True)
            if chunk.pending_bytes >= chunk_bytes:
                yield from chunk.flush_records()
    except KafkaFmtError:
        yield from chunk.flush_records()
        raise
    yield from chunk.flush_records()


def reference_records_table(b: RecordBatch, meta: tuple, opts: _Options) -> pa.Table:
    """One batch's rows from the pure-Python reference decoder (``Record`` objects): the error path
    of the fast decoder and its test oracle."""
    c = {f.name: [] for f in RECORD_SCHEMA}
    for r in b.records(max_decompressed_bytes=opts.max_decompressed_bytes):
        c["key"].append(r.key if opts.keys else None)
        c["value"].append(r.value if opts.values else None)
        c["offset"].append(r.offset)
        c["timestamp_ms"].append(r.timestamp)
        c["timestamp_type"].append(int(r.timestamp_type))
        if opts.headers:
            raw = [h.key_bytes for h in r.headers]
            c["headers"].append([{"key": k.decode("utf-8", "replace"), "value": h.value}
                                 for k, h in zip(raw, r.headers)])
            c["header_key_bytes"].append(raw if any(_not_utf8(k) for k in raw) else None)
        else:
            c["headers"].append(None)
            c["header_key_bytes"].append(None)
        c["key_size"].append(r.key_size)
        c["value_size"].append(r.value_size)
        c["sequence"].append(r.sequence)
    n = len(c["offset"])
    c["timestamp"] = c["timestamp_ms"]
    c["timestampType"] = c["timestamp_type"]
    c["topic"] = [opts.topic] * n
    c["partition"] = [opts.partition] * n
    for name, v in zip(_BATCH_COLUMNS, meta):
        c[name] = [v] * n
    arrays = [pa.array(c[f.name], pa.int64()).view(f.type) if f.name == "timestamp" else pa.array(c[f.name], f.type)
              for f in RECORD_SCHEMA]
    return pa.Table.from_arrays(arrays, schema=RECORD_SCHEMA)


def _not_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
        return False
    except UnicodeDecodeError:
        return True
