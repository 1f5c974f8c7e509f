"""kafka-dump-log's output for ``.index`` and ``.timeindex`` files (``DumpLogSegments.dumpIndex`` /
``dumpTimeIndex``, Kafka 3.9; kafka-rules §8.2).

Each function returns ``(stdout_lines, stderr_lines)`` for one file, without the ``Dumping <file>``
line the tool prints first (the CLI prints it).  kafka-dump-log collects its error reports across
all files and prints them at the very end, index mismatches first, then the time index reports
(timestamp mismatches, out-of-order timestamps, offsets not found), then the log's
non-consecutive offsets.  To reproduce that for several files, pass one :class:`DumpErrors` to
every call and print ``errors.render()`` at the end; ``stderr_lines`` is then empty.  (Kafka keeps
the reports in hash maps keyed by absolute path, so with several files of the same kind its order
between files is the hash order; here it is the order of the calls.)

Where the tool would die with a Java exception (a missing ``.log``, an index position past the end
of the log, an index pointing at no batch, a failed ``--index-sanity-check``), these functions
raise: :class:`~kafkafmt.errors.DumpToolError` naming the Java exception, or
:class:`~kafkafmt.errors.CorruptIndexError` from the sanity check.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .. import kafka_lines
from ..constants import INT32_MAX, NO_TIMESTAMP
from ..errors import DumpToolError, IllegalArgumentError
from .file_records import FileRecords
from .files import INDEX_FILE_SUFFIX, LOG_FILE_SUFFIX
from .index import OffsetIndex, TimeIndex

#: ``--max-message-size`` default
DEFAULT_MAX_MESSAGE_SIZE = 5 * 1024 * 1024


def java_file_str(path: str | os.PathLike) -> str:
    """``new File(arg).toString()``: repeated separators collapsed, a trailing one dropped."""
    s = os.fspath(path)
    while "//" in s:
        s = s.replace("//", "/")
    if len(s) > 1 and s.endswith("/"):
        s = s[:-1]
    return s


def java_absolute_path(path: str | os.PathLike) -> str:
    """``File.getAbsolutePath``: resolved against the working directory, NOT normalized (``./`` stays)."""
    s = java_file_str(path)
    if s.startswith("/"):
        return s
    return java_file_str(os.getcwd() + "/" + s)


@dataclass
class DumpErrors:
    """The error reports kafka-dump-log prints to stderr at the end of a run."""

    index_mismatches: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    timestamp_mismatches: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    out_of_order: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    offsets_not_found: dict[str, list[tuple[int, int]]] = field(default_factory=dict)

    def record_index_mismatch(self, abs_path: str, index_offset: int, log_offset: int) -> None:
        # Scala's `misMatchesSeq ::= (...)` PREPENDS: the list is printed last entry first
        self.index_mismatches.setdefault(abs_path, []).insert(0, (index_offset, log_offset))

    def record_timestamp_mismatch(self, abs_path: str, index_ts: int, log_ts: int) -> None:
        self.timestamp_mismatches.setdefault(abs_path, []).append((index_ts, log_ts))

    def record_out_of_order(self, abs_path: str, index_ts: int, prev_ts: int) -> None:
        self.out_of_order.setdefault(abs_path, []).append((index_ts, prev_ts))

    def record_offset_not_found(self, abs_path: str, index_offset: int, log_offset: int) -> None:
        self.offsets_not_found.setdefault(abs_path, []).append((index_offset, log_offset))

    def render(self) -> list[str]:
        """The stderr lines, in kafka-dump-log's order."""
        out = []
        for name, pairs in self.index_mismatches.items():
            out.append(f"Mismatches in :{name}")
            out += [f"  Index offset: {a}, log offset: {b}" for a, b in pairs]
        for name, pairs in self.timestamp_mismatches.items():
            out.append("Found timestamp mismatch in :" + name)
            out += ["  Index timestamp: %d, log timestamp: %d" % p for p in pairs]
        for name, pairs in self.out_of_order.items():
            out.append("Found out of order timestamp in :" + name)
            out += ["  Index timestamp: %d, Previously indexed timestamp: %d" % p for p in pairs]
        for pairs in self.offsets_not_found.values():
            out.append("The following indexed offsets are not found in the log.")
            out += [f"Indexed offset: {a}, found log offset: {b}" for a, b in pairs]
        return out

    def __bool__(self) -> bool:
        return bool(self.index_mismatches or self.timestamp_mismatches or self.out_of_order or self.offsets_not_found)


def _start_offset(path: Path) -> int:
    prefix = path.name.split(".")[0]
    try:
        return int(prefix)
    except ValueError:
        raise DumpToolError(f'For input string: "{prefix}"', "java.lang.NumberFormatException") from None


def _open_log(path: Path) -> FileRecords:
    prefix = path.name.split(".")[0]
    log_path = Path(java_absolute_path(path)).parent / (prefix + LOG_FILE_SUFFIX)
    if not log_path.exists():
        raise DumpToolError(str(log_path), "java.nio.file.NoSuchFileException")
    return FileRecords(log_path, file_already_exists=True, mutable=False)


def _open_index(cls, path: Path, base: int):
    if not path.exists():
        # Kafka creates the missing file, then refuses its max index size of -1
        raise DumpToolError("Invalid max index size: -1", "java.lang.IllegalArgumentException")
    return cls(path, base, -1, writable=False)


def _first_batch(fr: FileRecords, position: int, size: int):
    try:
        start, length = fr.slice(position, size)
    except IllegalArgumentError as e:
        raise DumpToolError(e.reason, "java.lang.IllegalArgumentException") from None
    for b in fr.batches_from(start, start + length):
        return b, start, length
    return None, start, length


def dump_index(path: str | os.PathLike, *, verify_only: bool = False, sanity_check_only: bool = False,
               max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
               errors: DumpErrors | None = None,
               kafka_line: str = kafka_lines.DEFAULT_LINE) -> tuple[list[str], list[str]]:
    """``DumpLogSegments.dumpIndex``: ``offset: O position: P`` per entry.

    * 0 entries → ``<file> is empty.`` (checked before the sanity check; from 2.8, row ``dump.index_empty_line``);
    * ``sanity_check_only`` (``--index-sanity-check``) → ``<file> passed sanity check.``;
    * stops silently at the first entry after the first whose offset is the base offset (zero slots);
    * an entry is a mismatch when the batch at its position (read through a ``max_message_size``
      slice) does not have it as last offset; ``verify_only`` (``--verify-index-only``) prints no entries.

    ``kafka_line``: before 2.3 (row ``dump.index_entry_check``, KAFKA-7487) an entry is checked against the
    first record at its position, and the zero-slot stop comes after that check.
    """
    first_record = kafka_lines.value("dump.index_entry_check", kafka_line) == "first record"
    own = errors is None
    errors = DumpErrors() if own else errors
    p = Path(path)
    shown = java_file_str(path)
    start_offset = _start_offset(p)
    fr = _open_log(p)
    out: list[str] = []
    try:
        index = _open_index(OffsetIndex, p, start_offset)
        if index.entries == 0:
            if kafka_lines.value("dump.index_empty_line", kafka_line):
                out.append(f"{shown} is empty.")
            return out, []
        if sanity_check_only:
            index.sanity_check()
            out.append(f"{shown} passed sanity check.")
            return out, []
        abs_path = java_absolute_path(path)
        for i in range(index.entries):
            entry = index.entry(i)
            zero_slot = entry.offset == index.base_offset and i > 0
            if zero_slot and not first_record:
                break
            batch, _, _ = _first_batch(fr, entry.position, max_message_size)
            if batch is None:
                raise DumpToolError("no batch at position %d of %s" % (entry.position, fr.path),
                                    "java.util.NoSuchElementException")
            found = next((r.offset for r in batch.records()), None) if first_record else batch.last_offset
            if found is None:
                raise DumpToolError("an empty batch at position %d of %s" % (entry.position, fr.path),
                                    "java.util.NoSuchElementException")
            if found != entry.offset:
                errors.record_index_mismatch(abs_path, entry.offset, found)
            if zero_slot:
                break
            if not verify_only:
                out.append(f"offset: {entry.offset} position: {entry.position}")
        return out, (errors.render() if own else [])
    finally:
        fr.close_handlers()


def dump_time_index(path: str | os.PathLike, *, verify_only: bool = False, sanity_check_only: bool = False,
                    errors: DumpErrors | None = None) -> tuple[list[str], list[str]]:
    """``DumpLogSegments.dumpTimeIndex``: ``timestamp: T offset: O`` per entry.

    There is no "is empty" line for a time index.  For each entry the batch is found through the
    offset index (first batch with last offset >= O from ``index.lookup(O)``); it must end at O
    (else "not found"), its largest record timestamp must be T (else "mismatch"), and T must be
    greater than the previous entry's (else "out of order").
    """
    own = errors is None
    errors = DumpErrors() if own else errors
    p = Path(path)
    shown = java_file_str(path)
    start_offset = _start_offset(p)
    fr = _open_log(p)
    out: list[str] = []
    try:
        index_path = Path(java_absolute_path(path)).parent / (p.name.split(".")[0] + INDEX_FILE_SUFFIX)
        index = _open_index(OffsetIndex, index_path, start_offset)
        time_index = _open_index(TimeIndex, p, start_offset)
        if sanity_check_only:
            time_index.sanity_check()
            out.append(f"{shown} passed sanity check.")
            return out, []
        abs_path = java_absolute_path(path)
        prev_ts = NO_TIMESTAMP
        for i in range(time_index.entries):
            entry = time_index.entry(i)
            if entry.offset == time_index.base_offset and i > 0:
                break
            position = index.lookup(entry.offset).position
            try:
                start, length = fr.slice(position, INT32_MAX)
            except IllegalArgumentError as e:
                raise DumpToolError(e.reason, "java.lang.IllegalArgumentException") from None
            found = None
            for b in fr.batches_from(start, start + length):
                if b.last_offset >= entry.offset:
                    found = b
                    break
            if found is None:
                errors.record_offset_not_found(abs_path, entry.offset, -1)
            elif found.last_offset != entry.offset:
                errors.record_offset_not_found(abs_path, entry.offset, found.last_offset)
            else:
                max_ts = NO_TIMESTAMP
                for rec in found.records():
                    max_ts = max(max_ts, rec.timestamp)
                if max_ts != entry.timestamp:
                    errors.record_timestamp_mismatch(abs_path, entry.timestamp, max_ts)
                if prev_ts >= entry.timestamp:
                    errors.record_out_of_order(abs_path, entry.timestamp, prev_ts)
            if not verify_only:
                out.append(f"timestamp: {entry.timestamp} offset: {entry.offset}")
            prev_ts = entry.timestamp
        return out, (errors.render() if own else [])
    finally:
        fr.close_handlers()
