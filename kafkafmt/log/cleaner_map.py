"""The log cleaner's settings and its offset map (Kafka 3.9 ``CleanerConfig``, ``SkimpyOffsetMap``).

The map holds, per key, the latest offset seen in the dirty range.  Its capacity is Kafka's: each
cleaner thread gets ``log.cleaner.dedupe.buffer.size / log.cleaner.threads`` bytes (at most 2^31 - 1),
``slots = memory // 24`` (an MD5 digest of 16 bytes plus an 8-byte offset), and the cleaner stops
adding keys once ``slots * log.cleaner.io.buffer.load.factor`` are in it (``Cleaner.buildOffsetMap``),
so a map that fills cleans only a prefix of the dirty range.  Keys are told apart by their MD5
digest, as ``SkimpyOffsetMap`` does.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Mapping

from ..constants import INT32_MAX
from ..errors import ConfigError

__all__ = ["CleanerConfig", "OffsetMap", "CLEANER_KEYS"]

#: SkimpyOffsetMap.bytesPerEntry: MD5 digest (16) + offset (8)
BYTES_PER_ENTRY = 16 + 8

#: broker setting (Kafka name) -> (CleanerConfig field, type, Kafka 3.9 default)
CLEANER_KEYS: dict[str, tuple[str, type, Any]] = {
    "log.cleaner.threads": ("num_threads", int, 1),
    "log.cleaner.dedupe.buffer.size": ("dedupe_buffer_size", int, 128 * 1024 * 1024),
    "log.cleaner.io.buffer.load.factor": ("load_factor", float, 0.9),
    "log.cleaner.io.buffer.size": ("io_buffer_size", int, 512 * 1024),
    "message.max.bytes": ("max_message_size", int, 1024 * 1024 + 12),
    "log.cleaner.backoff.ms": ("backoff_ms", int, 15 * 1000),
    "producer.id.expiration.ms": ("producer_id_expiration_ms", int, 86400000),
}


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
        return OffsetMap(self.memory_per_thread)


class OffsetMap:
    """``SkimpyOffsetMap``: key digest -> latest offset, with Kafka's slot count."""

    def __init__(self, memory: int):
        if memory < 0:
            raise ConfigError(f"offset map memory must be >= 0, got {memory}")
        self.memory = memory
        self.slots = memory // BYTES_PER_ENTRY
        self._map: dict[bytes, int] = {}
        self.latest_offset = -1

    def clear(self) -> None:
        self._map.clear()
        self.latest_offset = -1

    @property
    def size(self) -> int:
        return len(self._map)

    def __len__(self) -> int:
        return len(self._map)

    def put(self, key: bytes, offset: int) -> None:
        self._map[hashlib.md5(key).digest()] = offset
        self.latest_offset = offset

    def get(self, key: bytes) -> int:
        """The latest offset of ``key``, or -1 when it is not in the map."""
        return self._map.get(hashlib.md5(key).digest(), -1)

    def get_digest(self, digest: bytes) -> int:
        """:meth:`get` by the key's MD5 digest."""
        return self._map.get(digest, -1)

    def get_digests(self, digests: list) -> list[int]:
        """:meth:`get_digest` of each digest (None, a null key, gives -1)."""
        get = self._map.get
        return [get(d, -1) for d in digests]

    def put_digests(self, digests: list, offsets: list) -> None:
        """:meth:`put` of each (digest, offset) in order; the caller checks the capacity first."""
        self._map.update(zip(digests, offsets))
        if offsets:
            self.latest_offset = offsets[-1]

    def update_latest_offset(self, offset: int) -> None:
        self.latest_offset = offset

    @property
    def utilization(self) -> float:
        return len(self._map) / self.slots if self.slots else 0.0
