"""KIP-33's time index on an upgrade from Kafka 0.10.0.1 to 0.10.1.1, for real, against kafkafmt's log model.

Seed 001 is about the time index that came with 0.10.1 (KIP-33).  This run writes a partition on a real
0.10.0.1 broker, swaps the broker's jars to 0.10.1.1 on the same data directory as the upgrade notes of
0.10.1 say (first with ``inter.broker.protocol.version`` and ``log.message.format.version`` at 0.10.0, then a
rolling restart with both at 0.10.1), writes more and lets time-based retention run; at each step the
partition's segment files (``.log``, ``.index``, ``.timeindex``: names, sizes, bytes) are compared with
kafkafmt's :class:`~kafkafmt.log.Log` driven through the same appends, closes and reopens with the Kafka
line of the running release (``BrokerConfig.kafka_line``), and ListOffsets v1 answers with the model's
``fetch_offset_by_timestamp``.

Two brokers of one cluster, one partition each, go through the same steps but for one: before the swap
broker 1 is stopped cleanly (its old segments come back to 0.10.1 without a time index) and broker 2 is
killed with SIGKILL (0.10.1 recovers its segments and rebuilds their indexes, time index included).  The
records are built here: phase 1 with CreateTimes 20 days old, phase 2 one hour old, a run of magic 0
messages (stored with timestamp -1) among them; the topics keep 10 days (``retention.ms``), so the
retention of 0.10.1 (by largest timestamp, else mtime) decides what the old segments' indexes are worth.

Retention runs 30 s after a broker starts (``LogManager.InitialTaskDelayMs`` of these releases) and then
every second (``log.retention.check.interval.ms``): the run waits for it on 0.10.0.1 (nothing may go: 0.10.0
measures age by mtime) and after the last restart.  Everything here is small: two partitions of about 50
records, segments of 700 bytes, an index entry every 100 bytes, 1,200-byte indexes.

:func:`run_time_index_upgrade` returns the record of the run (``conformance/history/record.py`` writes it
under ``"time_index_upgrade"``): per phase, the seconds it took and its checks (:class:`kafkarig.history.Check`
dicts), each with the model's side, the release's side and whether they agree.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

from kafkafmt.config import BrokerConfig, LogConfig
from kafkafmt.constants import CompressionType
from kafkafmt.errors import KafkaFmtError
from kafkafmt.log import Log, SystemClock
from kafkafmt.log.files import RECOVERY_POINT_CHECKPOINT, checkpoint_offset
from kafkafmt.records.builder import build_records

from .history import PRODUCE_VERSION_FOR_MAGIC, Check
from .oldcluster import OldBroker, OldCluster

__all__ = ["CLUSTER", "PHASES", "TOPICS", "check_names", "run_time_index_upgrade"]

OLD, NEW = "0.10.0.1", "0.10.1.1"
CLUSTER = f"{OLD} -> {NEW}"
#: topic → (the broker holding its one partition, how that broker leaves 0.10.0.1)
TOPICS = {"ti-clean": (1, "stopped"), "ti-crash": (2, "killed")}
PHASES = ("0.10.0", "binaries", "protocol", "written", "stopped")
DAY_MS = 86_400_000
TOPIC_CONFIGS = {"segment.bytes": "700", "index.interval.bytes": "100", "segment.index.bytes": "1200",
                 "retention.ms": str(10 * DAY_MS), "file.delete.delay.ms": "0"}
#: retention's first run after a start (LogManager.InitialTaskDelayMs = 30 s in 0.10.x) and some slack
RETENTION_FIRST_RUN_S = 32.0
SEGMENT_SUFFIXES = (".log", ".index", ".timeindex")
#: (magic, compression, records) of each produce request, per phase
WRITES = {
    "0.10.0": [(1, "none", 3), (1, "gzip", 3), (0, "none", 3), (1, "none", 2), (1, "gzip", 4), (1, "none", 3),
               (0, "none", 2), (1, "none", 3), (1, "gzip", 3), (1, "none", 3), (1, "none", 1)],
    "binaries": [(1, "none", 3), (1, "gzip", 3), (1, "none", 2)],
    "written": [(1, "none", 3)] + [(0, "none", 3)] * 6 + [(1, "gzip", 3), (1, "none", 3), (1, "none", 2)],
}
_IBP = {"0.10.0": {"inter.broker.protocol.version": "0.10.0", "log.message.format.version": "0.10.0"},
        "0.10.1": {"inter.broker.protocol.version": "0.10.1", "log.message.format.version": "0.10.1"}}
_BROKER = {"log.retention.check.interval.ms": "1000"}


def check_names() -> dict[str, list[str]]:
    """The checks of each phase, known before the run (``<phase>/<what>/<topic>``)."""
    out: dict[str, list[str]] = {}
    for phase in PHASES:
        names = [f"{phase}/files/{t}" for t in TOPICS]
        if phase == "written":
            names += [f"{phase}/list-offsets/{t}" for t in TOPICS]
        out[phase] = names
    return out


def snapshot(partition_dir: Path) -> dict[str, dict]:
    """The segment files of a partition directory: name → ``{"size", "hex"}``, the hex without the trailing
    zeros of a preallocated index (equal sizes and equal hex: equal bytes)."""
    out = {}
    for p in sorted(partition_dir.iterdir()):
        if p.is_file() and p.name.endswith(SEGMENT_SUFFIXES):
            data = p.read_bytes()
            out[p.name] = {"size": len(data), "hex": data.rstrip(b"\0").hex()}
    return out


def _files_detail(expected: dict, real: dict) -> str:
    names = sorted(set(expected) | set(real))
    bad = []
    for n in names:
        e, r = expected.get(n), real.get(n)
        if e == r:
            continue
        if e is None or r is None:
            bad.append(f"{n}: {'only the release has it' if e is None else 'the release has none'}")
        elif e["size"] != r["size"]:
            bad.append(f"{n}: {e['size']} bytes expected, {r['size']} real")
        else:
            i = next(i for i, (a, b) in enumerate(zip(e["hex"] + " ", r["hex"] + " ")) if a != b) // 2
            bad.append(f"{n}: first difference at byte {i}")
    return "; ".join(bad)


def _timestamps(now_ms: int) -> dict[str, int]:
    """Each phase's first CreateTime: phase 1 twenty days old, phase 2 one hour old (whole seconds)."""
    old = (now_ms - 20 * DAY_MS) // 1000 * 1000
    new = (now_ms - 3_600_000) // 1000 * 1000
    return {"0.10.0": old, "binaries": new, "written": new}


class _Partition:
    """One topic's partition on its broker and in the model, driven through the same steps."""

    def __init__(self, topic: str, broker: OldBroker, root: Path) -> None:
        self.topic = topic
        self.broker = broker
        self.model_dir = root / f"model-{topic}" / f"{topic}-0"  # a log dir each, like each broker
        self.model_dir.parent.mkdir(parents=True, exist_ok=True)
        self.log: Log | None = None
        self.line = "0.10.0"
        self.ibp = _IBP["0.10.0"]

    def config(self) -> LogConfig:
        topic = {**TOPIC_CONFIGS, "message.format.version": self.ibp["log.message.format.version"]}
        return LogConfig.from_properties(topic, broker=BrokerConfig.from_properties(
            self.ibp, kafka_line=self.line))

    def open_model(self, *, clean_shutdown: bool | None = None, recovery_point: int | None = None) -> None:
        self.log = Log(self.model_dir, self.config(), SystemClock(), clean_shutdown=clean_shutdown,
                       recovery_point=recovery_point)

    def produce(self, data: bytes, magic: int) -> str:
        """Send ``data`` to the broker and append it to the model; '' or what went wrong."""
        with self.broker.client() as c:
            res = c.produce_retrying(self.topic, 0, data, version=PRODUCE_VERSION_FOR_MAGIC[magic], acks=-1)
        try:
            info = self.log.append_as_leader(data)
        except KafkaFmtError as e:
            return f"the model refused an append the release took at {res.base_offset}: {e}"
        if res.error_code or res.base_offset != info.first_offset:
            return (f"the release answered error {res.error_code} at offset {res.base_offset}, the model appended "
                    f"at {info.first_offset}")
        return ""

    def files_check(self, phase: str, note: str, problems: list[str]) -> Check:
        expected, real = snapshot(self.model_dir), snapshot(self.broker.partition_dir(self.topic))
        agree = expected == real and not problems
        detail = "; ".join(problems + ([_files_detail(expected, real)] if expected != real else []))
        return Check(CLUSTER, f"{phase}/files/{self.topic}", f"broker {self.broker.id} ({self.broker.release.version})",
                     note, expected, real, agree, detail, f"kafkafmt Log, --kafka-line {self.line}",
                     {"segments": sorted(n for n in real if n.endswith(".log"))})


def _records(magic: int, compression: str, first_key: int, count: int, ts0: int) -> bytes:
    recs = [(-1 if magic == 0 else ts0 + first_key + i, f"k{first_key + i}".encode(),
             f"value-{first_key + i}".encode()) for i in range(count)]
    return build_records(recs, magic=magic, compression=CompressionType[compression.upper()])


def _list_offsets_check(part: _Partition, targets: list[int]) -> Check:
    """ListOffsets v1 for each target against the model's ``fetch_offset_by_timestamp`` ((-1, -1) when it
    finds nothing, as the broker answers)."""
    expected, real = [], []
    with part.broker.client() as c:
        for t in targets:
            r = c.list_offsets(part.topic, 0, t, version=1)
            real.append([t, r.error_code, r.timestamp, r.offset])
            try:
                m = part.log.fetch_offset_by_timestamp(t)
                expected.append([t, 0, -1, -1] if m is None else [t, 0, m.timestamp, m.offset])
            except KafkaFmtError as e:
                expected.append([t, e.error_code, -1, -1])
    agree = expected == real
    detail = "" if agree else "; ".join(f"target {e[0]}: expected {e[1:]}, real {r[1:]}"
                                        for e, r in zip(expected, real) if e != r)
    return Check(CLUSTER, f"written/list-offsets/{part.topic}", f"broker {part.broker.id} ({NEW})",
                 "ListOffsets v1 [target, error, timestamp, offset]", expected, real, agree, detail,
                 "Log.fetch_offset_by_timestamp")


def _wait_retention(parts: list[_Partition], started: float, timeout: float = 15.0) -> list[str]:
    """Wait for retention's first run after ``started`` (monotonic), then until each partition's segments are
    the model's (after its ``delete_old_segments``); what still differs at ``timeout``."""
    time.sleep(max(0.0, started + RETENTION_FIRST_RUN_S - time.monotonic()))
    deadline = time.monotonic() + timeout
    while True:
        left = [p.topic for p in parts if sorted(n for n in snapshot(p.model_dir) if n.endswith(".log"))
                != sorted(n for n in snapshot(p.broker.partition_dir(p.topic)) if n.endswith(".log"))]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.2)


def _recovery_point(broker: OldBroker, topic: str) -> int:
    """The broker's recovery-point checkpoint entry for ``topic``-0 (0 when it wrote none, as after a kill
    before its first checkpoint)."""
    try:
        rp = checkpoint_offset(broker.log_dir / RECOVERY_POINT_CHECKPOINT, topic, 0)
    except (OSError, KafkaFmtError):
        return 0
    return 0 if rp is None else rp


def run_time_index_upgrade() -> dict:
    """Run every phase (about 90 s: two waits for retention); the record: per phase its checks and seconds."""
    t0 = time.monotonic()
    phases: dict[str, dict] = {}
    root = Path(tempfile.mkdtemp(prefix="kafkafmt-timeindex-"))
    now_ms = int(time.time() * 1000)
    ts0 = _timestamps(now_ms)
    key = {t: 0 for t in TOPICS}

    def phase(name: str, checks: list[Check], t: float) -> None:
        phases[name] = {"seconds": round(time.monotonic() - t, 1), "checks": [c.to_dict() for c in checks]}

    def write(parts: list[_Partition], name: str) -> dict[str, list[str]]:
        problems: dict[str, list[str]] = {p.topic: [] for p in parts}
        for magic, comp, count in WRITES[name]:
            for p in parts:
                err = p.produce(_records(magic, comp, key[p.topic], count, ts0[name]), magic)
                if err:
                    problems[p.topic].append(err)
                key[p.topic] += count
        return problems

    try:
        with OldCluster(OLD, chroot="timeindex", root=str(root / "cluster")) as c:
            t = time.monotonic()
            started = {}
            for topic, (bid, _) in TOPICS.items():
                c.add_broker(bid, OLD, {**_IBP["0.10.0"], **_BROKER})
                started[bid] = time.monotonic()
            parts = []
            for topic, (bid, _) in TOPICS.items():
                c.create_topic(topic, replica_assignment=str(bid), configs=TOPIC_CONFIGS)
                p = _Partition(topic, c.brokers[bid], root)
                p.open_model()
                parts.append(p)
            problems = write(parts, "0.10.0")
            clean, crash = parts
            # broker 2 dies before its first recovery-point checkpoint (30 s after its start)
            crash.broker.process.proc.kill()
            crash.broker.process.stop()
            crash.log.close_handlers()
            # broker 1 lives through retention's first run: 0.10.0 measures age by mtime, nothing goes
            time.sleep(max(0.0, started[clean.broker.id] + RETENTION_FIRST_RUN_S - time.monotonic()))
            clean.log.delete_old_segments()
            clean.broker.stop()
            clean.log.close()
            phase("0.10.0", [clean.files_check("0.10.0", "stopped cleanly after retention's first run "
                                               "(20-day-old records, retention.ms 10 days)", problems[clean.topic]),
                             crash.files_check("0.10.0", "killed (SIGKILL)", problems[crash.topic])], t)

            t = time.monotonic()
            for p in parts:
                p.line = "0.10.1"
                rp = _recovery_point(p.broker, p.topic)
                p.broker.restart(NEW)
                p.open_model(clean_shutdown=p is clean, recovery_point=None if p is clean else rp)
            for p in parts:
                c.wait_in_sync(p.topic)
            checks = [p.files_check("binaries", "0.10.1.1 jars, IBP and format 0.10.0, just started", [])
                      for p in parts]
            problems = write(parts, "binaries")
            phase("binaries", checks, t)

            t = time.monotonic()
            restarted = 0.0
            for p in reversed(parts):  # broker 2 first: its retention must not run before this restart
                p.ibp = _IBP["0.10.1"]
                p.broker.restart(None, dict(_IBP["0.10.1"]))
                restarted = time.monotonic()
                p.log.close()
                p.open_model(clean_shutdown=True)
            for p in parts:
                c.wait_in_sync(p.topic)
            phase("protocol", [p.files_check("protocol", "after 3 appends, a rolling restart with IBP and format "
                                             "0.10.1", problems[p.topic]) for p in parts], t)

            t = time.monotonic()
            problems = write(parts, "written")
            for p in parts:
                p.log.delete_old_segments()
            late = _wait_retention(parts, restarted)
            for p in parts:
                if p.topic in late:
                    problems[p.topic].append("retention had not settled on the model's segments")
            old_ts, new_ts = ts0["0.10.0"], ts0["written"]
            first2 = sum(n for *_, n in WRITES["0.10.0"])  # phase 2's first key
            # before everything, in phase 1, in phase 2 (two), after everything
            targets = [-2, -1, old_ts - 1, old_ts + 10, new_ts + first2 + 6, new_ts + key[parts[0].topic] - 20,
                       new_ts + 10**6]
            checks = [p.files_check("written", "phase 2 written, after retention's first run", problems[p.topic])
                      for p in parts]
            checks += [_list_offsets_check(p, targets) for p in parts]
            phase("written", checks, t)

            t = time.monotonic()
            for p in parts:
                p.broker.stop()
                p.log.close()
            phase("stopped", [p.files_check("stopped", "stopped cleanly", []) for p in parts], t)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return {"cluster": CLUSTER, "seconds": round(time.monotonic() - t0, 1), "phases": phases}


if __name__ == "__main__":  # PYTHONPATH=conformance:. python -m kafkarig.time_index: run once, print disagreements
    import json
    import sys
    run = run_time_index_upgrade()
    for name, ph in run["phases"].items():
        for ch in ph["checks"]:
            print(f"{ch['check']}: {'agree' if ch['agree'] else 'DISAGREE ' + ch['detail']}")
    if os.environ.get("TIME_INDEX_JSON"):
        Path(os.environ["TIME_INDEX_JSON"]).write_text(json.dumps(run, indent=1))
    sys.exit(0 if all(ch["agree"] for ph in run["phases"].values() for ch in ph["checks"]) else 1)
