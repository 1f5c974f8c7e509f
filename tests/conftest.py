"""Shared pytest fixtures.

``kafka_oracle``: Apache Kafka 3.9's own classes (MemoryRecordsBuilder, LogValidator, RecordsUtil,
the codecs) in a long-running JVM (see conformance/README.md).  Skipped with a clear reason when
the oracle is not built locally; a failure when ``CI=true``.

``chromium``: one headless Debian Chromium per test module that asks for it (tests/browser_session.py).

Once collection is done, the slow jobs the selected tests will wait for (live scenario runs, a cold numba
cache, the documentation site) start in the background (tests/head_start.py); they are stopped at the end.
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import head_start  # noqa: E402
from browser_session import launched_chromium  # noqa: E402
from kafkarig.oracle import close_shared_oracle, oracle_or_skip  # noqa: E402


@pytest.fixture(scope="session")
def kafka_oracle():
    """Apache Kafka 3.9 oracle (conformance/): skipped locally if not built, fails when CI=true."""
    oracle = oracle_or_skip()
    yield oracle
    close_shared_oracle()


@pytest.fixture(scope="module")
def chromium():
    """Debian's Chromium through Playwright, launched once for the module: skipped locally without it, fails in CI."""
    with launched_chromium() as browser:
        yield browser


def pytest_collection_finish(session):
    if not session.config.option.collectonly:
        head_start.begin(session.items)


def pytest_sessionfinish(session):
    head_start.end()
