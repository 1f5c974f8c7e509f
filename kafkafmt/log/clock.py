"""Clocks: every time-dependent part of the log takes one; nothing ever sleeps.

Kafka threads a ``org.apache.kafka.common.utils.Time`` through ``UnifiedLog``, ``LocalLog`` and
``LogSegment`` (``time.milliseconds()`` for segment creation time, retention's ``startMs``,
roll's ``now``, LogAppendTime).  :class:`SimulatedClock` plays the role of Kafka's ``MockTime``:
time moves only when told to, so a run is reproducible.

File modification times matter to Kafka: ``LogSegment.largestTimestamp`` falls back to the
``.log`` file's mtime when the segment holds no timestamp (kafka-rules §7.4).  The log layer sets
every mtime it causes from the clock with :func:`set_mtime_ms`, so retention decisions do not
depend on the wall clock either.
"""
from __future__ import annotations

import os
import time
from typing import Protocol, runtime_checkable


@runtime_checkable
class Clock(Protocol):
    """Anything with ``now() -> int`` (milliseconds since the epoch)."""

    def now(self) -> int: ...


class SimulatedClock:
    """A clock that moves only when told to (Kafka's ``MockTime``).

    ``set`` may move time backwards, as an NTP step on a broker can; the log copes as Kafka does
    (e.g. a segment's age ``now - created`` becomes negative and it does not roll on time).
    """

    def __init__(self, start_ms: int = 0):
        self._now = int(start_ms)

    def now(self) -> int:
        return self._now

    milliseconds = now  # Kafka's spelling

    def advance(self, ms: int) -> int:
        """Move forward by ``ms`` (>= 0) and return the new time."""
        if ms < 0:
            raise ValueError(f"cannot advance a clock by a negative amount ({ms} ms); use set()")
        self._now += int(ms)
        return self._now

    def set(self, ms: int) -> int:
        """Jump to ``ms`` (forwards or backwards) and return it."""
        self._now = int(ms)
        return self._now

    def __repr__(self) -> str:
        return f"SimulatedClock({self._now})"


class SystemClock:
    """The wall clock (Kafka's ``Time.SYSTEM``)."""

    def now(self) -> int:
        return time.time_ns() // 1_000_000

    milliseconds = now

    def __repr__(self) -> str:
        return "SystemClock()"


def set_mtime_ms(path: str | os.PathLike, ms: int) -> None:
    """Set a file's access and modification time to ``ms`` milliseconds (``Files.setLastModifiedTime``)."""
    ns = int(ms) * 1_000_000
    os.utime(path, ns=(ns, ns))


def mtime_ms(path: str | os.PathLike) -> int:
    """A file's modification time in milliseconds, truncated as ``java.io.File.lastModified`` does."""
    return os.stat(path).st_mtime_ns // 1_000_000
