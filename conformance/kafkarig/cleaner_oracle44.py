"""Python client for conformance/oracle-4.4/CleanerOracle44.java: one cleaner-thread iteration of Kafka 4.4.0's
``org.apache.kafka.storage.internals.log.LogCleaner`` (``CleanerThread.cleanFilthiestLog``, mock clock).

The same protocol and client as :mod:`kafkarig.cleaner_oracle` (3.9.2's), on the class path of
``make -C conformance oracle-4.4``.  ``clean(..., highWatermark=N)`` sets the high watermark (default: the
log end).  Without Java or the compiled oracle the test is skipped (a failure when ``CI=true``).
"""
from __future__ import annotations

import os
import shutil

from .cleaner_oracle import KafkaCleanerOracle
from .jsonl_jvm import session_jvm_or_skip
from .paths import CLASSES44_DIR as CLASSES44
from .paths import LIB44_DIR as LIB44


def _missing_reason() -> str | None:
    if shutil.which("java") is None:
        return "Java 17 not found"
    if not (CLASSES44 / "CleanerOracle44.class").is_file() or not (LIB44 / "kafka-storage-4.4.0.jar").is_file():
        return "Kafka 4.4 cleaner oracle not built: run `make -C conformance oracle-4.4`"
    return None


def _start() -> KafkaCleanerOracle:
    jvm = KafkaCleanerOracle(["java", "-XX:+UseSerialGC", "-Xmx256m", "-cp", f"{CLASSES44}{os.pathsep}{LIB44}/*",
                              "CleanerOracle44"])
    version = jvm.call("ping").get("kafkaVersion")
    assert version == "4.4.0", version
    return jvm


def cleaner_oracle44_or_skip() -> KafkaCleanerOracle:
    """The session's JVM running Kafka 4.4.0's cleaner (checked to be 4.4.0)."""
    return session_jvm_or_skip("Kafka 4.4 cleaner oracle", _missing_reason, _start)
