"""Workload files for the sample-log generator (``kafkafmt gen``): topics, producers, clocks, configs.

A workload file is a YAML or JSON document (see ``docs/how-to/gen.md``; shipped ones are in
``kafkafmt/gen/shipped/``).  Topic settings use Kafka's property names (``segment.bytes``,
``message.timestamp.type`` ...) and reach the log through one function, :func:`log_config`.
Everything random is drawn from RNGs seeded by the workload's ``seed``.  (A *scenario* is
something else: a cluster scenario of :mod:`kafkafmt.scenarios`.)
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Mapping

from ..constants import RECORD_BATCH_OVERHEAD, CompressionType
from ..errors import ConfigError
from ..kafka_lines import DEFAULT_LINE
from .workloads import ClockModel

__all__ = ["WorkloadSpec", "TopicSpec", "ProducerGroup", "load_workload", "parse_workload", "shipped_workloads",
           "log_config", "WorkloadError"]


class WorkloadError(ConfigError):
    """A workload file is invalid; ``reason`` names the key (``topics[0].producers[1].rate``)."""


@dataclass(frozen=True)
class ProducerGroup:
    """A group of ``count`` identical producers writing to one topic."""

    name: str
    count: int = 1
    rate: float = 10.0                      #: records per second, the whole group, over all partitions
    batch_records: tuple[int, int] = (1, 5)  #: records per produce batch, uniform
    keys: int = 100                         #: key cardinality (0: null keys, spread over partitions)
    value_bytes: tuple[int, int] = (16, 128)  #: value size, uniform
    headers: int = 0                        #: headers per record (v2 only)
    codec: str = "none"
    magic: tuple[tuple[int, int], ...] = ((0, 2),)  #: (from ms after the start, magic) windows
    clock: ClockModel = ClockModel()
    bursts: tuple[float, int, int, int] = (0.0, 1, 1, 1)  #: (probability, min batches, max batches, interval ms)
    idempotent: bool = True                 #: producer id, epoch and sequences (Kafka 3.x's default)
    tombstones: float = 0.0                 #: share of records sent as deletes (a key with a null value)
    #: transactional producer: (abort probability, min batches, max batches) per transaction, or None
    transactions: tuple[float, int, int] | None = None

    def magic_at(self, elapsed_ms: int) -> int:
        cur = self.magic[0][1]
        for start, m in self.magic:
            if elapsed_ms >= start:
                cur = m
        return cur

    @property
    def mean_record_bytes(self) -> float:
        """A rough size of one stored record (key, value, framing), for sizing runs."""
        return (self.value_bytes[0] + self.value_bytes[1]) / 2 + (8 if self.keys else 0) + 12 + self.headers * 20 \
            + RECORD_BATCH_OVERHEAD / ((self.batch_records[0] + self.batch_records[1]) / 2)


@dataclass(frozen=True)
class TopicSpec:
    """One topic: partitions, Kafka properties, timed property changes and its producer groups."""

    name: str
    partitions: int = 1
    config: Mapping[str, Any] = field(default_factory=dict)  #: Kafka topic properties
    changes: tuple[tuple[int, Mapping[str, Any]], ...] = ()  #: (ms after the start, properties) in time order
    producers: tuple[ProducerGroup, ...] = ()
    leader_epoch: int = 0


@dataclass(frozen=True)
class WorkloadSpec:
    """A whole workload file: the seed, the simulated span, broker settings and the topics."""

    name: str
    seed: int = 0
    start_ms: int = 1_700_000_000_000
    duration_ms: int = 600_000
    broker: Mapping[str, Any] = field(default_factory=dict)  #: broker properties (retention check interval)
    topics: tuple[TopicSpec, ...] = ()
    description: str = ""
    #: the Kafka line whose broker writes the logs (``kafkafmt gen --kafka-line``; not a key of the file)
    kafka_line: str = DEFAULT_LINE

    @property
    def retention_check_interval_ms(self) -> int:
        return int(self.broker.get("log.retention.check.interval.ms", 300_000))

    @property
    def cleaner_enabled(self) -> bool:
        """``log.cleaner.enable`` (Kafka's default: true): compacted topics are cleaned while generating."""
        return str(self.broker.get("log.cleaner.enable", True)).lower() not in ("false", "0")

    def cleaner_config(self):
        """The broker's cleaner settings (``log.cleaner.*`` by their Kafka names) as a ``CleanerConfig``."""
        from ..log.cleaner.offset_map import CLEANER_KEYS, CleanerConfig
        return CleanerConfig.from_properties({k: v for k, v in self.broker.items() if k in CLEANER_KEYS
                                              and k.startswith("log.cleaner.")})

    @property
    def partitions(self) -> list[tuple[TopicSpec, int]]:
        return [(t, p) for t in self.topics for p in range(t.partitions)]

    def expected_bytes(self) -> float:
        """A rough estimate of the bytes the workload appends (uncompressed), for ``--size``."""
        return sum(g.rate * g.mean_record_bytes * self.duration_ms / 1000 for t in self.topics for g in t.producers)


# ------------------------------------------------------------------------------------------------
#: broker settings the generator itself uses (the rest of ``broker:`` goes to :class:`kafkafmt.config.BrokerConfig`)
GENERATOR_BROKER_KEYS = ("log.retention.check.interval.ms", "log.cleaner.enable", "log.cleaner.threads",
                         "log.cleaner.dedupe.buffer.size", "log.cleaner.io.buffer.load.factor",
                         "log.cleaner.io.buffer.size", "log.cleaner.backoff.ms")


def log_config(properties: Mapping[str, Any], broker: Mapping[str, Any] | None = None,
               kafka_line: str = DEFAULT_LINE):
    """The :class:`kafkafmt.config.LogConfig` of a topic from Kafka property names: THE place where
    workload files meet kafkafmt's configuration (``LogConfig.from_properties`` on the broker of
    ``broker``: ``inter.broker.protocol.version``, ``log.*`` defaults; of the Kafka line ``kafka_line``)."""
    from ..config import BrokerConfig, LogConfig
    broker_props = {k: v for k, v in dict(broker or {}).items() if k not in GENERATOR_BROKER_KEYS}
    return LogConfig.from_properties(dict(properties),
                                     broker=BrokerConfig.from_properties(broker_props, kafka_line=kafka_line))


# ------------------------------------------------------------------------------------------------
def shipped_workloads() -> dict[str, Path]:
    """Name → path of the workload files shipped in ``kafkafmt/gen/shipped``."""
    root = resources.files("kafkafmt.gen") / "shipped"
    return {Path(str(p)).stem: Path(str(p)) for p in root.iterdir() if str(p).endswith((".yaml", ".yml", ".json"))}


def load_workload(source: str | os.PathLike) -> WorkloadSpec:
    """A workload from a file path or the name of a shipped one (``default``)."""
    path = Path(source)
    if not path.exists():
        shipped = shipped_workloads()
        if str(source) not in shipped:
            raise WorkloadError(f"no workload file {source} and no shipped workload of that name "
                                f"(shipped: {', '.join(sorted(shipped))})")
        path = shipped[str(source)]
    text = path.read_text()
    try:
        if path.suffix == ".json":
            doc = json.loads(text)
        else:
            import yaml
            doc = yaml.safe_load(text)
    except Exception as e:  # noqa: BLE001 - the parsers' own errors, reported with the file name
        raise WorkloadError(f"{path}: not valid {'JSON' if path.suffix == '.json' else 'YAML'}: {e}") from None
    return parse_workload(doc, name=path.stem)


def parse_workload(doc: Mapping[str, Any], *, name: str = "workload") -> WorkloadSpec:
    """Validate a workload document (a dict) and build the :class:`WorkloadSpec`."""
    r = _Reader(doc, "")
    topics = tuple(_topic(t, f"topics[{i}]") for i, t in enumerate(r.list("topics")))
    if not topics:
        raise WorkloadError("a workload needs at least one topic (key: topics)")
    names = [t.name for t in topics]
    if len(set(names)) != len(names):
        raise WorkloadError(f"topic names must be unique (got {names})")
    sc = WorkloadSpec(name=str(r.get("name", name)), seed=r.int("seed", 0), start_ms=r.int("start_ms", 1_700_000_000_000),
                  duration_ms=r.int("duration_ms", 600_000, lo=1), broker=dict(r.get("broker", {}) or {}),
                  topics=topics, description=str(r.get("description", "")))
    r.done()
    for t in sc.topics:  # every configuration must be one Kafka accepts
        for when, props in ((0, {}),) + t.changes:
            try:
                log_config({**t.config, **props}, sc.broker)
            except (ConfigError, TypeError, ValueError) as e:
                raise WorkloadError(f"topic {t.name} (config at {when} ms): {e}") from None
    return sc


class _Reader:
    """Typed access to one mapping of the document; unknown keys are errors (typos fail loudly)."""

    def __init__(self, doc, where: str):
        if not isinstance(doc, Mapping):
            raise WorkloadError(f"{where or 'the workload'} must be a mapping (got {type(doc).__name__})")
        self.doc, self.where, self.used = doc, where, set()

    def _key(self, key):
        return f"{self.where}.{key}" if self.where else key

    def get(self, key, default=None):
        self.used.add(key)
        return self.doc.get(key, default)

    def int(self, key, default, *, lo=None):
        v = self.get(key, default)
        if isinstance(v, bool) or not isinstance(v, int):
            raise WorkloadError(f"{self._key(key)} must be an integer (got {v!r})")
        if lo is not None and v < lo:
            raise WorkloadError(f"{self._key(key)} must be >= {lo} (got {v})")
        return v

    def num(self, key, default, *, lo=0.0):
        v = self.get(key, default)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v < lo:
            raise WorkloadError(f"{self._key(key)} must be a number >= {lo} (got {v!r})")
        return float(v)

    def range(self, key, default, *, lo=0):
        v = self.get(key, default)
        if isinstance(v, int) and not isinstance(v, bool):
            v = [v, v]
        if not (isinstance(v, (list, tuple)) and len(v) == 2 and all(isinstance(x, int) for x in v)
                and lo <= v[0] <= v[1]):
            raise WorkloadError(f"{self._key(key)} must be an integer or [min, max] with {lo} <= min <= max (got {v!r})")
        return int(v[0]), int(v[1])

    def list(self, key):
        v = self.get(key, [])
        if not isinstance(v, list):
            raise WorkloadError(f"{self._key(key)} must be a list")
        return v

    def done(self):
        extra = sorted(set(self.doc) - self.used)
        if extra:
            raise WorkloadError(f"{self.where or 'workload'}: unknown key(s) {', '.join(map(str, extra))}")


def _topic(doc, where: str) -> TopicSpec:
    r = _Reader(doc, where)
    name = r.get("name")
    if not isinstance(name, str) or not name or "/" in name:
        raise WorkloadError(f"{where}.name must be a topic name (got {name!r})")
    config = r.get("config", {}) or {}
    if not isinstance(config, Mapping):
        raise WorkloadError(f"{where}.config must be a mapping of Kafka topic properties")
    changes = []
    for i, c in enumerate(r.list("changes")):
        cr = _Reader(c, f"{where}.changes[{i}]")
        props = cr.get("config", {})
        if not isinstance(props, Mapping):
            raise WorkloadError(f"{where}.changes[{i}].config must be a mapping of Kafka topic properties")
        changes.append((cr.int("at_ms", None, lo=0), dict(props)))
        cr.done()
    producers = tuple(_producer(p, f"{where}.producers[{i}]") for i, p in enumerate(r.list("producers")))
    if not producers:
        raise WorkloadError(f"{where}.producers: a topic needs at least one producer group")
    spec = TopicSpec(name=name, partitions=r.int("partitions", 1, lo=1), config=dict(config),
                     changes=tuple(sorted(changes, key=lambda c: c[0])), producers=producers,
                     leader_epoch=r.int("leader_epoch", 0, lo=0))
    r.done()
    return spec


def _producer(doc, where: str) -> ProducerGroup:
    r = _Reader(doc, where)
    codec = str(r.get("codec", "none")).lower()
    try:
        CompressionType.from_name(codec)
    except (ValueError, KeyError):
        raise WorkloadError(f"{where}.codec must be none, gzip, snappy, lz4 or zstd (got {codec!r})") from None
    magic = r.get("magic", 2)
    windows = [(0, magic)] if isinstance(magic, int) else [(w.get("from_ms", 0), w.get("magic")) for w in magic]
    if not windows or any(m not in (0, 1, 2) or not isinstance(s, int) or s < 0 for s, m in windows):
        raise WorkloadError(f"{where}.magic must be 0, 1, 2 or a list of {{from_ms, magic}} (got {magic!r})")
    windows.sort()
    if codec == "zstd" and any(m < 2 for _, m in windows):
        raise WorkloadError(f"{where}: zstd needs magic 2 (KIP-110)")
    clock_doc = r.get("clock", {"model": "none"})
    try:
        clock = ClockModel(**clock_doc) if isinstance(clock_doc, Mapping) else ClockModel(str(clock_doc))
    except (TypeError, ValueError) as e:
        raise WorkloadError(f"{where}.clock: {e}") from None
    if clock.model == "negative" and any(m < 2 for _, m in windows):
        raise WorkloadError(f"{where}: negative timestamps (KIP-228) need magic 2")
    b = r.get("bursts", {}) or {}
    br = _Reader(b, f"{where}.bursts")
    bursts = (br.num("probability", 0.0), *br.range("batches", [1, 1], lo=1), br.int("interval_ms", 1, lo=0))
    if bursts[0] > 1:
        raise WorkloadError(f"{where}.bursts.probability must be <= 1")
    br.done()
    spec = ProducerGroup(name=str(r.get("name", where)), count=r.int("count", 1, lo=1), rate=r.num("rate", 10.0),
                        batch_records=r.range("batch_records", [1, 5], lo=1), keys=r.int("keys", 100, lo=0),
                        value_bytes=r.range("value_bytes", [16, 128]), headers=r.int("headers", 0, lo=0),
                        codec=codec, magic=tuple(windows), clock=clock, bursts=bursts,
                        idempotent=bool(r.get("idempotent", True)), tombstones=r.num("tombstones", 0.0),
                        transactions=_transactions(r.get("transactions"), where))
    r.done()
    if spec.tombstones > 1 or (spec.tombstones and not spec.keys):
        raise WorkloadError(f"{where}.tombstones must be a share <= 1 of keyed records (keys > 0)")
    if spec.transactions and (not spec.idempotent or any(m < 2 for _, m in windows)):
        raise WorkloadError(f"{where}.transactions need an idempotent producer sending magic 2 (KIP-98)")
    return spec


def _transactions(doc, where: str) -> tuple[float, int, int] | None:
    """``transactions: {batches: [min, max], abort: p}``: batches per transaction and the share aborted."""
    if doc is None:
        return None
    r = _Reader(doc, f"{where}.transactions")
    out = (r.num("abort", 0.0), *r.range("batches", [1, 3], lo=1))
    r.done()
    if out[0] > 1:
        raise WorkloadError(f"{where}.transactions.abort must be <= 1")
    return out
