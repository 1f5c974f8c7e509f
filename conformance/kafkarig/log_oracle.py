"""Python client for conformance/oracle-log/KafkaLogOracle.java: Kafka 3.9's own UnifiedLog, LogSegment and kafka-dump-log.

The Java driver is compiled on first use (:mod:`kafkarig.javac`: a directory keyed by the sources' hash)
against the jars ``make oracle`` fetches into ``conformance/.cache/lib``.  Without Java or the jars,
:func:`log_oracle_or_skip` skips the test (a failure when ``CI=true``, like the records oracle).
"""
from __future__ import annotations

import atexit
import shutil

from .javac import compiled
from .jsonl_jvm import JsonLinesJvm
from .paths import CONFORMANCE
from .paths import LIB_DIR as LIB

SOURCE = CONFORMANCE / "oracle-log" / "KafkaLogOracle.java"
#: the mock clock the cleaner oracles share (its MutableTime and Done serve here too)
SHARED = CONFORMANCE / "oracle-shared" / "CleanerClock.java"


class LogOracleError(Exception):
    def __init__(self, response: dict):
        self.response = response
        super().__init__(f"{response.get('error')}: {response.get('message')}")

    @property
    def error(self) -> str:
        return self.response.get("error", "")


def _missing_reason() -> str | None:
    if shutil.which("java") is None or shutil.which("javac") is None:
        return "Java 17 (java + javac) not found"
    if not LIB.is_dir() or not list(LIB.glob("kafka_2.13-*.jar")):
        return "Apache Kafka jars not fetched: run `make oracle`"
    return None


class KafkaLogOracle(JsonLinesJvm):
    """One long-running JVM; ``call(op, **fields)`` returns the response or raises LogOracleError."""

    def __init__(self):
        classes = compiled("log-oracle", [SOURCE, SHARED], LIB)
        super().__init__(["java", "-Xshare:auto", "-cp", f"{classes}:{LIB}/*", "KafkaLogOracle"], "Kafka log oracle")
        self.call("ping")

    def request(self, op: str, **fields) -> dict:
        if isinstance(fields.get("records"), (bytes, bytearray)):
            fields["records"] = bytes(fields["records"]).hex()
        return super().request(op, **fields)

    def call(self, op: str, **fields) -> dict:
        resp = self.request(op, **fields)
        if not resp.get("ok"):
            raise LogOracleError(resp)
        return resp

    def dump(self, *args: str) -> tuple[list[str], list[str], str | None]:
        """Run kafka-dump-log (``DumpLogSegments.main``) in the JVM; (stdout lines, stderr lines, exception)."""
        r = self.call("dump", args=list(args))
        return r["stdout"].splitlines(), r["stderr"].splitlines(), r["exception"]


_shared: KafkaLogOracle | None = None


def log_oracle_or_skip() -> KafkaLogOracle:
    from ci_mode import skip_or_fail  # tests/ci_mode.py, on the path under pytest

    global _shared
    reason = _missing_reason()
    if reason is not None:
        skip_or_fail(f"Kafka log oracle unavailable: {reason}")
    if _shared is None:
        _shared = KafkaLogOracle()
        atexit.register(_shared.close)
    return _shared
