"""Live checks of kafkafmt's model against real brokers and clients of old releases, as data.

Each check runs one real thing (a produce, a fetch, a client) on a broker of one release and the same
thing through kafkafmt's model (:func:`kafkafmt.broker.validator.validate_messages_and_assign_offsets`,
:func:`kafkafmt.broker.fetch.fetch`, configured as that release: topic ``message.format.version`` and
broker ``inter.broker.protocol.version`` = the release's), and returns a :class:`Check`: what the model
expected, what the release really did, and whether they agree (bytes compared whole; the first
difference located).  The tests assert :attr:`Check.agree`; ``make history-record`` writes every check
of a run to ``kafkafmt/scenarios/record/last-live-run.json``.

The payloads are kafkafmt-built (:func:`payload`): ``count`` records ``k<i>`` / ``value-<i>`` with
timestamps ``TS_BASE + i`` (magic 1 and 2), uncompressed or gzip; the real clients
(:mod:`kafkarig.oldclients`) send the same records, so the model can be asked what they should read.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from kafkafmt import kafka_lines
from kafkafmt.broker.consumer import consumer_view
from kafkafmt.broker.fetch import fetch as model_fetch
from kafkafmt.broker.validator import validate_messages_and_assign_offsets
from kafkafmt.config import BrokerConfig, LogConfig
from kafkafmt.constants import CompressionType
from kafkafmt.errors import KafkaFmtError
from kafkafmt.kafka_lines import check_line
from kafkafmt.records import MemoryRecords
from kafkafmt.records.builder import build_records
from kafkafmt.records.dump_log import dump_log

from .oldcluster import OldBroker, OldCluster
from .releases import Release

__all__ = [
    "CLIENTS",
    "FETCH_VERSIONS",
    "PRODUCE_VERSION_FOR_MAGIC",
    "TS_BASE",
    "Check",
    "client_accepted",
    "client_consume_check",
    "client_produce_check",
    "client_reads_magic",
    "expected_refusal",
    "decode",
    "dump_check",
    "fetch_check",
    "hexdiff",
    "model_config",
    "model_consumed",
    "payload",
    "plan",
    "produce_check",
    "real_consumed",
    "real_refusal",
    "run_release",
]

#: 2023-11-14T22:13:20Z: a fixed CreateTime for every record a check sends
TS_BASE = 1700000000000
#: the Produce version that carries each magic (v0/v1: magic 0 or 1; v2: magic 1 with timestamps; v3+: v2)
PRODUCE_VERSION_FOR_MAGIC = {0: 0, 1: 2, 2: 3}
#: how long a client the release is expected to refuse runs at most (s): its refusal is the broker's own answer
#: (:func:`real_refusal`: an error code in a response, or the broker's log line that it could not read the
#: request), which a Java client's run stops at as soon as the broker logs it (:func:`_refusal`); a client that
#: only times out was not refused, it disagrees
REFUSED_TIMEOUT = 2.0
#: ApiVersions' API key (KIP-35): the request a client of :data:`SENDS_API_VERSIONS` sends first
API_VERSIONS_KEY = 18
#: the fetch versions the checks send, one per client generation: 0.9 (v0, v1), 0.10 (v2, v3), 0.11+ (v4)
FETCH_VERSIONS = (0, 1, 2, 3, 4)


@dataclass
class Check:
    """One comparison: ``expected`` (the model) against ``real`` (the release), hex strings or values."""

    release: str
    check: str
    client: str
    request: str
    expected: object
    real: object
    agree: bool
    detail: str = ""
    model_rule: str = ""
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)

    def message(self) -> str:
        return (f"Kafka {self.release} {self.check} ({self.client}, {self.request}): model and release disagree: "
                f"{self.detail}")


def hexdiff(expected: bytes | None, real: bytes | None) -> str:
    """Where two byte strings first differ, with 16 bytes of each from there, or '' when equal."""
    if expected == real:
        return ""
    if expected is None or real is None:
        return f"expected {None if expected is None else len(expected)} bytes, real {None if real is None else len(real)}"
    n = next((i for i, (a, b) in enumerate(zip(expected, real)) if a != b), min(len(expected), len(real)))
    return (f"{len(expected)} vs {len(real)} bytes, first difference at byte {n}: expected "
            f"{expected[n:n + 16].hex()} real {real[n:n + 16].hex()}")


#: the producer id of the idempotent batches (an idempotent producer's first batch: epoch 0, sequence 0)
PRODUCER_ID = 1000


def payload(magic: int, compression: str, first: int, count: int = 3, *, idempotent: bool = False) -> bytes:
    """``count`` records k<first+i>/value-<first+i>, timestamps TS_BASE+first+i (none in v0), one batch;
    ``idempotent``: a v2 batch with producer id :data:`PRODUCER_ID`, epoch 0, base sequence 0 (KIP-98)."""
    recs = [(-1 if magic == 0 else TS_BASE + first + i, f"k{first + i}".encode(), f"value-{first + i}".encode())
            for i in range(count)]
    ids = {"producer_id": PRODUCER_ID, "producer_epoch": 0, "base_sequence": 0} if idempotent else {}
    return build_records(recs, magic=magic, compression=CompressionType[compression.upper()], **ids)


def model_config(rel: Release, topic_format: str | None = None, topic_configs: dict | None = None) -> LogConfig:
    """kafkafmt configured as ``rel``: its Kafka line (``--kafka-line``), the topic's format (default: the
    release's), its other settings, and the release's IBP."""
    topic = dict(topic_configs or {})
    if rel.max_magic >= 1:  # 0.9 has no message.format.version (KIP-32): it writes v0 only
        topic["message.format.version"] = topic_format or rel.message_format
    return LogConfig.from_properties(
        topic, broker=BrokerConfig.from_properties({"inter.broker.protocol.version": rel.message_format},
                                                   kafka_line=rel.line))


def decode(data: bytes | None) -> list[dict]:
    """Every record of ``data``, deep: batch magic and codec, offset, timestamp, key, value."""
    out: list[dict] = []
    try:
        batches = list(MemoryRecords(data or b"").batches())
    except KafkaFmtError:  # a response cut inside a batch, or padded with an overflow batch
        return out
    for batch in batches:
        for r in batch.records():
            out.append({"magic": batch.magic, "codec": CompressionType(batch.compression_id).name.lower(), "offset": r.offset,
                        "timestamp": r.timestamp, "key": None if r.key is None else bytes(r.key).decode(),
                        "value": None if r.value is None else bytes(r.value).decode()})
    return out


def produce_check(cluster: OldCluster, broker: OldBroker, rel: Release, topic: str, topic_format: str | None,
                  magic: int, compression: str, next_offset: int, first_key: int,
                  idempotent: bool = False, topic_configs: dict | None = None) -> tuple[Check, int]:
    """Produce one kafkafmt-built batch with the Produce version of ``magic`` and compare the bytes the
    leader appended to its segment (and the error code) with the model's; returns the check and the new
    log end offset.  On a LogAppendTime topic the model's clock is the time the release stamped."""
    data = payload(magic, compression, first_key, idempotent=idempotent)
    version = PRODUCE_VERSION_FOR_MAGIC[magic]
    seg = broker.segment(topic)
    before = seg.stat().st_size
    with broker.client() as c:
        res = c.produce_retrying(topic, 0, data, version=version, acks=-1)
    real = seg.read_bytes()[before:]
    request = f"Produce v{version}, magic {magic} {compression}, {len(data)} bytes"
    stamped = [r["timestamp"] for r in decode(real)]
    now = max(stamped) if stamped and (topic_configs or {}).get("message.timestamp.type") == "LogAppendTime" \
        else None
    try:
        m = validate_messages_and_assign_offsets(data, model_config(rel, topic_format, topic_configs),
                                                 offset=next_offset, now=now, produce_version=version)
        expected, exp_err, rule = bytes(m.records), 0, m.path
    except KafkaFmtError as e:
        expected, exp_err, rule = b"", e.error_code, type(e).__name__
    agree = res.error_code == exp_err and expected == real
    detail = "" if agree else (f"error expected {exp_err} real {res.error_code}; " if res.error_code != exp_err else "") \
        + hexdiff(expected, real)
    name = f"produce/{topic}/magic{magic}-{compression}" + ("-idempotent" if idempotent else "")
    check = Check(rel.version, name, "kafkafmt raw client", request,
                  expected.hex(), real.hex(), agree, detail, rule,
                  {"payload": data.hex(), "error_code": res.error_code, "base_offset": res.base_offset})
    return check, next_offset + (len(decode(real)) if res.error_code == 0 else 0)


def fetch_check(broker: OldBroker, rel: Release, topic: str, topic_format: str | None, version: int) -> Check:
    """Fetch the whole partition from offset 0 with Fetch ``version`` and compare the records bytes with
    the model's answer from the segment's bytes."""
    seg = broker.segment(topic).read_bytes()
    with broker.client() as c:
        res = c.fetch(topic, 0, 0, version=version)
    m = model_fetch(seg, topic_config=model_config(rel, topic_format), fetch_version=version, fetch_offset=0)
    # what goes on the socket: the converted chunks cut or padded to the promised size (KIP-283)
    expected = None if m.error else bytes(m.wire_records if not m.zero_copy else m.records)
    real = None if res.error_code else (res.records or b"")
    agree = expected == real and (m.error or "NONE") == res.error
    outcome = "zero-copy" if m.zero_copy else f"down-converted to v{m.to_magic}"
    return Check(rel.version, f"fetch/{topic}/v{version}", "kafkafmt raw client", f"Fetch v{version} from offset 0",
                 expected.hex() if expected is not None else m.error, real.hex() if real is not None else res.error,
                 agree, "" if agree else hexdiff(expected, real), outcome,
                 {"segment": seg.hex(), "model_converted": None if m.error else bytes(m.records).hex(),
                  "real_records": decode(real) if real else [],
                  "expected_records": decode(expected) if expected else []})


def dump_check(cluster: OldCluster, broker: OldBroker, rel: Release, topic: str) -> Check:
    """The release's own DumpLogSegments --deep-iteration --print-data-log beside ``kafkafmt dump --deep
    --print-data-log --kafka-line <the release's line>`` (``Dumping``, the start offset line, then
    ``dump_log``'s lines in that release's format: row ``dump.format``).

    ``agree``: the two print the same lines; ``extra["records_listed"]``: the release lists every record of the
    segment, in order, with its offset, key and value as kafkafmt decodes them."""
    seg = broker.segment(topic)
    real = [line.replace(str(cluster.root), "<root>")
            for line in cluster.dump_log_segments(seg, rel.version).splitlines()]
    lines: list[str] = [f"Dumping {seg}"]
    dump_log(seg.read_bytes(), filename=seg.name, abspath=str(seg), deep=True, print_data=True, start_offset=0,
             emit=lines.append, kafka_line=rel.line)
    lines = [line.replace(str(cluster.root), "<root>") for line in lines]
    listed = [line for line in real if "payload: " in line]
    records = decode(seg.read_bytes())
    in_order = len(listed) == len(records) and all(
        f"offset: {r['offset']} " in line and line.endswith(f"key: {r['key']} payload: {r['value']}")
        for r, line in zip(records, listed))
    differ = [(a, b) for a, b in zip(lines, real) if a != b]
    detail = "" if lines == real else (f"{len(differ) + abs(len(lines) - len(real))} of {max(len(lines), len(real))} "
                                       f"lines differ" + (f"; first: expected {differ[0][0]!r}, real {differ[0][1]!r}"
                                                          if differ else ""))
    return Check(rel.version, f"dump/{topic}", "DumpLogSegments", "--deep-iteration --print-data-log", lines, real,
                 lines == real, detail, f"kafkafmt dump --deep --print-data-log --kafka-line {rel.line}",
                 {"records_listed": in_order})


# --------------------------------------------------------------------------------- the clients of each era
#: (name, kind, what it speaks): a Java kafka-clients release or a kafka-python api_version; its newest
#: record magic, Produce and Fetch versions (the client's own ApiKeys / kafka-python's pinned table)
CLIENTS = (
    ("java-0.9.0.1", ("java", "0.9.0.1"), 0, 1, 1),
    ("java-0.10.2.2", ("java", "0.10.2.2"), 1, 2, 3),
    ("java-0.11.0.3", ("java", "0.11.0.3"), 2, 3, 5),
    ("python-0.9", ("python", (0, 9)), 0, 0, 0),
    ("python-0.10", ("python", (0, 10)), 1, 2, 2),
    ("python-0.11", ("python", (0, 11)), 2, 3, 4),
)


#: the clients whose first request is ApiVersions (KIP-35): the Java clients from 0.10.2 on (KIP-97's
#: NetworkClient asks every broker its versions), and kafka-python pinned to (0, 10) or later (it asks a broker it
#: believes that new); the Java 0.9.0.1 client and kafka-python pinned to (0, 9) send their requests blindly
SENDS_API_VERSIONS = ("java-0.10.2.2", "java-0.11.0.3", "python-0.10", "python-0.11")


def client_accepted(rel: Release, name: str, job: str = "produce") -> bool:
    """Whether ``rel`` serves the client: the Java clients from 0.10.2 on start with ApiVersions, which a
    0.9 broker cannot answer (KIP-35 came with 0.10.0); kafka-python pinned produces with its version's
    Produce request blindly (the broker must answer it), and consumes from any 0.10+ broker."""
    _, (kind, _v), _magic, produce_v, _fetch_v = next(c for c in CLIENTS if c[0] == name)
    if name in ("java-0.9.0.1", "python-0.9"):
        return True
    if kind == "python" and job == "produce":
        return produce_v <= rel.produce_versions[1]
    return rel.produce_versions[1] >= 2


def client_magic(rel: Release, name: str) -> int:
    """The magic a client writes to ``rel``: its own newest, capped by what ``rel``'s Produce versions carry."""
    c = next(c for c in CLIENTS if c[0] == name)
    return min(c[2], rel.max_magic if c[1][0] == "java" else c[2])


def client_fetch_version(rel: Release, name: str) -> int:
    c = next(c for c in CLIENTS if c[0] == name)
    return min(c[4], rel.fetch_versions[1])


def run_client(name: str, bootstrap: str, topic: str, job: str, *, count: int = 3, compression: str = "none",
               offset: int = 0, timeout: float = 15.0, refused=None):
    """Run client ``name`` (a row of :data:`CLIENTS`) once: ``produce`` 3 records or ``consume`` ``count``;
    ``refused`` (a Java client's): :func:`kafkarig.oldclients.java_client`'s, the broker's word that it refused."""
    from .oldclients import java_client, python_consume, python_produce
    _, (kind, v), *_ = next(c for c in CLIENTS if c[0] == name)
    if kind == "java":
        if job == "produce":
            return java_client(v, ["produce", bootstrap, topic, "0", compression, str(count), str(TS_BASE)],
                               timeout_ms=int(timeout * 1000), refused=refused)
        return java_client(v, ["consume", bootstrap, topic, "0", str(offset), str(count)],
                           timeout_ms=int(timeout * 1000), refused=refused)
    if job == "produce":
        return python_produce(bootstrap, topic, 0, api_version=v, count=count, ts_base=TS_BASE,
                              compression=None if compression == "none" else compression, timeout=timeout)
    return python_consume(bootstrap, topic, 0, api_version=v, offset=offset, count=count, timeout=timeout)


def client_produce_check(broker: OldBroker, rel: Release, topic: str, name: str, compression: str,
                         next_offset: int) -> tuple[Check, int]:
    """A real client produces 3 records; the records the leader appended (magic, codec, offsets,
    timestamps, keys, values) against the model's append of the same records at the client's magic."""
    seg = broker.segment(topic)
    before = seg.stat().st_size
    accepted = client_accepted(rel, name)
    mark = broker.log_mark()
    run = run_client(name, broker.bootstrap, topic, "produce", compression=compression,
                     timeout=15.0 if accepted else REFUSED_TIMEOUT, refused=None if accepted else _refusal(broker))
    real_bytes = seg.read_bytes()[before:]
    magic = client_magic(rel, name)
    recs = [(-1 if magic == 0 or name == "java-0.9.0.1" else TS_BASE + i, f"k{i}".encode(),
             f"value-{i}".encode()) for i in range(3)]
    data = build_records(recs, magic=magic, compression=CompressionType[compression.upper()])
    rule = f"client writes magic {magic}"
    if accepted:
        m = validate_messages_and_assign_offsets(data, model_config(rel), offset=next_offset,
                                                 produce_version=PRODUCE_VERSION_FOR_MAGIC[magic])
        expected: object = decode(bytes(m.records))
        real: object = decode(real_bytes) if run.ok else f"failed: {run.error}"
        agree = run.ok and expected == real
    else:
        expected, rule = expected_refusal(rel, name, "produce", data)
        real = decode(real_bytes) if run.ok else real_refusal(run, broker, mark)
        agree = not run.ok and not real_bytes and expected == real
    detail = "" if agree else f"expected {expected!r}, real {real!r}"
    check = Check(rel.version, f"client-produce/{name}-{compression}", run.client, f"3 records, {compression}",
                  expected, real, agree, detail, rule, {"stored": real_bytes.hex(), "client_error": run.error})
    return check, next_offset + (len(real) if isinstance(real, list) else 0)


def client_consume_check(broker: OldBroker, rel: Release, topic: str, name: str, count: int) -> Check:
    """A real client reads the partition from offset 0; its records (and error) against the model's: the
    fetch answer (:func:`kafkafmt.broker.fetch.fetch`) read as that client reads it
    (:func:`kafkafmt.broker.consumer.consumer_view`: a 0.9 Java client parses every entry as v0)."""
    accepted = client_accepted(rel, name, "consume")
    mark = broker.log_mark()
    run = run_client(name, broker.bootstrap, topic, "consume", count=count,
                     timeout=15.0 if accepted else REFUSED_TIMEOUT, refused=None if accepted else _refusal(broker))
    sees_time = name not in ("java-0.9.0.1", "python-0.9")
    version = client_fetch_version(rel, name)
    rule = f"fetch v{version}"
    if accepted:
        m = model_fetch(broker.segment(topic).read_bytes(), topic_config=model_config(rel), fetch_version=version,
                        fetch_offset=0)
        # the whole conversion: a consumer whose response was cut fetches the rest from the next offset
        expected: object = model_consumed(bytes(m.records), client_reads_magic(name), sees_time, count,
                                          client_line(name))
        real: object = real_consumed(run, sees_time)
        agree = expected == real
    else:
        expected, rule = expected_refusal(rel, name, "consume")
        real = real_consumed(run, sees_time) if run.ok else real_refusal(run, broker, mark)
        agree = not run.ok and expected == real
    return Check(rel.version, f"client-consume/{name}", run.client, f"{count} records from offset 0", expected,
                 real, agree, "" if agree else f"expected {expected!r}, real {real!r}", rule,
                 {"client_error": run.error})


def expected_refusal(rel: Release, name: str, job: str, data: bytes | None = None) -> tuple[str, str]:
    """How ``rel``'s broker refuses client ``name`` (its answer, and the rule): a broker without ApiVersions
    (row ``protocol.api_versions``, KIP-35) cannot read the ApiVersions request a client of
    :data:`SENDS_API_VERSIONS` starts with and never answers it; otherwise a producer's batch ``data`` is what
    the model's broker refuses, with the error code of its exception, in the Produce version the client and the
    broker share (kafka-python takes the broker's newest from its ApiVersions answer)."""
    if name in SENDS_API_VERSIONS and not kafka_lines.value("protocol.api_versions", rel.line):
        return (UNREADABLE.format(key=API_VERSIONS_KEY),
                f"Kafka {rel.line} has no ApiVersions (row protocol.api_versions, KIP-35)")
    if job == "produce" and data is not None:
        produce_v = next(c[3] for c in CLIENTS if c[0] == name)
        version = min(produce_v, rel.produce_versions[1])
        try:
            validate_messages_and_assign_offsets(data, model_config(rel), offset=0, produce_version=version)
        except KafkaFmtError as e:
            return ERROR_CODE.format(code=e.error_code), f"Produce v{version}: {type(e).__name__}: {e.reason}"
        return "accepted", f"Produce v{version}: the model accepts it"
    return "accepted", f"the model has no refusal of {name} by Kafka {rel.line}"


#: a refusal's two shapes, the model's (:func:`expected_refusal`) and the release's (:func:`real_refusal`)
UNREADABLE = "no response: the broker logs that it cannot read API key {key}"
ERROR_CODE = "error code {code} in the broker's response"


def real_refusal(run, broker: OldBroker, mark: int) -> str:
    """The broker's own answer to a client run that failed: the API key its log (since ``mark``) says it could
    not read (:meth:`~kafkarig.oldcluster.OldBroker.unreadable_request_since`), or the error code of its response
    as kafka-python relays it (``[Error N]``); a failure with neither (a client timeout, a client's own error) is
    no answer from the broker, and agrees with no refusal."""
    said = broker.unreadable_request_since(mark)
    if said:
        # 0.9's ApiKeys.forId indexes its array of the API keys it knows with the request's key
        key = re.search(r"ArrayIndexOutOfBoundsException: (?:Index )?(\d+)", said)
        if key:
            return UNREADABLE.format(key=key.group(1))
        return f"the broker logs that it cannot read the request: {said}"
    code = re.search(r"\[Error (-?\d+)\]", str(run.error))
    if code:
        return ERROR_CODE.format(code=code.group(1))
    return f"no answer from the broker (the client: {run.error})"


def _refusal(broker: OldBroker):
    """For a client the release is expected to refuse: the broker's word that it could not read the client's
    request, once it logged it (a refusal seen at once rather than waited out)."""
    mark = broker.log_mark()
    return lambda: broker.unreadable_request_since(mark)


def client_reads_magic(name: str) -> int:
    """The newest format a client parses: a Java client its release's; kafka-python parses every magic."""
    return next(c[2] for c in CLIENTS if c[0] == name) if name.startswith("java-") else 2


#: what :func:`model_consumed` and :func:`real_consumed` write for a consumer that stalls (no record, no error)
STALLS = {"stalls": "no record, no error"}


def client_line(name: str) -> str | None:
    """The Kafka line of a Java client (``java-0.9.0.1`` → ``0.9``), whose consumer decides what a parse error
    becomes (row ``consumer.unparsable_fetch``); None for kafka-python."""
    return check_line(name.split("-", 1)[1]) if name.startswith("java-") else None


def model_consumed(fetched: bytes, reads_magic: int, sees_time: bool, count: int,
                   line: str | None = None) -> list[dict]:
    """What the model says a client reading up to ``reads_magic`` gets from ``fetched``: its records
    (offset, key, value, and the timestamp when its API has one), then ``{"error": exception}`` if it fails;
    :data:`STALLS` alone when the Java consumer of ``line`` only logs its parse error."""
    view = consumer_view(fetched, client_magic=reads_magic, client_line=line)
    if view.outcome == "stalls":
        return [STALLS]
    out = [_seen({"offset": r.offset, "key": _text(r.key), "value": _text(r.value), "timestamp": r.timestamp},
                 sees_time) for r in view.records][:count]
    if view.error and len(out) < count:
        out.append({"error": view.error})
    return out


def stalled(run) -> bool:
    """Whether a consumer run stalled as row ``consumer.unparsable_fetch`` says a 0.9 Java consumer does: it
    received a fetch response and dropped it (its NetworkClient logged the exception its completion handler
    threw: :attr:`~kafkarig.oldclients.ClientRun.dropped`), then read nothing and raised nothing until its own
    poll loop ended (``consumed 0 of N``).  A client that never got a response (``OldClient``'s watchdog, a
    timeout with nothing logged) did not stall."""
    return (not run.ok and not run.records and str(run.error).startswith("consumed 0 of ")
            and getattr(run, "dropped", None) is not None)


def real_consumed(run, sees_time: bool) -> list[dict]:
    """A client run's records in :func:`model_consumed`'s shape; its failure as ``{"error": class name}``, and a
    client that read nothing and raised nothing until its timeout (:func:`stalled`) as :data:`STALLS`."""
    if stalled(run):
        return [STALLS]
    out = [_seen(r, sees_time) for r in run.records]
    if not run.ok:
        err = run.error or ""
        out.append({"error": err.split(":", 1)[0].rsplit(".", 1)[-1] if ": " in err and "." in err.split(":")[0]
                    else err})
    return out


def _text(b: bytes | None) -> str | None:
    return None if b is None else b.decode("utf-8", "replace")


def _seen(r: dict, sees_time: bool) -> dict:
    out = {"offset": r["offset"], "key": r["key"], "value": r["value"]}
    if sees_time:
        out["timestamp"] = r["timestamp"]
    return out


# --------------------------------------------------------------------------------- one release, every check
def plan(rel: Release) -> list[str]:
    """The names of the checks :func:`run_release` makes on ``rel``, in order (known before it runs)."""
    names = []
    for topic in _raw_topics(rel):
        names += [f"produce/{topic}/magic{m}-{c}" + ("-idempotent" if i else "") for m, c, i in _produce_cases(rel, topic)]
        if topic in FETCHED_TOPICS:
            names += [f"fetch/{topic}/v{v}" for v in FETCH_VERSIONS if v <= rel.fetch_versions[1]]
    names.append("dump/raw")
    names += [f"client-produce/{n}-{c}" for n, c in _client_cases()]
    names += [f"client-consume/{c[0]}" for c in CLIENTS]
    return names


def _raw_topics(rel: Release) -> dict[str, dict[str, str]]:
    """Topic → its configs. ``raw``: uncompressed first; ``rawgz``: gzip first (a conversion may follow
    the first batch's codec); ``raw-v0``: message.format.version=0.9.0 (seed 004's plan) from 0.10.0 on;
    ``raw-v1``: message.format.version=0.10.2 from 0.11 on (seed 003: an idempotent producer on a v1
    topic); ``rawlat``: message.timestamp.type=LogAppendTime from 0.10.0 on (KIP-32; produce only)."""
    topics: dict[str, dict[str, str]] = {"raw": {}, "rawgz": {}}
    if rel.max_magic >= 1:
        topics["raw-v0"] = {"message.format.version": "0.9.0"}
    if rel.max_magic >= 2:
        topics["raw-v1"] = {"message.format.version": "0.10.2"}
    if rel.max_magic >= 1:
        topics["rawlat"] = {"message.timestamp.type": "LogAppendTime"}
    return topics


#: the topics whose whole partition each client generation's Fetch reads
FETCHED_TOPICS = ("raw", "rawgz", "raw-v0", "raw-v1")


def _produce_cases(rel: Release, topic: str) -> list[tuple[int, str, bool]]:
    """(magic, compression, idempotent) in the order they are produced; from 0.11 on, an idempotent v2 batch
    last on ``raw`` and ``raw-v1``."""
    comps = ("gzip", "none") if topic == "rawgz" else ("none", "gzip")
    cases = [(m, c, False) for m in range(rel.max_magic + 1) for c in comps]
    if rel.max_magic >= 2 and topic in ("raw", "raw-v1"):
        cases.append((2, "none", True))
    return cases


def _client_cases() -> list[tuple[str, str]]:
    return [(c[0], "gzip" if c[1][0] == "java" else "none") for c in CLIENTS]


def run_release(cluster: OldCluster, broker: OldBroker, rel: Release) -> dict[str, Check]:
    """Every check of :func:`plan` on ``broker`` (a lone broker of ``rel`` in ``cluster``)."""
    out: dict[str, Check] = {}
    for topic, configs in _raw_topics(rel).items():
        cluster.create_topic(topic, configs=configs or None)
        fmt = configs.get("message.format.version")
        leo = key = 0
        for magic, comp, idempotent in _produce_cases(rel, topic):
            check, leo = produce_check(cluster, broker, rel, topic, fmt, magic, comp, leo, key, idempotent, configs)
            key += 3
            out[check.check] = check
        for v in FETCH_VERSIONS:
            if v <= rel.fetch_versions[1] and topic in FETCHED_TOPICS:
                check = fetch_check(broker, rel, topic, fmt, v)
                out[check.check] = check
    check = dump_check(cluster, broker, rel, "raw")
    out[check.check] = check
    cluster.create_topic("clients")
    leo = 0
    for name, comp in _client_cases():
        check, leo = client_produce_check(broker, rel, "clients", name, comp, leo)
        out[check.check] = check
    for c in CLIENTS:
        check = client_consume_check(broker, rel, "clients", c[0], leo)
        out[check.check] = check
    return out
