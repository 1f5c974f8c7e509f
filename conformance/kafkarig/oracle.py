"""Python client for the Apache Kafka 3.9.2 record oracle (conformance/oracle/KafkaOracle.java).

The oracle is a long-running JVM that runs Apache Kafka 3.9's own classes (from the jars that
``make oracle`` fetches into ``conformance/.cache/lib``). It reads one JSON request per line
on stdin and writes one JSON response per line on stdout. Bytes travel as lowercase hex.

    from kafkarig.oracle import oracle_or_skip, to_hex, from_hex   # conformance/ is on sys.path under pytest
    oracle = oracle_or_skip()                       # shared for the whole pytest session
    resp = oracle.call("build", magic=2, records=[{"timestamp": 1, "key": b"k", "value": b"v"}])
    raw = from_hex(resp["bytes"])

``call`` turns any ``bytes``/``bytearray``/``memoryview`` in the request into hex (recursively),
returns the response dict when ``ok`` is true, and raises :class:`OracleError` (carrying the whole
response) when Kafka threw. ``request`` returns the response whatever ``ok`` says.
"""
from __future__ import annotations

import os
import shutil
from typing import Any

from .jsonl_jvm import JsonLinesJvm, JvmCrashed, OracleError, close_session_jvm, session_jvm
from .paths import CLASSES_DIR, LIB_DIR, REPO_ROOT

MAIN_CLASS = "KafkaOracle"

NOT_BUILT_REASON = "Apache Kafka oracle not built: run `make oracle` (needs Java 17 + Maven)"

__all__ = [
    "KafkaOracle",
    "OracleError",
    "OracleCrashed",
    "oracle_or_skip",
    "oracle_missing_reason",
    "shared_oracle",
    "close_shared_oracle",
    "to_hex",
    "from_hex",
    "to_wire",
]


# --------------------------------------------------------------------------- hex helpers

def to_hex(data: bytes | bytearray | memoryview | None) -> str | None:
    """bytes -> lowercase hex; ``None`` stays ``None``."""
    return None if data is None else bytes(data).hex()


def from_hex(text: str | None) -> bytes | None:
    """hex -> bytes; ``None`` stays ``None``."""
    return None if text is None else bytes.fromhex(text)


def to_wire(value: Any) -> Any:
    """Recursively replace bytes-like values by hex strings so the value can be sent as JSON."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, dict):
        return {k: to_wire(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_wire(v) for v in value]
    return value


# --------------------------------------------------------------------------- errors

class OracleCrashed(JvmCrashed):
    """The JVM went away or answered something that is not a protocol line."""


# --------------------------------------------------------------------------- client

class KafkaOracle(JsonLinesJvm):
    """One oracle JVM. Requests are served strictly in order; the client is thread-safe."""

    crash_error = OracleCrashed

    def __init__(self, java: str | None = None, jvm_args: list[str] | None = None, *, classpath: str | None = None,
                 main_class: str = MAIN_CLASS, name: str = "Kafka oracle"):
        java = java or os.environ.get("KAFKA_ORACLE_JAVA") or "java"
        classpath = classpath or f"{CLASSES_DIR}{os.pathsep}{LIB_DIR / '*'}"
        cmd = [java, *(jvm_args if jvm_args is not None else ["-XX:+UseSerialGC", "-Xss4m"]),
               "-cp", classpath, main_class]
        super().__init__(cmd, name, cwd=REPO_ROOT)

    def request(self, op: str, **fields: Any) -> dict:
        """Send one request (bytes as hex) and return the response dict, whether ``ok`` or not."""
        return super().request(op, **to_wire(fields))

    def __enter__(self) -> "KafkaOracle":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- thin wrappers (all fields optional unless noted; see conformance/README.md) ----------

    def ping(self) -> dict:
        return self.call("ping")

    def build(self, **fields: Any) -> dict:
        """MemoryRecordsBuilder -> {bytes, sizeInBytes, maxTimestamp, shallowOffsetOfMaxTimestamp, ...}."""
        return self.call("build", **fields)

    def end_txn_marker(self, **fields: Any) -> dict:
        return self.call("endTxnMarker", **fields)

    def read(self, data: bytes) -> dict:
        """MemoryRecords.readableRecords -> {batches: [...], sizeInBytes, validBytes}."""
        return self.call("read", bytes=data)

    def compress(self, codec: str, data: bytes, magic: int = 2, level: int | None = None) -> bytes:
        return from_hex(self.call("compress", codec=codec, magic=magic, level=level, data=data)["data"])

    def decompress(self, codec: str, data: bytes, magic: int = 2) -> bytes:
        return from_hex(self.call("decompress", codec=codec, magic=magic, data=data)["data"])

    def validate(self, data: bytes, **fields: Any) -> dict:
        """LogValidator.validateMessagesAndAssignOffsets -> {validatedBytes, maxTimestampMs, ...}."""
        return self.call("validate", bytes=data, **fields)

    def down_convert(self, data: bytes, to_magic: int, first_offset: int = 0, now: int = 0) -> dict:
        return self.call("downConvert", bytes=data, toMagic=to_magic, firstOffset=first_offset, now=now)


# --------------------------------------------------------------------------- session sharing

def oracle_missing_reason() -> str | None:
    """Why the oracle cannot run here, or ``None`` if it is built and Java is on PATH."""
    if not (CLASSES_DIR / f"{MAIN_CLASS}.class").is_file() or not any(LIB_DIR.glob("kafka-clients-*.jar")):
        return NOT_BUILT_REASON
    java = os.environ.get("KAFKA_ORACLE_JAVA") or "java"
    if shutil.which(java) is None:
        return f"{NOT_BUILT_REASON}; `{java}` is not on PATH"
    return None


def _start() -> KafkaOracle:
    oracle = KafkaOracle()
    try:
        oracle.ping()
    except Exception:
        oracle.close()
        raise
    return oracle


def shared_oracle() -> KafkaOracle:
    """The session-wide oracle, started on first use (raises if it cannot start)."""
    return session_jvm("Kafka oracle", _start)


def close_shared_oracle() -> None:
    close_session_jvm("Kafka oracle")


def oracle_or_skip() -> KafkaOracle:
    """Return the shared oracle. If it is not built (or cannot start): skip locally, fail when CI=true."""
    from ci_mode import skip_or_fail  # tests/ci_mode.py, on the path under pytest

    reason = oracle_missing_reason()
    if reason is None:
        try:
            return shared_oracle()
        except (OSError, OracleCrashed, OracleError) as e:
            reason = f"Apache Kafka oracle failed to start: {e}"
    skip_or_fail(reason)
