"""Opening a partition directory without changing it: ``Log.open(dir, read_only=True)``.

Kafka has no read-only open: ``LogLoader`` always deletes ``.deleted``/``.cleaned``/``.swap`` leftovers
and the clean-shutdown marker, recovers (truncates) segments after an unclean shutdown, resizes
the active segment's indexes and rewrites the checkpoints.  To give the same answers as that
recovered log without touching the directory, kafkafmt copies the directory's files (and the log
directory's clean-shutdown marker and checkpoints) into a private scratch directory and opens (and
recovers) the copy.  The log directory's ``.lock`` is neither taken nor looked at: reading a running
broker's directory is safe.  :attr:`Log.recovery_changes` then says what recovery did, file by file,
which is what opening the real directory would change.  Both states are
readable through the one read-only view (:mod:`kafkafmt.log.view`): ``log.view()`` over the recovered
copy, ``log.source_view`` (a :class:`~kafkafmt.log.view.PartitionView` of the segment files) over the
directory as it is.

The copy costs the directory's size in temporary space; it is removed when the log is closed (or
garbage-collected).  A read-only log refuses every operation that writes (appends, roll, flush,
truncation, retention, delete) with :class:`~kafkafmt.errors.UnsupportedOperationError`.
"""
from __future__ import annotations

import hashlib
import shutil
import tempfile
import weakref
from pathlib import Path

from ..errors import NoSuchFileError
from .files import (
    CLEAN_SHUTDOWN_FILE,
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    parse_topic_partition_name,
)
from .view import PartitionView

#: the log directory's files a load reads (copied beside the private copy)
LOG_DIR_STATE_FILES = (CLEAN_SHUTDOWN_FILE, RECOVERY_POINT_CHECKPOINT, LOG_START_OFFSET_CHECKPOINT)


def file_states(directory: Path) -> dict[str, tuple[int, str, int]]:
    """``{name: (size, blake2b digest, mtime ns)}`` of the regular files in ``directory`` (only read)."""
    out = {}
    for p in sorted(directory.iterdir()):
        if p.is_file():
            h = hashlib.blake2b(digest_size=16)
            with open(p, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
            st = p.stat()
            out[p.name] = (st.st_size, h.hexdigest(), st.st_mtime_ns)
    return out


def describe_changes(before: dict[str, tuple[int, str, int]], after: dict[str, tuple[int, str, int]]) -> list[dict]:
    """What turned ``before`` into ``after``: one ``{"file", "change", ...}`` per file that differs."""
    changes = []
    for name in sorted(set(before) | set(after)):
        b, a = before.get(name), after.get(name)
        if b == a:
            continue
        if a is None:
            changes.append({"file": name, "change": "deleted", "size": b[0]})
        elif b is None:
            changes.append({"file": name, "change": "created", "size": a[0]})
        elif a[0] < b[0]:
            changes.append({"file": name, "change": "truncated", "from": b[0], "to": a[0]})
        elif a[0] > b[0]:
            changes.append({"file": name, "change": "grown", "from": b[0], "to": a[0]})
        elif a[1] != b[1]:
            changes.append({"file": name, "change": "rewritten", "size": a[0]})
        else:
            changes.append({"file": name, "change": "touched", "size": a[0]})  # same bytes, new mtime
    return changes


def open_read_only(cls, directory, *args, **kwargs):
    """Open a private copy of ``directory`` with ``cls`` (a :class:`~kafkafmt.log.log.Log`); see the module doc."""
    src = Path(directory)
    if not src.is_dir():
        raise NoSuchFileError(f"{directory} is not a log directory")
    kwargs.setdefault("topic_partition", parse_topic_partition_name(str(src)))
    scratch_root = Path(tempfile.mkdtemp(prefix="kafkafmt-readonly-"))
    scratch = scratch_root / src.name
    try:
        scratch.mkdir()
        for p in sorted(src.iterdir()):
            if p.is_file():
                shutil.copy2(p, scratch / p.name)  # keeps mtimes: segment age drives rolling and retention
        for name in LOG_DIR_STATE_FILES:  # what LogManager passes the loader lives in the log directory
            if (src.parent / name).is_file():
                shutil.copy2(src.parent / name, scratch_root / name)
        before = file_states(scratch)
        log = cls(scratch, *args, **kwargs)
    except BaseException:
        shutil.rmtree(scratch_root, ignore_errors=True)
        raise
    log.read_only = True
    log.source_dir = src
    log.source_view = PartitionView.of_files(src)  # the directory as it is, unrecovered (log.view(): the copy)
    log.recovery_changes = describe_changes(before, file_states(scratch))
    log.scratch_cleanup = weakref.finalize(log, shutil.rmtree, scratch_root, True)
    return log


__all__ = ["open_read_only", "file_states", "describe_changes"]
