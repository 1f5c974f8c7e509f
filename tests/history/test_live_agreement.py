"""What the live rig counts as agreement, decided without a JVM: a refusal is the broker's own answer, a stall is a
fetch response the client received and dropped, a failing consumer agrees only with a failure of the model's class,
and LogAppendTime entries are compared byte for byte with only the broker's clock masked.

The live runs these rules judge are ``test_old_releases_live.py`` and ``test_scenario_live.py``.
"""
from __future__ import annotations

import struct
import zlib

import pytest

from kafkafmt.broker.validator import validate_messages_and_assign_offsets
from kafkafmt.config import BrokerConfig, LogConfig
from kafkafmt.constants import CompressionType
from kafkafmt.records.builder import build_records
from kafkarig.history import ERROR_CODE, UNREADABLE, expected_refusal, payload, real_refusal, stalled
from kafkarig.live_scenario import _clockless, _lat_offsets, compare_bytes
from kafkarig.oldclients import ClientRun, _dropped
from kafkarig.releases import release

TS = 1_700_000_000_000


# --------------------------------------------------------------------------- refusals: the broker's own answer
class _Broker:
    """An OldBroker's log as the refusal reads it."""

    def __init__(self, said: str | None = None) -> None:
        self.said = said

    def unreadable_request_since(self, mark: int) -> str | None:
        return self.said


#: 0.9.0.1's words for a Java 0.10.2 client's ApiVersions (tests/history/test_old_releases_live.py, 2026-12-02)
SAID_0_9 = ("Kafka 0.9.0.1 broker 1 could not read the client's request: Processor got uncaught exception. "
            "(kafka.network.Processor) java.lang.ArrayIndexOutOfBoundsException: Index 18 out of bounds for length 17")


@pytest.mark.parametrize("client", ["java-0.10.2.2", "java-0.11.0.3", "python-0.10", "python-0.11"])
@pytest.mark.parametrize("job", ["produce", "consume"])
def test_a_0_9_broker_refuses_the_clients_that_ask_its_versions(client, job):
    expected, rule = expected_refusal(release("0.9.0.1"), client, job, payload(0, "none", 0))
    assert expected == "no response: the broker logs that it cannot read API key 18" and "KIP-35" in rule
    failed = ClientRun("c", False, "no answer from the broker within 12000 ms")
    assert real_refusal(failed, _Broker(SAID_0_9), 0) == expected


def test_a_client_timeout_is_not_the_broker_s_refusal():
    expected, _ = expected_refusal(release("0.9.0.1"), "java-0.10.2.2", "consume")
    for error in ("no answer from the broker within 3000 ms", "consumed 0 of 6 records within 2000 ms",
                  "KafkaTimeoutError: KafkaTimeoutError: Failed to update metadata after 2.0 secs."):
        real = real_refusal(ClientRun("c", False, error), _Broker(None), 0)
        assert real == f"no answer from the broker (the client: {error})" and real != expected


@pytest.mark.parametrize("version", ["0.10.0.1", "0.10.1.1", "0.10.2.2"])
def test_a_0_10_broker_answers_kafka_python_0_11_s_batch_with_corrupt_message(version):
    """kafka-python pinned to (0, 11) sends a v2 batch in Produce v2 (the broker's newest): error 2."""
    data = build_records([(TS + i, b"k%d" % i, b"value-%d" % i) for i in range(3)], magic=2)
    expected, rule = expected_refusal(release(version), "python-0.11", "produce", data)
    assert expected == ERROR_CODE.format(code=2) == "error code 2 in the broker's response"
    assert rule.startswith("Produce v2: CorruptRecordError: Message is corrupt")
    relayed = ClientRun("kafka-python", False, "CorruptRecordError: [Error 2] CorruptRecordError: None")
    assert real_refusal(relayed, _Broker(None), 0) == expected
    other = ClientRun("kafka-python", False, "UnsupportedVersionError: [Error 35] UnsupportedVersionError")
    assert real_refusal(other, _Broker(None), 0) == ERROR_CODE.format(code=35) != expected


def test_the_unreadable_key_is_read_from_the_broker_s_words():
    assert real_refusal(ClientRun("c", False, "x"), _Broker(SAID_0_9.replace("Index 18 out of bounds for length 17",
                                                                             "19")), 0) == UNREADABLE.format(key=19)


# --------------------------------------------------------------------------- a stall: received, then dropped
#: what 0.9.0.1's NetworkClient logs (OldClient's log4j: NetworkClient errors to stderr) when the fetch response's
#: completion handler throws
STDERR_0_9 = """\
ERROR Uncaught error in request completion: (org.apache.kafka.clients.NetworkClient)
org.apache.kafka.common.KafkaException: Error deserializing key/value for partition topic-0 at offset 0
\tat org.apache.kafka.clients.consumer.internals.Fetcher.parseRecord(Fetcher.java:628)
"""


def test_a_stall_is_a_dropped_response_then_nothing():
    dropped = _dropped(STDERR_0_9)
    assert dropped == "org.apache.kafka.common.KafkaException: Error deserializing key/value for partition topic-0 " \
                      "at offset 0"
    assert stalled(ClientRun("c", False, "consumed 0 of 3 records within 6000 ms", dropped=dropped))


@pytest.mark.parametrize("run", [
    ClientRun("c", False, "no answer from the broker within 16000 ms"),          # the watchdog: never fetched
    ClientRun("c", False, "consumed 0 of 3 records within 6000 ms"),             # nothing received, nothing logged
    ClientRun("c", False, "no answer from the broker within 16000 ms", dropped="KafkaException: x"),
    ClientRun("c", False, "consumed 1 of 3 records within 6000 ms", [{"offset": 0}], dropped="KafkaException: x"),
])
def test_a_timeout_without_a_dropped_response_is_no_stall(run):
    assert not stalled(run)


def test_nothing_logged_is_nothing_dropped():
    assert _dropped("") is None and _dropped("WARN something else (org.apache.kafka.clients.NetworkClient)") is None


# --------------------------------------------------------------------------- LogAppendTime: the clock masked
def _lat(magic: int, codec: str, now: int, *, records=None) -> bytes:
    cfg = LogConfig.from_properties({"message.timestamp.type": "LogAppendTime", "message.format.version":
                                     "0.10.0" if magic == 1 else "2.8"},
                                    broker=BrokerConfig.from_properties({}, kafka_line="2.8"))
    data = build_records(records or [(TS + i, b"k%d" % i, b"value-%d" % i) for i in range(3)], magic=magic,
                         compression=CompressionType[codec.upper()])
    return bytes(validate_messages_and_assign_offsets(data, cfg, now=now).records)


@pytest.mark.parametrize("magic,codec", [(1, "gzip"), (1, "none"), (2, "none"), (2, "gzip")])
def test_two_brokers_clocks_are_all_a_log_append_time_entry_may_differ_in(magic, codec):
    model, real = _lat(magic, codec, TS + 50), _lat(magic, codec, TS + 99_000)
    assert model != real
    row = compare_bytes("replica A p0", model, real)
    assert row.agree, row
    assert "LogAppendTime" in row.what and "stamped [" in row.model and str(TS + 99_000) in row.real


@pytest.mark.parametrize("magic", [1, 2])
def test_anything_else_in_a_log_append_time_entry_still_differs(magic):
    model = _lat(magic, "gzip", TS + 50)
    other_value = _lat(magic, "gzip", TS + 99_000, records=[(TS + i, b"k%d" % i, b"value-%d" % (i + 1))
                                                             for i in range(3)])
    other_codec = _lat(magic, "none", TS + 99_000)
    for real in (other_value, other_codec):
        row = compare_bytes("replica A p0", model, real)
        assert not row.agree and "first difference at byte" in row.detail, row
    # one byte of the compressed payload, its CRC made right again: the CRC is masked, the payload is not
    flipped = bytearray(_lat(magic, "gzip", TS + 99_000))
    flipped[-3] ^= 0x01
    if magic == 1:
        struct.pack_into(">I", flipped, 12, zlib.crc32(bytes(flipped[16:])))
    row = compare_bytes("replica A p0", model, bytes(flipped))
    assert not row.agree


# --------------------------------------------------------------------------- a consumer of a LogAppendTime topic
def test_a_consumer_s_log_append_times_are_compared_without_the_clock():
    data = _lat(1, "gzip", TS + 50) + b""
    lat = _lat_offsets(data)
    assert lat == {0: 0, 1: 0, 2: 0}
    model_read = [(0, TS + 50), (1, TS + 50), (2, TS + 50)]
    produced = {0: 5_000, 1: 5_000, 2: 5_000}

    def real(*times, kind="LogAppendTime"):
        return [{"offset": i, "timestamp": t, "timestampType": kind} for i, t in enumerate(times)]

    m, r, note = _clockless(model_read, real(6_000, 6_000, 6_000), lat, True, 7_000, produced)
    assert m == r == [(0, "LogAppendTime"), (1, "LogAppendTime"), (2, "LogAppendTime")] and "LogAppendTime" in note
    for bad in (real(6_000, 6_000, 6_001),                      # two times in one wrapper
                real(4_999, 4_999, 4_999),                      # stamped before the produce
                real(7_001, 7_001, 7_001),                      # after the read
                real(6_000, 6_000, 6_000, kind="CreateTime")):  # not a LogAppendTime record
        m, r, _ = _clockless(model_read, bad, lat, True, 7_000, produced)
        assert m != r, bad
