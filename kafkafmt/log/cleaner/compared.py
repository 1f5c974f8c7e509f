"""Which real cleaners kafkafmt's cleaner is compared with, on which workloads, and so which rows of
:mod:`kafkafmt.kafka_lines` each comparison checks.

The tables here are the ones the comparisons run: ``tests/history/test_old_cleaners_vs_kafka.py`` (each old
release's own ``kafka.log.Log`` and cleaner thread, ``conformance/old-cleaner/OldCleaner.java``) takes
:data:`WORKLOADS` and :data:`RELEASES`, ``tests/history/test_old_cleaner_codecs.py`` takes :data:`LZ4_RELEASES` and
:data:`FOREIGN_GZIP_RELEASES`,
``tests/history/test_holes_0_10_vs_kafka.py`` :data:`HOLES_RELEASE`; Kafka 3.9.2's and 4.4.0's cleaners (the jar
oracles of ``tests/log/test_log_cleaner_vs_kafka.py`` and ``test_log_cleaner44_vs_kafka.py``) run every record
version and codec, transactions and small offset maps (:data:`JAR_RELEASES`).  :func:`checked_on` derives from
them the real releases on which a row's value was compared byte for byte: a release checks a row when one of its
workloads holds the data the row decides about (:func:`exercises`).
"""
from __future__ import annotations

from ...kafka_lines import check_line, order, rows
from .table import BYTES_PER_ENTRY

__all__ = ["WORKLOADS", "RELEASES", "LZ4_RELEASES", "FOREIGN_GZIP_RELEASES", "HOLES_RELEASE", "JAR_RELEASES",
           "CLEANER_KEYS_SHOWN", "exercises", "checked_on", "comparisons"]

#: workload name -> (record version(s) or "txn", codec, distinct keys, dedupe buffer bytes[, topic settings])
#: (the workloads of tests/history/test_old_cleaners_vs_kafka.py: 60 appends of 3 records, 1 in 6 a tombstone)
WORKLOADS = {
    "v1-format-0.10.2": (1, "none", 9, 1 << 20, {"message.format.version": "0.10.2"}),  # leader-epoch-checkpoint
    # KAFKA-4298 on 0.10.0: a wrapper rebuilt in the topic's format, not its own, fails
    "v0-gzip-format-0.9.0": (0, "gzip", 9, 1 << 20, {"message.format.version": "0.9.0"}),
    "v1-gzip-format-0.9.0": (1, "gzip", 9, 1 << 20, {"message.format.version": "0.9.0"}),
    "v0": (0, "none", 9, 1 << 20),
    "v0-gzip": (0, "gzip", 9, 1 << 20),
    "v1": (1, "none", 9, 1 << 20),
    "v1-gzip": (1, "gzip", 9, 1 << 20),
    "v0-small-map": (0, "none", 150, 960),  # a map of 36 keys: several partial passes
    "v1-small-map": (1, "none", 150, 960),
    "v2": (2, "none", 9, 1 << 20),
    "v2-gzip": (2, "gzip", 9, 1 << 20),
    "v2-small-map": (2, "none", 150, 960),
    "v0-snappy": (0, "snappy", 9, 1 << 20),
    "v1-snappy": (1, "snappy", 9, 1 << 20),
    "v2-snappy": (2, "snappy", 9, 1 << 20),
    "v2-zstd": (2, "zstd", 9, 1 << 20),
    # LogAppendTime topics: what the leader stamped (KIP-32); compact,delete: retention beside compaction (KIP-71)
    "v1-log-append-time": (1, "none", 9, 1 << 20, {"message.timestamp.type": "LogAppendTime"}),
    "v1-gzip-log-append-time": (1, "gzip", 9, 1 << 20, {"message.timestamp.type": "LogAppendTime"}),
    "v2-log-append-time": (2, "none", 9, 1 << 20, {"message.timestamp.type": "LogAppendTime"}),
    "v2-gzip-log-append-time": (2, "gzip", 9, 1 << 20, {"message.timestamp.type": "LogAppendTime"}),
    "v1-compact-delete": (1, "none", 9, 1 << 20, {"cleanup.policy": "compact,delete", "retention.bytes": "3000"}),
    # time retention deleting every segment (pass 2): not yet byte-identical on any release compared (the
    # segment rolled at the log end: Kafka's mtime is the file system's clock; 0.11 and 1.1 keep the emptied
    # segments and drop the active one), so in no release's list below
    "v1-gzip-compact-delete": (1, "gzip", 9, 1 << 20, {"cleanup.policy": "compact,delete",
                                                        "retention.ms": "5000000"}),
    "v2-compact-delete": (2, "none", 9, 1 << 20, {"cleanup.policy": "compact,delete", "retention.bytes": "3000"}),
    "v2-gzip-compact-delete": (2, "gzip", 9, 1 << 20, {"cleanup.policy": "compact,delete",
                                                        "retention.ms": "5000000"}),
    "v0-v1": ((0, 1), "none", 9, 1 << 20),  # v0 then v1 in one partition
    "v0-v1-gzip": ((0, 1), "gzip", 9, 1 << 20),
    "v0-v1-v2": ((0, 1, 2), "none", 9, 1 << 20),
    "v0-v1-v2-gzip": ((0, 1, 2), "gzip", 9, 1 << 20),
    "txn": ("txn", "none", 8, 1 << 20),
    "txn-gzip": ("txn", "gzip", 8, 1 << 20),
    "v0-tiny-map": (0, "none", 150, 480),  # 18 keys: 0.9 refuses a segment, 0.10.0 cannot map the first
    "v1-tiny-map": (1, "none", 150, 480),
    # tests/history/test_old_cleaner_codecs.py: 30 lz4 sets of 8 records over 200 keys, one pass
    "lz4": ("release", "lz4", 200, 1 << 20),
    # tests/history/test_old_cleaner_codecs.py: 12 v0 gzip sets of 4 records over 30 keys, compressed by Python's
    # gzip (not the JDK's GZIPOutputStream), some kept whole
    "foreign-gzip": (0, "gzip", 30, 1 << 20),
    # tests/history/test_holes_0_10_vs_kafka.py: notebook 09's 24 v1 gzip wrappers of 6 records over 12 keys
    "holes": (1, "gzip", 12, 1 << 20, {"message.format.version": "0.10.2"}),
    # the jar oracles: every record version and codec, transactions, small maps (tests/log)
    "every version and codec": ((0, 1, 2, "txn"), ("none", "gzip", "snappy", "lz4", "zstd"), 150, 960),
}

#: release -> (line, the workloads of :data:`WORKLOADS` byte-identical to its cleaner, pass after pass)
RELEASES = {
    "0.9.0.1": ("0.9", ("v0", "v0-gzip", "v0-small-map", "v0-tiny-map", "v0-snappy")),
    "0.10.0.1": ("0.10.0", ("v0", "v1", "v0-small-map", "v1-small-map", "v1-tiny-map", "v0-gzip", "v1-gzip",
                            "v0-gzip-format-0.9.0", "v1-gzip-format-0.9.0", "v1-snappy", "v1-log-append-time",
                            "v1-gzip-log-append-time")),
    "0.10.1.1": ("0.10.1", ("v1", "v0-gzip", "v1-gzip", "v1-small-map", "v1-tiny-map", "v0-gzip-format-0.9.0",
                            "v0-snappy", "v1-snappy", "v1-log-append-time", "v1-gzip-log-append-time",
                            "v1-compact-delete")),
    "0.10.2.2": ("0.10.2", ("v0", "v1", "v1-gzip", "v0-gzip", "v0-small-map", "v1-small-map", "v1-tiny-map", "v0-v1",
                            "v0-v1-gzip", "v0-snappy", "v1-snappy", "v1-log-append-time", "v1-gzip-log-append-time",
                            "v1-compact-delete")),
    "0.11.0.3": ("0.11", ("v0", "v1", "v2", "v2-gzip", "v2-small-map", "v1-format-0.10.2", "v0-v1-v2",
                          "v0-v1-v2-gzip", "txn", "txn-gzip", "v0-snappy", "v1-snappy", "v2-snappy",
                          "v1-gzip-log-append-time", "v2-log-append-time", "v2-gzip-log-append-time",
                          "v2-compact-delete")),
    "1.1.1": ("1.1", ("v0", "v1-gzip", "v2", "v2-gzip", "v2-small-map", "v1-format-0.10.2", "v0-v1-v2",
                      "v0-v1-v2-gzip", "txn", "txn-gzip", "v0-snappy", "v1-snappy", "v2-snappy",
                      "v1-gzip-log-append-time", "v2-log-append-time", "v2-gzip-log-append-time", "v2-compact-delete")),
    "1.0.2": ("1.0", ("v2", "v2-small-map", "v1-format-0.10.2", "v0-v1-v2-gzip", "txn")),
    "2.0.1": ("2.0", ("v2", "v2-small-map", "v1-format-0.10.2", "v0-v1-v2-gzip", "txn")),
    "2.1.1": ("2.1", ("v2", "v2-small-map", "v1-format-0.10.2", "v0-v1-v2-gzip", "txn", "v2-snappy", "v2-zstd")),
    "2.8.2": ("2.8", ("v0", "v1-gzip", "v2", "v2-gzip", "v2-small-map", "v1-format-0.10.2", "v0-v1-v2",
                      "v0-v1-v2-gzip", "txn", "txn-gzip", "v0-snappy", "v1-snappy", "v2-snappy", "v2-zstd",
                      "v1-gzip-log-append-time", "v2-log-append-time", "v2-gzip-log-append-time", "v2-compact-delete")),
}

#: the ``lz4`` workload, release -> (line, record version its lz4 sets are written in)
LZ4_RELEASES = {"0.9.0.1": ("0.9", 0), "0.10.0.1": ("0.10.0", 1), "0.10.2.2": ("0.10.2", 1), "1.1.1": ("1.1", 2)}

#: the ``foreign-gzip`` workload, release -> line
FOREIGN_GZIP_RELEASES = {"0.9.0.1": "0.9", "0.10.0.1": "0.10.0"}

#: the release whose cleaner's result of the ``holes`` workload is kept as package data
#: (``kafkafmt/viz/data/holes-0.10.2.2.json``, notebook 09)
HOLES_RELEASE = "0.10.2.2"

#: the releases whose jars are the oracles of tests/log (every workload of ``every version and codec``)
JAR_RELEASES = {"3.9.2": "3.9", "4.4.0": "4.4"}

#: the rows notebook 09's table shows: the cleaner's, the leader epoch cache's and the codecs'
CLEANER_KEYS_SHOWN = ("cleaner.map_reach", "cleaner.keep_whole_wrapper", "cleaner.legacy_rebuild_magic",
                      "cleaner.time_index_offset", "cleaner.txn_metadata_scope", "cleaner.delete_horizon",
                      "cleaner.retain_last_batch",
                      "cleaner.legacy_to_v2", "log.leader_epoch_cache", "codec.gzip_stream", "codec.lz4_java",
                      "codec.snappy_java", "codec.snappy_block", "codec.zstd_jni")


def _as_tuple(x) -> tuple:
    return x if isinstance(x, tuple) else (x,)


def exercises(workload: str, key: str, line: str) -> bool:
    """Whether ``workload`` cleaned on ``line`` holds the data row ``key`` decides about: compressed v0/v1 wrappers
    (their rebuilt magic, KAFKA-4298; on lines with a time index, its entry for the largest timestamp, KAFKA-4390);
    v0/v1 data (the leader epoch cache, KIP-101; the rewrite as v2, KAFKA-13093); v2 tombstones (KIP-534);
    transactions (KAFKA-8335); more keys than the offset map holds (KAFKA-3587, KAFKA-3894); a codec's bytes
    (the codec rows); v2 batches a pass may empty (KAFKA-17076)."""
    magic, codecs, keys, dedupe = WORKLOADS[workload][:4]
    magics = set(_as_tuple(magic))
    if "release" in magics:
        magics = {LZ4_RELEASES[r][1] for r in LZ4_RELEASES if LZ4_RELEASES[r][0] == line} or {2}
    codecs = set(_as_tuple(codecs))
    legacy = bool(magics & {0, 1})
    v2 = bool(magics & {2, "txn"})
    compressed = codecs - {"none"}
    small_map = int(dedupe // BYTES_PER_ENTRY * 0.9) < keys
    return {
        "cleaner.map_reach": small_map,
        "cleaner.legacy_rebuild_magic": legacy and bool(compressed),
        "cleaner.keep_whole_wrapper": legacy and bool(compressed),
        "cleaner.time_index_offset": 1 in magics and bool(compressed) and line not in ("0.9", "0.10.0"),
        "cleaner.txn_metadata_scope": "txn" in magics,
        "cleaner.delete_horizon": v2,
        "cleaner.retain_last_batch": v2,
        "cleaner.legacy_to_v2": legacy,
        "log.leader_epoch_cache": legacy,
        "codec.gzip_stream": "gzip" in codecs,
        "codec.lz4_java": "lz4" in codecs,
        "codec.snappy_java": "snappy" in codecs,
        "codec.snappy_block": "snappy" in codecs,
        "codec.zstd_jni": "zstd" in codecs,
    }[key]


def comparisons() -> list[tuple[str, str, str]]:
    """Every ``(release, line, workload)`` compared byte for byte with the release's own cleaner."""
    out = [(r, line, w) for r, (line, ws) in RELEASES.items() for w in ws]
    out += [(r, line, "lz4") for r, (line, _) in LZ4_RELEASES.items()]
    out += [(r, line, "foreign-gzip") for r, line in FOREIGN_GZIP_RELEASES.items()]
    out.append((HOLES_RELEASE, check_line(HOLES_RELEASE), "holes"))
    out += [(r, line, "every version and codec") for r, line in JAR_RELEASES.items()]
    return out


def checked_on(key: str) -> tuple[str, ...]:
    """The real releases whose cleaner was compared byte for byte on data row ``key`` decides about, oldest
    first (a row of :mod:`kafkafmt.kafka_lines`; a ConfigError for an unknown key)."""
    rows(key)
    found = {r for r, line, w in comparisons() if exercises(w, key, line)}
    return tuple(sorted(found, key=lambda r: (order(r), r)))
