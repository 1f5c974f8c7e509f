"""Python client for the Kafka 4.4 oracle (conformance/oracle-4.4/KafkaOracle44.java on Kafka 4.4.0's jars).

The same line protocol as :mod:`kafkarig.oracle` (one JSON request per line, bytes as hex), on the class
path of ``make -C conformance oracle-4.4`` (``conformance/.cache/lib-4.4`` + ``classes-4.4``), apart from
3.9.2's.  ``oracle44_or_skip()`` skips locally when it is not built and fails under CI=true.
"""
from __future__ import annotations

import os
import shutil

from .jsonl_jvm import session_jvm_or_skip
from .oracle import KafkaOracle
from .paths import CLASSES44_DIR as CLASSES44
from .paths import LIB44_DIR as LIB44

MAIN_CLASS = "KafkaOracle44"


class KafkaOracle44(KafkaOracle):
    """One JVM on Kafka 4.4.0's jars; ``request``/``call``/``close`` as :class:`kafkarig.oracle.KafkaOracle`."""

    def __init__(self, java: str | None = None):  # noqa: D107 - the parent's, on another class path
        super().__init__(java, ["-XX:+UseSerialGC", "-Xss4m", "-Xmx256m"],
                         classpath=f"{CLASSES44}{os.pathsep}{LIB44 / '*'}", main_class=MAIN_CLASS,
                         name="Kafka 4.4 oracle")


def oracle44_missing_reason() -> str | None:
    if not (CLASSES44 / f"{MAIN_CLASS}.class").is_file() or not (LIB44 / "kafka-clients-4.4.0.jar").is_file():
        return "Kafka 4.4.0 oracle not built: run `make -C conformance oracle-4.4` (Java 17 + Maven)"
    if shutil.which(os.environ.get("KAFKA_ORACLE_JAVA") or "java") is None:
        return "Java 17 is not on PATH (needed by the Kafka 4.4.0 oracle)"
    return None


def _start() -> KafkaOracle44:
    jvm = KafkaOracle44()
    version = jvm.call("ping")["kafkaVersion"]
    assert version == "4.4.0", version
    return jvm


def oracle44_or_skip() -> KafkaOracle44:
    """The session's JVM on Kafka 4.4.0's jars (checked to be 4.4.0)."""
    return session_jvm_or_skip("Kafka 4.4 oracle", oracle44_missing_reason, _start)
