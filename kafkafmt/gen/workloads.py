"""Reproducible produce workloads for the log: producers with skewed clocks, bursts, LogAppendTime
and CreateTime topics.  Everything is drawn from a seeded ``random.Random``.

A :class:`Workload` is a list of :class:`AppendEvent`: at broker time ``append_time`` one produce
request arrives for the partition with ``records`` = ``(create_time, key, value)`` stamped by a
producer whose clock is off by its ``skew_ms`` (seed 000 §7.1-7.2: CreateTime is whatever the
producer says).  :func:`run_workload` replays it against a :class:`~kafkafmt.log.log.Log`,
moving the simulated clock and running retention like the broker's periodic check.
"""
from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Sequence

from ..constants import CompressionType, TimestampType
from ..records import build_records

CREATE_TIME = "CreateTime"
LOG_APPEND_TIME = "LogAppendTime"


@dataclass(frozen=True)
class Producer:
    """A producer whose clock reads ``true time + skew_ms`` (± ``jitter_ms`` per record)."""

    name: str
    skew_ms: int = 0
    jitter_ms: int = 0
    weight: float = 1.0


@dataclass(frozen=True)
class AppendEvent:
    """One produce request: broker time, records ``(create_time, key, value)``, and who sent it."""

    append_time: int
    records: tuple[tuple[int, bytes | None, bytes | None], ...]
    producer: str = "p0"


@dataclass
class Workload:
    """A partition's produce history."""

    events: list[AppendEvent]
    timestamp_type: str = CREATE_TIME
    topic: str = "workload"
    seed: int | None = None
    description: str = ""
    producers: list[Producer] = field(default_factory=list)

    @classmethod
    def from_events(cls, events: Iterable, *, timestamp_type: str = CREATE_TIME, **kw) -> "Workload":
        """From ``(append_time, records)`` pairs (records: ``(create_time, key, value)``)."""
        evs = []
        for e in events:
            if isinstance(e, AppendEvent):
                evs.append(e)
            else:
                t, recs = e[0], e[1]
                evs.append(AppendEvent(int(t), tuple((int(r[0]), _b(r[1]), _b(r[2])) for r in recs)))
        return cls(evs, timestamp_type=timestamp_type, **kw)

    @property
    def num_records(self) -> int:
        return sum(len(e.records) for e in self.events)

    def to_json(self) -> str:
        def enc(v):
            return None if v is None else v.decode("latin-1")
        return json.dumps({"topic": self.topic, "timestamp_type": self.timestamp_type, "seed": self.seed,
                           "description": self.description, "producers": [asdict(p) for p in self.producers],
                           "events": [{"append_time": e.append_time, "producer": e.producer,
                                       "records": [[r[0], enc(r[1]), enc(r[2])] for r in e.records]}
                                      for e in self.events]})

    @classmethod
    def from_json(cls, text: str) -> "Workload":
        d = json.loads(text)

        def dec(v):
            return None if v is None else v.encode("latin-1")
        return cls([AppendEvent(e["append_time"], tuple((r[0], dec(r[1]), dec(r[2])) for r in e["records"]),
                                e.get("producer", "p0")) for e in d["events"]],
                   timestamp_type=d.get("timestamp_type", CREATE_TIME), topic=d.get("topic", "workload"),
                   seed=d.get("seed"), description=d.get("description", ""),
                   producers=[Producer(**p) for p in d.get("producers", [])])


def _b(v) -> bytes | None:
    if v is None or isinstance(v, bytes):
        return v
    return str(v).encode()


def make_producers(n: int, *, seed: int = 0, max_skew_ms: int = 0, jitter_ms: int = 0) -> list[Producer]:
    """``n`` producers with clock skews drawn uniformly from ``[-max_skew_ms, +max_skew_ms]``."""
    rng = random.Random(seed)
    return [Producer(f"p{i}", rng.randint(-max_skew_ms, max_skew_ms) if max_skew_ms else 0, jitter_ms)
            for i in range(n)]


def generate(seed: int = 0, *, start_ms: int = 1_700_000_000_000, num_events: int = 100,
             mean_interval_ms: int = 1000, burst_probability: float = 0.0, burst_size: tuple[int, int] = (5, 20),
             burst_interval_ms: int = 1, records_per_event: tuple[int, int] = (1, 3),
             value_size: tuple[int, int] = (8, 32), producers: Sequence[Producer] | None = None,
             max_skew_ms: int = 0, num_producers: int = 1, timestamp_type: str = CREATE_TIME,
             far_future_probability: float = 0.0, far_future_ms: int = 365 * 24 * 3600 * 1000,
             topic: str = "workload") -> Workload:
    """A reproducible workload.

    Gaps between requests are exponential with mean ``mean_interval_ms``; with probability
    ``burst_probability`` a request starts a burst of ``burst_size`` requests ``burst_interval_ms``
    apart.  Each request comes from a producer (chosen by weight) whose CreateTime is
    ``append_time + skew (+/- jitter)``; with probability ``far_future_probability`` a record's
    CreateTime is ``far_future_ms`` ahead (a producer with a broken clock).
    """
    rng = random.Random(seed)
    if producers is None:
        producers = make_producers(num_producers, seed=seed, max_skew_ms=max_skew_ms)
    producers = list(producers)
    weights = [p.weight for p in producers]
    t = start_ms
    events: list[AppendEvent] = []
    seq = 0
    pending_burst = 0
    while len(events) < num_events:
        if pending_burst > 0:
            t += burst_interval_ms
            pending_burst -= 1
        else:
            t += max(1, int(rng.expovariate(1.0 / mean_interval_ms))) if mean_interval_ms > 0 else 0
            if burst_probability and rng.random() < burst_probability:
                pending_burst = rng.randint(*burst_size) - 1
        p = rng.choices(producers, weights)[0]
        n = rng.randint(*records_per_event)
        recs = []
        for _ in range(n):
            ct = t + p.skew_ms + (rng.randint(-p.jitter_ms, p.jitter_ms) if p.jitter_ms else 0)
            if far_future_probability and rng.random() < far_future_probability:
                ct = t + far_future_ms
            ct = max(0, ct)
            size = rng.randint(*value_size)
            recs.append((ct, f"{p.name}-{seq}".encode(), bytes(rng.getrandbits(8) for _ in range(size))))
            seq += 1
        events.append(AppendEvent(t, tuple(recs), p.name))
    return Workload(events, timestamp_type=timestamp_type, topic=topic, seed=seed, producers=producers,
                    description=f"generate(seed={seed}, num_events={num_events}, mean_interval_ms={mean_interval_ms}, "
                                f"burst_probability={burst_probability}, max_skew_ms={max_skew_ms})")


def generate_mixed(seed: int = 0, *, topics: dict[str, str] | None = None, **kwargs) -> dict[str, Workload]:
    """One workload per topic (``{"clicks": "CreateTime", "audit": "LogAppendTime"}``), same producers and span."""
    topics = topics or {"create-time-topic": CREATE_TIME, "log-append-time-topic": LOG_APPEND_TIME}
    out = {}
    for i, (topic, ts_type) in enumerate(sorted(topics.items())):
        out[topic] = generate(seed * 1000 + i, timestamp_type=ts_type, topic=topic, **kwargs)
    return out


# ------------------------------------------------------------------------------------------------
# replay
def stored_batch(records: Sequence[tuple[int, bytes | None, bytes | None]], *, base_offset: int,
                 timestamp_type: str = CREATE_TIME, log_append_time: int = -1, partition_leader_epoch: int = 0,
                 magic: int = 2, compression: CompressionType | str = CompressionType.NONE) -> bytes:
    """The bytes a leader stores for one uncompressed v2 produce batch (what LogValidator's in-place path
    yields): offsets from ``base_offset``, the leader epoch stamped, and for LogAppendTime the LAT bit
    with maxTimestamp = the broker time (record timestamps/deltas unchanged; kafka-rules §11.3)."""
    ts_type = TimestampType.LOG_APPEND_TIME if timestamp_type == LOG_APPEND_TIME else TimestampType.CREATE_TIME
    return build_records(records, magic=magic, compression=compression, timestamp_type=ts_type,
                         base_offset=base_offset, log_append_time=log_append_time,
                         partition_leader_epoch=partition_leader_epoch if magic >= 2 else -1)


def client_batch(records: Sequence[tuple[int, bytes | None, bytes | None]], *, magic: int = 2,
                 compression: CompressionType | str = CompressionType.NONE) -> bytes:
    """What a producer sends: base offset 0, CreateTime, no leader epoch."""
    return build_records(records, magic=magic, compression=compression)


def run_workload(log, workload: Workload, *, clock=None, via: str = "raft",
                 retention_check_interval_ms: int | None = None, on_event=None) -> dict[str, Any]:
    """Replay ``workload`` against ``log`` (whose clock must be a SimulatedClock, or pass ``clock``).

    ``via="raft"`` appends the batch a leader would have stored (:func:`stored_batch`) with
    ``origin="RAFT_LEADER"``, which needs no validator; ``via="leader"`` sends :func:`client_batch`
    through ``append_as_leader`` (the broker's LogValidator; ``log.config`` sets the timestamp
    type).  Under ``time_index_policy="kip33-variant"`` messages always keep CreateTime.

    Retention (``delete_old_segments``) runs whenever ``retention_check_interval_ms`` of simulated
    time has passed, and once after the last event.  Returns ``{"records": [...], "appends": [...]}``
    with, per record, its offset, create time, append time and the timestamp stored in the log.
    """
    clock = clock if clock is not None else log.clock
    lat_in_messages = workload.timestamp_type == LOG_APPEND_TIME and log.time_index_policy == "kafka"
    records_out, appends = [], []
    next_check = None
    for ev in workload.events:
        if ev.append_time < clock.now():
            clock.set(ev.append_time)
        if retention_check_interval_ms and next_check is not None:
            while next_check <= ev.append_time:
                clock.set(next_check)
                log.delete_old_segments()
                next_check += retention_check_interval_ms
        clock.set(ev.append_time)
        if next_check is None and retention_check_interval_ms:
            next_check = ev.append_time + retention_check_interval_ms
        now = clock.now()
        if via == "raft":
            data = stored_batch(ev.records, base_offset=log.log_end_offset,
                                timestamp_type=LOG_APPEND_TIME if lat_in_messages else CREATE_TIME,
                                log_append_time=now, partition_leader_epoch=log.leader_epoch)
            info = log.append_as_leader(data, origin="RAFT_LEADER")
        elif via == "leader":
            info = log.append_as_leader(client_batch(ev.records))
        else:
            raise ValueError(f"via must be 'raft' or 'leader' (got {via!r})")
        for i, (ct, k, v) in enumerate(ev.records):
            records_out.append({"offset": info.first_offset + i, "create_time": ct, "append_time": now,
                                "stored_timestamp": now if lat_in_messages else ct, "producer": ev.producer})
        appends.append({"time": now, "first_offset": info.first_offset, "last_offset": info.last_offset,
                        "segment": info.segment_base_offset, "rolled": info.roll_reasons})
        if on_event is not None:
            on_event(ev, info)
    if retention_check_interval_ms is not None:
        log.delete_old_segments()
    return {"records": records_out, "appends": appends}


# ------------------------------------------------------------------------------------------------
# producer clocks and the default partitioner (used by kafkafmt.gen.generator)
CLOCK_MODELS = ("none", "normal", "heavy_tailed", "wrong", "negative")
#: a drawn skew is clamped to +/- 100 years (a Student-t with df <= 1 can draw anything)
MAX_SKEW_MS = 100 * 365 * 24 * 3600 * 1000


@dataclass(frozen=True)
class ClockModel:
    """How a producer's clock differs from true time: ``CreateTime = true send time + skew``.

    ``none``
        skew 0.
    ``normal``
        per record, skew ~ Normal(``offset_ms``, ``sigma_ms``).
    ``heavy_tailed``
        per record, skew = ``offset_ms`` + ``scale_ms`` x Student-t(``df``) (df <= 2: infinite variance, the
        occasional wild timestamp of a real fleet).
    ``wrong``
        a badly wrong clock: a constant ``offset_ms`` (e.g. a day behind) plus Normal(0, ``sigma_ms``).
    ``negative``
        a KIP-228 producer (seed 002): timestamps ``base_ms`` + time since the start, with ``base_ms`` < 0
        (before 1970); stored with the proposal's ``isTimestampExtended`` bit.

    Seed 000 §7.1-7.2 (KIP-32): with CreateTime the broker keeps whatever the producer says.
    """

    model: str = "none"
    sigma_ms: float = 0.0
    offset_ms: int = 0
    scale_ms: float = 0.0
    df: float = 2.0
    base_ms: int = -1_000_000_000

    def __post_init__(self):
        if self.model not in CLOCK_MODELS:
            raise ValueError(f"clock model must be one of {', '.join(CLOCK_MODELS)} (got {self.model!r})")
        if self.sigma_ms < 0 or self.scale_ms < 0 or self.df <= 0:
            raise ValueError("sigma_ms and scale_ms must be >= 0 and df > 0")
        if self.model == "negative" and self.base_ms >= 0:
            raise ValueError(f"a negative clock needs base_ms < 0 (got {self.base_ms})")

    def skew(self, rng: random.Random, true_ms: int, start_ms: int) -> int:
        """The skew of one record sent at ``true_ms`` (``start_ms``: the scenario's start)."""
        m = self.model
        if m == "none":
            return 0
        if m == "normal":
            return round(rng.gauss(self.offset_ms, self.sigma_ms))
        if m == "heavy_tailed":
            chi2 = rng.gammavariate(self.df / 2.0, 2.0)
            t = rng.gauss(0.0, 1.0) / ((chi2 / self.df) ** 0.5) if chi2 > 0 else 0.0
            return round(max(-MAX_SKEW_MS, min(MAX_SKEW_MS, self.offset_ms + self.scale_ms * t)))
        if m == "wrong":
            return self.offset_ms + (round(rng.gauss(0.0, self.sigma_ms)) if self.sigma_ms else 0)
        return self.base_ms - start_ms  # negative: CreateTime = base_ms + time since the start


def murmur2(data: bytes) -> int:
    """``org.apache.kafka.common.utils.Utils.murmur2``: the 32-bit signed hash Kafka partitions keys with."""
    m, r, mask = 0x5BD1E995, 24, 0xFFFFFFFF
    length = len(data)
    h = (0x9747B28C ^ length) & mask
    n4 = length // 4
    for i in range(n4):
        k = int.from_bytes(data[4 * i:4 * i + 4], "little")
        k = (k * m) & mask
        k ^= k >> r
        k = (k * m) & mask
        h = (h * m) & mask
        h ^= k
    tail = length % 4
    if tail >= 3:
        h ^= data[n4 * 4 + 2] << 16
    if tail >= 2:
        h ^= data[n4 * 4 + 1] << 8
    if tail >= 1:
        h ^= data[n4 * 4]
        h = (h * m) & mask
    h ^= h >> 13
    h = (h * m) & mask
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def partition_for_key(key: bytes, num_partitions: int) -> int:
    """``BuiltInPartitioner.partitionForKey``: ``toPositive(murmur2(key)) % numPartitions``."""
    return (murmur2(key) & 0x7FFFFFFF) % num_partitions
