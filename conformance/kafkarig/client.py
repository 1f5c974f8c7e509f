"""A minimal Kafka wire-protocol client: raw record-set bytes in, raw record-set bytes out.

Only what the conformance runner needs, only non-flexible (pre-KIP-482) request versions, every
field written explicitly (https://kafka.apache.org/protocol, "The Messages"):

==================  =======  ===============================================================
API                 key      versions
==================  =======  ===============================================================
Produce             0        0-8   (v0-v2: message sets of magic 0/1; v3+: one v2 batch;
                                    v7+: zstd allowed)
Fetch               1        0-11  (v0/v1: down-converted to magic 0, v2/v3: magic 1,
                                    v4+: magic 2 as stored; v10+: zstd topics)
ListOffsets         2        1-5
Metadata            3        1
ApiVersions         18       0
CreateTopics        19       2-4
IncrementalAlter-   44       0     (topic configs: SET / DELETE; KIP-339)
Configs
==================  =======  ===============================================================

The record bytes given to :meth:`KafkaClient.produce` go on the wire verbatim, and
:meth:`KafkaClient.fetch` returns the partition's ``records`` field verbatim (``None`` if null).
Request header v1 (api_key, api_version, correlation_id, client_id), response header v0.
"""
from __future__ import annotations

import socket
import struct
import time
from dataclasses import dataclass, field

API_PRODUCE = 0
API_FETCH = 1
API_LIST_OFFSETS = 2
API_METADATA = 3
API_API_VERSIONS = 18
API_CREATE_TOPICS = 19
API_INCREMENTAL_ALTER_CONFIGS = 44

#: ConfigResource.Type.TOPIC (org.apache.kafka.common.config.ConfigResource)
RESOURCE_TOPIC = 2
#: AlterConfigOp.OpType ids (org.apache.kafka.clients.admin.AlterConfigOp)
CONFIG_OP_SET, CONFIG_OP_DELETE = 0, 1

#: error codes used by the runner (org.apache.kafka.common.protocol.Errors)
ERROR_NAMES = {
    -1: "UNKNOWN_SERVER_ERROR", 0: "NONE", 1: "OFFSET_OUT_OF_RANGE", 2: "CORRUPT_MESSAGE",
    3: "UNKNOWN_TOPIC_OR_PARTITION", 4: "INVALID_FETCH_SIZE", 5: "LEADER_NOT_AVAILABLE",
    6: "NOT_LEADER_OR_FOLLOWER", 7: "REQUEST_TIMED_OUT", 10: "MESSAGE_TOO_LARGE", 18: "RECORD_LIST_TOO_LARGE",
    32: "INVALID_TIMESTAMP", 35: "UNSUPPORTED_VERSION", 36: "TOPIC_ALREADY_EXISTS", 40: "INVALID_CONFIG",
    41: "NOT_CONTROLLER", 42: "INVALID_REQUEST", 43: "UNSUPPORTED_FOR_MESSAGE_FORMAT",
    45: "OUT_OF_ORDER_SEQUENCE_NUMBER", 53: "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", 46: "DUPLICATE_SEQUENCE_NUMBER",
    47: "INVALID_PRODUCER_EPOCH",
    59: "UNKNOWN_PRODUCER_ID", 76: "UNSUPPORTED_COMPRESSION_TYPE", 87: "INVALID_RECORD",
}

#: transient errors right after topic creation / broker start: retried by the client helpers
RETRIABLE = {3, 5, 6, 7, 41}


def error_name(code: int) -> str:
    return ERROR_NAMES.get(code, f"ERROR_{code}")


class ProtocolError(RuntimeError):
    """The broker answered something this client cannot parse, or the connection broke."""


# ----------------------------------------------------------------------------------------- encoding
class Writer:
    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def int8(self, v: int) -> "Writer":
        self.parts.append(struct.pack(">b", v))
        return self

    def int16(self, v: int) -> "Writer":
        self.parts.append(struct.pack(">h", v))
        return self

    def int32(self, v: int) -> "Writer":
        self.parts.append(struct.pack(">i", v))
        return self

    def int64(self, v: int) -> "Writer":
        self.parts.append(struct.pack(">q", v))
        return self

    def boolean(self, v: bool) -> "Writer":
        return self.int8(1 if v else 0)

    def string(self, v: str | None) -> "Writer":
        if v is None:
            return self.int16(-1)
        b = v.encode("utf-8")
        self.int16(len(b))
        self.parts.append(b)
        return self

    def bytes_(self, v: bytes | None) -> "Writer":
        if v is None:
            return self.int32(-1)
        self.int32(len(v))
        self.parts.append(bytes(v))
        return self

    def array(self, items, fn) -> "Writer":
        if items is None:
            return self.int32(-1)
        items = list(items)
        self.int32(len(items))
        for it in items:
            fn(self, it)
        return self

    def getvalue(self) -> bytes:
        return b"".join(self.parts)


class Reader:
    def __init__(self, buf: bytes, pos: int = 0) -> None:
        self.buf = buf
        self.pos = pos

    def _take(self, fmt: str, n: int):
        if self.pos + n > len(self.buf):
            raise ProtocolError(f"response truncated at byte {self.pos} (need {n} more)")
        (v,) = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += n
        return v

    def int8(self) -> int:
        return self._take(">b", 1)

    def int16(self) -> int:
        return self._take(">h", 2)

    def int32(self) -> int:
        return self._take(">i", 4)

    def int64(self) -> int:
        return self._take(">q", 8)

    def boolean(self) -> bool:
        return self.int8() != 0

    def string(self) -> str | None:
        n = self.int16()
        if n < 0:
            return None
        s = self.buf[self.pos:self.pos + n].decode("utf-8")
        self.pos += n
        return s

    def bytes_(self) -> bytes | None:
        n = self.int32()
        if n < 0:
            return None
        if self.pos + n > len(self.buf):
            raise ProtocolError(f"bytes field of {n} truncated at {self.pos}")
        b = self.buf[self.pos:self.pos + n]
        self.pos += n
        return b

    def array(self, fn) -> list | None:
        n = self.int32()
        if n < 0:
            return None
        return [fn(self) for _ in range(n)]


# ----------------------------------------------------------------------------------------- results
@dataclass
class ProduceResult:
    error_code: int
    base_offset: int
    log_append_time: int = -1
    log_start_offset: int = -1
    record_errors: list[tuple[int, str | None]] = field(default_factory=list)
    error_message: str | None = None
    version: int = 0

    @property
    def error(self) -> str:
        return error_name(self.error_code)


@dataclass
class FetchResult:
    error_code: int
    high_watermark: int
    records: bytes | None
    last_stable_offset: int = -1
    log_start_offset: int = -1
    aborted_transactions: list[tuple[int, int]] | None = None
    version: int = 0

    @property
    def error(self) -> str:
        return error_name(self.error_code)


@dataclass
class ListOffsetsResult:
    error_code: int
    timestamp: int
    offset: int
    leader_epoch: int = -1


# ----------------------------------------------------------------------------------------- client
class KafkaClient:
    """One TCP connection to one broker; requests are sent one at a time (no pipelining)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 9092, *, client_id: str = "kafkafmt-conformance",
                 timeout: float = 30.0) -> None:
        self.host, self.port, self.client_id, self.timeout = host, port, client_id, timeout
        self._sock: socket.socket | None = None
        self._correlation = 0

    # -- plumbing ---------------------------------------------------------------------------
    def connect(self) -> "KafkaClient":
        if self._sock is None:
            s = socket.create_connection((self.host, self.port), timeout=self.timeout)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._sock = s
        return self

    def close(self) -> None:
        if self._sock is not None:
            try:
                self._sock.close()
            finally:
                self._sock = None

    def __enter__(self) -> "KafkaClient":
        return self.connect()

    def __exit__(self, *exc) -> None:
        self.close()

    def _recv_exact(self, n: int) -> bytes:
        chunks, got = [], 0
        while got < n:
            c = self._sock.recv(min(n - got, 1 << 20))
            if not c:
                raise ProtocolError("connection closed by the broker")
            chunks.append(c)
            got += len(c)
        return b"".join(chunks)

    def request(self, api_key: int, version: int, body: bytes) -> Reader:
        """Send one request (header v1) and return a reader positioned after the response header."""
        self.connect()
        self._correlation += 1
        cid = self._correlation
        header = Writer().int16(api_key).int16(version).int32(cid).string(self.client_id).getvalue()
        payload = header + body
        try:
            self._sock.sendall(struct.pack(">i", len(payload)) + payload)
            (size,) = struct.unpack(">i", self._recv_exact(4))
            resp = self._recv_exact(size)
        except (OSError, ProtocolError) as e:
            self.close()
            raise ProtocolError(f"api {api_key} v{version}: {e}") from e
        r = Reader(resp)
        got = r.int32()
        if got != cid:
            self.close()
            raise ProtocolError(f"correlation id {got}, expected {cid}")
        return r

    # -- ApiVersions v0 -----------------------------------------------------------------------
    def api_versions(self) -> dict[int, tuple[int, int]]:
        r = self.request(API_API_VERSIONS, 0, b"")
        err = r.int16()
        apis = r.array(lambda r: (r.int16(), r.int16(), r.int16()))
        if err:
            raise ProtocolError(f"ApiVersions error {error_name(err)}")
        return {k: (lo, hi) for k, lo, hi in apis}

    # -- Metadata v1 ---------------------------------------------------------------------------
    def metadata(self, topics: list[str] | None) -> dict:
        body = Writer().array(topics, lambda w, t: w.string(t)).getvalue()
        r = self.request(API_METADATA, 1, body)
        brokers = r.array(lambda r: (r.int32(), r.string(), r.int32(), r.string()))
        controller = r.int32()

        def part(r):
            return {"error": r.int16(), "partition": r.int32(), "leader": r.int32(),
                    "replicas": r.array(lambda r: r.int32()), "isr": r.array(lambda r: r.int32())}

        def topic(r):
            return {"error": r.int16(), "name": r.string(), "internal": r.boolean(), "partitions": r.array(part)}

        return {"brokers": brokers, "controller": controller, "topics": r.array(topic)}

    def wait_for_leader(self, topic: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            md = self.metadata([topic])
            t = md["topics"][0]
            if t["error"] == 0 and t["partitions"] and all(p["leader"] >= 0 and p["error"] == 0
                                                          for p in t["partitions"]):
                return
            if time.monotonic() > deadline:
                raise ProtocolError(f"topic {topic}: no leader after {timeout}s: {t}")
            time.sleep(0.05)

    # -- CreateTopics v2-v4 ------------------------------------------------------------------------
    def create_topic(self, name: str, configs: dict[str, str] | None = None, *, partitions: int = 1,
                     replication_factor: int = 1, timeout_ms: int = 30000, version: int = 3,
                     retry_for: float = 30.0) -> tuple[int, str | None]:
        """Create one topic; returns ``(error_code, error_message)``. NOT_CONTROLLER is retried."""
        cfg = sorted((configs or {}).items())

        def topic(w, _):
            w.string(name).int32(partitions).int16(replication_factor)
            w.array([], lambda w, a: None)  # no manual assignment
            w.array(cfg, lambda w, kv: w.string(kv[0]).string(None if kv[1] is None else str(kv[1])))

        body = Writer().array([None], topic).int32(timeout_ms).boolean(False).getvalue()
        deadline = time.monotonic() + retry_for
        while True:
            r = self.request(API_CREATE_TOPICS, version, body)
            r.int32()  # throttle_time_ms (v2+)
            (res,) = r.array(lambda r: (r.string(), r.int16(), r.string()))
            _, err, msg = res
            if err in (41,) and time.monotonic() < deadline:  # NOT_CONTROLLER while the broker starts
                time.sleep(0.1)
                continue
            return err, msg

    # -- IncrementalAlterConfigs v0 -------------------------------------------------------------------
    @staticmethod
    def incremental_alter_configs_body(topic: str, configs: dict[str, str | None], *,
                                       validate_only: bool = False) -> bytes:
        """IncrementalAlterConfigsRequest v0 (``IncrementalAlterConfigsRequest.json``) for one topic:
        resources [resource_type int8, resource_name string, configs [name string, config_operation int8,
        value nullable string]], validate_only bool.  A ``None`` value DELETEs the key (back to the
        broker default), any other value SETs it."""
        items = sorted(configs.items())

        def cfg(w, kv):
            name, value = kv
            w.string(name).int8(CONFIG_OP_DELETE if value is None else CONFIG_OP_SET)
            w.string(None if value is None else str(value))

        def resource(w, _):
            w.int8(RESOURCE_TOPIC).string(topic).array(items, cfg)

        return Writer().array([None], resource).boolean(validate_only).getvalue()

    @staticmethod
    def parse_incremental_alter_configs_response(r: Reader) -> list[tuple[int, str | None, int, str]]:
        """IncrementalAlterConfigsResponse v0 after the header: throttle_time_ms int32, responses
        [error_code int16, error_message nullable string, resource_type int8, resource_name string]."""
        r.int32()  # throttle_time_ms
        return r.array(lambda r: (r.int16(), r.string(), r.int8(), r.string())) or []

    def alter_topic_configs(self, topic: str, configs: dict[str, str | None], *,
                            validate_only: bool = False) -> tuple[int, str | None]:
        """Change a topic's configs as ``kafka-configs --alter --add-config/--delete-config`` does
        (IncrementalAlterConfigs v0); returns ``(error_code, error_message)``.  In ZooKeeper mode the
        broker applies the change asynchronously (a ZK config-change notification)."""
        body = self.incremental_alter_configs_body(topic, configs, validate_only=validate_only)
        r = self.request(API_INCREMENTAL_ALTER_CONFIGS, 0, body)
        res = self.parse_incremental_alter_configs_response(r)
        if len(res) != 1 or res[0][2] != RESOURCE_TOPIC or res[0][3] != topic:
            raise ProtocolError(f"IncrementalAlterConfigs: unexpected resources in the response: {res}")
        return res[0][0], res[0][1]

    # -- Produce v0-v8 ----------------------------------------------------------------------------------
    def produce(self, topic: str, partition: int, records: bytes, *, version: int, acks: int = -1,
                timeout_ms: int = 30000, transactional_id: str | None = None) -> ProduceResult:
        """Send ``records`` verbatim in one Produce request and return the partition's answer
        (:meth:`produce_partitions` of one partition)."""
        answers = self.produce_partitions([(topic, partition, records)], version=version, acks=acks,
                                          timeout_ms=timeout_ms, transactional_id=transactional_id)
        if len(answers) != 1:
            raise ProtocolError(f"Produce: {len(answers)} partitions in the answer to one: {sorted(answers)}")
        return next(iter(answers.values()))

    def produce_partitions(self, parts, *, version: int, acks: int = -1, timeout_ms: int = 30000,
                           transactional_id: str | None = None) -> dict[tuple[str, int], ProduceResult]:
        """One Produce request of several partitions: ``parts`` is ``[(topic, partition, records), ...]`` in the
        order they are written (one topic entry per run of the same topic); the answer per ``(topic, partition)``."""
        if not 0 <= version <= 8:
            raise ValueError(f"Produce v{version} is not implemented (0..8)")
        runs: list[tuple[str, list]] = []
        for topic, partition, records in parts:
            if not runs or runs[-1][0] != topic:
                runs.append((topic, []))
            runs[-1][1].append((partition, records))
        w = Writer()
        if version >= 3:
            w.string(transactional_id)
        w.int16(acks).int32(timeout_ms)
        w.array(runs, lambda w, run: w.string(run[0]).array(
            run[1], lambda w, pr: w.int32(pr[0]).bytes_(pr[1])))
        r = self.request(API_PRODUCE, version, w.getvalue())

        def part(r):
            index = r.int32()
            res = ProduceResult(error_code=r.int16(), base_offset=r.int64(), version=version)
            if version >= 2:
                res.log_append_time = r.int64()
            if version >= 5:
                res.log_start_offset = r.int64()
            if version >= 8:
                res.record_errors = r.array(lambda r: (r.int32(), r.string())) or []
                res.error_message = r.string()
            return index, res

        out = {}
        for topic, answers in r.array(lambda r: (r.string(), r.array(part))):
            for index, res in answers:
                out[(topic, index)] = res
        return out

    def produce_retrying(self, topic: str, partition: int, records: bytes, *, version: int,
                         retry_for: float = 20.0, **kw) -> ProduceResult:
        """:meth:`produce`, retrying the transient leadership errors of a freshly created topic."""
        deadline = time.monotonic() + retry_for
        while True:
            res = self.produce(topic, partition, records, version=version, **kw)
            if res.error_code in RETRIABLE and time.monotonic() < deadline:
                time.sleep(0.05)
                continue
            return res

    # -- Fetch v0-v11 -------------------------------------------------------------------------------------
    def fetch(self, topic: str, partition: int, offset: int, *, version: int, max_bytes: int = 1 << 20,
              partition_max_bytes: int = 1 << 20, max_wait_ms: int = 0, min_bytes: int = 0,
              isolation_level: int = 0) -> FetchResult:
        """One Fetch request for one partition (as a consumer: replica_id -1); records verbatim."""
        if not 0 <= version <= 11:
            raise ValueError(f"Fetch v{version} is not implemented (0..11)")
        w = Writer().int32(-1).int32(max_wait_ms).int32(min_bytes)
        if version >= 3:
            w.int32(max_bytes)
        if version >= 4:
            w.int8(isolation_level)
        if version >= 7:
            w.int32(0).int32(-1)  # session_id 0, session_epoch -1 (FINAL_EPOCH: no session)

        def part(w, _):
            w.int32(partition)
            if version >= 9:
                w.int32(-1)  # current_leader_epoch
            w.int64(offset)
            if version >= 5:
                w.int64(-1)  # log_start_offset (followers only)
            w.int32(partition_max_bytes)

        w.array([None], lambda w, _: w.string(topic).array([None], part))
        if version >= 7:
            w.array([], lambda w, t: None)  # forgotten_topics_data
        if version >= 11:
            w.string("")  # rack_id
        r = self.request(API_FETCH, version, w.getvalue())
        if version >= 1:
            r.int32()  # throttle_time_ms
        if version >= 7:
            top_err = r.int16()
            r.int32()  # session_id
            if top_err:
                return FetchResult(error_code=top_err, high_watermark=-1, records=None, version=version)

        def rpart(r):
            r.int32()  # partition index
            res = FetchResult(error_code=r.int16(), high_watermark=r.int64(), records=None, version=version)
            if version >= 4:
                res.last_stable_offset = r.int64()
                if version >= 5:
                    res.log_start_offset = r.int64()
                res.aborted_transactions = r.array(lambda r: (r.int64(), r.int64()))
                if version >= 11:
                    r.int32()  # preferred_read_replica
            res.records = r.bytes_()
            return res

        topics = r.array(lambda r: (r.string(), r.array(rpart)))
        return topics[0][1][0]

    # -- ListOffsets v1-v5 ------------------------------------------------------------------------------------
    def list_offsets(self, topic: str, partition: int, timestamp: int, *, version: int = 4,
                     isolation_level: int = 0) -> ListOffsetsResult:
        if not 1 <= version <= 5:
            raise ValueError(f"ListOffsets v{version} is not implemented (1..5)")
        w = Writer().int32(-1)
        if version >= 2:
            w.int8(isolation_level)

        def part(w, _):
            w.int32(partition)
            if version >= 4:
                w.int32(-1)
            w.int64(timestamp)

        w.array([None], lambda w, _: w.string(topic).array([None], part))
        r = self.request(API_LIST_OFFSETS, version, w.getvalue())
        if version >= 2:
            r.int32()

        def rpart(r):
            r.int32()
            res = ListOffsetsResult(error_code=r.int16(), timestamp=r.int64(), offset=r.int64())
            if version >= 4:
                res.leader_epoch = r.int32()
            return res

        topics = r.array(lambda r: (r.string(), r.array(rpart)))
        return topics[0][1][0]


__all__ = ["KafkaClient", "API_INCREMENTAL_ALTER_CONFIGS", "RESOURCE_TOPIC", "ProduceResult", "FetchResult",
           "ListOffsetsResult", "ProtocolError", "error_name", "ERROR_NAMES", "RETRIABLE", "Writer", "Reader"]
