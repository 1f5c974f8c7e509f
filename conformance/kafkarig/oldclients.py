"""The clients of each era, for real: the Java ``kafka-clients`` of an old release, and kafka-python pinned.

* :func:`java_client` runs ``conformance/old-clients/OldClient.java`` compiled (:mod:`kafkarig.javac`)
  against one release's class path (its ``kafka-clients``) and run on it: a 0.9 application is
  a 0.9 Java client, not a new client told to speak old versions.  One job per JVM; its JSON lines are
  returned as :class:`ClientRun` (``records`` and ``ok`` / ``error``).  A producer's configuration beyond
  OldClient's own (``acks=all``, ``retries=0``) comes from :func:`producer_settings`: ``enable.idempotence=true``
  with what the release requires beside it (KIP-98; row ``producer.idempotent_max_in_flight``).
* :func:`python_produce` / :func:`python_consume`: kafka-python with ``api_version`` pinned to
  ``(0, 9)``, ``(0, 10)`` or ``(0, 11)`` (idempotence off; client ids plain, as 0.9/0.10 brokers fail a
  client id holding ``(``, ``,`` or a space in their quota metrics' names).

Records are always key ``k<i>``, value ``value-<i>`` and, where the API has one, timestamp ``base + i``
(:func:`expected_records`), so a check knows what each client sent.
"""
from __future__ import annotations

import contextlib
import json
import os
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from kafkafmt import kafka_lines

from .javac import compiled
from .paths import CONFORMANCE
from .releases import ReleaseError, release, resolve

__all__ = [
    "JAVA_CLIENT_SOURCE",
    "ClientRun",
    "compile_java_client",
    "expected_records",
    "java_client",
    "producer_settings",
    "python_consume",
    "python_produce",
]

JAVA_CLIENT_SOURCE = CONFORMANCE / "old-clients" / "OldClient.java"


@dataclass
class ClientRun:
    """What one client run printed: its records (or offsets) and its final verdict."""

    client: str
    ok: bool
    error: str | None = None
    records: list[dict] = field(default_factory=list)
    version: str | None = None
    #: the exception a Java client's NetworkClient caught in a response's completion handler and only logged
    #: (``Uncaught error in request completion``: the response was received, and dropped), or None
    dropped: str | None = None

    def one_line(self) -> str:
        return f"{self.client}: " + ("ok" if self.ok else f"failed: {self.error}")


def expected_records(count: int, ts_base: int | None) -> list[dict]:
    return [{"key": f"k{i}", "value": f"value-{i}", "timestamp": None if ts_base is None else ts_base + i}
            for i in range(count)]


#: retries of an idempotent producer: KafkaProducer.configureRetries' own default with idempotence (0.11 … 2.x)
IDEMPOTENT_RETRIES = 2**31 - 1


def producer_settings(version: str, idempotence: bool) -> dict[str, str]:
    """The producer configuration OldClient adds for ``version``'s Java client (``-Doldclient.producer.*``).

    ``idempotence``: ``enable.idempotence=true`` (KIP-98, from 0.11 on: row ``produce.idempotence``) and what
    that release's ``KafkaProducer`` requires with it, set explicitly: ``acks=all``, ``retries`` > 0 (OldClient's
    own ``retries=0`` is a ConfigException then) and ``max.in.flight.requests.per.connection`` exactly 1 on 0.11,
    at most 5 from 1.0 on (row ``producer.idempotent_max_in_flight``, KAFKA-5494).  Without it, 0.11 and later
    clients get ``enable.idempotence=false`` (their default until 3.0, KIP-679) and older ones nothing: the key
    is unknown to them.  A release without idempotence asked for it raises :class:`ReleaseError`."""
    rel = release(version)
    has = kafka_lines.value("produce.idempotence", rel.line)
    if not idempotence:
        return {"enable.idempotence": "false"} if has else {}
    if not has:
        row = kafka_lines.change("produce.idempotence")
        raise ReleaseError(f"kafka-clients {rel.version} has no enable.idempotence: the idempotent producer came "
                           f"with {row.since} ({row.source})")
    return {"enable.idempotence": "true", "acks": "all", "retries": str(IDEMPOTENT_RETRIES),
            "max.in.flight.requests.per.connection": str(kafka_lines.value("producer.idempotent_max_in_flight",
                                                                           rel.line))}


def compile_java_client(version: str) -> Path:
    """``OldClient`` compiled against ``version``'s class path (its kafka-clients), once per source."""
    rel = release(version)
    resolve(rel)
    try:
        return compiled(f"oldclient-{rel.version}", [JAVA_CLIENT_SOURCE], rel.lib_dir)
    except RuntimeError as e:
        raise ReleaseError(f"OldClient does not compile against kafka-clients {rel.version}: "
                           f"{str(e).splitlines()[1] if len(str(e).splitlines()) > 1 else e}") from e


def java_client(version: str, args: list[str], *, timeout_ms: int = 15000, watchdog_margin_ms: int = 10000,
                producer: dict[str, str] | None = None,
                refused: Callable[[], str | None] | None = None) -> ClientRun:
    """Run one OldClient job (``produce ...`` / ``consume ...``) with ``version``'s kafka-clients; ``producer``:
    configuration it adds to its producer's (:func:`producer_settings`).  The client's watchdog ends it
    ``timeout_ms + watchdog_margin_ms`` after its start ("no answer from the broker within ... ms"); the margin
    lets a consumer's own poll loop end first, a producer that expects no broker can make it smaller.

    ``refused``, asked every 0.1 s while the client runs, says why the broker refused it (what the broker
    logged), or None: then the client is stopped at once (its PID) and the run fails with that reason, without
    waiting for its own timeout."""
    rel = release(version)
    classes = compile_java_client(version)
    log4j = rel.dir / "old-client-log4j-networkclient.properties"
    if not log4j.exists():  # written whole before it is seen: clients of two runs may start at once
        tmp = log4j.with_name(f"{log4j.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(CLIENT_LOG4J)
        tmp.replace(log4j)
    cmd = ["java", "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", f"-Doldclient.timeout.ms={timeout_ms}",
           f"-Doldclient.watchdog.margin.ms={watchdog_margin_ms}",
           f"-Dlog4j.configuration=file:{log4j}",
           *(f"-Doldclient.producer.{k}={v}" for k, v in (producer or {}).items()),
           "-cp", f"{classes}:{rel.jar('kafka-clients')}:{rel.lib_dir}/*",
           "OldClient", *args]
    name = f"kafka-clients {rel.version}"
    limit = (timeout_ms + watchdog_margin_ms) / 1000 + 20
    deadline = time.monotonic() + limit
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    while True:
        try:
            stdout, stderr = p.communicate(timeout=0.1 if refused else limit)
            break
        except subprocess.TimeoutExpired:  # communicate again loses no output
            why = refused() if refused else None
            if why or time.monotonic() > deadline:
                p.kill()
                p.communicate()
                return ClientRun(name, False, why or f"no answer within {limit:.0f}s")
    lines = [json.loads(x) for x in stdout.splitlines() if x.startswith("{")]
    if not lines or "ok" not in lines[-1]:
        tail = (stderr or stdout).strip().splitlines()
        return ClientRun(name, False, f"exit {p.returncode}: {tail[-1] if tail else 'no output'}")
    last = lines[-1]
    return ClientRun(name, bool(last["ok"]), last.get("error"), lines[:-1], last.get("version"), _dropped(stderr))


#: a Java client's log: nothing but NetworkClient's errors, to stderr; the one such error a run looks for is a
#: response whose completion handler threw (0.9.0.1 ``NetworkClient.poll``: ``Uncaught error in request
#: completion``, the fetch response parsed in ``Fetcher.handleFetchResponse``: row ``consumer.unparsable_fetch``)
CLIENT_LOG4J = """\
log4j.rootLogger=OFF
log4j.logger.org.apache.kafka.clients.NetworkClient=ERROR, stderr
log4j.appender.stderr=org.apache.log4j.ConsoleAppender
log4j.appender.stderr.Target=System.err
log4j.appender.stderr.layout=org.apache.log4j.PatternLayout
log4j.appender.stderr.layout.ConversionPattern=%p %m (%c)%n
"""
DROPPED_RESPONSE = "Uncaught error in request completion"


def _dropped(stderr: str | None) -> str | None:
    """The exception NetworkClient logged with :data:`DROPPED_RESPONSE` (its first line: ``class: message``)."""
    lines = (stderr or "").splitlines()
    for i, line in enumerate(lines):
        if DROPPED_RESPONSE in line and i + 1 < len(lines):
            return lines[i + 1].strip()
    return None


def _python_client_id(api_version: tuple[int, int]) -> str:
    return "kafkapython" + "".join(map(str, api_version))


def python_produce(bootstrap: str, topic: str, partition: int, *, api_version: tuple[int, int], count: int,
                   ts_base: int | None, compression: str | None = None, timeout: float = 15.0) -> ClientRun:
    """kafka-python's KafkaProducer pinned to ``api_version``: ``count`` records in one batch, acks=all."""
    from kafka import KafkaProducer
    from kafka.errors import KafkaError

    name = f"kafka-python api_version={api_version}"
    producer = None
    sent = False
    try:
        producer = KafkaProducer(bootstrap_servers=bootstrap, api_version=api_version, acks="all",
                                 compression_type=compression, linger_ms=200, enable_idempotence=False,
                                 client_id=_python_client_id(api_version), max_block_ms=int(timeout * 1000),
                                 request_timeout_ms=int(timeout * 1000), retries=0)
        futures = [producer.send(topic, partition=partition, key=r["key"].encode(), value=r["value"].encode(),
                                 timestamp_ms=r["timestamp"])
                   for r in expected_records(count, ts_base)]
        producer.flush(timeout)
        run = ClientRun(name, True, records=[{"offset": f.get(timeout).offset} for f in futures])
        sent = True
        return run
    except KafkaError as e:
        return ClientRun(name, False, f"{type(e).__name__}: {e}")
    finally:
        if producer is not None and sent:
            producer.close(timeout=5)
        elif producer is not None:  # the run failed: its verdict is taken, the producer closed at once
            with contextlib.suppress(KafkaError):
                producer.close(timeout=0)


def python_consume(bootstrap: str, topic: str, partition: int, *, api_version: tuple[int, int], offset: int,
                   count: int, timeout: float = 15.0) -> ClientRun:
    """kafka-python's KafkaConsumer pinned to ``api_version``: assign, seek, poll ``count`` records."""
    import time

    from kafka import KafkaConsumer, TopicPartition
    from kafka.errors import KafkaError

    name = f"kafka-python api_version={api_version}"
    consumer = None
    got: list[dict] = []
    try:
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, api_version=api_version, enable_auto_commit=False,
                                 client_id=_python_client_id(api_version), request_timeout_ms=int(timeout * 1000) + 5000,
                                 fetch_max_wait_ms=200)
        tp = TopicPartition(topic, partition)
        consumer.assign([tp])
        consumer.seek(tp, offset)
        deadline = time.monotonic() + timeout
        while len(got) < count and time.monotonic() < deadline:
            for msgs in consumer.poll(timeout_ms=200).values():
                for m in msgs:
                    got.append({"offset": m.offset, "key": m.key.decode() if m.key is not None else None,
                                "value": m.value.decode() if m.value is not None else None,
                                "timestamp": m.timestamp, "timestampType": m.timestamp_type})
        if len(got) < count:
            return ClientRun(name, False, f"consumed {len(got)} of {count} records within {timeout:.0f}s", got)
        return ClientRun(name, True, records=got)
    except KafkaError as e:
        return ClientRun(name, False, f"{type(e).__name__}: {e}", got)
    finally:
        if consumer is not None:
            consumer.close()
