"""What a message-format conversion costs a real Kafka broker: CPU, throughput, latency and heap, per release.

``make bench-conversion`` (``--quick`` for development) starts real brokers of the releases one at a time through
the test rig (``conformance/kafkarig``: :class:`~kafkarig.oldcluster.OldCluster` for 0.9.0.1 ... 2.8.2,
:class:`~kafkarig.broker.KafkaBroker` for 3.9.2, :class:`~kafkarig.kraft.KRaftBroker` for 4.4.0) with Kafka's own
JVM defaults (``kafka-run-class.sh``: G1, 1 GiB heap, minus ``ExplicitGCInvokesConcurrent`` so that a
``jcmd GC.run`` is a full collection), and measures, zero-copy as the baseline:

* **fetch**: the same log (written by the broker itself from kafkafmt-built batches, one topic per codec) read
  end to end by a consumer of each fetch generation, one partition per request, 1 MiB partition max bytes:
  the newest fetch version (zero-copy, ``sendfile``), Fetch v3 (down-converted to magic 1, KIP-32) and Fetch v1
  (to magic 0).  0.10.2.2 and 1.1.1 convert eagerly (the whole response in memory), 2.8.2 and 3.9.2 lazily
  (KIP-283, ``LazyDownConversionRecordsSend``), 4.4.0 never (KIP-724/KIP-896: it answers Fetch v4+ only);
* **produce**: compressed message sets from producers of each generation (magic 0: a 0.9 producer, Produce v0;
  magic 1: 0.10, Produce v2; magic 2: 0.11+, Produce v3) into 0.9.0.1 (absolute offsets: every compressed set
  decompressed and recompressed), 0.10.2.2 (KIP-31's relative offsets: a magic 1 set validated in place, only the
  wrapper offset set; a magic 0 set up-converted) and 3.9.2 (magic 0/1 up-converted to v2, v2 in place);
* **heap** (1.1.1 eager against 2.8.2 lazy): one large down-converted fetch, on a second start of the broker with
  the serial collector and a 768 MiB young generation: ``allocated`` is the growth of the used heap
  (``jcmd GC.heap_info``) across the fetch with no collection in between (checked by ``jstat``'s collection
  counts; median of the repetitions), ``held`` the live heap (``jcmd GC.class_histogram``'s total, after its
  full collection) while the response is in flight and the consumer, its receive buffer 4 KiB, has not read it,
  minus the same just before (once per release: the first conversion since the start, because a 1.1.1 broker
  keeps its last converted response reachable after sending it, which ``live_after`` shows).  ``jstat``'s
  used-space counters are sampled, not exact after a ``GC.run``: not used for sizes.

Broker CPU is the sum of the JVM's threads' ``/proc/<pid>/task/*/schedstat`` run time (ns) around each run,
without its JIT compiler threads (counted apart as ``jit_s``: a fresh JVM compiles for minutes, in bursts that
weigh as much as a small cell), on a warm JVM (every cell run once before the measured repetitions);
``utime + stime`` from ``/proc/<pid>/stat`` (clock ticks, the whole JVM) is kept beside it.  A fetch cell runs
whole passes until it has served its bytes and the broker has spent ``min_cpu_s`` (0.3 s), so that a cheap
zero-copy cell is not a few milliseconds beside the broker's own background, which is measured too: the broker's
CPU over one idle second after each repetition (``idle``).  Repetitions are interleaved (every cell once per repetition,
the order rotated); figures are medians; the headline ratios (down-converted / zero-copy per release and codec,
0.9 / 0.10 produce, eager / lazy heap) are the medians of the per-repetition ratios.  The client (this Python
process) shares the machine: MB/s and latencies are lower bounds.

Results: the ratio table on stdout, ``build/bench/conversion.json`` (every measurement, the machine, its load
before and after, the date) and the docs' tables ``docs/_data/bench/conversion_*.json`` with ``--docs``.
A broker that does not start, or a release the rig cannot run, is one line on stderr and exit status 1;
every JVM started is stopped.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "conformance")]

from kafkafmt.records.builder import build_records  # noqa: E402
from kafkarig.single_broker import SingleBroker  # noqa: E402

OUT = ROOT / "build" / "bench"
DOCS_DATA = ROOT / "docs" / "_data" / "bench"
CLK_TCK = os.sysconf("SC_CLK_TCK")
#: kafka-run-class.sh's KAFKA_HEAP_OPTS and KAFKA_JVM_PERFORMANCE_OPTS, without ExplicitGCInvokesConcurrent
KAFKA_JVM_OPTS = ["-Xmx1G", "-Xms1G", "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
                  "-XX:InitiatingHeapOccupancyPercent=35", "-Djava.awt.headless=true", "-Xss1m",
                  "-Dzookeeper.admin.enableServer=false"]
#: the heap measurement's JVM: no collection can happen within one fetch's allocations
HEAP_JVM_OPTS = ["-Xmx1G", "-Xms1G", "-Xmn768m", "-XX:+UseSerialGC", "-Djava.awt.headless=true", "-Xss1m",
                 "-Dzookeeper.admin.enableServer=false"]
BROKER_OVERRIDES = {"auto.create.topics.enable": "true", "num.partitions": "1", "log.retention.hours": "876000",
                    "log.segment.bytes": str(1 << 30), "message.max.bytes": str(8 << 20),
                    "replica.fetch.max.bytes": str(8 << 20), "socket.request.max.bytes": str(200 << 20)}
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")

#: the releases measured, with what they do: the fetch generations they down-convert to, the codecs they
#: have (zstd: KIP-110, 2.1), the newest record format they write and the newest Fetch/Produce version this
#: harness sends them (kafkarig.client implements Fetch v0-v11)
LINES = {
    "0.9.0.1": {"magic": 0, "fetch": None, "produce": (0,), "codecs": CODECS[:4], "conversion": "none"},
    "0.10.2.2": {"magic": 1, "fetch": 3, "produce": (0, 1), "codecs": CODECS[:4], "conversion": "eager"},
    "1.1.1": {"magic": 2, "fetch": 7, "produce": (), "codecs": CODECS[:4], "conversion": "eager"},
    "2.8.2": {"magic": 2, "fetch": 11, "produce": (), "codecs": CODECS, "conversion": "lazy"},
    "3.9.2": {"magic": 2, "fetch": 11, "produce": (0, 1, 2), "codecs": CODECS, "conversion": "lazy"},
    "4.4.0": {"magic": 2, "fetch": 11, "produce": (), "codecs": CODECS, "conversion": "none (KIP-724)"},
}
PRODUCE_VERSION = {0: 0, 1: 2, 2: 3}  # the Produce version a producer of each magic sends


def produce_version(magic: int, codec: str) -> int:
    """zstd needs Produce v7 (KIP-110: ``ProduceRequest`` refuses zstd below it)."""
    return 7 if codec == "zstd" else PRODUCE_VERSION[magic]
FETCH_FOR_MAGIC = {0: 1, 1: 3}        # Fetch v1 reads magic 0, v3 magic 1 (KIP-32)


@dataclass
class Sizes:
    """How much data each part moves (``--quick`` divides by 8)."""

    records_per_set: int = 200
    value_size: int = 200
    log_records: int = 24_000          # records per fetch topic (the main shape; about 5.5 MB uncompressed)
    zero_copy_bytes: int = 64 << 20    # bytes served per zero-copy run
    convert_bytes: int = 16 << 20      # bytes served per down-converted run
    produce_records: int = 40_000      # records sent per produce run
    heap_fetch_bytes: int = 32 << 20   # the one large fetch
    reps: int = 3
    min_cpu_s: float = 0.3             # a fetch cell also runs until the broker spent this much CPU (ticks)
    small_max_bytes: int = 64 << 10    # the partition max bytes of the fit's small-request zero-copy cell

    def quick(self) -> "Sizes":
        return Sizes(self.records_per_set, self.value_size, self.log_records // 3, self.zero_copy_bytes // 8,
                     self.convert_bytes // 8, self.produce_records // 8, self.heap_fetch_bytes // 4, self.reps,
                     self.min_cpu_s / 8, self.small_max_bytes)


# ----------------------------------------------------------------------------------------------- measuring
def cpu_ticks(pid: int) -> int:
    """utime + stime of ``pid`` (clock ticks), /proc/<pid>/stat fields 14 and 15."""
    with open(f"/proc/{pid}/stat") as f:
        rest = f.read().rsplit(")", 1)[1].split()
    return int(rest[11]) + int(rest[12])


#: the JVM's just-in-time compiler threads (HotSpot names them so in /proc/<pid>/task/*/comm)
JIT_THREADS = ("C1 CompilerThre", "C2 CompilerThre", "Sweeper thread")


def cpu_ns(pid: int) -> tuple[int, int]:
    """The run time (ns) of every live thread of ``pid`` from /proc/<pid>/task/*/schedstat: ``(work, jit)``, the
    JIT compiler threads apart.  A JVM keeps compiling long after a warm-up pass (C2 spent as much CPU as the
    network threads over the first GB a 3.9.2 broker served here, and kept going in bursts): compilation is a
    one-off of a fresh broker, not the price of a request, and in a small cell it is the noise."""
    work = jit = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                ns = int(f.read().split()[0])
            with open(f"/proc/{pid}/task/{task}/comm") as f:
                name = f.read().strip()
        except (OSError, ValueError, IndexError):
            continue
        if name.startswith(JIT_THREADS):
            jit += ns
        else:
            work += ns
    return work, jit


@dataclass
class Run:
    """One measured run: broker CPU, bytes served, wall time, request latencies."""

    cpu_s: float
    cpu_ns_s: float
    bytes: int
    source_bytes: int
    records: int
    wall_s: float
    latencies_ms: list = field(default_factory=list)
    max_bytes: int = 1 << 20
    jit_s: float = 0.0

    def summary(self) -> dict:
        lat = sorted(self.latencies_ms)
        pick = (lambda q: lat[min(len(lat) - 1, int(q * len(lat)))]) if lat else (lambda q: None)
        gb = self.bytes / 1e9
        return {"cpu_s": self.cpu_s, "cpu_sched_s": round(self.cpu_ns_s, 4), "bytes": self.bytes,
                "source_bytes": self.source_bytes, "records": self.records, "wall_s": round(self.wall_s, 4),
                "cpu_s_per_gb": round(self.cpu_s / gb, 3) if gb else None,
                "cpu_sched_s_per_gb": round(self.cpu_ns_s / gb, 3) if gb else None,
                "mb_per_s": round(self.bytes / 1e6 / self.wall_s, 1) if self.wall_s else None,
                "p50_ms": pick(0.50) and round(pick(0.50), 2), "p99_ms": pick(0.99) and round(pick(0.99), 2),
                "requests": len(lat), "max_bytes": self.max_bytes, "jit_s": round(self.jit_s, 4)}


class Meter:
    """Broker CPU around a block: ``with Meter(pid) as m: ...; m.cpu_s``."""

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def __enter__(self) -> "Meter":
        self.t0, (self.n0, self.j0), self.w0 = cpu_ticks(self.pid), cpu_ns(self.pid), time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        self.wall = time.perf_counter() - self.w0
        self.cpu_s = (cpu_ticks(self.pid) - self.t0) / CLK_TCK
        n1, j1 = cpu_ns(self.pid)
        self.cpu_ns_s, self.jit_s = (n1 - self.n0) / 1e9, (j1 - self.j0) / 1e9


# ----------------------------------------------------------------------------------------------- data
def record_rows(n: int, value_size: int, seed: int) -> list[tuple]:
    """``n`` ``(timestamp, key, value)`` rows of sensor-like text (a small vocabulary, so codecs find repeats)."""
    rng = random.Random(seed)
    words = [b"temp", b"humidity", b"pressure", b"sensor", b"ok", b"warn", b"room", b"floor", b"north", b"east"]
    now = int(time.time() * 1000)
    rows = []
    for i in range(n):
        value = b""
        while len(value) < value_size:
            value += rng.choice(words) + b"=" + str(rng.randint(0, 9999)).encode() + b";"
        rows.append((now + i, f"key-{seed}-{i}".encode(), value[:value_size]))
    return rows


def message_sets(magic: int, codec: str, sizes: Sizes, count: int = 8) -> list[bytes]:
    """``count`` distinct message sets (v0/v1 wrappers or v2 batches) of ``records_per_set`` records each."""
    out = []
    for seed in range(count):
        rows = record_rows(sizes.records_per_set, sizes.value_size, seed)
        if magic == 0:
            rows = [(-1, k, v) for _, k, v in rows]
        out.append(build_records(rows, magic=magic, compression=codec))
    return out


def last_offset_in(records: bytes) -> int:
    """The last offset of the last complete entry of a fetched record set (-1 if none)."""
    pos, last, n = 0, -1, len(records)
    while pos + 17 <= n:
        off, size = struct.unpack_from(">qi", records, pos)
        if off < 0 or pos + 12 + size > n:
            break
        last = off + struct.unpack_from(">i", records, pos + 23)[0] if records[pos + 16] >= 2 else off
        pos += 12 + size
    return last


# ----------------------------------------------------------------------------------------------- brokers
class BenchError(RuntimeError):
    """A broker that does not start or answer, or a release this benchmark cannot run; one line."""


class Broker(SingleBroker):
    """One broker of a release started with ``jvm_opts`` and :data:`BROKER_OVERRIDES` by the rig
    (:class:`~kafkarig.single_broker.SingleBroker`: KRaft for 4.4.0, the ``modern`` profile for 3.9.2, an
    :class:`~kafkarig.oldcluster.OldCluster` for older releases); one that does not start is a :class:`BenchError`."""

    def __init__(self, version: str, jvm_opts: list[str], root: Path) -> None:
        from kafkarig.broker import BrokerError
        from kafkarig.releases import ReleaseError
        try:
            super().__init__(version, root, BROKER_OVERRIDES, profile="modern", jvm_opts=jvm_opts)
        except (BrokerError, ReleaseError, OSError) as e:
            raise BenchError(f"Kafka {version}: {str(e).splitlines()[0]}") from e

    def client(self, timeout: float = 60.0):
        return super().client(timeout, client_id="costbench")

    def create_topic(self, name: str) -> None:
        if self.version in ("3.9.2", "4.4.0"):
            with self.client() as c:
                err, msg = c.create_topic(name, {"retention.ms": "-1"})
                if err not in (0, 36):
                    raise BenchError(f"Kafka {self.version}: CreateTopics {name}: error {err} {msg}")
        self.wait_leaders([name])  # Metadata v0 auto-creates on old releases (auto.create.topics.enable)


def produce_all(broker: Broker, topic: str, sets: list[bytes], n_sets: int, version: int) -> tuple[Run, int]:
    """Send ``n_sets`` message sets (cycling through ``sets``), acks=1, one per request; broker CPU measured."""
    lat = []
    sent = 0
    with broker.client() as c, Meter(broker.pid) as m:
        for i in range(n_sets):
            s = sets[i % len(sets)]
            t = time.perf_counter()
            res = c.produce(topic, 0, s, version=version, acks=1)
            lat.append((time.perf_counter() - t) * 1e3)
            if res.error_code:
                raise BenchError(f"Kafka {broker.version}: produce v{version} to {topic}: {res.error}")
            sent += len(s)
    return Run(m.cpu_s, m.cpu_ns_s, sent, sent, 0, m.wall, lat, jit_s=m.jit_s), res.base_offset


def fetch_pass(c, topic: str, version: int, end: int, max_bytes: int, lat: list) -> tuple[int, int]:
    """Read ``topic`` from offset 0 to ``end`` with Fetch ``version``: (records bytes received, requests)."""
    offset, got = 0, 0
    while offset < end:
        t = time.perf_counter()
        r = c.fetch(topic, 0, offset, version=version, max_bytes=max_bytes, partition_max_bytes=max_bytes)
        lat.append((time.perf_counter() - t) * 1e3)
        if r.error_code:
            raise BenchError(f"fetch v{version} of {topic} at {offset}: {r.error}")
        data = r.records or b""
        last = last_offset_in(data)
        if last < offset:
            raise BenchError(f"fetch v{version} of {topic} at {offset}: no complete entry in {len(data)} bytes")
        got += len(data)
        offset = last + 1
    return got, len(lat)


def fetch_run(broker: Broker, topic: str, version: int, end: int, source_size: int, target_bytes: int,
              max_bytes: int = 1 << 20, min_cpu_s: float = 0.0) -> Run:
    """Whole passes over the topic until ``target_bytes`` were served and the broker spent ``min_cpu_s`` of CPU
    (its clock ticks, read after each pass: a cheap file; so that a cheap zero-copy cell is not a handful of
    ticks beside the JVM's own background work); broker CPU around all of them."""
    lat: list = []
    served = passes = 0
    min_ticks = min_cpu_s * CLK_TCK
    with broker.client() as c, Meter(broker.pid) as m:
        while served < target_bytes or cpu_ticks(broker.pid) - m.t0 < min_ticks:
            got, _ = fetch_pass(c, topic, version, end, max_bytes, lat)
            served += got
            passes += 1
    return Run(m.cpu_s, m.cpu_ns_s, served, passes * source_size, passes * end, m.wall, lat, max_bytes, m.jit_s)


def idle_cpu(broker: Broker, seconds: float = 2.0) -> dict:
    """The broker's CPU while nobody asks it anything (its own background: the scheduler's tasks, ZooKeeper or
    KRaft heartbeats, the JIT and GC threads), per second of wall time: the floor under every cell."""
    with Meter(broker.pid) as m:
        time.sleep(seconds)
    return {"wall_s": round(m.wall, 3), "cpu_sched_s": round(m.cpu_ns_s, 5), "jit_s": round(m.jit_s, 5),
            "cpu_sched_s_per_s": round(m.cpu_ns_s / m.wall, 5), "load": round(os.getloadavg()[0], 2)}


def log_size(broker_root: Path, topic: str) -> int:
    return sum(p.stat().st_size for p in broker_root.rglob(f"{topic}-0/*.log"))


# ----------------------------------------------------------------------------------------------- heap
def jstat_gc(pid: int) -> dict:
    out = subprocess.run(["jstat", "-gc", str(pid)], capture_output=True, text=True, timeout=60).stdout.split("\n")
    return dict(zip(out[0].split(), (0.0 if x == "-" else float(x) for x in out[1].split())))


def heap_used(pid: int) -> int:
    """The used heap now (``jcmd GC.heap_info``: the serial collector's young and tenured generations' ``used``;
    computed when asked, unlike ``jstat``'s sampled counters)."""
    out = subprocess.run(["jcmd", str(pid), "GC.heap_info"], capture_output=True, text=True, timeout=60).stdout
    used = [int(m) for m in re.findall(r"generation\s+total \d+K, used (\d+)K", out)]
    if not used:
        raise BenchError(f"jcmd GC.heap_info of {pid} printed no generation: {out[:200]!r}")
    return 1024 * sum(used)


def live_heap(pid: int) -> int:
    """The live heap: ``jcmd GC.class_histogram`` (a full collection first) and its ``Total`` bytes."""
    out = subprocess.run(["jcmd", str(pid), "GC.class_histogram"], capture_output=True, text=True,
                         timeout=120).stdout
    m = re.search(r"^Total\s+\d+\s+(\d+)", out, re.M)
    if not m:
        raise BenchError(f"jcmd GC.class_histogram of {pid} printed no total")
    return int(m.group(1))


def full_gc(pid: int) -> None:
    subprocess.run(["jcmd", str(pid), "GC.run"], capture_output=True, timeout=60, check=False)


def wait_cpu_idle(pid: int, busy_ticks: int = 0, quiet_s: float = 0.6, limit_s: float = 60.0) -> None:
    """Until the broker has spent ``busy_ticks`` of CPU and then stops for ``quiet_s`` (its conversion done, or
    blocked on the unread socket)."""
    deadline = time.monotonic() + limit_s
    start = last = cpu_ticks(pid)
    while time.monotonic() < deadline:
        time.sleep(quiet_s)
        now = cpu_ticks(pid)
        if now - last <= 2 and now - start >= busy_ticks:
            return
        last = now


def heap_of_one_fetch(broker: Broker, topic: str, version: int, fetch_bytes: int, held: bool = False) -> dict:
    """Allocation and retained heap of one Fetch ``version`` of ``fetch_bytes`` from offset 0 (see the module doc)."""
    from kafkarig.client import KafkaClient, Writer

    def request(fetch_version: int) -> bytes:
        grabbed = {}

        class _Grab(Exception):
            pass

        def grab(api, ver, body):
            grabbed.update(api=api, ver=ver, body=body)
            raise _Grab

        probe = KafkaClient("127.0.0.1", broker.port)
        probe.request = grab
        try:
            probe.fetch(topic, 0, 0, version=fetch_version, max_bytes=fetch_bytes, partition_max_bytes=fetch_bytes)
        except _Grab:
            pass
        header = Writer().int16(grabbed["api"]).int16(grabbed["ver"]).int32(1).string("costbench").getvalue()
        return header + grabbed["body"]

    payload, zero_copy = request(version), request(LINES[broker.version]["fetch"])

    def send(data: bytes | None = None) -> socket.socket:
        # a small receive buffer set before connecting (the window is agreed in the handshake): the kernel
        # cannot absorb the response, the broker holds what it has not written
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.settimeout(120)
        s.connect(("127.0.0.1", broker.port))
        data = data or payload
        s.sendall(struct.pack(">i", len(data)) + data)
        return s

    def drain(s: socket.socket) -> int:
        size = struct.unpack(">i", _recv(s, 4))[0]
        _recv(s, size)
        s.close()
        return size

    pid = broker.pid
    if held:
        # the response in flight, unread, against the live heap just before (the first conversion since the broker
        # started: a 1.1.1 broker keeps its last converted response reachable after sending it, so later readings
        # would count that one in the baseline), and what stays live once it was read
        drain(send(zero_copy))
        before = live_heap(pid)
        s = send()
        wait_cpu_idle(pid, busy_ticks=5)  # started, then quiet (done, or blocked on the unread socket)
        in_flight = live_heap(pid)
        size = drain(s)
        after = live_heap(pid)
        return {"response_bytes": size, "held_in_flight_bytes": in_flight - before, "live_after_bytes": after - before}
    # allocation: no collection may happen between the two readings (768 MiB eden)
    full_gc(pid)
    g0, u0 = jstat_gc(pid), heap_used(pid)
    with Meter(pid) as m:
        size = drain(send())
    u1, g1 = heap_used(pid), jstat_gc(pid)
    collections = (g1["YGC"] - g0["YGC"]) + (g1["FGC"] - g0["FGC"])
    return {"response_bytes": size, "allocated_bytes": u1 - u0 if collections == 0 else None,
            "collections_during": int(collections), "cpu_s": m.cpu_s, "wall_s": round(m.wall, 3)}


def _recv(s: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = s.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise BenchError("connection closed by the broker")
        buf += chunk
    return bytes(buf)


# ----------------------------------------------------------------------------------------------- phases
#: the record shapes: the headline workload (200-byte values, held out of the model's fit) and the two shapes
#: the model is fitted on (64 and 512-byte values, converted to the next older magic only)
SHAPES = {"main": 200, "fit-small": 64, "fit-large": 512}
#: kafkafmt's line for each release (the rules its counts follow)
KAFKA_LINE = {"0.10.2.2": "0.10.2", "1.1.1": "1.1", "2.8.2": "2.8", "3.9.2": "3.9", "4.4.0": "4.4"}


def shape_sizes(sizes: Sizes, value_size: int) -> Sizes:
    """``sizes`` with ``value_size``-byte values and about the same log bytes as the main shape."""
    records = sizes.log_records * (sizes.value_size + 30) // (value_size + 30)
    return Sizes(**{**sizes.__dict__, "value_size": value_size,
                    "log_records": max(sizes.records_per_set, records // sizes.records_per_set * sizes.records_per_set)})


def fetch_phase(version: str, sizes: Sizes, root: Path, results: dict, codecs: tuple[str, ...] | None,
                model: bool = True) -> None:
    """Fetch (and, where the release has a row, produce) cells on one broker of ``version``, interleaved; then
    kafkafmt's counts of each fetch cell (one consumer pass over the same log bytes, :func:`kafkafmt.costs.consume`)."""
    line = LINES[version]
    broker = Broker(version, KAFKA_JVM_OPTS, root)
    topics = {}  # topic -> (shape, codec, end)
    try:
        cells = []  # (kind, key, label, topic, fetch version, callable)
        for codec in codecs or line["codecs"]:
            if codec not in line["codecs"]:
                continue
            for shape, value_size in SHAPES.items() if line["fetch"] is not None else ():
                fit_shape = shape != "main"
                converts = line["conversion"] in ("eager", "lazy")
                if fit_shape and not (model and codec != "zstd" and (
                        (shape == "fit-large" and (codec == "none" or converts))
                        or (shape == "fit-small" and codec == "none" and converts))):
                    continue
                ss = shape_sizes(sizes, value_size)
                topic = f"fetch-{shape}-{codec}"
                broker.create_topic(topic)
                sets = message_sets(line["magic"], codec, ss)
                n_sets = ss.log_records // ss.records_per_set
                produce_all(broker, topic, sets, n_sets, produce_version(line["magic"], codec))
                end = n_sets * ss.records_per_set
                src = log_size(root, topic)
                topics[topic] = (shape, codec, end)
                key = codec if not fit_shape else f"{codec} ({value_size} B values)"
                kind = "fetch" if not fit_shape else "fit"
                if not fit_shape or codec == "none":
                    cells.append((kind, key, "zero-copy", topic, line["fetch"], 1 << 20,
                                  _fetch_cell(broker, topic, line["fetch"], end, src, sizes.zero_copy_bytes,
                                              min_cpu_s=sizes.min_cpu_s)))
                if shape == "fit-large" and codec == "none":  # the same bytes in small requests: the cost per request
                    small = sizes.small_max_bytes
                    cells.append((kind, key, f"zero-copy, {small >> 10} KiB requests", topic, line["fetch"], small,
                                  _fetch_cell(broker, topic, line["fetch"], end, src, sizes.zero_copy_bytes // 8,
                                              max_bytes=small, min_cpu_s=sizes.min_cpu_s)))
                if line["conversion"] in ("eager", "lazy") and codec != "zstd":
                    for magic in range(line["magic"] - 1, -1 if not fit_shape else line["magic"] - 2, -1):
                        cells.append((kind, key, f"to magic {magic}", topic, FETCH_FOR_MAGIC[magic], 1 << 20,
                                      _fetch_cell(broker, topic, FETCH_FOR_MAGIC[magic], end, src,
                                                  sizes.convert_bytes, min_cpu_s=sizes.min_cpu_s)))
            for pmagic in line["produce"]:
                if codec == "zstd" and pmagic < 2:
                    continue
                topic = f"produce-m{pmagic}-{codec}"
                broker.create_topic(topic)
                sets = message_sets(pmagic, codec, sizes)
                n_sets = sizes.produce_records // sizes.records_per_set
                cells.append(("produce", codec, f"magic {pmagic} producer", topic, None, None,
                              _produce_cell(broker, topic, sets, n_sets, produce_version(pmagic, codec),
                                            sizes.records_per_set)))
        idle = results.setdefault("idle", {}).setdefault(version, [])
        for rep in range(sizes.reps + 1):  # rep 0 warms the JVM (C2 compiles the conversion loops)
            order = cells[rep % len(cells):] + cells[:rep % len(cells)]
            for kind, key, label, topic, fv, _mb, run in order:
                r = run()
                if rep:
                    summary = {**r.summary(), "topic": topic, "fetch_version": fv}
                    results.setdefault(kind, {}).setdefault(version, {}).setdefault(key, {}).setdefault(
                        label, []).append(summary)
            if rep:
                idle.append(idle_cpu(broker, 1.0))
            print(f"  {version}: repetition {rep or 'warm-up'} done", file=sys.stderr, flush=True)
    finally:
        broker.close()
    if model and version in KAFKA_LINE:
        from kafkafmt.costs import consume
        counts = results.setdefault("counts", {}).setdefault(version, {})
        for kind, key, label, topic, fv, max_bytes, _ in cells:
            name = counts_key(topic, fv, max_bytes)
            if kind == "produce" or name in counts:
                continue
            seg = next((root).rglob(f"{topic}-0/00000000000000000000.log"))
            c = consume(seg.read_bytes(), line=KAFKA_LINE[version], fetch_version=fv, max_bytes=max_bytes)
            counts[name] = {"records_per_pass": topics[topic][2], "requests": c.requests,
                                        "counts": c.counts.to_dict()}
        print(f"  {version}: kafkafmt's counts done", file=sys.stderr, flush=True)


def counts_key(topic: str, fetch_version: int, max_bytes: int | None) -> str:
    """The name of kafkafmt's counts of one consumer pass (the partition max bytes named when not 1 MiB)."""
    return f"{topic} v{fetch_version}" + ("" if max_bytes in (None, 1 << 20) else f" {max_bytes}")


def _fetch_cell(broker, topic, fetch_version, end, src, target, max_bytes=1 << 20, min_cpu_s=0.0):
    return lambda: fetch_run(broker, topic, fetch_version, end, src, target, max_bytes, min_cpu_s)


def _produce_cell(broker, topic, sets, n_sets, version, per_set):
    def run():
        r, _ = produce_all(broker, topic, sets, n_sets, version)
        r.records = n_sets * per_set
        return r
    return run


def heap_phase(version: str, sizes: Sizes, root: Path, results: dict) -> None:
    """One large lz4 v2 log; one Fetch v3 (to magic 1) of ``heap_fetch_bytes`` on a serial-GC JVM."""
    broker = Broker(version, HEAP_JVM_OPTS, root)
    try:
        topic = "heap-lz4"
        broker.create_topic(topic)
        sets = message_sets(2, "lz4", sizes)
        per_set = len(sets[0])
        produce_all(broker, topic, sets, sizes.heap_fetch_bytes // per_set + 2, 3)
        held = heap_of_one_fetch(broker, topic, 3, sizes.heap_fetch_bytes, held=True)
        runs = [heap_of_one_fetch(broker, topic, 3, sizes.heap_fetch_bytes) for _ in range(sizes.reps)]
        results.setdefault("heap", {})[version] = {"conversion": LINES[version]["conversion"], "fetch_version": 3,
                                                   "codec": "lz4", "runs": runs, "held": held}
    finally:
        broker.close()


# ----------------------------------------------------------------------------------------------- the model
def _run_counts(results: dict, version: str, run: dict):
    from kafkafmt.costs import Counts
    entry = results["counts"][version][counts_key(run["topic"], run["fetch_version"], run.get("max_bytes"))]
    return Counts.from_dict(entry["counts"]).scaled(run["records"] / entry["records_per_pass"])


def model_check(results: dict, doc: dict) -> dict:
    """Fit :mod:`kafkafmt.costs` on the fit shapes' cells, predict every main-shape cell (held out), compare."""
    from kafkafmt.costs import FitCell, fit, predict
    from kafkafmt.errors import ConfigError
    cells = [FitCell(version, _run_counts(results, version, run), run["cpu_sched_s"], f"{key} {label}")
             for version, keys in results.get("fit", {}).items() for key, labels in keys.items()
             for label, runs in labels.items() for run in runs]
    if not cells:
        return {}
    m = doc["machine"]
    table = fit(cells, machine=f"{m['cpu']}, {m['cores']} cores", load=doc["load"], date=doc["date"],
                source=f"{doc['command']} (benchmarks/conversion.py): the 64- and 512-byte-value workloads "
                       "(the 512-byte zero-copy read also in 64 KiB requests)")
    rows = []
    for version, keys in results.get("fetch", {}).items():
        if version not in table.releases:
            continue
        for key, labels in keys.items():
            for label, runs in labels.items():
                try:
                    pred = [predict(_run_counts(results, version, r), KAFKA_LINE[version], table).cpu_s for r in runs]
                except ConfigError as e:  # a codec the fit cells did not price
                    rows.append({"release": version, "codec": key, "fetch": label, "error": None, "note": str(e),
                                 "measured_cpu_s": round(med([r["cpu_sched_s"] for r in runs]), 4),
                                 "predicted_cpu_s": None})
                    continue
                meas = [r["cpu_sched_s"] for r in runs]
                errs = [p / x - 1 for p, x in zip(pred, meas) if x]
                rows.append({"release": version, "codec": key, "fetch": label,
                             "measured_cpu_s": round(med(meas), 4), "predicted_cpu_s": round(med(pred), 4),
                             "measured_s_per_gb": round(med([x / r["bytes"] * 1e9 for x, r in zip(meas, runs)]), 2),
                             "predicted_s_per_gb": round(med([x / r["bytes"] * 1e9 for x, r in zip(pred, runs)]), 2),
                             "error": round(med(errs), 3) if errs else None})
    return {"table": table.to_dict(), "held_out": rows, "within_30_percent": _within(rows),
            "per_release": {v: {"all": _within([r for r in rows if r["release"] == v]),
                                "zero_copy": _within([r for r in rows if r["release"] == v
                                                      and r["fetch"] == "zero-copy"]),
                                "conversions": _within([r for r in rows if r["release"] == v
                                                        and r["fetch"] != "zero-copy"])}
                            for v in dict.fromkeys(r["release"] for r in rows)},
            "idle_cpu_s_per_s": {v: med([x["cpu_sched_s_per_s"] for x in xs])
                                 for v, xs in results.get("idle", {}).items()}}


def _within(rows: list, bound: float = 0.30) -> str:
    """``"k of n"``: the rows whose median error is within ``bound``."""
    return f"{sum(r['error'] is not None and abs(r['error']) <= bound for r in rows)} of {len(rows)}"


# ----------------------------------------------------------------------------------------------- reporting
def machine() -> dict:
    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "?")
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "java": subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]}


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def ratios(results: dict) -> dict:
    """The headline: per release and codec, down-converted / zero-copy CPU per GB (median of per-repetition
    ratios); 0.9 / 0.10 produce CPU per GB; eager / lazy heap."""
    out = {"fetch": {}, "produce": {}, "heap": {}}
    for version, codecs in results.get("fetch", {}).items():
        for codec, cells in codecs.items():
            zc = cells.get("zero-copy", [])
            row = {"zero_copy_cpu_s_per_gb": med([r["cpu_s_per_gb"] for r in zc]),
                   "zero_copy_sched_s_per_gb": med([r["cpu_sched_s_per_gb"] for r in zc]),
                   "zero_copy_mb_s": med([r["mb_per_s"] for r in zc]),
                   "zero_copy_p50_ms": med([r["p50_ms"] for r in zc]), "zero_copy_p99_ms": med([r["p99_ms"] for r in zc])}
            for label, runs in cells.items():
                if label == "zero-copy":
                    continue
                k = label.replace(" ", "_")
                row[f"{k}_cpu_s_per_gb"] = med([r["cpu_s_per_gb"] for r in runs])
                row[f"{k}_mb_s"] = med([r["mb_per_s"] for r in runs])
                row[f"{k}_p50_ms"] = med([r["p50_ms"] for r in runs])
                row[f"{k}_p99_ms"] = med([r["p99_ms"] for r in runs])
                row[f"{k}_ratio"] = _r2([d["cpu_sched_s_per_gb"] / z["cpu_sched_s_per_gb"]
                                         for d, z in zip(runs, zc) if z["cpu_sched_s_per_gb"]])
                row[f"{k}_ratio_ticks"] = _r2([d["cpu_s_per_gb"] / z["cpu_s_per_gb"]
                                               for d, z in zip(runs, zc) if z["cpu_s_per_gb"]])
            out["fetch"].setdefault(version, {})[codec] = row
    prod = results.get("produce", {})
    for codec in CODECS:
        old = prod.get("0.9.0.1", {}).get(codec, {}).get("magic 0 producer")
        new = prod.get("0.10.2.2", {}).get(codec, {}).get("magic 1 producer")
        row = {}
        for version, cells in prod.items():
            for label, runs in cells.get(codec, {}).items():
                row[f"{version} {label} cpu_s_per_gb"] = med([r["cpu_sched_s_per_gb"] for r in runs])
        if old and new:
            row["kip31_ratio"] = _r2([o["cpu_sched_s_per_gb"] / n["cpu_sched_s_per_gb"] for o, n in zip(old, new)])
        if row:
            out["produce"][codec] = row
    heap = results.get("heap", {})
    for version, h in heap.items():
        out["heap"][version] = {"allocated_mb": _mb(med([r["allocated_bytes"] for r in h["runs"]])),
                                "retained_in_flight_mb": _mb(h["held"]["held_in_flight_bytes"]),
                                "live_after_mb": _mb(h["held"]["live_after_bytes"]),
                                "response_mb": _mb(med([r["response_bytes"] for r in h["runs"]]))}
    if "1.1.1" in heap and "2.8.2" in heap:
        e, lz = out["heap"]["1.1.1"], out["heap"]["2.8.2"]
        # a lazy send holds one chunk (at most 128 KiB of source, converted): below this method's noise (about
        # 0.3 MB), so the ratio is taken against 0.5 MB at least and says so
        out["heap"]["eager_over_lazy_retained"] = round(e["retained_in_flight_mb"] / max(lz["retained_in_flight_mb"], 0.5), 1)
        out["heap"]["lazy_held_below_noise"] = lz["retained_in_flight_mb"] < 0.5
        out["heap"]["eager_over_lazy_allocated"] = (round(e["allocated_mb"] / lz["allocated_mb"], 2)
                                                    if e["allocated_mb"] and lz["allocated_mb"] else None)
    return out


def _r2(xs):
    m = med(xs)
    return None if m is None else round(m, 2)


def _mb(x):
    return None if x is None else round(x / (1 << 20), 2)


def _f(x, nd=2):
    return "-" if x is None else f"{x:.{nd}f}"


def print_tables(doc: dict) -> None:
    r = doc["ratios"]
    print(f"\nbroker CPU per GB served (schedstat; ticks in brackets), fetch, {doc['date']}, load {doc['load']}")
    print(f"{'release':9} {'codec':7} {'zero-copy s/GB':>15} {'MB/s':>7} {'->magic1 s/GB':>14} {'ratio':>6} "
          f"{'->magic0 s/GB':>14} {'ratio':>6} {'p99 ms zc/m1/m0':>18}")
    for version, codecs in r["fetch"].items():
        for codec, row in codecs.items():
            print(f"{version:9} {codec:7} {_f(row['zero_copy_sched_s_per_gb']):>8} [{_f(row['zero_copy_cpu_s_per_gb'])}]"
                  f" {_f(row['zero_copy_mb_s'], 0):>7} {_f(row.get('to_magic_1_cpu_s_per_gb')):>14} "
                  f"{_f(row.get('to_magic_1_ratio'), 1):>6} {_f(row.get('to_magic_0_cpu_s_per_gb')):>14} "
                  f"{_f(row.get('to_magic_0_ratio'), 1):>6} "
                  f"{_f(row['zero_copy_p99_ms'], 1)}/{_f(row.get('to_magic_1_p99_ms'), 1)}/"
                  f"{_f(row.get('to_magic_0_p99_ms'), 1):>5}")
    print("\nproduce: broker CPU s per GB of message sets sent (schedstat)")
    for codec, row in r["produce"].items():
        parts = [f"{k.replace(' cpu_s_per_gb', '')}: {_f(v)}" for k, v in row.items() if k != "kip31_ratio"]
        print(f"  {codec:7} " + "; ".join(parts) + (f"; 0.9/0.10 = {_f(row['kip31_ratio'])}" if "kip31_ratio" in row
                                                        else ""))
    mc = doc.get("model") or {}
    if mc:
        print(f"\nthe cost model (kafkafmt.costs), fitted on 64/512-byte values, against the held-out 200-byte "
              f"cells: {mc['within_30_percent']} within +-30 %")
        for v, w in mc.get("per_release", {}).items():
            print(f"  {v:9} {w['all']} (zero-copy {w['zero_copy']}, conversions {w['conversions']}); broker idle: "
                  f"{_f(mc.get('idle_cpu_s_per_s', {}).get(v), 4)} CPU s/s")
        for row in mc["held_out"]:
            err = None if row["error"] is None else 100 * row["error"]
            print(f"  {row['release']:9} {row['codec']:7} {row['fetch']:11} measured {row['measured_cpu_s']:.3f} s, "
                  f"predicted {_f(row['predicted_cpu_s'], 3)} s ({_f(err, 0)} %)")
    if r["heap"]:
        print("\nheap of one large down-converted fetch (lz4 v2 -> magic 1):")
        for k, v in r["heap"].items():
            print(f"  {k}: {v}")


def docs_tables(doc: dict) -> dict[str, dict]:
    """The docs' Benchmarks page tables (``docs/_data/bench/conversion_*.json``, the ``columns``/``rows`` form)."""
    r = doc["ratios"]
    facts = {**{k: doc[k] for k in ("command", "machine", "load", "date")},
             "source": "build/bench/conversion.json of that run (benchmarks/conversion.py --docs)"}
    out = {}
    rows = []
    for version, codecs in r["fetch"].items():
        for codec, row in codecs.items():
            rows.append([version, LINES[version]["conversion"], codec, row["zero_copy_sched_s_per_gb"],
                         row["zero_copy_mb_s"], row.get("to_magic_1_cpu_s_per_gb"), row.get("to_magic_1_ratio"),
                         row.get("to_magic_0_cpu_s_per_gb"), row.get("to_magic_0_ratio"),
                         f"{_f(row['zero_copy_p50_ms'], 1)} / {_f(row['zero_copy_p99_ms'], 1)}",
                         f"{_f(row.get('to_magic_1_p50_ms'), 1)} / {_f(row.get('to_magic_1_p99_ms'), 1)}",
                         f"{_f(row.get('to_magic_0_p50_ms'), 1)} / {_f(row.get('to_magic_0_p99_ms'), 1)}"])
    out["conversion_fetch.json"] = {
        "title": "Fetch: broker CPU seconds per GB served, zero-copy against down-converted (ratio: median of the "
                 "per-repetition ratios)", **facts,
        "columns": ["release", "conversion", "codec", "zero-copy CPU s/GB", "zero-copy MB/s", "to magic 1 CPU s/GB",
                    "x zero-copy", "to magic 0 CPU s/GB", "x zero-copy", "p50 / p99 ms zero-copy",
                    "p50 / p99 ms to magic 1", "p50 / p99 ms to magic 0"],
        "rows": rows,
        "note": "One partition per request, 1 MiB partition max bytes, 200-byte values, 200 records a batch; CPU is "
                "the broker JVM's threads' run time without its JIT compiler threads (schedstat; the whole JVM's "
                "/proc/<pid>/stat utime+stime and the compilers' share are in conversion.json). 0.10.2.2 stores "
                "magic 1 (its zero-copy is Fetch v3), the others "
                "magic 2; zstd cannot be down-converted (UNSUPPORTED_COMPRESSION_TYPE). The client shares the "
                "machine: MB/s and latencies are lower bounds."}
    prod = doc["results"].get("produce", {})
    cols = [(v, lab) for v in prod for lab in sorted({lab for c in prod[v].values() for lab in c})]
    prows = []
    for codec in CODECS:
        if not any(codec in prod[v] for v in prod):
            continue
        prows.append([codec] + [med([x["cpu_sched_s_per_gb"] for x in prod[v].get(codec, {}).get(lab, [])])
                                for v, lab in cols] + [r["produce"].get(codec, {}).get("kip31_ratio")])
    if prows:
        out["conversion_produce.json"] = {
            "title": "Produce: broker CPU seconds per GB of message sets received, per producer generation "
                     "(KIP-31's saving: 0.9.0.1 recompresses every compressed set, 0.10.2.2 validates a magic 1 set in "
                     "place)", **facts,
            "columns": ["codec"] + [f"{v} {lab}" for v, lab in cols] + ["0.9 / 0.10 (magic 0 into 0.9 / magic 1 "
                                                                      "into 0.10)"],
            "rows": prows,
            "note": "200 records a set, 200-byte values, acks=1, one set a request. GB of the sets as sent "
                    "(compressed): per codec the same records."}
    heap = doc["results"].get("heap", {})
    if heap:
        out["conversion_heap.json"] = {
            "title": "Heap of one large down-converted fetch (lz4 v2 to magic 1), eager (1.1.1) against lazy (2.8.2)",
            **facts, "columns": ["release", "conversion", "response MB", "allocated MB", "held while in flight MB",
                                 "still live once read MB"],
            "rows": [[v, h["conversion"], r["heap"][v]["response_mb"], r["heap"][v]["allocated_mb"],
                      r["heap"][v]["retained_in_flight_mb"], r["heap"][v]["live_after_mb"]] for v, h in heap.items()],
            "note": "Serial collector, 768 MiB young generation (no collection during the fetch). Allocated: the "
                    "growth of the used heap across the fetch (jcmd GC.heap_info). Held while in flight: the live "
                    "heap (jcmd GC.class_histogram after its full collection) while the consumer, its receive "
                    "buffer 4 KiB, has not read the response, minus the same just before it was sent (the first "
                    "conversion since the broker started); still live once read: the same after the consumer read it "
                    "(what the broker keeps reachable after the send). Eager / lazy held: "
                    f"{'at least ' if r['heap'].get('lazy_held_below_noise') else ''}"
                    f"{r['heap'].get('eager_over_lazy_retained')} (lazy counted as 0.5 MB when below it, the "
                    f"method's noise); allocated: "
                    f"{r['heap'].get('eager_over_lazy_allocated')}."}
    mc = doc.get("model") or {}
    if mc:
        out["conversion_model.json"] = {
            "title": "The cost model (kafkafmt.costs) against measured broker CPU, on workloads not used to fit it "
                     f"({mc['within_30_percent']} within +-30 %)", **facts,
            "columns": ["release", "codec", "fetch", "measured CPU s (a cell)", "measured CPU s/GB",
                        "predicted CPU s/GB", "error"],
            "rows": [[x["release"], x["codec"], x["fetch"], x.get("measured_cpu_s"), x.get("measured_s_per_gb"),
                      x.get("predicted_s_per_gb"), None if x["error"] is None else f"{100 * x['error']:+.0f} %"]
                     for x in mc["held_out"]],
            "per_release": mc.get("per_release", {}),
            "note": "Fitted per release on 64- and 512-byte values converted to the next older magic and on 512-byte "
                    "zero-copy reads in 1 MiB and in 64 KiB requests (the cost per request apart from the cost per "
                    "byte); predicted from kafkafmt's counts of the same requests (kafkafmt.costs.consume over the "
                    "broker's own log bytes). Within +-30 % per release: "
                    + "; ".join(f"{v} {w['all']} (zero-copy {w['zero_copy']}, conversions {w['conversions']})"
                                for v, w in mc.get("per_release", {}).items())
                    + ". The fitted table ships as kafkafmt/costs/measured.json."}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="an eighth of the data (development runs)")
    ap.add_argument("--releases", default=",".join(v for v in LINES if v != "0.9.0.1"),
                    help="fetch/produce releases to run (comma-separated; 0.9.0.1 always runs for produce)")
    ap.add_argument("--codecs", default="", help="only these codecs (comma-separated)")
    ap.add_argument("--reps", type=int, default=3, help="measured repetitions (default 3)")
    ap.add_argument("--no-heap", action="store_true")
    ap.add_argument("--no-produce", action="store_true")
    ap.add_argument("--no-fetch", action="store_true", help="skip the fetch and produce phases (heap only)")
    ap.add_argument("--out", default=str(OUT / "conversion.json"))
    ap.add_argument("--report", metavar="JSON", help="no run: the tables again from a run's conversion.json")
    ap.add_argument("--docs", action="store_true", help="write the docs' tables (docs/_data/bench/conversion_*.json)")
    ap.add_argument("--write-table", action="store_true",
                    help="write the fitted costs to kafkafmt/costs/measured.json (the table kafkafmt ships)")
    args = ap.parse_args(argv)
    os.environ.setdefault("KAFKAFMT_RELEASES_CACHE", str(ROOT / "conformance" / ".cache" / "releases"))
    sizes = Sizes().quick() if args.quick else Sizes()
    sizes.reps = args.reps
    codecs = tuple(c for c in args.codecs.split(",") if c) or None
    for c in codecs or ():
        if c not in CODECS:
            print(f"bench-conversion: unknown codec {c!r} (one of {', '.join(CODECS)})", file=sys.stderr)
            return 1
    releases = [v for v in args.releases.split(",") if v]
    unknown = [v for v in releases if v not in LINES]
    if unknown:
        print(f"bench-conversion: no row for Kafka {unknown[0]} (measured: {', '.join(LINES)})", file=sys.stderr)
        return 1
    if not args.no_produce and "0.9.0.1" not in releases:
        releases.insert(0, "0.9.0.1")
    if args.report:  # the tables again from a run's JSON (no broker started)
        doc = json.loads(Path(args.report).read_text())
        doc["ratios"] = ratios(doc["results"])
        doc["model"] = model_check(doc["results"], doc)
        return _finish(doc, args)
    load0, t0 = os.getloadavg(), time.time()
    results: dict = {}
    root = Path(tempfile.mkdtemp(prefix="kafkafmt-costbench-"))
    try:
        for version in releases:
            print(f"bench-conversion: Kafka {version}", file=sys.stderr, flush=True)
            if args.no_produce:
                LINES[version] = {**LINES[version], "produce": ()}
            if args.no_fetch or (LINES[version]["fetch"] is None and not LINES[version]["produce"]):
                continue
            fetch_phase(version, sizes, root / version, results, codecs)
        if not args.no_heap:
            for version in ("1.1.1", "2.8.2"):
                if version in releases:
                    print(f"bench-conversion: heap, Kafka {version}", file=sys.stderr, flush=True)
                    heap_phase(version, sizes, root / f"heap-{version}", results)
    except (BenchError, OSError, RuntimeError) as e:  # RuntimeError: the rig's ProtocolError, BrokerError
        print(f"bench-conversion: {str(e).splitlines()[0] if str(e) else type(e).__name__}", file=sys.stderr)
        return 1
    finally:
        subprocess.run(["rm", "-rf", str(root)], check=False)
    load1 = os.getloadavg()
    doc = {"title": "What a conversion costs a real broker", "command": "make bench-conversion"
           + (" --quick" if args.quick else ""), "quick": args.quick, "sizes": sizes.__dict__,
           "machine": {**machine(), "load_avg": list(load1)},
           "load": f"{load0[0]:.1f} at the start, {load1[0]:.1f} at the end (1-minute load average)",
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(t0)), "seconds": round(time.time() - t0),
           "jvm": {"cpu": KAFKA_JVM_OPTS, "heap": HEAP_JVM_OPTS}, "results": results}
    doc["ratios"] = ratios(results)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1))  # the measurements first: nothing below can lose them
    doc["model"] = model_check(results, doc)
    return _finish(doc, args)


def _finish(doc: dict, args) -> int:
    """The JSON, the fitted table (``--write-table``), the docs' tables (``--docs``), the printed tables."""
    if doc["model"] and args.write_table:
        from kafkafmt.costs import TABLE_PATH
        TABLE_PATH.write_text(json.dumps(doc["model"]["table"], indent=1) + "\n")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1))
    if args.docs:
        DOCS_DATA.mkdir(parents=True, exist_ok=True)
        for name, table in docs_tables(doc).items():
            (DOCS_DATA / name).write_text(json.dumps(table, indent=1) + "\n")
    print_tables(doc)
    print(f"\nbench-conversion: {out} ({doc['seconds']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
