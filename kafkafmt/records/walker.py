"""The one batch walker: where each batch of a record set starts and ends, without decoding it.

Every reader of record sets in kafkafmt finds its batches here: :class:`~kafkafmt.records.MemoryRecords`,
``log.FileRecords``, ``kafkafmt dump``, the broker's record and consumer views, the conformance
explainer and the inner message set of a legacy wrapper.  No other module reads the log-entry
framing (``offset:int64 size:int32``, magic at byte 16; :data:`~kafkafmt.layout.LOG_ENTRY`).

API (stable; the columnar decoder and the Spark byte-range reader build on it)::

    walk = BatchWalker(source, start=0, end=None, rules=MEMORY, strict=False, need_more=False,
                       max_message_size=None)    # source: a buffer, BufferSource(buf) or PreadSource(fd)
    for span in walk:          # BatchSpan(position, size, magic, offset): nothing decoded, nothing copied
        span.header(buf)       # the header fields, read through layout.DEFAULT_BATCH / LEGACY_V0 / LEGACY_V1
        span.end               # position + size
    walk.stop                  # why the walk ended: None (``end`` reached exactly on a batch boundary),
                               # Trailing(position, length, reason) or NeedMore(position, needed)
    walk.valid_bytes           # bytes of whole batches walked so far

    next_span(buf, position, end, rules, ...) -> BatchSpan | Trailing | NeedMore | None
                               # one step, for readers that fetch bytes themselves (pread):
                               # ``buf`` need only hold the first 17 bytes at ``position`` (``base`` says
                               # which stream position ``buf[0]`` is); None: ``end`` reached
    span_at(buf, position)     # the whole entry known to start at ``position`` (TruncatedRecordError if cut)
    magic_at(buf, position, end, rules=MEMORY)   # the signed magic byte, checked as ``rules`` say

    kafkafmt.records.memory.span_batch(buf, span)  # the RecordBatch view of a span (Legacy/DefaultRecordBatch)

Where the bytes come from is a *source* (the memory and file variants of Kafka's one
``LogInputStream``): :class:`BufferSource` over anything ``struct.unpack_from`` and indexing accept
(``bytes``, ``bytearray``, ``memoryview`` or an ``mmap``; read-only is fine, the walker takes no
memoryview of it, so it never pins an mmap), or :class:`PreadSource` over a file descriptor, which
reads the 17 header bytes of each entry with one ``pread`` (``FileRecords`` walks its ``.log`` so).
A plain buffer given to :class:`BatchWalker` is wrapped in a :class:`BufferSource`.  Positions are
always positions in the caller's stream.

Rules: which checks apply, as a data table (h11-style), each from one Kafka class
(kafka-rules §0):

======  ======================================  ======================  ===================================
rules   Kafka class                             stops when fewer than   magic byte
======  ======================================  ======================  ===================================
MEMORY  ``ByteBufferLogInputStream.nextBatch``  12 bytes (then 17)      0..2, else "Invalid magic found"
FILE    ``FileLogInputStream.nextBatch``        18 bytes remain         below 2 legacy, 2 and above v2
INNER   ``DataLogInputStream.nextBatch``        12 bytes remain         not checked (``LegacyRecord``)
======  ======================================  ======================  ===================================

A size field below ``RECORD_OVERHEAD_V0`` (14) is corrupt under every rule, each with its class's
own message (:attr:`Rules.size_error`).  MEMORY also checks ``max_message_size`` ("Record size %d
exceeds the largest allowable message size (%d).").  FILE reads any magic of 2 or more as v2,
as ``kafka-dump-log`` and the broker's file reader do (the v2 CRC does not cover the magic byte).

What happens when the input ends inside a batch (or inside the 12/17 header bytes):

* default (lenient): the walk stops and :attr:`BatchWalker.stop` is a :class:`Trailing` (Kafka
  ignores a partial trailing batch silently; kafkafmt reports it);
* ``strict=True``: :class:`~kafkafmt.errors.TruncatedRecordError` ("truncated input: <reason>");
* ``need_more=True`` (streaming and byte-range readers): the walk stops with :class:`NeedMore`,
  the least number of further bytes after which the walk can go on (the whole batch once its
  size is known).  Feed more bytes and walk again from ``NeedMore.position``.

The validator's other view of the same batches, ``skipKeyValueIterator``, is not a second walker:
it reads the records of a batch this walker found, with keys, values and headers skipped
(:meth:`kafkafmt.records.default.DefaultRecordBatch.skip_key_value_records`, used by
:func:`kafkafmt.broker.recordview.iter_batch_records` with ``skip_key_value=True``).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterator

from ..constants import HEADER_SIZE_UP_TO_MAGIC, LEGACY_RECORD_OVERHEAD_V0, LOG_OVERHEAD, MAGIC_OFFSET
from ..errors import CorruptRecordError, KafkaStorageError, TruncatedRecordError
from ..layout import DEFAULT_BATCH, LEGACY_V0, LEGACY_V1, LOG_ENTRY, Layout
from ..varint import wrap8

__all__ = ["BatchSpan", "Trailing", "NeedMore", "Rules", "MEMORY", "FILE", "INNER", "RULES", "BatchWalker",
           "BufferSource", "PreadSource", "next_span", "span_at", "header_layout", "magic_at"]


@dataclass(frozen=True)
class Rules:
    """One row of the walker's rule table (see the module docstring)."""

    name: str
    source: str  #: the Kafka class whose ``nextBatch`` these rules follow
    header: int  #: bytes that must remain to read an entry header (fewer: the walk stops)
    size_error: str  #: message for a size field below ``RECORD_OVERHEAD_V0`` ({size}, {minimum}, {file})
    check_magic: bool  #: magic outside 0..2 is corrupt (else it is not checked)
    check_max_size: bool  #: ``max_message_size`` applies


MEMORY = Rules("memory", "ByteBufferLogInputStream.nextBatch", LOG_OVERHEAD,
               "Record size {size} is less than the minimum record overhead ({minimum})", True, True)
FILE = Rules("file", "FileLogInputStream.nextBatch", HEADER_SIZE_UP_TO_MAGIC + 1,  # stops at end - 17
             "Found record size {size} smaller than minimum record overhead ({minimum}){file}", False, False)
INNER = Rules("inner", "DataLogInputStream.nextBatch", LOG_OVERHEAD,
              "Record size is less than the minimum record overhead ({minimum})", False, False)
#: The rule table by name.
RULES = {r.name: r for r in (MEMORY, FILE, INNER)}


@dataclass(frozen=True, slots=True)
class BatchSpan:
    """Where one batch (v2) or log entry (v0/v1) lies: ``position`` and ``size`` (LOG_OVERHEAD + size field).

    ``offset`` is the entry's offset field (a v2 batch's baseOffset, a legacy entry's offset, which
    for a compressed wrapper is its last inner offset); ``magic`` is the signed magic byte.
    """

    position: int
    size: int
    magic: int
    offset: int

    @property
    def end(self) -> int:
        return self.position + self.size

    @property
    def is_legacy(self) -> bool:
        return self.magic < 2

    def header(self, buf, base: int = 0) -> dict:
        """The header fields (names as Kafka spells them), read through :func:`header_layout`."""
        return header_layout(self.magic).read(buf, self.position - base)


@dataclass(frozen=True, slots=True)
class Trailing:
    """Bytes after the last whole batch: where they start, how many, and why they are not a batch."""

    position: int
    length: int
    reason: str


@dataclass(frozen=True, slots=True)
class NeedMore:
    """The input ends inside the entry at ``position``: at least ``needed`` more bytes are required."""

    position: int
    needed: int


def header_layout(magic: int) -> Layout:
    """The fixed header of an entry with this (signed) magic: 2 and above v2, 1 v1, below that v0."""
    if magic >= 2:
        return DEFAULT_BATCH
    return LEGACY_V1 if magic == 1 else LEGACY_V0


def magic_at(buf, position: int, end: int | None = None, *, rules: Rules | None = None, base: int = 0) -> int:
    """The signed magic byte of the entry at ``position``; TruncatedRecordError if it is not there.

    Under ``rules`` that check the magic (MEMORY), one outside 0..2 is corrupt, with Kafka's message.
    """
    end = len(buf) + base if end is None else end
    if end - position < HEADER_SIZE_UP_TO_MAGIC:
        raise TruncatedRecordError(f"only {end - position} bytes remain, a batch needs at least "
                                   f"{HEADER_SIZE_UP_TO_MAGIC} to reach its magic byte", position=position)
    magic = wrap8(buf[position - base + MAGIC_OFFSET])
    if rules is not None and rules.check_magic and not 0 <= magic <= 2:
        raise CorruptRecordError(f"Invalid magic found in record: {magic}", position=position + MAGIC_OFFSET)
    return magic


def span_at(buf, position: int, end: int | None = None, rules: Rules = FILE, *, base: int = 0) -> BatchSpan:
    """The whole entry at ``position`` (a caller that already knows a batch starts there);
    TruncatedRecordError if the input ends inside it."""
    end = len(buf) + base if end is None else end
    step = next_span(buf, position, end, rules, base=base, strict=True)
    if step is None:
        raise TruncatedRecordError("no batch: the input ends here", position=position)
    return step


def next_span(buf, position: int, end: int, rules: Rules = MEMORY, *, base: int = 0, strict: bool = False,
              need_more: bool = False, max_message_size: int | None = None,
              file: str | None = None) -> BatchSpan | Trailing | NeedMore | None:
    """One step of the walk: the batch at ``position``, or why there is none (None: ``end`` reached).

    ``buf[i]`` is stream position ``base + i``; ``end`` is the stream position where the input ends.
    Raises :class:`~kafkafmt.errors.CorruptRecordError` with Kafka's messages (``file`` names the
    file in FILE's size message).
    """
    remaining = end - position
    if remaining <= 0:
        return None
    at = position - base
    if remaining < rules.header:
        if rules is FILE:
            return _short(position, remaining, f"{remaining} bytes, too few for a batch header (a file is read "
                          f"while more than {HEADER_SIZE_UP_TO_MAGIC} bytes remain)", rules.header - remaining,
                          strict, need_more)
        return _short(position, remaining, f"{remaining} bytes, fewer than the {LOG_OVERHEAD}-byte offset/size header",
                      rules.header - remaining, strict, need_more)
    offset, size = LOG_ENTRY.unpack_from(buf, at)
    if size < LEGACY_RECORD_OVERHEAD_V0:
        where = "" if file is None else f" in file {file}."
        raise CorruptRecordError(rules.size_error.format(size=size, minimum=LEGACY_RECORD_OVERHEAD_V0, file=where),
                                 position=position)
    if rules.check_max_size and max_message_size is not None and size > max_message_size:
        raise CorruptRecordError(f"Record size {size} exceeds the largest allowable message size "
                                 f"({max_message_size}).", position=position)
    whole = size + LOG_OVERHEAD
    if rules.check_magic:
        if remaining < HEADER_SIZE_UP_TO_MAGIC:
            return _short(position, remaining, "the batch is cut before its magic byte", whole - remaining,
                          strict, need_more)
        magic = magic_at(buf, position, end, rules=rules, base=base)
    if remaining < whole:
        return _short(position, remaining, f"a batch declares {whole} bytes but only {remaining} remain",
                      whole - remaining, strict, need_more)
    if not rules.check_magic:  # a whole entry (26 bytes at least) always holds its magic byte
        magic = wrap8(buf[at + MAGIC_OFFSET])
    return BatchSpan(position, whole, magic, offset)


def _short(position: int, length: int, reason: str, needed: int, strict: bool, need_more: bool):
    if need_more:
        return NeedMore(position, needed)
    if strict:
        raise TruncatedRecordError(f"truncated input: {reason}", position=position)
    return Trailing(position, length, reason)


class BufferSource:
    """The bytes of a buffer (the memory variant): every step reads the buffer itself, nothing copied."""

    __slots__ = ("buf",)

    def __init__(self, buf):
        self.buf = buf

    def __len__(self) -> int:
        return len(self.buf)

    def head(self, position: int, size: int) -> tuple[object, int]:
        """``(buf, base)`` holding at least ``size`` bytes at stream ``position`` (``buf[0]`` is ``base``)."""
        return self.buf, 0


class PreadSource:
    """The bytes of a file read through ``os.pread`` on a descriptor the caller opened (read-only is
    enough) and closes (the file variant, ``FileLogInputStream``): each step reads only the entry's
    first bytes (17 at most), at its position.  A file shorter than the walk's ``end`` is a
    :class:`~kafkafmt.errors.KafkaStorageError`, as ``Utils.readFullyOrFail`` raises it."""

    __slots__ = ("fd",)

    def __init__(self, fd: int):
        self.fd = fd

    def head(self, position: int, size: int) -> tuple[bytes, int]:
        """``(bytes, position)``: the ``size`` bytes at ``position``."""
        if size <= 0:
            return b"", position
        data = os.pread(self.fd, size, position)
        if len(data) < size:
            raise KafkaStorageError(f"Failed to read `log header` from file channel. Expected to read {size} bytes, "
                                    f"but reached end of file after reading {len(data)} bytes. Started read from "
                                    f"position {position}.")
        return data, position


class BatchWalker:
    """Walk the batches of ``source[start:end]`` under ``rules`` (see the module docstring).

    ``source`` is a :class:`BufferSource`, a :class:`PreadSource` or a buffer (then wrapped in a
    :class:`BufferSource`; ``end`` defaults to its length, and is required for a ``PreadSource``).
    Iterating yields :class:`BatchSpan` objects; afterwards :attr:`stop` says why the walk ended.
    Iterating again walks again from ``start``.
    """

    def __init__(self, source, start: int = 0, end: int | None = None, *, rules: Rules = MEMORY,
                 strict: bool = False, need_more: bool = False, max_message_size: int | None = None,
                 file: str | None = None):
        if not isinstance(source, (BufferSource, PreadSource)):
            source = BufferSource(source)
        if end is None:
            if isinstance(source, PreadSource):
                raise TypeError("a walk over a PreadSource needs its end")
            end = len(source)
        self.source = source
        self.buf = source.buf if isinstance(source, BufferSource) else None  #: the buffer walked (None: a file)
        self.start = start
        self.end = end
        self.rules = rules
        self.strict = strict
        self.need_more = need_more
        self.max_message_size = max_message_size
        self.file = file
        self.stop: Trailing | NeedMore | None = None
        self.position = start  #: where the walk is (the end of the last whole batch)

    def resume_at(self, position: int) -> None:
        """Go on from ``position``: the caller has taken the whole entries up to there itself (the
        columnar decoder's compiled run of plain v0/v1 messages, which follows these rules)."""
        self.position = position

    @property
    def valid_bytes(self) -> int:
        """Bytes of whole batches walked so far."""
        return self.position - self.start

    def __iter__(self) -> Iterator[BatchSpan]:
        self.stop = None
        self.position = self.start
        source, buf, end, rules = self.source, self.buf, self.end, self.rules
        head, base = buf, 0
        while True:
            if buf is None:  # a file: read the entry's first 17 bytes at most, none when too few remain for a header
                remaining = end - self.position
                head, base = source.head(self.position, min(HEADER_SIZE_UP_TO_MAGIC, remaining)
                                         if remaining >= rules.header else 0)
            step = next_span(head, self.position, end, rules, base=base, need_more=self.need_more,
                             max_message_size=self.max_message_size, file=self.file)
            if not isinstance(step, BatchSpan):
                self.stop = step
                if self.strict and isinstance(step, Trailing):
                    raise TruncatedRecordError(f"truncated input: {step.reason}", position=step.position)
                return
            self.position = step.end
            yield step
