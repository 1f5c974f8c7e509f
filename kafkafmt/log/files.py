"""File names, atomic file operations and checkpoint files of a partition directory.

Names follow ``LogFileUtils`` / ``LocalLog`` (kafka-rules §7.1): a segment with base offset 5 is
``00000000000000000005.log`` with ``.index``, ``.timeindex`` (and, unused here, ``.txnindex``,
``.snapshot``); ``.deleted`` / ``.cleaned`` / ``.swap`` are the temporary suffixes the loader
cleans up.

Structural changes are atomic:

* a new file that must appear with its final size (a preallocated index or ``.log``) is written
  as ``<name>.tmp`` and renamed into place (:func:`create_file_atomically`);
* a deletion renames every file of the segment to ``<name>.deleted`` first and unlinks after
  (``LocalLog.deleteSegmentFiles``), so a crash in between leaves only ``.deleted`` files, which
  the loader removes (``LogLoader.removeTempFilesAndCollectSwapFiles``);
* checkpoint files are written to ``<name>.tmp``, fsynced and renamed (``CheckpointFile.write``).

Checkpoint format (the one Kafka uses for ``recovery-point-offset-checkpoint``,
``log-start-offset-checkpoint`` and, per partition, ``leader-epoch-checkpoint``)::

    0                 <- version
    2                 <- number of entries
    mytopic 0 42      <- one entry per line, fields separated by one space
    ...

Kafka keeps the first two per log directory, one ``topic partition offset`` line per partition
(``LogManager``), and so does kafkafmt (:mod:`kafkafmt.log.logdir`); ``leader-epoch-checkpoint`` is the one
checkpoint inside a partition directory.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ..errors import CheckpointError, IllegalArgumentError

LOG_FILE_SUFFIX = ".log"
INDEX_FILE_SUFFIX = ".index"
TIME_INDEX_FILE_SUFFIX = ".timeindex"
TXN_INDEX_FILE_SUFFIX = ".txnindex"
PRODUCER_SNAPSHOT_FILE_SUFFIX = ".snapshot"
DELETED_FILE_SUFFIX = ".deleted"
CLEANED_FILE_SUFFIX = ".cleaned"
SWAP_FILE_SUFFIX = ".swap"
TEMP_FILE_SUFFIX = ".tmp"

RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"
LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"

CHECKPOINT_VERSION = 0


def filename_prefix_from_offset(offset: int) -> str:
    """``LogFileUtils.filenamePrefixFromOffset``: the offset zero-padded to 20 digits."""
    if offset < 0:
        raise IllegalArgumentError(f"segment base offsets are never negative (got {offset})")
    return f"{offset:020d}"


def offset_from_file_name(name: str) -> int:
    """``LogFileUtils.offsetFromFileName``: the number before the first ``.``."""
    return int(name[:name.index(".")])


def offset_from_file(path: str | os.PathLike) -> int:
    return offset_from_file_name(os.path.basename(os.fspath(path)))


def log_file(dir: str | os.PathLike, offset: int, suffix: str = "") -> Path:
    return Path(dir) / (filename_prefix_from_offset(offset) + LOG_FILE_SUFFIX + suffix)


def offset_index_file(dir: str | os.PathLike, offset: int, suffix: str = "") -> Path:
    return Path(dir) / (filename_prefix_from_offset(offset) + INDEX_FILE_SUFFIX + suffix)


def time_index_file(dir: str | os.PathLike, offset: int, suffix: str = "") -> Path:
    return Path(dir) / (filename_prefix_from_offset(offset) + TIME_INDEX_FILE_SUFFIX + suffix)


def transaction_index_file(dir: str | os.PathLike, offset: int, suffix: str = "") -> Path:
    return Path(dir) / (filename_prefix_from_offset(offset) + TXN_INDEX_FILE_SUFFIX + suffix)


def is_index_file(name: str) -> bool:
    """``LocalLog.isIndexFile``."""
    return name.endswith((INDEX_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX, TXN_INDEX_FILE_SUFFIX))


def is_log_file(name: str) -> bool:
    """``LocalLog.isLogFile``."""
    return name.endswith(LOG_FILE_SUFFIX)


_DIR_SUFFIXES = ("-delete", "-future", "-stray")


def parse_topic_partition_name(dirname: str) -> tuple[str, int]:
    """``LocalLog.parseTopicPartitionName``: ``mytopic-0`` → ``("mytopic", 0)``."""
    name = os.path.basename(os.fspath(dirname).rstrip("/"))
    if not name or "-" not in name:
        raise ValueError(f"Found directory {dirname}, '{name}' is not in the form of topic-partition or "
                         "topic-partition.uniqueId-delete (if marked for deletion).")
    if name.endswith(_DIR_SUFFIXES):
        name = name[:name.rindex(".")] if "." in name else name
    idx = name.rindex("-")
    topic, part = name[:idx], name[idx + 1:]
    if not topic or not part or not re.fullmatch(r"-?\d+", part):
        raise ValueError(f"Found directory {dirname}, '{name}' is not in the form of topic-partition")
    return topic, int(part)


# --------------------------------------------------------------------------------------------
# atomic operations
def fsync_dir(dir: str | os.PathLike) -> None:
    """``Utils.flushDir``: make renames in ``dir`` durable (no-op where directories cannot be opened)."""
    try:
        fd = os.open(dir, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def create_file_atomically(path: str | os.PathLike, length: int = 0, data: bytes = b"") -> None:
    """Create ``path`` with ``data`` followed by zeros up to ``length`` bytes, appearing all at once.

    The file is built as ``<path>.tmp`` and renamed over ``path``; a crash leaves either no file
    or a ``.tmp`` file that the loader deletes.
    """
    path = Path(path)
    tmp = path.with_name(path.name + TEMP_FILE_SUFFIX)
    fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        if data:
            os.write(fd, data)
        if length > len(data):
            os.ftruncate(fd, length)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def write_synced(path: str | os.PathLike, data: bytes, *, fsync: bool = True) -> None:
    """Write ``path`` in place (created or truncated) and, with ``fsync``, sync it before closing."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data)
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)


def write_checkpoint(path: str | os.PathLike, entries: list[tuple], *, fsync: bool = True) -> None:
    """``CheckpointFile.write``: version, count, one space-separated line per entry; tmp + fsync + rename.

    ``fsync=False`` keeps the atomic rename but skips the fsyncs (a simulation that never loses power).
    """
    path = Path(path)
    lines = [str(CHECKPOINT_VERSION), str(len(entries))] + [" ".join(str(f) for f in e) for e in entries]
    tmp = path.with_name(path.name + TEMP_FILE_SUFFIX)
    write_synced(tmp, ("\n".join(lines) + "\n").encode(), fsync=fsync)
    os.replace(tmp, path)
    if fsync:
        fsync_dir(path.parent)


def read_checkpoint(path: str | os.PathLike) -> list[list[str]] | None:
    """Read a checkpoint file; ``None`` if it does not exist.

    A malformed file raises :class:`~kafkafmt.errors.CheckpointError` with the message of Kafka's
    ``CheckpointFile.CheckpointReadBuffer.read`` (an ``IOException`` there).
    """
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise CheckpointError(f"Error while reading checkpoint file {path}: {e.strerror or e}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CheckpointError(f"Malformed line in checkpoint file ({path}): not UTF-8 text", position=e.start) from None
    lines = text.splitlines()
    if not lines:  # Kafka creates checkpoint files empty; an empty file has no entries
        return []

    def number(line: str) -> int:
        try:
            return int(line)
        except ValueError:
            raise CheckpointError(f"Malformed line in checkpoint file ({path}): '{line}'") from None

    if len(lines) < 2:
        raise CheckpointError(f"Malformed line in checkpoint file ({path}): too few lines")
    version = number(lines[0])
    if version != CHECKPOINT_VERSION:
        raise CheckpointError(f"Unrecognized version of the checkpoint file ({path}): {version}")
    count = number(lines[1])
    body = [ln.split(" ") for ln in lines[2:] if ln != ""]
    if len(body) != count:
        raise CheckpointError(f"Expected {count} entries in checkpoint file ({path}), but found only {len(body)}")
    return body


def checkpoint_ints(path: str | os.PathLike, row: list[str], fields: slice) -> list[int]:
    """The numeric fields of one checkpoint line, or :class:`~kafkafmt.errors.CheckpointError`."""
    try:
        return [int(v) for v in row[fields]]
    except ValueError:
        raise CheckpointError(f"Malformed line in checkpoint file ({path}): '{' '.join(row)}'") from None


def checkpoint_offset(path: str | os.PathLike, topic: str, partition: int) -> int | None:
    """``topic``-``partition``'s offset in an offset checkpoint file (``recovery-point-offset-checkpoint``,
    ``log-start-offset-checkpoint``); None when the file or the entry is absent.  A malformed file raises
    :class:`~kafkafmt.errors.CheckpointError` (``LogManager.loadLogs`` then resets, ignoring the file)."""
    for row in read_checkpoint(path) or []:
        if len(row) == 3 and row[0] == topic:
            p, offset = checkpoint_ints(path, row, slice(1, 3))
            if p == partition:
                return offset
    return None


def replace_suffix(path: str | os.PathLike, old_suffix: str, new_suffix: str) -> Path:
    """``Utils.replaceSuffix``: the path with ``old_suffix`` replaced by ``new_suffix`` (nothing is moved)."""
    path = Path(path)
    name = path.name
    if old_suffix and not name.endswith(old_suffix):
        raise ValueError(f"Expected string to end with '{old_suffix}' but string is '{name}'")
    return path.with_name(name[:len(name) - len(old_suffix)] + new_suffix)


def move_if_exists(src: str | os.PathLike, dst: str | os.PathLike) -> bool:
    """``Utils.atomicMoveWithFallback`` for a file that may not exist (a lazily created index)."""
    try:
        os.replace(src, dst)
        return True
    except FileNotFoundError:
        return False


def delete_if_exists(path: str | os.PathLike) -> bool:
    try:
        os.unlink(path)
        return True
    except FileNotFoundError:
        return False


def segment_log_start_offset(path: str | os.PathLike) -> int | None:
    """The log start offset a broker serves a segment file ``<base>.log`` with: the larger of its base
    offset and the partition's ``log-start-offset-checkpoint`` entry (in the log directory, where Kafka
    and kafkafmt keep it; one in the partition directory, as older kafkafmt logs kept it, is read after);
    None when the name is not a segment's.  Compaction removes records but never moves it
    (``UnifiedLog.logStartOffset``)."""
    p = Path(path)
    if not (p.name.endswith(LOG_FILE_SUFFIX) and len(p.name) == 20 + len(LOG_FILE_SUFFIX) and p.name[:20].isdigit()):
        return None
    start = offset_from_file_name(p.name)
    try:
        topic, partition = parse_topic_partition_name(str(p.resolve().parent))
    except Exception:  # not in a <topic>-<partition> directory
        return start
    d = p.resolve().parent
    for ckpt in (d.parent / LOG_START_OFFSET_CHECKPOINT, d / LOG_START_OFFSET_CHECKPOINT):
        try:
            value = checkpoint_offset(ckpt, topic, partition)
        except Exception:  # a malformed checkpoint is ignored, as LogManager.loadLogs does
            value = None
        if value is not None:
            return max(start, value)
    return start


#: the manifest ``kafkafmt gen`` writes at the top of a generated ``log.dirs`` entry
MANIFEST = "kafkafmt-gen.json"


def manifest_topic_properties(log_dir: str | os.PathLike) -> tuple[dict[str, dict], dict] | None:
    """The topic configurations a generated log directory was written with, from its manifest: ``({topic:
    Kafka properties in force at the end of the run}, broker properties)``; None without a manifest.

    Kafka itself keeps topic configurations in ZooKeeper or the KRaft metadata log, never in a
    ``log.dirs`` entry; the manifest is the only place a log directory carries them."""
    path = Path(log_dir) / MANIFEST
    if not path.is_file():
        return None
    m = json.loads(path.read_text())
    props: dict[str, dict] = {}
    for t in m["topics"]:
        p = dict(t["config"])
        for c in t.get("changes", []):
            p.update(c["config"])
        props[t["name"]] = p
    return props, dict(m.get("broker", {}))
