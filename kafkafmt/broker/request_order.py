"""The order in which a broker visits the partitions of one Produce request when it records their conversion stats.

``KafkaApis.updateRecordConversionStats`` runs once per partition, in the order of the map
``ReplicaManager.appendRecords`` hands to the produce's ``processingStatsCallback``; until Kafka 4.3 it *assigns*
the request's ``temporaryMemoryBytes`` (and ``messageConversionsTimeNanos``), so the partition visited last is the
one ``TemporaryMemoryBytes,request=Produce`` shows (KAFKA-15894, row ``metrics.multi_partition`` of
:mod:`kafkafmt.kafka_lines`).  That order is the hash order of the Scala (and, before 2.8, Java) maps the request
passes through, so it depends on the Scala build of the broker (``kafka_2.12`` or ``kafka_2.13``), not only on
the release:

* **1.0 - 2.1**: ``ProduceRequest`` parses the partitions into a ``java.util.HashMap``; KafkaApis copies them in
  that order into a ``scala.collection.mutable.HashMap`` (``authorizedRequestInfo``);
  ``ReplicaManager.appendToLocalLog`` maps it through ``scala.collection.Map``'s builder: on Scala 2.11/2.12 an
  immutable ``Map1`` … ``Map4`` (insertion order kept) or, from 5 partitions, an immutable ``HashMap`` (a hash
  trie).
* **2.8** (``ProduceRequestData``): KafkaApis copies the partitions in the request's order; the rest as above.
* **Scala 2.13 builds** (3.x, 4.x; 2.8's ``kafka_2.13`` too): every map on the way is a Scala 2.13
  ``mutable.HashMap`` (``MapOps.map`` keeps the runtime class), whose order depends on the hashes alone.

Hash codes are Java's: ``TopicPartition.hashCode`` = ``31 * (31 + partition) + topic.hashCode()``.  The
functions below emulate the collections of those Scala and Java versions (their sources:
``scala.collection.mutable.HashTable`` and ``immutable.HashMap`` of 2.12, ``mutable.HashMap`` of 2.13,
``java.util.HashMap``), for at most 12 partitions (no table resize).

    visit_order([("a", 0), ("a", 1), ("b", 0)], "2.8")   # the partitions in the order the broker visits them
"""
from __future__ import annotations

from .. import kafka_lines

__all__ = ["visit_order", "scala_build", "topic_partition_hash", "MAX_PARTITIONS"]

#: the partitions the emulation covers: the maps' default 16 buckets hold 12 entries before they grow
MAX_PARTITIONS = 12
_M32 = 0xFFFFFFFF


def _i32(v: int) -> int:
    v &= _M32
    return v - (1 << 32) if v & 0x80000000 else v


def _u32(v: int) -> int:
    return v & _M32


def _java_string_hash(s: str) -> int:
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):  # UTF-16 code units, as String.hashCode
        h = _i32(31 * h + int.from_bytes(data[i:i + 2], "big"))
    return h


def topic_partition_hash(topic: str, partition: int) -> int:
    """``org.apache.kafka.common.TopicPartition.hashCode`` (1.0 … 4.4)."""
    return _i32(31 * (31 + partition) + _java_string_hash(topic))


def scala_build(line: str) -> str:
    """The Scala build whose order kafkafmt follows by default on ``line``: ``kafka_2.12`` before 3.0 (the builds
    kafkafmt's live checks run for 1.0.2 … 2.8.2), ``kafka_2.13`` from 3.0 (3.9.2, and 4.x has no other)."""
    return "2.13" if kafka_lines.line_at_least(kafka_lines.check_line(line), "3.0") else "2.12"


def _java_hashmap(keys, hashes):
    """``java.util.HashMap`` (16 buckets): bucket ``(h ^ h >>> 16) & 15`` ascending, insertion order within."""
    return sorted(keys, key=lambda k: ((hashes[k] ^ (_u32(hashes[k]) >> 16)) & 15, keys.index(k)))


def _byteswap32(v: int) -> int:
    hc = _u32(v * 0x9E3775CD)
    hc = int.from_bytes(hc.to_bytes(4, "big"), "little")
    return _u32(hc * 0x9E3775CD)


def _scala212_mutable(keys, hashes):
    """Scala 2.12 ``mutable.HashMap`` (``HashTable``, 16 buckets, seed 4): bucket ``rotr(byteswap32(h), 4) >>> 28``,
    visited from the last populated bucket down; each bucket newest first."""
    def bucket(k):
        i = _byteswap32(hashes[k])
        return _u32((i >> 4) | (i << 28)) >> 28
    return sorted(keys, key=lambda k: (-bucket(k), -keys.index(k)))


def _scala212_immutable(keys, hashes):
    """Scala 2.12 ``collection.Map``'s builder: ``Map1`` … ``Map4`` keep the insertion order; a ``HashTrieMap``
    visits 5-bit slices of the improved hash, lowest first."""
    if len(keys) <= 4:
        return list(keys)

    def improve(h):
        h = _u32(h + ~_u32(h << 9))
        h ^= h >> 14
        h = _u32(h + (h << 4))
        return h ^ (h >> 10)
    return sorted(keys, key=lambda k: [(improve(hashes[k]) >> (5 * i)) & 31 for i in range(7)])


def _scala213_mutable(keys, hashes):
    """Scala 2.13 ``mutable.HashMap`` (16 buckets): improved hash ``h ^ h >>> 16``, bucket ascending, ascending hash
    (signed) within a bucket."""
    def improved(k):
        return _i32(hashes[k] ^ (_u32(hashes[k]) >> 16))
    return sorted(keys, key=lambda k: (improved(k) & 15, improved(k), keys.index(k)))


def visit_order(partitions, line: str, scala: str | None = None) -> list:
    """``partitions`` (``(topic, partition)`` pairs in the request's order) in the order the broker of ``line``
    built for Scala ``scala`` (``"2.11"``, ``"2.12"`` or ``"2.13"``; default :func:`scala_build`) records their
    conversion stats.  A :class:`~kafkafmt.errors.ConfigError` past :data:`MAX_PARTITIONS`."""
    from ..config import ConfigError
    keys = [tuple(p) for p in partitions]
    if len(set(keys)) != len(keys):
        raise ConfigError("a Produce request names each partition once")
    if len(keys) > MAX_PARTITIONS:
        raise ConfigError(f"the broker's visiting order is modelled for at most {MAX_PARTITIONS} partitions "
                          f"(its maps' 16 buckets grow past that), not {len(keys)}")
    line = kafka_lines.check_line(line)
    scala = scala or scala_build(line)
    hashes = {k: topic_partition_hash(*k) for k in keys}
    if scala == "2.13":
        return _scala213_mutable(keys, hashes)
    if scala not in ("2.11", "2.12"):
        raise ConfigError(f"Kafka was built for Scala 2.11, 2.12 and 2.13, not {scala!r}")
    inserted = keys if kafka_lines.line_at_least(line, "2.8") else _java_hashmap(keys, hashes)
    return _scala212_immutable(_scala212_mutable(inserted, hashes), hashes)
