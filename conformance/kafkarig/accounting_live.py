"""Kafka's own conversion accounting (KIP-188), request by request, on real 1.1.1, 2.1.1, 2.8.2 and 3.9.2 brokers.

One broker per release, one at a time, started with remote JMX (and, on 2.1.1 and 2.8.2, a JDWP agent); one
partition per request and one request at a time, but for three Produce requests of several partitions (whose
temporary memory is the last partition's the broker visits: KAFKA-15894, row ``metrics.multi_partition``).
Around each request :class:`Probe` (``conformance/accounting/ConversionProbe.java``, compiled with javac)
reads:

* **JMX**: ``kafka.network:type=RequestMetrics,name=TemporaryMemoryBytes,request=Produce|Fetch`` (a histogram
  updated once per request: the request's value is the change of Mean x Count, the Count growing by one)
  and ``kafka.server:type=BrokerTopicMetrics,name=Produce|FetchMessageConversionsPerSec`` (its Count grows by
  the records converted), and ``RequestMetrics`` MessageConversionsTimeMs (its Count and Mean x Count: one
  update per request, 0 where kafkafmt says the time is not published or nothing was converted): what the broker
  *publishes*, compared with :func:`kafkafmt.broker.accounting.accounting` (a Produce of several partitions:
  :func:`~kafkafmt.broker.accounting.request_accounting`) ``.published``;
* **JDWP** (2.1.1, whose fetches publish the records converted but not the memory, and 2.8.2, whose fetches
  publish nothing, KAFKA-14295): a breakpoint on
  ``RecordConversionStats.add(other)``, called by ``LazyDownConversionRecordsSend.writeTo`` once per chunk it
  converts; the sum of the arguments' ``temporaryMemoryBytes`` / ``numRecordsConverted`` is what the broker
  *computed* for the fetch, compared with kafkafmt's ``FetchResult.stats``.

kafkafmt's side reads the partition's segment as the broker wrote it and runs
:func:`kafkafmt.broker.fetch.fetch` / :func:`kafkafmt.broker.validator.validate_messages_and_assign_offsets`
with the release's Kafka line; the bytes of every fetch response are compared too (``wire_records``).
:func:`run_accounting` returns the rows as JSON (tests/history/test_accounting_live.py).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from .broker import BrokerError, free_port
from .client import error_name
from .javac import compiled
from .paths import REPO_ROOT
from .single_broker import SingleBroker

__all__ = ["RELEASES", "LINES", "case_names", "run_accounting", "Probe"]

RELEASES = ("1.1.1", "2.1.1", "2.8.2", "3.9.2")
LINES = {"1.1.1": "1.1", "2.1.1": "2.1", "2.8.2": "2.8", "3.9.2": "3.9"}
#: the class whose ``add`` the JDWP breakpoint watches: 2.1.1 publishes a fetch's records converted but not its
#: temporary memory, 2.8.2 nothing (rows metrics.fetch_conversion)
JDWP_STATS = {"2.1.1": "org.apache.kafka.common.record.RecordConversionStats",
              "2.8.2": "org.apache.kafka.common.record.RecordConversionStats"}
PROBE_SOURCE = REPO_ROOT / "conformance" / "accounting" / "ConversionProbe.java"
#: the release's own Java producer writing two committed transactions of two records: topic tx holds
#: data (0-1), marker (2), data (3-4), marker (5)
TXN_SOURCE = REPO_ROOT / "conformance" / "accounting" / "TxnProducer.java"
TXN_BATCHES = 4
BROKER = {"auto.create.topics.enable": "false", "log.retention.hours": "876000", "num.partitions": "1",
          "log.flush.interval.messages": "9223372036854775807"}
NOW = 1_700_000_000_000

#: (name, topic, magic, codec, records, value bytes, first release) produced in this order; topic p1 has message
#: format v1; zstd needs Produce v7 and Kafka 2.1 (KIP-110)
PRODUCES = (
    ("produce v0 none into v2", "p2", 0, "none", 4, 20, None),
    ("produce v1 gzip into v2", "p2", 1, "gzip", 4, 20, None),
    ("produce v1 snappy into v2", "p2", 1, "snappy", 4, 20, None),
    ("produce v2 none into v2", "p2", 2, "none", 4, 20, None),
    ("produce v2 lz4 into v2", "p2", 2, "lz4", 4, 20, None),
    ("produce v2 zstd into v2", "p2", 2, "zstd", 4, 20, "2.1"),
    ("produce v2 none into v1", "p1", 2, "none", 3, 20, None),
    ("produce v2 gzip into v1", "p1", 2, "gzip", 3, 20, None),
    ("produce v0 snappy into v1", "p1", 0, "snappy", 3, 20, None),
    ("produce v1 gzip into v1", "p1", 1, "gzip", 3, 20, None),
)
#: Produce requests of several partitions (KAFKA-15894): (name, produce version, [(topic, partition, magic, codec,
#: records, value bytes)] in the request's order); each partition's conversion has its own temporary memory, so
#: the one published names the partition the broker visited last (kafkafmt.broker.request_order): mp-1 on Scala
#: 2.12 builds, mp-0 on 2.13; six-1 (2.12's immutable hash trie) and six-5; o1-0 (a v1 topic: nothing converted,
#: 0 published) before 2.8, whose ProduceRequest parses into a java.util.HashMap, mx-0 from 2.8 (request order)
MULTI_PRODUCES = (
    ("produce v1 gzip into 3 partitions", 2, (("mp", 0, 1, "gzip", 2, 20), ("mp", 1, 1, "gzip", 3, 20),
                                              ("mp", 2, 1, "gzip", 4, 20))),
    ("produce v0 into 6 partitions", 1, tuple(("six", p, 0, "none", 6 - p, 20) for p in (5, 4, 3, 2, 1, 0))),
    ("produce v1 into a v2 and a v1 topic", 2, (("mx", 0, 1, "none", 3, 20), ("o1", 0, 1, "none", 3, 20))),
)
MULTI_PARTITIONS = {"mp": 3, "six": 6}
#: (name, topic, fetch version, fetch offset, partition max bytes, first release)
FETCHES = (
    ("fetch v1 from 0", "f", 1, 0, 1 << 20, None),
    ("fetch v3 from 0", "f", 3, 0, 1 << 20, None),
    ("fetch v3 from 7", "f", 3, 7, 1 << 20, None),
    ("fetch v1 from 5", "f", 1, 5, 1 << 20, None),
    ("fetch v1 from 16", "f", 1, 16, 1 << 20, None),
    ("fetch v2 max bytes 30", "f", 2, 0, 30, None),
    ("fetch v0 max bytes 30", "f", 0, 0, 30, None),
    ("fetch v1 max bytes one entry and a half", "f", 1, 0, -1, None),  # -1: the first batch's size + 40
    ("fetch v3 max bytes 30", "f", 3, 0, 30, None),
    ("fetch v1 of a v1 topic", "f1", 1, 0, 1 << 20, None),
    ("fetch v2 of a v1 topic", "f1", 2, 0, 1 << 20, None),
    ("fetch v3 up to a zstd batch", "fz", 3, 0, 1 << 20, "2.1"),
    ("fetch v3 from a zstd batch", "fz", 3, 2, 1 << 20, "2.1"),
    ("fetch v3 from a transaction marker", "tx", 3, 2, 1 << 20, None),
    ("fetch v1 of transactions", "tx", 1, 0, 1 << 20, None),
    ("fetch v3 of a lone transaction marker", "tx", 3, 5, 1 << 20, None),
    ("large lazy fetch v1", "big", 1, 0, 1 << 20, None),
    ("large lazy fetch v3", "big", 3, 0, 1 << 20, None),
    ("large lazy fetch v1 max bytes 200000", "big", 1, 0, 200_000, None),
)
#: the logs fetched: (magic, codec, records, value bytes) per batch, produced with the Produce version of the magic
LOGS = {
    "f": ((2, "none", 5, 30), (2, "gzip", 5, 30), (2, "none", 1, 30), (2, "lz4", 3, 200), (2, "snappy", 3, 50)),
    "f1": ((1, "none", 2, 30), (1, "gzip", 3, 30), (1, "none", 1, 30)),
    "fz": ((2, "none", 2, 30), (2, "zstd", 2, 30)),
}
#: the log of topic big: batches of tiny records, each growing about 3.7x as v0 (chunks cut by the promise)
BIG_BATCHES, BIG_RECORDS = 24, 2000
TOPIC_CONFIGS = {"p1": {"message.format.version": "0.10.2"}, "f1": {"message.format.version": "0.10.2"},
                 "o1": {"message.format.version": "0.10.2"}}
PRODUCE_VERSION = {0: 1, 1: 2, 2: 3}


def _has(version: str, since: str | None) -> bool:
    from kafkafmt.kafka_lines import line_at_least
    return since is None or line_at_least(version, since)


def case_names() -> list[str]:
    """Every row :func:`run_accounting` returns, ``<release> <case>`` (for the tests' ids)."""
    return [f"{v} {case[0]}" for v in RELEASES for case in (*PRODUCES, *MULTI_PRODUCES, *FETCHES)
            if case in MULTI_PRODUCES or _has(v, case[-1])]


class Probe:
    """``ConversionProbe`` attached to one broker: :meth:`read` → the counters as a dict."""

    def __init__(self, jmx_port: int, jdwp_port: int | None = None, stats_class: str | None = None) -> None:
        classes = compiled("conversion-probe", [PROBE_SOURCE], PROBE_SOURCE.parent)
        args = [str(jmx_port)] + ([str(jdwp_port), stats_class] if jdwp_port else [])
        self.proc = subprocess.Popen(["java", "-Xmx64m", "-XX:TieredStopAtLevel=1", "-cp", str(classes),
                                      "ConversionProbe", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        first = self.proc.stdout.readline()
        if not first.startswith("{"):
            err = self.proc.stderr.read()[-2000:]
            self.close()
            raise BrokerError(f"ConversionProbe did not attach: {err}")

    def read(self) -> dict:
        self.proc.stdin.write("read\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise BrokerError(f"ConversionProbe ended: {self.proc.stderr.read()[-2000:]}")
        return json.loads(line)

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()


def _jmx_opts(port: int) -> list[str]:
    return [f"-Dcom.sun.management.jmxremote.port={port}", f"-Dcom.sun.management.jmxremote.rmi.port={port}",
            "-Dcom.sun.management.jmxremote.authenticate=false", "-Dcom.sun.management.jmxremote.ssl=false",
            "-Djava.rmi.server.hostname=127.0.0.1"]


class _Broker(SingleBroker):
    """One broker of ``version`` with JMX (and JDWP) on (:class:`~kafkarig.single_broker.SingleBroker`)."""

    def __init__(self, version: str, root: Path) -> None:
        self.jmx_port = free_port()
        self.jdwp_port = free_port() if version in JDWP_STATS else None
        opts = _jmx_opts(self.jmx_port)
        if self.jdwp_port:
            opts.append(f"-agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=127.0.0.1:{self.jdwp_port}")
        super().__init__(version, root, BROKER, profile="legacy", extra_jvm_opts=opts)

    def segment(self, topic: str) -> bytes:
        return (self.partition_dir(topic, 0) / f"{0:020d}.log").read_bytes()


def _records(magic: int, codec: str, n: int, value_size: int) -> bytes:
    from kafkafmt.constants import CompressionType, TimestampType
    from kafkafmt.records import MemoryRecordsBuilder
    ts_type = TimestampType.NO_TIMESTAMP_TYPE if magic == 0 else TimestampType.CREATE_TIME
    b = MemoryRecordsBuilder(magic, CompressionType.from_name(codec), ts_type, 0)
    for i in range(n):
        value = (b"v%d-" % i + b"x" * value_size)[:value_size] if value_size else b""
        b.append_with_offset(i, -1 if magic == 0 else NOW + i, b"key-%d" % i if value_size else None,
                             value)
    return b.build()


def _topic_config(line: str, topic: str):
    from kafkafmt.config import BrokerConfig, LogConfig
    fmt = {"message_format_version": "0.10.2"} if topic in TOPIC_CONFIGS else {}
    return LogConfig(broker=BrokerConfig(kafka_line=line), **fmt)


def _delta(before: dict, after: dict, request: str) -> dict:
    b, a = before[request], after[request]
    return {"requests": a[0] - b[0], "temporary_memory_bytes": a[1] - b[1],
            "message_conversions": max(a[2], 0) - max(b[2], 0),
            "time_requests": a[3] - b[3], "time_ms": a[4] - b[4],
            "jdwp_chunks": after["jdwp"][0] - before["jdwp"][0] if after["jdwp"][0] >= 0 else None,
            "jdwp_temporary_memory_bytes": after["jdwp"][1] - before["jdwp"][1],
            "jdwp_num_converted_records": after["jdwp"][2] - before["jdwp"][2]}


def _measured(probe: Probe, before: dict, request: str, timeout: float = 15.0) -> dict:
    """The counters' change once the broker has recorded the request (its request metrics are updated
    after the response is sent, so they may lag the client by a moment)."""
    deadline = time.monotonic() + timeout
    while True:
        d = _delta(before, probe.read(), request)
        if (d["requests"] >= 1 and d["time_requests"] >= 1) or time.monotonic() > deadline:
            return d
        time.sleep(0.02)


def _first_difference(real: bytes, model: bytes) -> dict:
    """Where two responses' records part: the batch (as kafka-dump-log sees it) and the bytes around."""
    from kafkafmt.records import MemoryRecords
    at = next((i for i, (a, b) in enumerate(zip(real, model)) if a != b), min(len(real), len(model)))
    batch = next((f"batch at position {b.position}, base offset {b.base_offset}, magic {b.magic}, "
                  f"{b.compression.kafka_name}" for b in MemoryRecords(model).batches()
                  if b.position <= at < b.position + b.size_in_bytes), "past the model's whole batches")
    return {"differs_at": at, "differs_in": batch, "real_bytes": real[max(0, at - 16):at + 48].hex(),
            "model_bytes": model[max(0, at - 16):at + 48].hex()}


def _transactions(broker: _Broker, timeout: float = 90.0) -> None:
    """Topic tx written by :data:`TXN_SOURCE` with the broker's release's kafka-clients; returns once the log
    holds its :data:`TXN_BATCHES` batches (the coordinator writes the last marker after the commit returns)."""
    from kafkafmt.records import MemoryRecords
    lib = broker.lib_dir
    classes = compiled("txn-producer", [TXN_SOURCE], lib)
    p = subprocess.run(["java", "-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp", f"{classes}:{lib}/*", "TxnProducer",
                        f"127.0.0.1:{broker.port}", "tx", "2", "2"], capture_output=True, text=True,
                       timeout=timeout, stdin=subprocess.DEVNULL, check=False)
    if p.returncode != 0 or "committed" not in p.stdout:
        raise BrokerError(f"Kafka {broker.version}: the transactional producer failed ({p.returncode}): "
                          f"{(p.stderr.strip().splitlines() or [''])[-1]}")
    deadline = time.monotonic() + 30
    while sum(1 for _ in MemoryRecords(broker.segment("tx")).batches()) < TXN_BATCHES:
        if time.monotonic() > deadline:
            raise BrokerError(f"Kafka {broker.version}: topic tx has not its {TXN_BATCHES} batches after 30 s")
        time.sleep(0.1)


def _wait_partition_leaders(c, partitions, version: str, timeout: float = 30.0) -> None:
    """Every partition of a multi-partition request led (a Fetch v1 of each answers NONE): the request
    is then sent once, no retry."""
    deadline = time.monotonic() + timeout
    for t, p in partitions:
        while True:
            res = c.fetch(t, p, 0, version=1)
            if res.error_code == 0:
                break
            if time.monotonic() > deadline:
                raise BrokerError(f"Kafka {version}: partition {t}-{p} has no leader: {error_name(res.error_code)}")
            time.sleep(0.05)


def _one_release(version: str, root: Path) -> list[dict]:
    from kafkafmt.broker.accounting import accounting, request_accounting
    from kafkafmt.broker.fetch import fetch
    from kafkafmt.broker.validator import validate_messages_and_assign_offsets

    line = LINES[version]
    rows = []
    root.mkdir(parents=True, exist_ok=True)
    broker = _Broker(version, root)
    probe = None
    try:
        probe = Probe(broker.jmx_port, broker.jdwp_port, JDWP_STATS.get(version))
        with broker.client() as c:
            topics = ("p2", "p1", *LOGS, "big", "tx", "mp", "six", "mx", "o1")
            for topic in topics:
                err, msg = c.create_topic(topic, TOPIC_CONFIGS.get(topic, {}), version=2,
                                          partitions=MULTI_PARTITIONS.get(topic, 1))
                if err:
                    raise BrokerError(f"Kafka {version}: CreateTopics {topic}: error {err} {msg}")
            broker.wait_leaders(topics)
            leo = {"p1": 0, "p2": 0}
            for name, pv, parts in MULTI_PRODUCES:
                data = {(t, p): _records(magic, codec, n, vsize) for t, p, magic, codec, n, vsize in parts}
                models = {k: validate_messages_and_assign_offsets(b, _topic_config(line, k[0]), offset=0,
                                                                   now=NOW + 10_000) for k, b in data.items()}
                _wait_partition_leaders(c, [k for k in data], version)
                before = probe.read()
                res = c.produce_partitions([(t, p, b) for (t, p), b in data.items()], version=pv)
                real = _measured(probe, before, "Produce")
                acc = request_accounting(models, line)
                errors = sorted({error_name(r.error_code) for r in res.values()})
                rows.append({"case": f"{version} {name}", "request": "produce", "error": ",".join(errors),
                             "model_error": "NONE", "computed": acc.computed, "published": acc.published,
                             "real": real})
            for name, topic, magic, codec, n, vsize, since in PRODUCES:
                if not _has(version, since):
                    continue
                data = _records(magic, codec, n, vsize)
                config = _topic_config(line, topic)
                model = validate_messages_and_assign_offsets(data, config, offset=leo[topic], now=NOW + 10_000)
                before = probe.read()
                res = c.produce_retrying(topic, 0, data, version=7 if codec == "zstd" else PRODUCE_VERSION[magic])
                real = _measured(probe, before, "Produce")
                acc = accounting(model, line)
                leo[topic] += n
                rows.append({"case": f"{version} {name}", "request": "produce", "error": error_name(res.error_code),
                             "model_error": "NONE", "computed": acc.computed, "published": acc.published,
                             "real": real})
            for topic, batches in LOGS.items():
                for magic, codec, n, vsize in batches:
                    if codec == "zstd" and not _has(version, "2.1"):
                        continue
                    res = c.produce_retrying(topic, 0, _records(magic, codec, n, vsize),
                                             version=7 if codec == "zstd" else PRODUCE_VERSION[magic])
                    if res.error_code:
                        raise BrokerError(f"Kafka {version}: producing topic {topic}: error {res.error_code}")
            for _ in range(BIG_BATCHES):
                res = c.produce_retrying("big", 0, _records(2, "none", BIG_RECORDS, 0), version=3)
                if res.error_code:
                    raise BrokerError(f"Kafka {version}: producing topic big: error {res.error_code}")
            _transactions(broker)
            logs = {t: broker.segment(t) for t in (*LOGS, "big", "tx")}
            from kafkafmt.records import MemoryRecords
            first_f = next(MemoryRecords(logs["f"]).batches()).size_in_bytes
            for name, topic, fv, offset, max_bytes, since in FETCHES:
                if not _has(version, since):
                    continue
                max_bytes = first_f + 40 if max_bytes == -1 else max_bytes
                model = fetch(logs[topic], topic_config=_topic_config(line, topic), fetch_version=fv,
                              fetch_offset=offset, max_bytes=max_bytes, log_start_offset=0)
                before = probe.read()
                res = c.fetch(topic, 0, offset, version=fv, partition_max_bytes=max_bytes)
                real = _measured(probe, before, "Fetch")
                acc = accounting(model, line)
                got = res.records or b""
                want = b"" if model.error else bytes(model.wire_records)
                rows.append({"case": f"{version} {name}", "request": "fetch", "error": error_name(res.error_code),
                             "model_error": model.error or "NONE", "deferred_error": model.deferred_error,
                             "computed": acc.computed, "published": acc.published, "published_as": acc.published_as,
                             "real": real, "bytes_agree": got == want, "real_size": len(got),
                             "model_size": len(want), **({} if got == want else _first_difference(got, want))})
    except (BrokerError, OSError) as e:  # the rows measured so far stay, the failure is said once
        rows.append({"case": f"{version} (run)", "error": str(e).splitlines()[0]})
    finally:
        if probe is not None:
            probe.close()
        broker.close()
    return rows


def run_accounting(releases=RELEASES) -> dict:
    """Every release of :data:`RELEASES`, one after another: ``{"rows": [...], "errors": {release: message},
    "seconds": {release: s}}``."""
    rows, errors, seconds = [], {}, {}
    root = Path(tempfile.mkdtemp(prefix="kafkafmt-accounting-"))
    try:
        for v in releases:
            t0 = time.monotonic()
            try:
                rows += _one_release(v, root / v)
            except (BrokerError, OSError, RuntimeError, AssertionError) as e:
                errors[v] = str(e).splitlines()[0] if str(e) else type(e).__name__
            seconds[v] = round(time.monotonic() - t0, 1)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return {"rows": rows, "errors": errors, "seconds": seconds}


if __name__ == "__main__":  # pragma: no cover
    print(json.dumps(run_accounting(), indent=1))
