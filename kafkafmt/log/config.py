"""``LogConfig``: the topic settings the log layer uses, with Kafka's defaults and limits.

Defaults and minimums are ``storage/.../log/LogConfig.java`` and ``ServerLogConfigs`` of Kafka
3.9 (kafka-rules §7.2).  Message-level settings (timestamp type, format version, compression,
timestamp limits) belong to the broker's ``TopicConfig`` (``kafkafmt.broker.config``), which the
log hands to the validator on the leader path.
"""
from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..constants import DEFAULT_MAX_MESSAGE_BYTES, INT32_MAX, INT64_MAX, LEGACY_RECORD_OVERHEAD_V0
from .errors import ConfigError

GiB = 1024 * 1024 * 1024
WEEK_MS = 7 * 24 * 60 * 60 * 1000

#: Kafka property name -> (field name, type)
_PROPERTIES = {
    "segment.bytes": ("segment_bytes", int),
    "segment.ms": ("segment_ms", int),
    "segment.jitter.ms": ("segment_jitter_ms", int),
    "segment.index.bytes": ("segment_index_bytes", int),
    "index.interval.bytes": ("index_interval_bytes", int),
    "retention.ms": ("retention_ms", int),
    "retention.bytes": ("retention_bytes", int),
    "cleanup.policy": ("cleanup_policy", "list"),
    "preallocate": ("preallocate", bool),
    "max.message.bytes": ("max_message_bytes", int),
    "max.compaction.lag.ms": ("max_compaction_lag_ms", int),
    "file.delete.delay.ms": ("file_delete_delay_ms", int),
}


def _java_abs(n: int) -> int:
    """``org.apache.kafka.common.utils.Utils.abs``: |n|, but Integer.MIN_VALUE maps to 0."""
    return 0 if n == -(2**31) else abs(n)


@dataclass(frozen=True)
class LogConfig:
    """Kafka's log settings (field = property with ``.`` → ``_``)."""

    segment_bytes: int = GiB                    #: segment.bytes, >= 14
    segment_ms: int = WEEK_MS                   #: segment.ms, >= 1
    segment_jitter_ms: int = 0                  #: segment.jitter.ms, >= 0
    segment_index_bytes: int = 10 * 1024 * 1024  #: segment.index.bytes, >= 4
    index_interval_bytes: int = 4096            #: index.interval.bytes, >= 0
    retention_ms: int = WEEK_MS                 #: retention.ms, >= -1 (-1 = keep forever)
    retention_bytes: int = -1                   #: retention.bytes (-1 = no size limit)
    cleanup_policy: tuple[str, ...] = ("delete",)  #: cleanup.policy, subset of {compact, delete}
    preallocate: bool = False                   #: preallocate
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES  #: max.message.bytes, >= 0
    max_compaction_lag_ms: int = INT64_MAX      #: max.compaction.lag.ms, >= 1 (caps segment.ms when compacted)
    file_delete_delay_ms: int = 60000           #: file.delete.delay.ms (kept for completeness; deletes are immediate)
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)  #: properties not used by the log

    def __post_init__(self):
        if isinstance(self.cleanup_policy, str):
            object.__setattr__(self, "cleanup_policy", tuple(p.strip() for p in self.cleanup_policy.split(",") if p.strip()))
        else:
            object.__setattr__(self, "cleanup_policy", tuple(self.cleanup_policy))
        checks = [
            ("segment.bytes", self.segment_bytes, LEGACY_RECORD_OVERHEAD_V0, INT32_MAX),
            ("segment.ms", self.segment_ms, 1, INT64_MAX),
            ("segment.jitter.ms", self.segment_jitter_ms, 0, INT64_MAX),
            ("segment.index.bytes", self.segment_index_bytes, 4, INT32_MAX),
            ("index.interval.bytes", self.index_interval_bytes, 0, INT32_MAX),
            ("retention.ms", self.retention_ms, -1, INT64_MAX),
            ("max.message.bytes", self.max_message_bytes, 0, INT32_MAX),
            ("max.compaction.lag.ms", self.max_compaction_lag_ms, 1, INT64_MAX),
            ("file.delete.delay.ms", self.file_delete_delay_ms, 0, INT64_MAX),
        ]
        for name, value, lo, hi in checks:
            if not isinstance(value, int) or isinstance(value, bool):
                raise ConfigError(f"Invalid value {value!r} for configuration {name}: Not a number of type "
                                  f"{'INT' if hi == INT32_MAX else 'LONG'}")
            if value < lo or value > hi:
                raise ConfigError(f"Invalid value {value} for configuration {name}: Value must be at least {lo}"
                                  if value < lo else f"Invalid value {value} for configuration {name}: out of range")
        bad = [p for p in self.cleanup_policy if p not in ("compact", "delete")]
        if bad:
            raise ConfigError(f"Invalid value {','.join(self.cleanup_policy)} for configuration cleanup.policy: "
                              f"String must be one of: compact, delete")

    # --- derived values (LogConfig.java) --------------------------------------------------------
    @property
    def delete(self) -> bool:
        return "delete" in self.cleanup_policy

    @property
    def compact(self) -> bool:
        return "compact" in self.cleanup_policy

    @property
    def max_index_size(self) -> int:
        return self.segment_index_bytes

    @property
    def index_interval(self) -> int:
        return self.index_interval_bytes

    @property
    def segment_size(self) -> int:
        return self.segment_bytes

    @property
    def max_message_size(self) -> int:
        return self.max_message_bytes

    @property
    def max_segment_ms(self) -> int:
        """``maxSegmentMs``: min(max.compaction.lag.ms, segment.ms) for compacted topics."""
        if self.compact and self.max_compaction_lag_ms > 0:
            return min(self.max_compaction_lag_ms, self.segment_ms)
        return self.segment_ms

    @property
    def init_file_size(self) -> int:
        """``initFileSize``: segment.bytes when preallocating, else 0."""
        return self.segment_bytes if self.preallocate else 0

    def random_segment_jitter(self, rng: random.Random) -> int:
        """``randomSegmentJitter``: ``abs(nextInt) % min(segment.jitter.ms, segment.ms)``, 0 without jitter.

        Kafka draws ``nextInt`` from ``ThreadLocalRandom``; here a 32-bit signed int is drawn from
        ``rng`` (one draw per segment), so runs with the same seed roll at the same times.
        """
        if self.segment_jitter_ms == 0:
            return 0
        n = rng.getrandbits(32)
        if n >= 2**31:
            n -= 2**32
        return _java_abs(n) % min(self.segment_jitter_ms, self.segment_ms)

    # --- properties -----------------------------------------------------------------------------
    @classmethod
    def from_properties(cls, props: Mapping[str, Any] | None = None, **overrides) -> "LogConfig":
        """Build from Kafka property names (``{"segment.bytes": "1024", ...}``); others go to ``extra``.

        Values may be strings (as in a ``.properties`` file) or Python values.
        """
        kwargs: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in dict(props or {}).items():
            if key not in _PROPERTIES:
                extra[key] = value
                continue
            name, typ = _PROPERTIES[key]
            kwargs[name] = _convert(key, value, typ)
        kwargs.update(overrides)
        if extra:
            kwargs.setdefault("extra", extra)
        return cls(**kwargs)

    def to_properties(self) -> dict[str, str]:
        out = {}
        for key, (name, typ) in _PROPERTIES.items():
            v = getattr(self, name)
            if typ == "list":
                out[key] = ",".join(v)
            elif typ is bool:
                out[key] = "true" if v else "false"
            else:
                out[key] = str(v)
        return out

    def replace(self, **changes) -> "LogConfig":
        return dataclasses.replace(self, **changes)


def _convert(key: str, value: Any, typ) -> Any:
    if typ == "list":
        if isinstance(value, str):
            return tuple(p.strip() for p in value.split(",") if p.strip())
        return tuple(value)
    if typ is bool:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("true", "false"):
            return text == "true"
        raise ConfigError(f"Invalid value {value} for configuration {key}: Expected value to be either true or false")
    if isinstance(value, bool):
        raise ConfigError(f"Invalid value {value} for configuration {key}: Not a number")
    try:
        return int(str(value).strip()) if not isinstance(value, int) else value
    except ValueError:
        raise ConfigError(f"Invalid value {value} for configuration {key}: Not a number") from None
