"""Fixtures for the viz tests: ``kafka`` shadows every cleaning pass of :mod:`kafkafmt.viz.compaction` with
Kafka 3.9.2's own cleaner (conformance/oracle/CleanerOracle.java) on a copy of the partition."""
from __future__ import annotations

import os
import shutil
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "log"))
from kafkafmt.errors import KafkaFmtError  # noqa: E402
from kafkafmt.viz import compaction  # noqa: E402
from log_helpers import assert_cleaned_like_kafka  # noqa: E402


@pytest.fixture
def kafka(monkeypatch, tmp_path):
    """Shadow every pass of :func:`compaction.clean` with Kafka's cleaner on a copy; yields the pass count."""
    from kafkarig.cleaner_oracle import cleaner_oracle_or_skip
    oracle = cleaner_oracle_or_skip()
    real = compaction.clean
    passes = []

    def both(d, props, now, *, dedupe_buffer_size=1 << 20, line=None):
        assert line in (None, "3.9"), "this oracle is Kafka 3.9.2's cleaner: another line has its own comparison"
        copy = tmp_path / "kafka"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(d.parent, copy)  # copy2: modification times kept
        from kafkarig.jsonl_jvm import OracleError
        try:
            k = oracle.clean(copy / d.name, now=now, config=props,
                             cleaner={"dedupeBufferSize": dedupe_buffer_size, "ioBufferSize": 512 * 1024})
        except OracleError as e:  # Kafka's pass failed: kafkafmt's must fail with the same reason
            with pytest.raises(KafkaFmtError) as ours:
                real(d, props, now, dedupe_buffer_size=dedupe_buffer_size)
            assert e.response["error"] == "kafka.log.LogCleaningException"
            assert e.response["message"] == ours.value.reason
            assert e.response["cause"].split(":")[0].endswith(ours.value.kafka_exception)
            passes.append(e.response["cause"])
            raise ours.value
        r = real(d, props, now, dedupe_buffer_size=dedupe_buffer_size)
        assert r.cleaned == k["cleaned"]
        if r.cleaned:
            assert_cleaned_like_kafka(copy / d.name, d)
        passes.append(r.cleaned)
        return r

    monkeypatch.setattr(compaction, "clean", both)
    yield passes


