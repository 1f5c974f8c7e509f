"""Which request versions and message formats a Kafka generation speaks (the cluster model's table).

* :func:`client_api_versions`: the newest ProduceRequest / FetchRequest a client or broker of a
  release knows (``ApiKeys`` / the Produce and Fetch JSON schemas of each release): 0.9 → Produce v1 /
  Fetch v1, 0.10.0 → v2 / v2 (KIP-32: "ProducerRequest V2 and FetchRequest V2"), 0.10.1 → v2 / v3,
  0.11 → v3 / v5 (KIP-98, format v2), 1.0 → v5 / v6, 2.1 → v7 / v10 (zstd, KIP-110), 3.9 → v11 / v17.
* :func:`replica_fetch_version`: the FetchRequest version a broker sends its leaders for replication,
  decided by ``inter.broker.protocol.version`` (``MetadataVersion.fetchRequestVersion``).
* :func:`magic_for_produce_version`: the message format a ProduceRequest carries (v0-1 → magic 0,
  v2 → magic 1 (KIP-32), v3+ → magic 2 (KIP-98)).
* Kafka 4.x code generations (:func:`kafka4_line`, the 4.4 line of :mod:`kafkafmt.kafka_lines`): KRaft only,
  no ``inter.broker.protocol.version`` nor ``message.format.version``; a 4.4 broker speaks Produce up to
  v13 and Fetch up to v18 (``ApiKeys`` of 4.4.0) and answers none below Produce v3 / Fetch v4 (KIP-896).
* :func:`release_line`: the Kafka line (:data:`kafkafmt.kafka_lines.KAFKA_LINES`) whose rules a broker or
  client of a code generation follows ("0.10.0" for "0.10.0" or "0.10.0.1"); :func:`without_ibp`: a line
  with no ``inter.broker.protocol.version`` (4.x, KRaft).
* :func:`normalize_api_version`: the seeds' version names → Kafka's ``MetadataVersion`` names.  Seed
  000 calls the internal version "0.9.0-1"; Kafka released it as ``0.10.0-IV0`` (the first
  ``MetadataVersion`` with record version v1 and FetchRequest v2).
"""
from __future__ import annotations

from .. import kafka_lines
from ..broker.validator import magic_for_produce_version  # noqa: F401 (the scenarios spell it here too)
from ..config import metadata_version_index, record_version
from ..errors import ConfigError

__all__ = ["client_api_versions", "replica_fetch_version", "magic_for_produce_version", "normalize_api_version",
           "SEED_API_VERSION_ALIASES", "code_record_version", "kafka4_line", "KAFKA4_API", "release_line",
           "without_ibp"]

#: Kafka 4.x code generations: line → (newest ProduceRequest, newest FetchRequest) (``ApiKeys`` of 4.4.0)
KAFKA4_API = {"4.4": (kafka_lines.value("produce.max_version", "4.4"), kafka_lines.value("fetch.max_version", "4.4"))}


def kafka4_line(version) -> str | None:
    """The Kafka 4.x line a code generation belongs to ("4.4" for "4.4" or "4.4.0"), else None."""
    s = str(version).strip()
    if not s.startswith("4."):
        return None
    try:
        line = kafka_lines.check_line(s)
    except ConfigError:
        return None
    return line if line in KAFKA4_API else None

def release_line(version) -> str:
    """The Kafka line a code generation runs: its own line ("0.9" for "0.9.0", "0.10.0" for "0.10.0-IV0" or
    "0.10.0.1", "4.4" for "4.4.0"); a release between two modelled lines runs the older one's rows."""
    line = kafka4_line(version)
    if line is not None:
        return line
    rel = normalize_api_version(version).split("-IV")[0]
    try:
        return kafka_lines.check_line(rel)
    except ConfigError:
        older = [x for x in kafka_lines.KAFKA_LINES if kafka_lines.order(x) <= kafka_lines.order(rel)]
        if not older:
            raise ConfigError(f"Kafka {version}: kafkafmt models the lines {', '.join(kafka_lines.KAFKA_LINES)}") \
                from None
        return older[-1]


def without_ibp(line: str) -> bool:
    """Whether a broker of ``line`` has no ``inter.broker.protocol.version`` (4.x: KRaft's metadata.version),
    row ``broker.inter_broker_protocol`` of :mod:`kafkafmt.kafka_lines`."""
    return kafka_lines.value("broker.inter_broker_protocol", line) is None


#: seed 000's internal ApiVersion names → Kafka's MetadataVersion strings
SEED_API_VERSION_ALIASES = {"0.9.0-1": "0.10.0-IV0"}

# MetadataVersion.fetchRequestVersion (Kafka 3.9): first IBP → replica FetchRequest version
_REPLICA_FETCH = (
    ("0.9.0", 1), ("0.10.0-IV0", 2), ("0.10.1-IV1", 3), ("0.11.0-IV0", 4), ("0.11.0-IV1", 5), ("1.1-IV0", 7),
    ("2.0-IV1", 8), ("2.1-IV2", 10), ("2.3-IV1", 11), ("2.7-IV1", 12), ("3.1-IV0", 13), ("3.5-IV0", 14), ("3.5-IV1", 15),
    ("3.7-IV4", 16), ("3.9-IV0", 17),
)


def normalize_api_version(version) -> str:
    """A version string as Kafka's ``MetadataVersion.fromVersionString`` takes it (seed aliases mapped)."""
    s = str(version).strip()
    line = kafka4_line(s)
    if line is not None:
        return line
    s = SEED_API_VERSION_ALIASES.get(s, s)
    metadata_version_index(s)  # raises ConfigError for an unknown version
    return s


def _at_least(version: str, floor: str) -> bool:
    return metadata_version_index(version) >= metadata_version_index(floor)


def client_api_versions(release) -> tuple[int, int]:
    """``(newest ProduceRequest, newest FetchRequest)`` a client or broker of ``release`` speaks."""
    rel = normalize_api_version(release).split("-IV")[0]  # rows produce/fetch.max_version, by release
    return kafka_lines.value("produce.max_version", rel), kafka_lines.value("fetch.max_version", rel)


def replica_fetch_version(inter_broker_protocol_version) -> int:
    """``MetadataVersion.fetchRequestVersion``: the FetchRequest a follower sends under this IBP."""
    ibp = normalize_api_version(inter_broker_protocol_version)
    if ibp in KAFKA4_API:  # no IBP on 4.x: a broker's replica fetcher uses its newest Fetch
        return KAFKA4_API[ibp][1]
    best = 0
    for first, version in _REPLICA_FETCH:
        if _at_least(ibp, first):
            best = version
    return best


def code_record_version(release) -> int:
    """The newest message format a broker of ``release`` can write (its code's ``RecordVersion``)."""
    rel = normalize_api_version(release)
    return 2 if rel in KAFKA4_API else record_version(rel)
