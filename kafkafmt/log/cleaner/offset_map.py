"""The log cleaner's settings and its offset map (Kafka 3.9 ``CleanerConfig``, ``SkimpyOffsetMap``).

The map holds, per key, the latest offset seen in the dirty range.  Its capacity is Kafka's: each
cleaner thread gets ``log.cleaner.dedupe.buffer.size / log.cleaner.threads`` bytes (at most 2^31 - 1),
``slots = memory // 24`` (an MD5 digest of 16 bytes plus an 8-byte offset), and the cleaner stops
adding keys once ``slots * log.cleaner.io.buffer.load.factor`` are in it (``Cleaner.buildOffsetMap``),
so a map that fills cleans only a prefix of the dirty range.  Keys are told apart by their MD5
digest, as ``SkimpyOffsetMap`` does, in a table laid out as Kafka's (:mod:`~kafkafmt.log.cleaner.table`).
"""
from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from ...config import CLEANER_KEYS
from ...constants import INT32_MAX
from ...errors import ConfigError
from .table import BYTES_PER_ENTRY, DIGEST_SIZE, ENTRIES, LATEST, clear_table, new_table, table_get_many, table_put_many

__all__ = ["CleanerConfig", "OffsetMap", "CLEANER_KEYS", "InflatedValues", "release_offset_map"]

@dataclass(frozen=True)
class CleanerConfig:
    """The broker's cleaner settings (``CleanerConfig`` built from ``KafkaConfig``), Kafka's defaults.

    Like Kafka's ``CleanerConfig`` constructor it accepts buffers far smaller than a broker would;
    ``producer_id_expiration_ms`` is the broker setting that decides which producers are still active.
    """

    num_threads: int = 1
    dedupe_buffer_size: int = 128 * 1024 * 1024
    load_factor: float = 0.9
    io_buffer_size: int = 512 * 1024
    max_message_size: int = 1024 * 1024 + 12
    backoff_ms: int = 15 * 1000
    producer_id_expiration_ms: int = 86400000

    @classmethod
    def from_properties(cls, props: Mapping[str, Any] | None = None) -> "CleanerConfig":
        """From broker properties by their Kafka names (``log.cleaner.dedupe.buffer.size`` ...)."""
        kw = {}
        for name, value in (props or {}).items():
            if name not in CLEANER_KEYS:
                raise ConfigError(f"Unknown cleaner configuration '{name}'; one of {', '.join(CLEANER_KEYS)}")
            attr, typ, _ = CLEANER_KEYS[name]
            try:
                kw[attr] = typ(value)
            except (TypeError, ValueError):
                raise ConfigError(f"Invalid value {value} for configuration {name}: not a {typ.__name__}") from None
        return cls(**kw)

    @property
    def memory_per_thread(self) -> int:
        """``min(dedupeBufferSize / numThreads, Int.MaxValue)``: the offset map of one cleaner thread."""
        return min(self.dedupe_buffer_size // self.num_threads, INT32_MAX)

    @property
    def io_buffer_per_thread(self) -> int:
        """``ioBufferSize / numThreads / 2``: one read and one write buffer per cleaner thread."""
        return self.io_buffer_size // self.num_threads // 2

    def offset_map(self) -> "OffsetMap":
        """The calling thread's offset map of :attr:`memory_per_thread` bytes.  Like a broker's
        ``CleanerThread``, whose ``Cleaner`` allocates its ``SkimpyOffsetMap`` once and clears it before
        each pass, a thread keeps its map (the last size asked for) from one pass to the next: its pages
        are already in memory, and clearing it touches only the slots the last pass took.  The memory
        stays with the thread as a broker's dedupe buffer stays with its cleaner thread (up to
        ``memory_per_thread``, 128 MiB by default); :func:`release_offset_map` gives it back."""
        kept = getattr(_THREAD_MAPS, "map", None)
        if kept is None or kept.memory != self.memory_per_thread:
            _THREAD_MAPS.map = kept = None  # the old table goes before the new one is allocated
            _THREAD_MAPS.map = kept = OffsetMap(self.memory_per_thread)
        return kept


#: each thread's offset map (:meth:`CleanerConfig.offset_map`)
_THREAD_MAPS = threading.local()


def release_offset_map() -> bool:
    """Drop the calling thread's offset map (a long-lived process done cleaning gives its memory back; the
    next pass allocates a new one).  True when there was one."""
    had = getattr(_THREAD_MAPS, "map", None) is not None
    _THREAD_MAPS.map = None
    return had


#: records whose slot the map pass keeps for the filter pass (4 bytes each: 32 MiB at most, beside the
#: table), and batches they are found by (24 bytes each, 24 MiB at most; only what is used takes memory)
SEEN_RECORDS = 1 << 23
SEEN_BATCHES = 1 << 20
#: bytes of v0/v1 wrapper values the map pass inflated that it keeps for the filter pass
KEPT_INFLATED_BYTES = 32 << 20


class InflatedValues:
    """The values of compressed v0/v1 wrappers the map pass inflated, the first met up to
    :data:`KEPT_INFLATED_BYTES`, by the wrapper's place in the log (segment base offset, position): the
    filter pass takes each instead of inflating it again (Kafka's cleaner inflates every wrapper in both
    passes; the bytes are the same)."""

    def __init__(self, budget: int = KEPT_INFLATED_BYTES):
        self.budget, self.size, self.values = budget, 0, {}

    def keep(self, place: tuple[int, int], value) -> None:
        if self.size + len(value) <= self.budget:
            self.values[place] = value
            self.size += len(value)

    def take(self, place: tuple[int, int]):
        """The value kept for ``place`` (forgotten once taken), or None."""
        return self.values.pop(place, None)

    def clear(self) -> None:
        self.size, self.values = 0, {}


class OffsetMap:
    """``SkimpyOffsetMap``: key digest -> latest offset in a preallocated table of Kafka's slot count
    (:mod:`~kafkafmt.log.cleaner.table`): its memory is the dedupe buffer's, however many keys there are."""

    def __init__(self, memory: int):
        if memory < 0:
            raise ConfigError(f"offset map memory must be >= 0, got {memory}")
        self.memory = memory
        self.slots = memory // BYTES_PER_ENTRY
        self.hashes, self.offsets, self.state = new_table(self.slots)
        self._seen = None
        self.inflated = InflatedValues()

    @property
    def seen(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Where the map pass put each record (at most :data:`SEEN_RECORDS`, in at most :data:`SEEN_BATCHES`
        batches), for the filter pass to read the key's latest offset from that slot instead of hashing
        the key and probing again: (batches as rows of segment base offset, position and index of their
        record 0 in slots; each record's slot, -1 when not put; [batches, slots, read position])."""
        if self._seen is None:
            self._seen = (np.empty((SEEN_BATCHES, 3), np.int64), np.empty(SEEN_RECORDS, np.int32),
                          np.zeros(3, np.int64))
        return self._seen

    def clear(self) -> None:
        """``SkimpyOffsetMap.clear``: every slot empty (the slots taken zeroed again, in place)."""
        clear_table(self.hashes, self.offsets, self.state)
        self.inflated.clear()
        if self._seen is not None:
            self._seen[2][:] = 0

    @property
    def size(self) -> int:
        return int(self.state[ENTRIES])

    def __len__(self) -> int:
        return self.size

    @property
    def latest_offset(self) -> int:
        return int(self.state[LATEST])

    def put(self, key: bytes, offset: int) -> None:
        self.put_digests([hashlib.md5(key).digest()], [offset])

    def get(self, key: bytes) -> int:
        """The latest offset of ``key``, or -1 when it is not in the map."""
        return self.get_digest(hashlib.md5(key).digest())

    def get_digest(self, digest: bytes) -> int:
        """:meth:`get` by the key's MD5 digest."""
        return self.get_digests([digest])[0]

    def get_digests(self, digests: list) -> list[int]:
        """:meth:`get_digest` of each digest (None, a null key, gives -1)."""
        present = np.array([d is not None for d in digests], dtype=np.bool_)
        rows = np.frombuffer(b"".join(d or bytes(DIGEST_SIZE) for d in digests), dtype=np.uint8)
        out = np.empty(len(digests), dtype=np.int64)
        table_get_many(self.hashes, self.offsets, rows.reshape(-1, DIGEST_SIZE), present, out)
        return out.tolist()

    def put_digests(self, digests: list, offsets: list) -> None:
        """:meth:`put` of each (digest, offset) in order; the caller checks the capacity first."""
        if not digests:
            return
        rows = np.frombuffer(b"".join(digests), dtype=np.uint8).reshape(-1, DIGEST_SIZE)
        table_put_many(self.hashes, self.offsets, self.state, rows, np.asarray(offsets, dtype=np.int64))

    def update_latest_offset(self, offset: int) -> None:
        self.state[LATEST] = offset

    @property
    def utilization(self) -> float:
        return self.size / self.slots if self.slots else 0.0
