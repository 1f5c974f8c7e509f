"""File edges: read record-set files without modifying them, write files atomically."""
from __future__ import annotations

import contextlib
import mmap
import os
import sys
import tempfile
import traceback
from pathlib import Path

from .errors import FileAccessError, NoSuchFileError


@contextlib.contextmanager
def open_readonly(path: str | os.PathLike):
    """Map ``path`` read-only (``mmap.ACCESS_READ``); yields ``b""`` for an empty file.

    A missing path or a directory raises :class:`~kafkafmt.errors.NoSuchFileError`; any other
    OS error a :class:`~kafkafmt.errors.FileAccessError`.  An error raised inside the block
    propagates unchanged: views into the map that it still holds (in its traceback's frames)
    are released, so closing the map never turns it into ``BufferError``.
    """
    path = os.fspath(path)
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        raise NoSuchFileError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise NoSuchFileError(f"{path}: is a directory, not a file") from None
    except OSError as e:
        raise FileAccessError(f"{path}: {e.strerror or e}") from None
    with f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            yield b""
            return
        m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            yield m
        finally:
            _close_map(m, sys.exc_info()[1])


def remove_stale_temp_files(path: str | os.PathLike) -> list[Path]:
    """Delete the temp files of :func:`atomic_write` for ``path`` whose writer process is gone."""
    path = Path(path)
    removed = []
    prefix = f".{path.name}."
    try:
        names = os.listdir(path.parent)
    except FileNotFoundError:
        return removed
    for name in names:
        if not (name.startswith(prefix) and name.endswith(".tmp")):
            continue
        pid = name[len(prefix):].split(".", 1)[0]
        if pid.isdigit() and not _process_alive(int(pid)):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path.parent / name)
                removed.append(path.parent / name)
    return removed


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def read_input(path: str | os.PathLike) -> bytes:
    """The whole content of a (small) input file, with :func:`open_readonly`'s errors."""
    with open_readonly(path) as buf:
        return bytes(buf)


def _close_map(m: mmap.mmap, pending: BaseException | None) -> None:
    """Close ``m``; if views into it are alive, release those held by ``pending``'s frames first.

    Views a caller keeps on purpose (or a frame still running) keep the map alive; it is then
    closed when the last view goes (``mmap`` unmaps on deallocation), which is safe because the
    map is read-only.
    """
    try:
        m.close()
        return
    except BufferError:
        pass
    while pending is not None:  # the error and the errors it was raised from
        traceback.clear_frames(pending.__traceback__)
        pending = pending.__cause__ or pending.__context__
    with contextlib.suppress(BufferError):
        m.close()


def atomic_write(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: a temp file in the same directory, fsync, rename.

    A reader sees the old file or the whole new one, never a part.  The temp file is named
    ``.NAME.PID.XXXXXXXX.tmp``; one left by a writer that was killed (its PID no longer runs) is
    removed by the next write of the same path.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temp_files(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
