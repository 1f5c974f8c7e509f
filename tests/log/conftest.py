"""Fixtures for the log tests: a simulated clock, a log factory, and Kafka's own log (Java oracle)."""
from __future__ import annotations

import os
import shutil
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from kafkafmt.log import Log, LogConfig, SimulatedClock  # noqa: E402

START = 1_700_000_000_000


@pytest.fixture
def clock():
    return SimulatedClock(START)


@pytest.fixture
def make_log(tmp_path, clock):
    """``make_log(config=None, name="t-0", **kwargs)`` → a fresh :class:`Log` in tmp_path, closed afterwards."""
    logs = []

    def make(config: LogConfig | None = None, name: str = "t-0", **kwargs):
        log = Log(tmp_path / name, config or LogConfig(), kwargs.pop("clock", clock), **kwargs)
        logs.append(log)
        return log

    yield make
    for log in logs:
        if not log.closed:
            log.close_handlers()


@pytest.fixture(scope="session")
def log_oracle():
    from kafkarig.log_oracle import log_oracle_or_skip
    return log_oracle_or_skip()


@pytest.fixture
def fast_dir(tmp_path):
    """A directory on tmpfs if available (Kafka fsyncs on every roll), removed afterwards."""
    from log_helpers import shm_or
    d = shm_or(tmp_path)
    yield d
    if d != tmp_path:
        shutil.rmtree(d, ignore_errors=True)
