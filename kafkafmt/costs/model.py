"""Predicted broker CPU and memory of a fetch, from kafkafmt's exact counts and per-operation costs measured on
real brokers.

Where the price comes from (the seeds' "performance penalty because there is no zero-copy transfer"):

* **Every request.**  Reading the request, finding the offset in the segment (``OffsetIndex`` and a scan of at
  most ``index.interval.bytes``), the fetch session, the response header and its send: a fixed cost per
  request whatever it carries (``KafkaApis.handleFetchRequest``).  It is what a zero-copy fetch mostly costs: the
  bytes themselves are cheap.
* **Zero-copy.**  A fetch whose format the consumer reads is answered from the log file with ``sendfile``
  (``FileRecords.writeTo``): the broker's CPU grows with the bytes sent, a little per byte.
* **Down-conversion** (KIP-32, Kafka 0.10.0: a consumer older than the topic's format gets its records
  rewritten to its magic, ``RecordsUtil.downConvert``): every record of a rebuilt batch is decoded and re-encoded
  (a cost per record and per byte), and a compressed batch is decompressed and compressed again (a cost per
  uncompressed byte, per codec).  Before Kafka 2.0 the whole response is converted in memory before it is sent
  (eager); KIP-283 (2.0) converts chunk by chunk while the response is written (``LazyDownConversionRecordsSend``,
  at most 128 KiB of source per chunk), which bounds the memory, not the CPU.  Kafka 4.x converts nothing
  (KIP-724, KIP-896).

The model: ``cpu = request_s x requests + zero_copy_s_per_byte x bytes_read + reencode_s_per_record x
records_touched + reencode_s_per_byte x reencoded_bytes + codec_s_per_byte[codec] x (bytes_decompressed +
bytes_compressed) / 2`` (written once, :func:`predict`),
each count exactly what :func:`kafkafmt.broker.fetch.fetch` reports for the request (its public
:class:`~kafkafmt.broker.fetch.ConversionCost` and KIP-188 ``RecordConversionStats`` numbers), each cost a row of a
:class:`CostTable` measured by ``make bench-conversion`` on one machine (kept as data, ``measured.json`` next to
this module, naming the machine, its load and the date).  ``codec_s_per_byte`` is one decompression plus one
compression of an uncompressed byte: a down-conversion always does both on the same bytes.  The memory a request
holds: nothing for zero-copy, the whole converted response when eager, one converted chunk when lazy.

    from kafkafmt.costs import predict_fetch, consume
    p = predict_fetch(log_bytes, line="2.8", fetch_version=3)     # one request
    p.cpu_s, p.memory_bytes, p.parts
    c = consume(log_bytes, line="1.1", fetch_version=1)            # a consumer reading the whole log
    predict(c.counts, line="1.1").cpu_s
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Iterable, Mapping

from .. import kafka_lines
from ..errors import ConfigError

__all__ = ["CODECS", "Counts", "ReleaseCosts", "CostTable", "Prediction", "Consumed", "FitCell", "MixPrediction", "predict",
           "predict_fetch", "predict_mix", "consume", "fit", "load_table", "TABLE_PATH", "LAZY_CHUNK_BYTES"]

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
#: ``LazyDownConversionRecordsSend.MAX_READ_SIZE`` (KIP-283): the source bytes converted per chunk
LAZY_CHUNK_BYTES = 128 * 1024
#: the cost table ``make bench-conversion --fit`` last wrote
TABLE_PATH = Path(__file__).with_name("measured.json")


@dataclass(frozen=True)
class Counts:
    """What one request (or a sum of requests) made the broker do: kafkafmt's public counts.

    ``bytes_read``: log bytes read; ``bytes_out``: record bytes the broker answered with (the slice for zero-copy,
    the converted chunks otherwise); ``records_touched``: records decoded and re-encoded; ``bytes_decompressed`` /
    ``bytes_compressed``: what the codecs produced / were fed; ``reencoded_bytes``: the uncompressed bytes of the
    rebuilt records; ``codec_bytes``: ``bytes_decompressed + bytes_compressed`` per codec;
    ``converted_bytes``: the converted records (``FetchResult.records``); ``requests``: how many requests.
    """

    zero_copy: bool = True
    conversion: str = "none"
    bytes_read: int = 0
    bytes_out: int = 0
    records_touched: int = 0
    bytes_decompressed: int = 0
    bytes_compressed: int = 0
    reencoded_bytes: int = 0
    converted_bytes: int = 0
    max_chunk_bytes: int = 0
    temporary_memory_bytes: int = 0
    requests: int = 1
    codec_bytes: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def from_fetch_result(cls, result, line: str) -> "Counts":
        """The counts of one :class:`kafkafmt.broker.fetch.FetchResult` answered by a broker of ``line``."""
        from ..records import MemoryRecords

        cost = result.cost
        conversion = "none" if result.zero_copy or result.to_magic is None else (
            kafka_lines.value("fetch.down_conversion_mode", line))
        codec_bytes: dict[str, int] = {}
        reencoded = 0
        if not result.zero_copy and result.records:
            sizes: dict[str, int] = {}
            for b in MemoryRecords(result.records).batches():
                name = b.compression.kafka_name
                sizes[name] = sizes.get(name, 0) + b.size_in_bytes
            total = sum(sizes.values()) or 1
            work = cost.bytes_decompressed + cost.bytes_compressed
            codec_bytes = {k: round(work * v / total) for k, v in sizes.items() if k != "none"}
            reencoded = cost.bytes_compressed + round(len(result.records) * sizes.get("none", 0) / total)
        chunk = 0
        if conversion == "lazy" and result.records:
            chunk = min(len(result.records), -(-len(result.records) * LAZY_CHUNK_BYTES // max(cost.bytes_read, 1)))
        return cls(zero_copy=bool(result.zero_copy), conversion=conversion, bytes_read=cost.bytes_read,
                   bytes_out=len(result.wire_records) if result.wire_records else len(result.records),
                   records_touched=cost.records_touched, bytes_decompressed=cost.bytes_decompressed,
                   bytes_compressed=cost.bytes_compressed, reencoded_bytes=reencoded,
                   converted_bytes=0 if result.zero_copy else len(result.records), max_chunk_bytes=chunk,
                   temporary_memory_bytes=result.stats.temporary_memory_bytes, requests=1, codec_bytes=codec_bytes)

    def __add__(self, other: "Counts") -> "Counts":
        summed = {f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)
                  if f.name not in ("zero_copy", "conversion", "codec_bytes", "max_chunk_bytes")}
        codecs = dict(self.codec_bytes)
        for k, v in other.codec_bytes.items():
            codecs[k] = codecs.get(k, 0) + v
        return Counts(zero_copy=self.zero_copy and other.zero_copy,
                      conversion=self.conversion if self.conversion != "none" else other.conversion,
                      max_chunk_bytes=max(self.max_chunk_bytes, other.max_chunk_bytes), codec_bytes=codecs, **summed)

    def scaled(self, k: float) -> "Counts":
        """These counts ``k`` times (a consumer reading the same log ``k`` times)."""
        ints = {f.name: round(getattr(self, f.name) * k) for f in fields(self)
                if f.name not in ("zero_copy", "conversion", "codec_bytes", "max_chunk_bytes")}
        return Counts(zero_copy=self.zero_copy, conversion=self.conversion, max_chunk_bytes=self.max_chunk_bytes,
                      codec_bytes={c: round(v * k) for c, v in self.codec_bytes.items()}, **ints)

    def to_dict(self) -> dict:
        return {**asdict(self), "codec_bytes": dict(self.codec_bytes)}

    @classmethod
    def from_dict(cls, d: Mapping) -> "Counts":
        names = {f.name for f in fields(cls)}
        return cls(**{k: (dict(v) if k == "codec_bytes" else v) for k, v in d.items() if k in names})


@dataclass(frozen=True)
class ReleaseCosts:
    """One release's broker, on one machine: seconds per operation (see the module doc for the formula).

    ``request_s``: the fixed cost of one fetch request (0 in a table fitted before it was measured)."""

    release: str
    zero_copy_s_per_byte: float
    reencode_s_per_record: float = 0.0
    reencode_s_per_byte: float = 0.0
    codec_s_per_byte: Mapping[str, float] = field(default_factory=dict)
    request_s: float = 0.0

    def to_dict(self) -> dict:
        return {**asdict(self), "codec_s_per_byte": dict(self.codec_s_per_byte)}


@dataclass(frozen=True)
class CostTable:
    """Per-release costs and where they were measured (``machine``, ``load``, ``date``, ``source``)."""

    releases: Mapping[str, ReleaseCosts]
    machine: str = ""
    load: str = ""
    date: str = ""
    source: str = ""

    def for_line(self, line: str) -> ReleaseCosts:
        """The costs of ``line``'s measured release, else of the newest measured release before it, else of the
        oldest measured one (:attr:`Prediction.measured_on` says which)."""
        line = kafka_lines.check_line(line)
        if not self.releases:
            raise ConfigError("the cost table has no measured release")
        ranked = sorted(self.releases, key=kafka_lines.order)
        same = [r for r in ranked if kafka_lines.check_line(r) == line]
        if same:
            return self.releases[same[-1]]
        before = [r for r in ranked if kafka_lines.order(r) <= kafka_lines.order(line)]
        return self.releases[(before or ranked)[-1 if before else 0]]

    def to_dict(self) -> dict:
        return {"machine": self.machine, "load": self.load, "date": self.date, "source": self.source,
                "releases": {k: v.to_dict() for k, v in self.releases.items()}}

    @classmethod
    def from_dict(cls, d: Mapping) -> "CostTable":
        rel = {k: ReleaseCosts(**{**v, "codec_s_per_byte": dict(v.get("codec_s_per_byte", {}))})
               for k, v in d.get("releases", {}).items()}
        return cls(rel, d.get("machine", ""), d.get("load", ""), d.get("date", ""), d.get("source", ""))


def load_table(path: str | Path | None = None) -> CostTable:
    """The cost table at ``path`` (default: the one shipped with kafkafmt, :data:`TABLE_PATH`)."""
    p = Path(path) if path else TABLE_PATH
    try:
        return CostTable.from_dict(json.loads(p.read_text()))
    except FileNotFoundError:
        raise ConfigError(f"no cost table at {p}: run make bench-conversion") from None
    except (ValueError, TypeError, AttributeError) as e:
        raise ConfigError(f"{p} is not a cost table: {e}") from None


@dataclass(frozen=True)
class Prediction:
    """Predicted broker CPU seconds and held memory for some counts; ``parts`` splits the CPU by operation."""

    cpu_s: float
    memory_bytes: int
    parts: Mapping[str, float]
    line: str
    measured_on: str
    table: str

    def to_dict(self) -> dict:
        return {**asdict(self), "parts": dict(self.parts)}


def predict(counts: Counts | Mapping, line: str, table: CostTable | None = None) -> Prediction:
    """Broker CPU and memory of ``counts`` on a broker of ``line``, from ``table`` (default :func:`load_table`)."""
    c = counts if isinstance(counts, Counts) else Counts.from_dict(counts)
    line = kafka_lines.check_line(line)
    t = table or load_table()
    rc = t.for_line(line)
    parts = {"requests": rc.request_s * c.requests, "read": rc.zero_copy_s_per_byte * c.bytes_read}
    if not c.zero_copy:
        parts["reencode_records"] = rc.reencode_s_per_record * c.records_touched
        parts["reencode_bytes"] = rc.reencode_s_per_byte * c.reencoded_bytes
        for codec, n in sorted(c.codec_bytes.items()):
            if codec not in rc.codec_s_per_byte:
                raise ConfigError(f"the cost table has no {codec} cost for Kafka {rc.release}")
            parts[f"codec_{codec}"] = rc.codec_s_per_byte[codec] * n / 2
    memory = 0 if c.zero_copy else (c.converted_bytes if c.conversion == "eager" else c.max_chunk_bytes)
    return Prediction(sum(parts.values()), memory, parts, line, rc.release,
                      f"{t.machine}; {t.date}; load {t.load}".strip("; "))


def predict_fetch(log, *, line: str, table: CostTable | None = None, topic_config=None, **fetch_kw) -> Prediction:
    """:func:`predict` for one request: :func:`kafkafmt.broker.fetch.fetch` answered by a broker of ``line``
    (``fetch_kw``: ``fetch_version``, ``fetch_offset``, ``max_bytes`` ...; ``topic_config`` default: the line's
    defaults)."""
    from ..broker.fetch import fetch
    from ..config import BrokerConfig, LogConfig

    line = kafka_lines.check_line(line)
    cfg = topic_config or LogConfig.from_properties({}, broker=BrokerConfig(kafka_line=line))
    return predict(Counts.from_fetch_result(fetch(log, topic_config=cfg, **fetch_kw), line), line, table)


@dataclass(frozen=True)
class Consumed:
    """A consumer's read of a whole log: the summed counts and the requests it took."""

    counts: Counts
    requests: int
    last_offset: int


def consume(log, *, line: str, fetch_version: int, max_bytes: int = 1 << 20, topic_config=None,
            start_offset: int | None = None) -> Consumed:
    """Read ``log`` from ``start_offset`` (default: its first offset) to its end as a consumer does: one Fetch
    ``fetch_version`` of one partition with ``max_bytes`` at a time, the next offset after the last whole
    entry the broker sent (:func:`kafkafmt.broker.fetch.fetch` on ``line``); the counts summed."""
    from ..broker.fetch import fetch
    from ..config import BrokerConfig, LogConfig
    from ..records import MemoryRecords

    line = kafka_lines.check_line(line)
    cfg = topic_config or LogConfig.from_properties({}, broker=BrokerConfig(kafka_line=line))
    data = bytes(log)
    batches = list(MemoryRecords(data).batches())
    if not batches:
        return Consumed(Counts(), 0, -1)
    end = batches[-1].last_offset
    offset = batches[0].base_offset if start_offset is None else start_offset
    total: Counts | None = None
    requests = 0
    while offset <= end:
        r = fetch(data, topic_config=cfg, fetch_version=fetch_version, fetch_offset=offset, max_bytes=max_bytes)
        if r.error or r.connection_closed:
            raise ConfigError(f"Fetch v{fetch_version} at offset {offset} on Kafka {line}: "
                              f"{r.error or 'connection closed'}")
        c = Counts.from_fetch_result(r, line)
        total = c if total is None else total + c
        requests += 1
        sent = list(MemoryRecords(r.wire_records or r.records).batches())
        whole = [b for b in sent if b.base_offset >= 0]
        if not whole or whole[-1].last_offset < offset:
            raise ConfigError(f"Fetch v{fetch_version} at offset {offset} on Kafka {line}: no whole entry sent")
        offset = whole[-1].last_offset + 1
    return Consumed(total, requests, end)


# ------------------------------------------------------------------------------------------------ fitting
@dataclass(frozen=True)
class FitCell:
    """One measured workload: a release, the counts the broker did (kafkafmt's) and its measured CPU seconds."""

    release: str
    counts: Counts
    cpu_s: float
    label: str = ""


def fit(cells: Iterable[FitCell], *, machine: str = "", load: str = "", date: str = "", source: str = "") -> CostTable:
    """Per-release costs from measured cells, in three steps per release (least squares, never negative):

    1. ``request_s`` and ``zero_copy_s_per_byte``: the zero-copy cells' CPU over their requests and bytes read
       (two request sizes are needed to tell them apart; with one, all goes per byte);
    2. ``reencode_s_per_record`` / ``reencode_s_per_byte``: the uncompressed conversions' CPU beyond the read,
       over records and bytes (two record sizes are needed to tell them apart; with one, all goes per record);
    3. ``codec_s_per_byte``: each codec's conversions' CPU beyond the read and the re-encoding, over half its
       decompressed + compressed bytes.
    """
    by_release: dict[str, list[FitCell]] = {}
    for c in cells:
        by_release.setdefault(c.release, []).append(c)
    out = {}
    for release, cs in by_release.items():
        zc = [c for c in cs if c.counts.zero_copy]
        if not zc:
            raise ConfigError(f"Kafka {release}: no zero-copy cell to fit the read cost")
        z, per_request = _nnls2([(c.cpu_s, c.counts.bytes_read, c.counts.requests) for c in zc])

        def base(c: FitCell) -> float:
            return c.cpu_s - per_request * c.counts.requests - z * c.counts.bytes_read

        plain = [c for c in cs if not c.counts.zero_copy and not c.counts.codec_bytes]
        rest = [(base(c), c.counts.records_touched, c.counts.reencoded_bytes) for c in plain]
        per_record, per_byte = _nnls2(rest)
        codec_costs = {}
        for codec in CODECS[1:]:
            comp = [c for c in cs if not c.counts.zero_copy and c.counts.codec_bytes.get(codec)]
            if comp:
                extra = [base(c) - per_record * c.counts.records_touched - per_byte * c.counts.reencoded_bytes
                         for c in comp]
                codec_costs[codec] = max(0.0, _ratio(extra, [c.counts.codec_bytes[codec] / 2 for c in comp]))
        out[release] = ReleaseCosts(release, zero_copy_s_per_byte=z, reencode_s_per_record=per_record,
                                    reencode_s_per_byte=per_byte, codec_s_per_byte=codec_costs,
                                    request_s=per_request)
    return CostTable(out, machine, load, date, source)


def _ratio(ys, xs) -> float:
    """Least-squares slope through the origin."""
    den = sum(x * x for x in xs)
    return max(0.0, sum(x * y for x, y in zip(xs, ys)) / den) if den else 0.0


def _nnls2(rows) -> tuple[float, float]:
    """``y = a x1 + b x2`` by least squares with ``a, b >= 0`` (rows of ``(y, x1, x2)``)."""
    if not rows:
        return 0.0, 0.0
    s11 = sum(r[1] * r[1] for r in rows)
    s22 = sum(r[2] * r[2] for r in rows)
    s12 = sum(r[1] * r[2] for r in rows)
    sy1 = sum(r[0] * r[1] for r in rows)
    sy2 = sum(r[0] * r[2] for r in rows)
    det = s11 * s22 - s12 * s12
    if det > 1e-9 * max(s11 * s22, 1e-300):
        a, b = (sy1 * s22 - sy2 * s12) / det, (sy2 * s11 - sy1 * s12) / det
        if a >= 0 and b >= 0:
            return a, b
    # one of them at zero: the better of the two one-term fits (collinear rows: the first term)
    a = _ratio([r[0] for r in rows], [r[1] for r in rows])
    b = _ratio([r[0] for r in rows], [r[2] for r in rows])
    err_a = sum((r[0] - a * r[1]) ** 2 for r in rows)
    err_b = sum((r[0] - b * r[2]) ** 2 for r in rows)
    return (a, 0.0) if err_a <= err_b * (1 + 1e-12) else (0.0, b)


# ------------------------------------------------------------------------------------------------ a consumer mix
@dataclass(frozen=True)
class MixPrediction:
    """A broker of ``line`` serving ``mb_per_s`` of a log to consumers of several generations.

    ``cpu_cores``: predicted broker CPU seconds per second; ``cpu_s_per_gb``: per client magic, per GB served;
    ``memory_bytes``: the most one request holds (eager: a whole converted response; lazy: one chunk);
    ``refused``: client magics the line answers with no data (4.x closes the connection of a Fetch below v4,
    KIP-896).
    """

    cpu_cores: float
    cpu_s_per_gb: Mapping[int, float]
    memory_bytes: int
    refused: tuple[int, ...]
    line: str
    measured_on: str


def predict_mix(log, *, line: str, shares: Mapping[int, float], mb_per_s: float, table: CostTable | None = None,
                max_bytes: int = 1 << 20) -> MixPrediction:
    """Broker CPU and memory for consumers reading ``log`` at ``mb_per_s`` in total, ``shares`` of it by clients
    reading up to each magic (``{0: 0.3, 1: 0.3, 2: 0.4}``: 0.9 / 0.10 / 0.11+ consumers; Fetch v1 / v3 / the
    line's newest), each generation's cost from :func:`consume` and :func:`predict`."""
    from ..broker.fetch import LATEST_FETCH_VERSION, fetch_version_for_magic

    line = kafka_lines.check_line(line)
    total = sum(shares.values())
    if total <= 0 or any(v < 0 for v in shares.values()) or not set(shares) <= {0, 1, 2}:
        raise ConfigError("shares: non-negative weights of client magics 0, 1 and 2, not all zero")
    t = table or load_table()
    newest = min(LATEST_FETCH_VERSION, kafka_lines.value("fetch.max_version", line))
    per_gb: dict[int, float] = {}
    refused = []
    memory = 0
    cores = 0.0
    for magic, share in sorted(shares.items()):
        if share == 0:
            continue
        version = newest if magic == 2 else fetch_version_for_magic(magic)
        if version < kafka_lines.value("fetch.min_version", line):
            refused.append(magic)
            continue
        c = consume(log, line=line, fetch_version=version, max_bytes=max_bytes)
        p = predict(c.counts, line, t)
        per_gb[magic] = p.cpu_s / max(c.counts.bytes_out, 1) * 1e9
        cores += share / total * mb_per_s * 1e6 * p.cpu_s / max(c.counts.bytes_out, 1)
        held = c.counts.max_chunk_bytes if c.counts.conversion == "lazy" else (
            c.counts.converted_bytes // max(c.requests, 1))
        memory = max(memory, held)
    return MixPrediction(cores, per_gb, memory, tuple(refused), line, t.for_line(line).release)
