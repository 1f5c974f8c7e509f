"""A live Kafka 4.4.0 broker (KRaft combined mode, conformance/kafkarig/kraft.py) against the 4.4 line's
predictions (``--kafka-line 4.4``), with real clients: kafka-python, aiokafka, librdkafka
(confluent-kafka), and kafkafmt's raw protocol client for the request versions 4.x no longer answers.

The old-data upgrade: two topics (one compacted) are created through KRaft, the broker is stopped, their
segments are swapped for v0/v1 (and one v2) entries written by kafkafmt (``place_segment``: partition.metadata
kept, the offset checkpoints set to the new log end), the broker restarted.  Then what each client returns
is compared with kafkafmt's consumer view of the same bytes; a client that mishandles the old batches is a
finding asserted as measured (aiokafka's C reader, see there).  One broker start per module (and one
restart); skipped locally without Java or ``make -C conformance oracle-4.4``, a failure in CI.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

import pytest

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "broker"))  # broker_helpers
sys.path.insert(0, HERE)

import kafka44_clients as clients  # noqa: E402
from broker_helpers import LAT, NOW, R, build  # noqa: E402
from ci_mode import skip_or_fail  # noqa: E402
from kafkafmt import kafka_lines  # noqa: E402
from kafkafmt.broker import BrokerConfig, LogConfig  # noqa: E402
from kafkafmt.broker import validate_messages_and_assign_offsets as validate  # noqa: E402
from kafkafmt.broker.consumer import consumer_view  # noqa: E402
from kafkafmt.broker.fetch import fetch  # noqa: E402
from kafkafmt.constants import CompressionType, TimestampType  # noqa: E402
from kafkafmt.errors import ConfigError, InvalidRecordError, RecordValidationError, UnsupportedVersionError  # noqa: E402
from kafkafmt.records import MemoryRecords, MemoryRecordsBuilder  # noqa: E402
from kafkarig.broker import pid_alive, port_is_listening  # noqa: E402
from kafkarig.client import ProtocolError  # noqa: E402
from kafkarig.kraft import KRaftBroker, kraft_missing_reason, place_segment, place_segments  # noqa: E402

pytestmark = [pytest.mark.java, pytest.mark.broker]

B44 = BrokerConfig(kafka_line="4.4")
C44 = LogConfig(broker=B44)
N_OLD = 10
#: the active segment after the old data on the ``cleaned`` topic
CLEANED_TAIL = build([R(NOW + 9, b"k9", b"v10")], base_offset=N_OLD, partition_leader_epoch=0)


def old_log(compacted: bool = False) -> bytes:
    """What a 3.9 cluster with old producers leaves: v0 plain, v1 plain, v1 gzip (CreateTime and
    LogAppendTime wrappers), then v2 written after the upgrade; keys repeat on the compacted topic."""
    k = (lambda i: b"k%d" % (i % 3)) if compacted else (lambda i: b"k%d" % i)
    return b"".join([
        build([R(-1, k(0), b"v0")], magic=0, base_offset=0),
        build([R(-1, k(1), b"v1")], magic=0, base_offset=1),
        build([R(NOW, k(2), b"v2")], magic=1, base_offset=2),
        build([R(NOW + 1, k(3), b"v3"), R(NOW + 2, k(4), b"v4"), R(NOW + 3, k(5), b"v5")], magic=1,
              compression_="gzip", base_offset=3),
        build([R(NOW + 1, k(6), b"v6"), R(NOW + 2, k(7), b"v7")], magic=1, compression_="gzip", ts_type=LAT,
              log_append_time=NOW + 9, base_offset=6),
        build([R(NOW + 4, k(8), b"v8"), R(NOW + 5, k(9), b"v9")], magic=2, base_offset=8, partition_leader_epoch=0),
    ])


def predicted_rows(data: bytes) -> list:
    """kafkafmt's prediction of what a current client returns for ``data`` (the Java consumer's view)."""
    view = consumer_view(data, client_magic=2)
    assert view.error is None
    return [(r.offset, r.timestamp, r.timestamp_type.kafka_name, r.key, r.value) for r in view.records]


@pytest.fixture(scope="module")
def broker44():
    reason = kraft_missing_reason()
    if reason:
        skip_or_fail(reason)
    # the cleaner on, quick, with a small dedupe buffer: only ``cleaned`` has a segment it may clean
    b = KRaftBroker(overrides={"log.cleaner.enable": "true", "log.cleaner.backoff.ms": "200",
                               "log.cleaner.dedupe.buffer.size": "8388608"})
    try:
        yield b
    finally:
        pid, ports, root = b.pid, (b.port, b.controller_port), b.root
        b.close()
        assert not pid_alive(pid), f"Kafka 4.4.0 broker left running: {pid}"
        assert not [p for p in ports if port_is_listening(p)], "ports still listening"
        assert not root.exists(), f"temp dir left behind: {root}"


@pytest.fixture(scope="module")
def upgraded(broker44):
    """Topics ``old`` (delete) and ``oldc`` (compact) holding v0/v1 data under the restarted 4.4 broker, each
    as its only (active, so never cleaned) segment; ``cleaned`` (compact) with the same data in a segment
    the cleaner may clean (a v2 segment after it)."""
    with broker44.client() as c:
        assert c.create_topic("old", {}) == (0, None)
        assert c.create_topic("oldc", {"cleanup.policy": "compact"}) == (0, None)
        assert c.create_topic("cleaned", {"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.01"}) == \
            (0, None)
        for topic in ("old", "oldc", "cleaned"):
            c.wait_for_leader(topic)
        # one batch in the active segment of ``old`` before the stop (replaced below): what does a clean
        # shutdown leave of its indexes?
        assert c.produce_retrying("old", 0, build([R(NOW, b"k", b"v")]), version=8).error_code == 0
    broker44.stop()
    closed_index_files = {f.name: f.read_bytes() for f in broker44.partition_dir("old").iterdir()
                          if f.suffix in (".index", ".timeindex")}
    logs = {"old": old_log(), "oldc": old_log(compacted=True), "closed_index_files": closed_index_files}
    for topic in ("old", "oldc"):
        place_segment(broker44, topic, logs[topic], log_end_offset=N_OLD)
    place_segments(broker44, "cleaned", {0: old_log(compacted=True), N_OLD: CLEANED_TAIL}, log_end_offset=N_OLD + 1)
    broker44.start()
    with broker44.client() as c:
        for topic in ("old", "oldc", "cleaned"):
            c.wait_for_leader(topic)
            _wait_fetchable(c, topic)
    return logs


def _wait_fetchable(c, topic: str, timeout: float = 60.0) -> None:
    """After a restart the metadata can name the leader before the partition serves fetches
    (NOT_LEADER_OR_FOLLOWER, 6, for a moment on a loaded machine): wait until a fetch is answered."""
    deadline = time.monotonic() + timeout
    while (code := c.fetch(topic, 0, 0, version=11).error_code) == 6:
        assert time.monotonic() < deadline, f"{topic}: still NOT_LEADER_OR_FOLLOWER after {timeout}s"
        time.sleep(0.1)
    assert code == 0, f"{topic}: fetch error {code} after the restart"


def _closed(call) -> bool:
    try:
        call()
    except ProtocolError as e:
        return "connection closed" in str(e)
    return False


def test_request_versions_answered(broker44):
    with broker44.client() as c:
        versions = c.api_versions()
    # ApiVersions still advertises Produce from v0 (KAFKA-18659: librdkafka refuses a broker without it);
    # the versions below produce.min_version are refused all the same (next test)
    assert versions[0][0] == 0 < kafka_lines.value("produce.min_version", "4.4")
    assert versions[1][0] == kafka_lines.value("fetch.min_version", "4.4")
    assert versions[2][0] == kafka_lines.value("list_offsets.min_version", "4.4")


def test_old_produce_versions_get_no_response(broker44):
    with broker44.client() as c:
        assert c.create_topic("p", {}) == (0, None)
        c.wait_for_leader("p")
    for version, magic in ((0, 0), (1, 0), (2, 1)):
        data = build([R(NOW if magic else -1, b"k", b"v")], magic=magic)
        with pytest.raises(UnsupportedVersionError):
            validate(data, C44, now=NOW, produce_version=version)
        with broker44.client() as c:
            assert _closed(lambda: c.produce("p", 0, data, version=version)), version
    # a Produce v3 carrying magic-1 data: INVALID_RECORD (87), as ProduceRequest.validateRecords says
    v1 = build([R(NOW, b"k", b"v")], magic=1)
    with pytest.raises(InvalidRecordError) as e:
        validate(v1, C44, now=NOW, produce_version=3)
    with broker44.client() as c:
        assert c.produce("p", 0, v1, version=3).error_code == e.value.error_code == 87
    assert "UnsupportedVersionException" in broker44.log_text()


def test_stored_bytes_match_the_prediction(broker44):
    with broker44.client() as c:
        assert c.create_topic("v2", {}) == (0, None)
        c.wait_for_leader("v2")
        offset = 0
        for codec in ("none", "gzip", "zstd"):
            data = build([R(NOW + i, b"k%d" % i, b"v") for i in range(3)], compression_=codec)
            res = validate(data, C44, offset=offset, partition_leader_epoch=0, produce_version=8)
            answer = c.produce_retrying("v2", 0, data, version=8)
            assert (answer.error_code, answer.base_offset) == (0, res.first_offset)
            stored = c.fetch("v2", 0, offset, version=11).records
            assert stored == res.records, codec
            offset = res.next_offset


def test_timestamp_after_max_ms_default(broker44):
    """KIP-1030: message.timestamp.after.max.ms defaults to one hour: a record 2 h ahead is refused."""
    with broker44.client() as c:
        assert c.create_topic("ahead", {}) == (0, None)
        c.wait_for_leader("ahead")
        data = build([R(int(time.time() * 1000) + 7_200_000, b"k", b"v")])
        with pytest.raises(RecordValidationError) as e:
            validate(data, C44, produce_version=8)
        answer = c.produce_retrying("ahead", 0, data, version=8)
    assert answer.error_code == e.value.error_code == 32  # INVALID_TIMESTAMP


@pytest.mark.parametrize("props", [{"message.format.version": "0.10.0"}, {"message.downconversion.enable": "true"},
                                   {"message.timestamp.difference.max.ms": "1000"}, {"segment.bytes": "1024"}],
                         ids=lambda p: next(iter(p)))
def test_topic_configs_of_4_4(broker44, props):
    with broker44.client() as c:
        code, message = c.create_topic("cfg-" + next(iter(props)).replace(".", "-"), props)
    with pytest.raises(ConfigError) as e:
        LogConfig.from_properties(props, broker=B44)
    assert code == 40  # INVALID_CONFIG
    assert str(e.value) == message or str(e.value).startswith(message + " (")


def test_old_fetch_versions_get_no_response(upgraded, broker44):
    for version in range(4):
        assert fetch(upgraded["old"], topic_config=C44, fetch_version=version).connection_closed
        with broker44.client() as c:
            assert _closed(lambda: c.fetch("old", 0, 0, version=version)), version


@pytest.mark.parametrize("topic", ["old", "oldc"])
@pytest.mark.parametrize("version", [4, 11])
def test_old_batches_are_served_as_they_are(upgraded, broker44, topic, version):
    cfg = C44.replace(cleanup_policy=("compact",)) if topic == "oldc" else C44
    predicted = fetch(upgraded[topic], topic_config=cfg, fetch_version=version)
    with broker44.client() as c:
        got = c.fetch(topic, 0, 0, version=version)
    assert (got.error_code, got.high_watermark) == (0, N_OLD)
    assert predicted.zero_copy and got.records == predicted.records == upgraded[topic]


@pytest.mark.parametrize("topic", ["old", "oldc"])
@pytest.mark.parametrize("client", ["kafka-python", "librdkafka"])
def test_current_clients_read_the_old_batches(upgraded, broker44, client, topic):
    read = {"kafka-python": clients.kafka_python, "librdkafka": clients.confluent}[client]
    assert read(broker44.bootstrap, topic, N_OLD) == predicted_rows(upgraded[topic])


def _aiokafka_subprocess(bootstrap: str, pure_python: bool, topic: str = "old", n: int = N_OLD) -> dict:
    env = dict(os.environ)
    if pure_python:
        env["AIOKAFKA_NO_EXTENSIONS"] = "1"
    proc = subprocess.run([sys.executable, os.path.join(HERE, "kafka44_clients.py"), "aiokafka", bootstrap, topic,
                           str(n)], capture_output=True, text=True, timeout=120, env=env)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_aiokafka_reads_the_old_batches_only_with_its_python_reader(upgraded, broker44):
    """A finding: aiokafka 0.14's C reader (the default) fails on a fetch response that mixes v0/v1 entries
    and a v2 batch, exactly what a 4.x broker sends from an upgraded log (no down-conversion): it reads the
    v2 batch with the legacy layout (SystemError: Negative size passed to PyBytes_FromStringAndSize).
    Its pure-Python reader (AIOKAFKA_NO_EXTENSIONS=1) returns what kafkafmt predicts."""
    expected = [[o, t, tt, k.hex(), v.hex()] for o, t, tt, k, v in predicted_rows(upgraded["old"])]
    assert _aiokafka_subprocess(broker44.bootstrap, pure_python=True) == {"rows": expected}
    c_reader = _aiokafka_subprocess(broker44.bootstrap, pure_python=False)
    assert c_reader == {"error": "SystemError", "message": "Negative size passed to PyBytes_FromStringAndSize"}


def test_old_clients_cannot_produce_and_fetch_nothing(upgraded, broker44):
    """kafka-python pinned to 0.10.1 (Produce v2, Fetch v3): the producer's connection is closed, the
    consumer silently gets nothing, as kafkafmt predicts for those versions on the 4.4 line."""
    from kafka import KafkaProducer
    from kafka.errors import KafkaConnectionError
    assert fetch(upgraded["old"], topic_config=C44, fetch_version=3).connection_closed
    assert clients.kafka_python(broker44.bootstrap, "old", N_OLD, timeout=3, api_version=(0, 10, 1)) == []
    p = KafkaProducer(bootstrap_servers=broker44.bootstrap, api_version=(0, 10, 1), max_block_ms=3000,
                      request_timeout_ms=3000, retries=0)
    try:
        with pytest.raises(KafkaConnectionError):
            p.send("old", b"x").get(timeout=10)
    finally:
        p.close(timeout=1)


def test_the_4_4_cleaner_rewrites_old_batches_as_v2(upgraded, broker44):
    """KAFKA-13093, measured: on the compacted topic the 4.4 cleaner keeps the last record of each key
    (offsets 7, 8, 9 of keys k1, k2, k0); the LogAppendTime gzip wrapper holding offset 7 becomes one v2 gzip
    batch (LogAppendTime kept, partition leader epoch -1), byte for byte what kafkafmt's builder writes for it;
    the v2 batch is kept as it was.  (kafkafmt's own 4.4 cleaner is the log cleaner's part: row
    ``cleaner.legacy_to_v2``.)"""
    assert kafka_lines.value("cleaner.legacy_to_v2", "4.4")
    deadline = time.monotonic() + 60
    while True:
        with broker44.client() as c:
            got = c.fetch("cleaned", 0, 0, version=11)
        batches = list(MemoryRecords(got.records).batches())
        if all(b.magic == 2 for b in batches) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert [[r.offset for r in b.records()] for b in batches] == [[7], [8, 9]]
    b = MemoryRecordsBuilder(2, CompressionType.GZIP, TimestampType.LOG_APPEND_TIME, 7, log_append_time=NOW + 9,
                             partition_leader_epoch=-1)
    b.append_with_offset(7, NOW + 9, b"k1", b"v7")
    old_v2 = list(MemoryRecords(upgraded["oldc"]).batches())[-1]
    assert got.records == b.build() + old_v2.raw
    # what the clients read once the old batches are gone: the same four records from each, and aiokafka's
    # C reader copes again (every batch is v2)
    expected = predicted_rows(got.records + CLEANED_TAIL)
    assert [r[0] for r in expected] == [7, 8, 9, 10]
    for read in (clients.kafka_python, clients.confluent):
        assert read(broker44.bootstrap, "cleaned", 4) == expected
    hexed = [[o, t, tt, k.hex(), v.hex()] for o, t, tt, k, v in expected]
    assert _aiokafka_subprocess(broker44.bootstrap, pure_python=False, topic="cleaned", n=4) == {"rows": hexed}


@pytest.mark.parametrize("version", [4, 9, 10])
def test_zstd_topic_and_old_fetch_versions(broker44, version):
    """KIP-110's rule outlives down-conversion: a compression.type=zstd topic answers Fetch v4-v9 with
    UNSUPPORTED_COMPRESSION_TYPE (76), as kafkafmt's 4.4 line predicts; Fetch v10 gets the batch."""
    data = build([R(NOW, b"k", b"v")], compression_="zstd")
    with broker44.client() as c:
        if c.create_topic("zstd-topic", {"compression.type": "zstd"})[0] == 0:
            c.wait_for_leader("zstd-topic")
            assert c.produce_retrying("zstd-topic", 0, data, version=8).error_code == 0
        got = c.fetch("zstd-topic", 0, 0, version=version)
    cfg = C44.replace(compression_type="zstd")
    stored = validate(data, cfg, partition_leader_epoch=0, produce_version=8).records
    predicted = fetch(stored, topic_config=cfg, fetch_version=version)
    if predicted.error:
        assert predicted.error == "UNSUPPORTED_COMPRESSION_TYPE" and got.error_code == 76
    else:
        assert got.error_code == 0 and got.records == predicted.records == stored


def test_a_broker_that_cannot_start_leaves_nothing_behind(monkeypatch, tmp_path):
    """A setting 4.4 refuses (segment.bytes below KIP-1030's 1 MiB) stops the broker at start: the error says
    so with the broker's log, its JVM is gone and its temp dir removed."""
    reason = kraft_missing_reason()
    if reason:
        skip_or_fail(reason)
    from kafkarig.broker import BrokerError
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with pytest.raises(BrokerError, match="exited|format failed") as e:
        KRaftBroker(overrides={"log.segment.bytes": "1024"})
    assert "1048576" in str(e.value)
    # the broker's temp dir is gone (the session's head-start jobs, running in threads meanwhile, keep their
    # own root; the prefix is the broker's: kafkarig.kraft)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("kafkafmt-kraft44-")] == []
    left = [p for p in os.listdir("/proc") if p.isdigit() and str(tmp_path) in _cmdline(int(p))]
    assert left == [], "a JVM of the failed broker is still running"


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().decode(errors="replace")
    except OSError:
        return ""


def test_what_a_clean_shutdown_leaves_of_the_active_indexes(upgraded, tmp_path):
    """The active segment of ``old`` held one batch when the broker was stopped cleanly: its .index and
    .timeindex are what kafkafmt's ``Log.close`` leaves on the 4.4 line: trimmed, the time index with its
    final (max timestamp, offset) entry.  (4.4.0's ``UnifiedLog.close()`` called alone does neither, see
    tests/kafka4/test_kafka44_log_files.py: the broker's shutdown path does.)"""
    from kafkafmt.log import Log, SimulatedClock
    log = Log(tmp_path / "old-0", LogConfig.from_properties({"segment.index.bytes": "8192"}, broker=B44),
              SimulatedClock(NOW))
    log.append_as_leader(build([R(NOW, b"k", b"v")]))
    log.close()
    mine = {n: (tmp_path / "old-0" / n).read_bytes() for n in upgraded["closed_index_files"]}
    assert upgraded["closed_index_files"] == mine
    assert mine["00000000000000000000.timeindex"] == NOW.to_bytes(8, "big") + bytes(4)
