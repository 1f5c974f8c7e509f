"""Python client for conformance/oracle-log/KafkaLogOracle.java: Kafka 3.9's own UnifiedLog, LogSegment and kafka-dump-log.

The Java driver is compiled on first use (:mod:`kafkarig.javac`: a directory keyed by the sources' hash)
against the jars ``make oracle`` fetches into ``conformance/.cache/lib``.  Without Java or the jars,
:func:`log_oracle_or_skip` skips the test (a failure when ``CI=true``, like the records oracle).
"""
from __future__ import annotations

import shutil

from .javac import compiled
from .jsonl_jvm import JsonLinesJvm, session_jvm_or_skip
from .paths import CONFORMANCE
from .paths import LIB_DIR as LIB

SOURCE = CONFORMANCE / "oracle-log" / "KafkaLogOracle.java"
#: what it shares with the other oracles: the mock clock (its MutableTime and Done), the line protocol and the
#: answers about a log
SHARED = [CONFORMANCE / "oracle-shared" / name for name in ("CleanerClock.java", "JsonLines.java", "LogAnswers.java")]


def _missing_reason() -> str | None:
    if shutil.which("java") is None or shutil.which("javac") is None:
        return "Java 17 (java + javac) not found"
    if not LIB.is_dir() or not list(LIB.glob("kafka_2.13-*.jar")):
        return "Apache Kafka jars not fetched: run `make oracle`"
    return None


class KafkaLogOracle(JsonLinesJvm):
    """One long-running JVM; ``call(op, **fields)`` returns the response or raises
    :class:`~kafkarig.jsonl_jvm.OracleError`."""

    def __init__(self):
        classes = compiled("log-oracle", [SOURCE, *SHARED], LIB)
        super().__init__(["java", "-Xshare:auto", "-cp", f"{classes}:{LIB}/*", "KafkaLogOracle"], "Kafka log oracle")
        self.call("ping")

    def request(self, op: str, **fields) -> dict:
        if isinstance(fields.get("records"), (bytes, bytearray)):
            fields["records"] = bytes(fields["records"]).hex()
        return super().request(op, **fields)

    def dump(self, *args: str) -> tuple[list[str], list[str], str | None]:
        """Run kafka-dump-log (``DumpLogSegments.main``) in the JVM; (stdout lines, stderr lines, exception)."""
        r = self.call("dump", args=list(args))
        return r["stdout"].splitlines(), r["stderr"].splitlines(), r["exception"]


def log_oracle_or_skip() -> KafkaLogOracle:
    """The session's JVM running Kafka 3.9.2's log layer."""
    return session_jvm_or_skip("Kafka log oracle", _missing_reason, KafkaLogOracle)
