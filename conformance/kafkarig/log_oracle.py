"""Python client for conformance/oracle-log/KafkaLogOracle.java: Kafka 3.9's own UnifiedLog, LogSegment and kafka-dump-log.

The Java driver is compiled on first use (javac, into a cache directory keyed by the source hash)
against the jars ``make oracle`` fetches into ``conformance/.cache/lib``.  Without Java or the jars,
:func:`log_oracle_or_skip` skips the test (a failure when ``CI=true``, like the records oracle).
"""
from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from .jsonl_jvm import JsonLinesJvm
from .paths import CONFORMANCE, LIB_DIR as LIB

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


def _compile() -> Path:
    digest = hashlib.sha256(SOURCE.read_bytes() + SHARED.read_bytes()).hexdigest()[:16]
    out = Path(tempfile.gettempdir()) / f"kafkafmt-log-oracle-{digest}"
    stamp = out / ".complete"
    if not stamp.exists():
        tmp = Path(tempfile.mkdtemp(prefix="kafkafmt-log-oracle-build-"))
        proc = subprocess.run(["javac", "--release", "17", "-encoding", "UTF-8", "-nowarn", "-cp", f"{LIB}/*",
                               "-d", str(tmp), str(SOURCE), str(SHARED)], capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"javac failed:\n{proc.stderr}")
        (tmp / ".complete").touch()
        try:
            os.replace(tmp, out)
        except OSError:  # another process won the race
            shutil.rmtree(tmp, ignore_errors=True)
    return out


class KafkaLogOracle(JsonLinesJvm):
    """One long-running JVM; ``call(op, **fields)`` returns the response or raises LogOracleError."""

    def __init__(self):
        classes = _compile()
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
