"""Row ``producer.idempotent_max_in_flight`` (KAFKA-5494) against the real Java producers of 0.11.0.3 and
1.0.2 (the row's own release).

An idempotent ``KafkaProducer`` checks ``max.in.flight.requests.per.connection`` as it is constructed, before
it speaks to any broker: 0.11.0.3 refuses anything but 1, 1.0 and later anything above 5.  Each release's
producer (:func:`kafkarig.oldclients.java_client`, the settings of :func:`kafkarig.oldclients.producer_settings`)
is built once with the row's limit and once with one more, against a port where nothing listens: one more is
a ``ConfigException`` naming the setting; the limit itself passes construction and fails later, on the
missing broker: its client's watchdog ends it 3 s + 2 s after its start (the default margin, 10 s, is for a
consumer's poll loop).  Four client JVMs, side by side.
"""
from __future__ import annotations

import socket
from concurrent.futures import ThreadPoolExecutor

import pytest

from kafkafmt import kafka_lines
from old_release_fixtures import releases_or_skip

pytestmark = [pytest.mark.java]

from kafkarig.oldclients import java_client, producer_settings  # noqa: E402
from kafkarig.releases import release  # noqa: E402

RELEASES = ("0.11.0.3", "1.0.2")
SETTING = "max.in.flight.requests.per.connection"
#: what each release's KafkaProducer.configureInflightRequests throws (0.11.0.3's words as the release has them)
REFUSALS = {
    "0.11.0.3": "Must set max.in.flight.requests.per.connection to 1 in orderto use the idempotent producer. "
                "Otherwise we cannot guarantee idempotence.",
    "1.0.2": "Must set max.in.flight.requests.per.connection to at most 5 to use the idempotent producer.",
}


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the block ends: nothing listens there


@pytest.fixture(scope="module")
def runs():
    for v in RELEASES:
        releases_or_skip(v)
    port = _closed_port()
    jobs = {}
    for v in RELEASES:
        limit = kafka_lines.value("producer.idempotent_max_in_flight", release(v).line)
        for in_flight in (limit, limit + 1):
            settings = {**producer_settings(v, idempotence=True), SETTING: str(in_flight)}
            jobs[(v, in_flight)] = (limit, settings)
    with ThreadPoolExecutor(len(jobs)) as pool:
        futures = {k: pool.submit(java_client, k[0], ["produce", f"127.0.0.1:{port}", "t", "0", "none", "1", "0"],
                                  timeout_ms=3000, watchdog_margin_ms=2000, producer=settings)
                   for k, (_, settings) in jobs.items()}
        return {k: (jobs[k][0], f.result()) for k, f in futures.items()}


def test_the_row_s_limits_are_one_then_five():
    assert [kafka_lines.value("producer.idempotent_max_in_flight", release(v).line) for v in RELEASES] == [1, 5]


@pytest.mark.parametrize("version", RELEASES)
def test_one_more_than_the_row_s_limit_is_refused_as_the_producer_is_built(runs, version):
    (limit, run), = [(lim, r) for (v, n), (lim, r) in runs.items() if v == version and n == lim + 1]
    assert not run.ok and run.error == f"org.apache.kafka.common.config.ConfigException: {REFUSALS[version]}", \
        run.one_line()


@pytest.mark.parametrize("version", RELEASES)
def test_the_row_s_limit_is_accepted_and_fails_only_on_the_missing_broker(runs, version):
    (limit, run), = [(lim, r) for (v, n), (lim, r) in runs.items() if v == version and n == lim]
    assert not run.ok and run.error.startswith("no answer from the broker within "), run.one_line()
