"""A log directory's ``.lock``, taken as Kafka's broker takes it (``LogManager.lockLogDirs``, ``FileLock``).

A broker locks the file ``.lock`` in each of its ``log.dirs`` at start-up and holds it until it shuts
down: ``FileLock`` opens the file (created if absent) and calls ``FileChannel.tryLock()``, which on
Linux is a POSIX record lock over the whole file (``fcntl(F_SETLK)``, ``F_WRLCK``; the JDK maps the
length ``Long.MAX_VALUE`` to 0, "to the end").  A second broker on the same directory fails with
``KafkaException: Failed to acquire lock on file .lock in <dir>. A Kafka instance in another process
or thread is using this directory.``  At shutdown ``FileLock.destroy`` unlocks, deletes ``.lock`` and
closes the channel, so a stopped broker's directory holds no ``.lock``.

kafkafmt takes the same lock, the same way (``fcntl.lockf(fd, LOCK_EX | LOCK_NB)``), before it writes
anything into an existing log directory, and holds it for the whole operation: while it holds it, a
broker started on the directory refuses to start, and while a broker runs, kafkafmt refuses with
:class:`~kafkafmt.errors.LogDirLockedError`, before any byte or modification time changes.  The error
names the directory and, when the kernel says (``F_GETLK``), the process holding the lock.

POSIX record locks belong to a (process, file) pair: closing *any* descriptor of ``.lock`` in this
process drops the lock, and a second ``lockf`` from the same process succeeds silently.  So this
module keeps one open descriptor per log directory per process (:func:`acquire` counts the holders,
:func:`release` unlocks, deletes and closes after the last), and nothing else here ever opens
``.lock``.  A forked child does not inherit the lock (POSIX record locks are per process).

API::

    with hold(log_dir):            # LogDirLockedError when another process holds it
        ...                        # write into log_dir
    acquire(log_dir) / release(log_dir)   # the same, counted (a Log holds it from open to close)
    holder(log_dir) -> (pid | None, description) | None   # who holds it now, without taking it
    with hold_for_file(path):      # the lock of the log directory a file lands in (log_dir_holding), if any
"""
from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import struct
import threading
from pathlib import Path
from typing import Iterator

from ..errors import LogDirLockedError

__all__ = ["LOCK_FILE", "acquire", "release", "hold", "holder", "is_held_here", "log_dir_holding",
           "hold_for_file"]

#: ``LogManager.LockFileName``
LOCK_FILE = ".lock"

#: ``struct flock`` on Linux (l_type, l_whence, l_start, l_len, l_pid), native alignment, padded to 32 bytes
_FLOCK = struct.Struct("hhqqi4x")

_mutex = threading.Lock()
#: realpath of a log directory -> [descriptor of its .lock, holders in this process]
_held: dict[str, list[int]] = {}


def _key(log_dir: str | os.PathLike) -> str:
    return os.path.realpath(os.fspath(log_dir))


def is_held_here(log_dir: str | os.PathLike) -> bool:
    """Whether this process holds ``log_dir``'s lock."""
    with _mutex:
        return _key(log_dir) in _held


def _describe(pid: int | None) -> str:
    if pid is None:
        return "another process (the kernel does not say which)"
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0").split(b"\0")
    except OSError:
        return f"process {pid}"
    words = [w.decode(errors="replace") for w in cmd if w]
    what = "a Kafka broker, " if any(w in ("kafka.Kafka", "kafka.docker.KafkaDockerWrapper") for w in words) else ""
    exe = os.path.basename(words[0]) if words else "?"
    tail = [w[-60:] for w in words[1:] if not w.startswith("-") and not any(c.isspace() for c in w)
            and ("." in w or "/" in w)][-2:]
    return f"{what}process {pid} ({' '.join([exe, '…', *tail]) if tail else exe})"


def _query(fd: int) -> int | None:
    """``F_GETLK``: the pid of a process whose lock conflicts with a write lock on the whole file; None when
    the lock is an open-file-description lock (pid -1) or already gone."""
    try:
        out = fcntl.fcntl(fd, fcntl.F_GETLK, _FLOCK.pack(fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0))
    except OSError:
        return None
    l_type, _, _, _, pid = _FLOCK.unpack(out)
    return pid if l_type != fcntl.F_UNLCK and pid > 0 else None


def _refusal(log_dir: str, pid: int | None) -> LogDirLockedError:
    who = _describe(pid)
    return LogDirLockedError(
        f"Failed to acquire lock on file {LOCK_FILE} in {log_dir}: held by {who}. A Kafka instance in another "
        f"process or thread is using this directory; stop it first (nothing was changed)",
        log_dir=log_dir, holder_pid=pid, holder=who)


def holder(log_dir: str | os.PathLike) -> tuple[int | None, str] | None:
    """Who holds ``log_dir``'s lock, without taking it: ``(pid or None, description)``, or None when nobody
    does (or this process does).  Opens ``.lock`` only if it exists and only to read."""
    path = Path(log_dir) / LOCK_FILE
    if is_held_here(log_dir):
        return None
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return None
    try:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            if e.errno not in (errno.EACCES, errno.EAGAIN):
                raise
            pid = _query(fd)
            return pid, _describe(pid)
        fcntl.lockf(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def acquire(log_dir: str | os.PathLike) -> None:
    """Take ``log_dir``'s lock for this process (``FileLock.tryLock``), or count one more holder if this
    process has it; :class:`~kafkafmt.errors.LogDirLockedError` when another process holds it.  ``log_dir``
    must exist.  Nothing is created or changed on refusal (an existing ``.lock`` is opened, not written)."""
    key = _key(log_dir)
    with _mutex:
        entry = _held.get(key)
        if entry is not None:
            entry[1] += 1
            return
        path = os.path.join(key, LOCK_FILE)
        existed = os.path.exists(path)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            pid = _query(fd) if e.errno in (errno.EACCES, errno.EAGAIN) else None
            os.close(fd)
            if not existed:  # cannot happen for a held lock, but never leave a file we made
                with contextlib.suppress(OSError):
                    os.unlink(path)
            if e.errno in (errno.EACCES, errno.EAGAIN):
                raise _refusal(str(log_dir), pid) from None
            raise
        _held[key] = [fd, 1]


def release(log_dir: str | os.PathLike) -> None:
    """One holder fewer; after the last, ``FileLock.destroy``: unlock, delete ``.lock``, close."""
    key = _key(log_dir)
    with _mutex:
        entry = _held.get(key)
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] > 0:
            return
        del _held[key]
        fd = entry[0]
        try:
            with contextlib.suppress(OSError):
                path = os.path.join(key, LOCK_FILE)
                mine, there = os.fstat(fd), os.stat(path)
                if (mine.st_dev, mine.st_ino) == (there.st_dev, there.st_ino):  # not a newer .lock at that path
                    os.unlink(path)  # unlinked while still locked, as FileLock.destroy does
            fcntl.lockf(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)


@contextlib.contextmanager
def hold(log_dir: str | os.PathLike) -> Iterator[Path]:
    """Hold ``log_dir``'s lock for the block (created with its parents if missing)."""
    Path(log_dir).mkdir(parents=True, exist_ok=True)
    acquire(log_dir)
    try:
        yield Path(log_dir)
    finally:
        release(log_dir)


#: files only a broker's log directory holds (``LogManager`` / ``ReplicaManager`` / ``MetaPropertiesEnsemble``)
_LOG_DIR_MARKS = (LOCK_FILE, "meta.properties", "recovery-point-offset-checkpoint", "replication-offset-checkpoint")


def log_dir_holding(path: str | os.PathLike) -> Path | None:
    """The log directory a file written at ``path`` would land in, or None: the parent of a
    ``<topic>-<partition>`` directory (a segment file), or a directory holding a broker's files
    (``.lock``, ``meta.properties``, a log-directory checkpoint)."""
    from .files import parse_topic_partition_name
    parent = Path(os.path.abspath(os.fspath(path))).parent
    try:
        parse_topic_partition_name(parent.name)
        if parent.is_dir():
            return parent.parent
    except ValueError:
        pass
    if any((parent / m).exists() for m in _LOG_DIR_MARKS):
        return parent
    return None


@contextlib.contextmanager
def hold_for_file(path: str | os.PathLike) -> Iterator[Path | None]:
    """Hold the lock of the log directory ``path`` lies in (:func:`log_dir_holding`) for the block, if any."""
    log_dir = log_dir_holding(path)
    if log_dir is None:
        yield None
        return
    acquire(log_dir)
    try:
        yield log_dir
    finally:
        release(log_dir)
