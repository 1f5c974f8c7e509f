"""Python client for the Kafka 4.4 oracle (conformance/oracle-4.4/KafkaOracle44.java on Kafka 4.4.0's jars).

The same line protocol as tests/kafka_oracle.py (one JSON request per line, bytes as hex), on the class
path of ``make -C conformance oracle-4.4`` (``conformance/.cache/lib-4.4`` + ``classes-4.4``), apart from
3.9.2's.  ``oracle44_or_skip()`` skips locally when it is not built and fails under CI=true.
"""
from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import kafka_oracle
from ci_mode import skip_or_fail

REPO_ROOT = Path(__file__).resolve().parents[2]
CACHE = REPO_ROOT / "conformance" / ".cache"
LIB44 = CACHE / "lib-4.4"
CLASSES44 = CACHE / "classes-4.4"
MAIN_CLASS = "KafkaOracle44"


class KafkaOracle44(kafka_oracle.KafkaOracle):
    """One JVM on Kafka 4.4.0's jars; ``request``/``call``/``close`` as :class:`kafka_oracle.KafkaOracle`."""

    def __init__(self, java: str | None = None):  # noqa: D107 - the parent's plumbing, another class path
        java = java or os.environ.get("KAFKA_ORACLE_JAVA") or "java"
        cmd = [java, "-XX:+UseSerialGC", "-Xss4m", "-Xmx256m", "-cp", f"{CLASSES44}{os.pathsep}{LIB44 / '*'}",
               MAIN_CLASS]
        self._stderr = tempfile.TemporaryFile(prefix="kafka-oracle44-", suffix=".stderr")
        self._lock = threading.Lock()
        self._proc = subprocess.Popen(cmd, cwd=REPO_ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=self._stderr, text=True, encoding="utf-8", bufsize=1)
        self.requests_served = 0


def oracle44_missing_reason() -> str | None:
    if not (CLASSES44 / f"{MAIN_CLASS}.class").is_file() or not (LIB44 / "kafka-clients-4.4.0.jar").is_file():
        return "Kafka 4.4.0 oracle not built: run `make -C conformance oracle-4.4` (Java 17 + Maven)"
    if shutil.which(os.environ.get("KAFKA_ORACLE_JAVA") or "java") is None:
        return "Java 17 is not on PATH (needed by the Kafka 4.4.0 oracle)"
    return None


_shared: KafkaOracle44 | None = None


def oracle44_or_skip() -> KafkaOracle44:
    global _shared
    reason = oracle44_missing_reason()
    if reason:
        skip_or_fail(reason)
    if _shared is None or not _shared.alive:
        _shared = KafkaOracle44()
        version = _shared.call("ping")["kafkaVersion"]
        assert version == "4.4.0", version
    return _shared


def _close() -> None:
    if _shared is not None:
        _shared.close()


atexit.register(_close)
