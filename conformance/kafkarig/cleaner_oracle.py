"""Python client for conformance/oracle/CleanerOracle.java: one cleaner-thread iteration of Kafka 3.9's LogCleaner.

``cleaner_oracle_or_skip().clean(partition_dir, now=..., config={...}, cleaner={...})`` opens the partition
directory (a copy: Kafka writes into it) as ``UnifiedLog``, sets the high watermark to the log end and runs
``CleanerThread.cleanFilthiestLog()`` once at the mock time ``now``; the checkpoint lands in the parent
directory as ``cleaner-offset-checkpoint``.  Tasks Kafka schedules for later (the replaced segments' files,
left ``.deleted`` for ``file.delete.delay.ms``) wait until ``run_scheduled(now)``.  Without Java or the compiled oracle
the test is skipped (a failure when ``CI=true``).
"""
from __future__ import annotations

import shutil

from .jsonl_jvm import JsonLinesJvm, session_jvm_or_skip
from .paths import CLASSES_DIR as CLASSES
from .paths import LIB_DIR as LIB


def _missing_reason() -> str | None:
    if shutil.which("java") is None:
        return "Java 17 not found"
    if not (CLASSES / "CleanerOracle.class").is_file() or not list(LIB.glob("kafka_2.13-*.jar")):
        return "Kafka cleaner oracle not built: run `make oracle`"
    return None


class KafkaCleanerOracle(JsonLinesJvm):
    """One long-running JVM serving ``clean`` requests in order."""

    def __init__(self, cmd: list[str] | None = None):
        """``cmd``: the JVM command line (default: 3.9.2's CleanerOracle on ``make oracle``'s class path)."""
        super().__init__(cmd or ["java", "-XX:+UseSerialGC", "-Xshare:auto", "-cp", f"{CLASSES}:{LIB}/*",
                                 "CleanerOracle"], "Kafka cleaner oracle")
        self.call("ping")

    def clean(self, partition_dir, *, now: int, config: dict | None = None, cleaner: dict | None = None,
              log_start_offset: int = 0, **extra) -> dict:
        return self.call("clean", dir=str(partition_dir), now=now,
                         config={k: str(v) for k, v in (config or {}).items()},
                         cleaner=cleaner or {}, logStartOffset=log_start_offset, **extra)

    def run_scheduled(self, now: int) -> dict:
        """Kafka's scheduler at ``now``: the last clean's one-shot tasks due by then run (the deletion of the
        files ``replaceSegments`` left ``.deleted``, ``file.delete.delay.ms`` after); ``ran``: their names,
        ``scheduled``: those still waiting."""
        return self.call("runScheduled", now=now)

    def records(self, partition_dir, *, now: int, config: dict | None = None, log_start_offset: int = 0) -> dict:
        """Kafka's loader after a crash (no clean shutdown): every record as [offset, key hex, value hex]."""
        return self.call("records", dir=str(partition_dir), now=now,
                         config={k: str(v) for k, v in (config or {}).items()}, logStartOffset=log_start_offset)


def cleaner_oracle_or_skip() -> KafkaCleanerOracle:
    """The session's JVM running Kafka 3.9.2's cleaner."""
    return session_jvm_or_skip("Kafka cleaner oracle", _missing_reason, KafkaCleanerOracle)
