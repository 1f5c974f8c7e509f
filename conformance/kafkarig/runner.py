"""Run the differential cases against the real broker AND kafkafmt, and compare byte for byte.

Phases (so that the JVM tools run once per run, not once per case):

1. per case: create the topic, send the Produce requests (our bytes verbatim), send the Fetch
   requests, copy the partition's segment files to a snapshot directory;
2. ``kafka-dump-log`` (``kafka.tools.DumpLogSegments`` from the jars) and ``python -m kafkafmt dump``
   on every snapshot ``.log`` (one call each for all cases), and on the index files (per case);
3. per case, the checks:

   ``produce``    broker error codes and on-disk ``.log`` bytes == kafkafmt's produce-path
                  prediction (``kafkafmt.broker.validator.validate_messages_and_assign_offsets``,
                  with the broker's log-append time as ``now``);
   ``stored``     broker ``.log`` == the case's ``expect.log`` spec built by kafkafmt;
   ``fetch``      each Fetch response's records == kafkafmt's fetch-path prediction
                  (``kafkafmt.broker.fetch``) and/or the case's ``expect`` spec built by kafkafmt;
   ``dump``       kafka-dump-log vs kafkafmt dump (``--deep-iteration --print-data-log``) on the
                  broker's ``.log`` files;
   ``dump-index`` the same on the broker's ``.index`` / ``.timeindex`` files;
   ``read``       Kafka's reader (the oracle's ``MemoryRecords`` read) vs kafkafmt's reader on the
                  broker's ``.log`` bytes, field by field;
   ``segments``   ``kafkafmt.log`` writes the same appends; its files == the broker's, and the real
                  kafka-dump-log (``--deep-iteration``, ``--verify-index-only``,
                  ``--index-sanity-check``) finds no mismatch in them.

A check is ``agree``, ``DIFFER`` (with the first difference explained), ``pending`` (it should have
run but could not, e.g. no Kafka oracle), ``n/a`` (the case gives it nothing to compare, e.g. an
empty log after a rejected produce) or ``error`` (including a kafkafmt module that fails to import).
A case agrees only when every check that applies agrees: one pending check makes the case pending
(which the test suite fails under ``CI=true``), and a case with nothing to compare is pending too.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from kafkafmt.broker.fetch import fetch as kafkafmt_fetch
from kafkafmt.broker.validator import validate_messages_and_assign_offsets
from kafkafmt.constants import MAGIC_VALUE_V2, TimestampType
from kafkafmt.errors import KafkaFmtError
from kafkafmt.log import Log
from kafkafmt.log.clock import SimulatedClock
from kafkafmt.records import MemoryRecords
from kafkafmt.records.walker import magic_at
from kafkafmt.records.spec import build_record_set
from .broker import JVM_OPTS, LIB_DIR, BrokerError, Cluster, PROFILES
from .cases import Case, CaseError, materialize
from .client import ProtocolError, error_name
from .diffs import codec_normalized_diff, explain_index_diff, explain_lines_diff, explain_records_diff
from .paths import REPO_ROOT

AGREE, DIFFER, PENDING, ERROR, NOT_APPLICABLE = "agree", "DIFFER", "pending", "error", "n/a"

QUIET_LOG4J = "log4j.rootLogger=OFF\n"
_STDIO_LOCK = __import__("threading").Lock()


SERVER_CLASS = LIB_DIR.parent / "classes" / "DumpLogSegmentsServer.class"


class DumpLogServer:
    """Client of conformance/oracle/DumpLogSegmentsServer.java: kafka-dump-log calls in one JVM."""

    def __init__(self, workdir: Path, java_props: list[str]) -> None:
        import threading
        java = os.environ.get("KAFKA_ORACLE_JAVA") or "java"
        self._stderr = open(workdir / "dump-log-server.stderr", "wb")
        self.proc = subprocess.Popen([java, *JVM_OPTS, *java_props, "-cp",
                                      f"{SERVER_CLASS.parent}{os.pathsep}{LIB_DIR}{os.sep}*", "DumpLogSegmentsServer"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, cwd=workdir)
        self._lock = threading.Lock()

    def _read(self, n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            c = self.proc.stdout.read(n - len(buf))
            if not c:
                raise ProtocolError("kafka-dump-log server exited")
            buf += c
        return buf

    def run(self, args: list[str]) -> tuple[int, list[str], list[str]]:
        if any("\t" in a or "\n" in a for a in args):
            raise ProtocolError("argument with a tab or newline")
        with self._lock:
            self.proc.stdin.write(("\t".join(args) + "\n").encode())
            self.proc.stdin.flush()
            header = self.proc.stdout.readline()
            if not header:
                raise ProtocolError("kafka-dump-log server exited")
            rc, no, ne = map(int, header.split())
            out = self._read(no).decode("utf-8", "replace")
            err = self._read(ne).decode("utf-8", "replace")
        return rc, out.splitlines(), [ln for ln in err.splitlines() if not ln.startswith("log4j:")]

    def close(self) -> None:
        try:
            if self.proc.poll() is None:
                self.proc.stdin.close()
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(timeout=10)
            self.proc.stdout.close()
        finally:
            self._stderr.close()


# ------------------------------------------------------------------------------------------ results
@dataclass
class Check:
    name: str
    status: str
    detail: str = ""


@dataclass
class ProduceStep:
    index: int
    data: bytes
    version: int
    error_code: int = 0
    base_offset: int = -1
    log_append_time: int = -1
    error_message: str | None = None
    wall_now: int = 0
    lat: int | None = None  # the broker's log-append time for this append, if LogAppendTime


@dataclass
class FetchStep:
    index: int
    spec: dict
    version: int
    offset: int
    error_code: int = 0
    high_watermark: int = -1
    records: bytes | None = None


@dataclass
class CaseResult:
    case: Case
    checks: list[Check] = field(default_factory=list)
    produce: list[ProduceStep] = field(default_factory=list)
    fetches: list[FetchStep] = field(default_factory=list)
    alters: list[tuple[int, str | None]] = field(default_factory=list)  #: the broker's (error code, message)
    snapshot: Path | None = None
    seconds: float = 0.0
    setup_error: str | None = None

    @property
    def status(self) -> str:
        if self.setup_error:
            return ERROR
        st = [c.status for c in self.checks]
        if ERROR in st:
            return ERROR
        if DIFFER in st:
            return DIFFER
        if PENDING in st or AGREE not in st:
            return PENDING
        return AGREE

    @property
    def agrees(self) -> bool:
        return self.status == AGREE

    def check(self, name: str) -> Check | None:
        return next((c for c in self.checks if c.name == name), None)

    def add(self, name: str, status: str, detail: str = "") -> None:
        self.checks.append(Check(name, status, detail))

    def summary(self) -> str:
        def tag(c):
            if c.status not in (AGREE, NOT_APPLICABLE):
                return f"{c.name}={c.status}"
            return c.name + ("~" if "identical except compressed payload" in c.detail else "")
        names = " ".join(tag(c) for c in self.checks)
        return f"[{names}]"

    def first_problem(self) -> str:
        if self.setup_error:
            return self.setup_error
        for c in self.checks:
            if c.status in (DIFFER, ERROR):
                return f"{c.name}: {c.detail}"
        return ""

    def report(self) -> str:
        lines = [f"{self.status} {self.case.id} {self.summary()} ({self.seconds:.2f}s)"]
        if self.setup_error:
            lines.append(f"  setup: {self.setup_error}")
        for c in self.checks:
            if c.detail:
                lines.append(f"  {c.name} [{c.status}]: {c.detail}")
        return "\n".join(lines)


# ------------------------------------------------------------------------------------------ kafkafmt side
def _segment_files(d: Path, suffix: str) -> list[Path]:
    return sorted(d.glob(f"*{suffix}"), key=lambda p: p.name)


def _read_log(snapshot: Path) -> bytes:
    return b"".join(p.read_bytes() for p in _segment_files(snapshot, ".log"))


def topic_config(case: Case, before_produce: int | None = None):
    """The case's topic as kafkafmt configures it: the profile's broker settings (IBP, ``log.*``
    defaults, the broker's segment sizes) under the case's topic overrides, in one LogConfig.
    ``before_produce``: the configs in force at that produce request (the case's ``alter`` steps up
    to it applied); ``None``: after every alter (what the fetches see)."""
    return _log_config(case, case.topic_at(before_produce))


def _log_config(case: Case, topic_props: dict):
    from kafkafmt.config import BrokerConfig, LogConfig
    prof = PROFILES.get(case.broker, {})
    broker_props = {"inter.broker.protocol.version": prof.get("inter.broker.protocol.version", "3.9"),
                    **{k: v for k, v in prof.items() if k.startswith("log.")},
                    **_BROKER_LOG_DEFAULTS}
    return LogConfig.from_properties(topic_props, broker=BrokerConfig.from_properties(broker_props))


def _kafkafmt_error_code(e: BaseException) -> int:
    code = getattr(e, "error_code", None)
    return -1 if code is None else int(code)


def _next_offset(validated: bytes, fallback: int) -> int:
    last = fallback - 1
    for b in MemoryRecords(validated).batches():
        last = max(last, b.last_offset)
    return last + 1


def predict_produce(case: Case, steps: list[ProduceStep]) -> tuple[list[int], list[bytes], list[str]]:
    """kafkafmt's produce path for each request: (error codes, validated bytes of the successes, notes)."""
    offset = 0
    codes, outs, notes = [], [], []
    for st in steps:
        cfg = topic_config(case, st.index)
        now = st.lat if st.lat is not None else st.wall_now
        try:
            res = validate_messages_and_assign_offsets(
                st.data, cfg, offset=offset, now=now, origin="CLIENT", partition_leader_epoch=0,
                produce_version=st.version, topic=case.topic_name)
        except KafkaFmtError as e:
            codes.append(_kafkafmt_error_code(e))
            notes.append(f"request {st.index}: kafkafmt {type(e).__name__}: {e}")
            continue
        validated = bytes(res.records)
        codes.append(0)
        outs.append(validated)
        offset = res.next_offset
    return codes, outs, notes


# ------------------------------------------------------------------------------------------ the runner
class Runner:
    """Run cases on a :class:`Cluster` (started on demand) and compare with kafkafmt.

    ``oracle``: an object with ``call(op, **fields)`` (tests/kafka_oracle.py's KafkaOracle) for the
    ``read`` check; without it that check is ``pending``.
    """

    def __init__(self, cluster: Cluster | None = None, *, oracle=None, workdir: Path | None = None,
                 log=None, jobs: int = 2) -> None:
        self._own_cluster = cluster is None
        self.cluster = cluster
        self.oracle = oracle
        self._own_workdir = workdir is None
        self.workdir = Path(tempfile.mkdtemp(prefix="kafkafmt-conformance-run-")) if workdir is None else Path(workdir)
        self.log = log or (lambda msg: None)
        self.jobs = jobs
        self._dump_server = None
        #: seconds per phase of the last run (broker, checks, log dumps, index dumps, segments)
        self.timings: dict[str, float] = {}
        quiet = self.workdir / "log4j-quiet.properties"
        quiet.write_text(QUIET_LOG4J)
        self._java_props = [f"-Dlog4j.configuration=file:{quiet}"]

    def close(self) -> None:
        try:
            if self._dump_server:
                self._dump_server.close()
            if self._own_cluster and self.cluster is not None:
                self.cluster.close()
        finally:
            if self._own_workdir:
                shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> "Runner":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- JVM tools ------------------------------------------------------------------------------
    def kafka_dump_log(self, files: list[Path], *flags: str, timeout: float = 120) -> tuple[int, list[str], list[str]]:
        """The real kafka-dump-log (``kafka.tools.DumpLogSegments``): (exit status, stdout, stderr) lines.

        Served by one long-running JVM (``conformance/oracle/DumpLogSegmentsServer.java``, compiled by
        ``make oracle``) when available, else one JVM per call."""
        args = [*flags, "--files", ",".join(map(str, files))]
        if self._dump_server is None and SERVER_CLASS.is_file():
            try:
                self._dump_server = DumpLogServer(self.workdir, self._java_props)
            except OSError:
                self._dump_server = False
        if self._dump_server:
            try:
                return self._dump_server.run(args)
            except (OSError, ProtocolError):
                self._dump_server.close()
                self._dump_server = False
        cmd = [os.environ.get("KAFKA_ORACLE_JAVA") or "java", *JVM_OPTS, *self._java_props, "-cp",
               f"{LIB_DIR}{os.sep}*", "kafka.tools.DumpLogSegments", *args]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=self.workdir)
        return p.returncode, p.stdout.splitlines(), [ln for ln in p.stderr.splitlines() if not ln.startswith("log4j:")]

    def kafkafmt_dump(self, files: list[Path], *flags: str, timeout: float = 120) -> tuple[int, list[str], list[str]]:
        """``python -m kafkafmt dump FILES FLAGS`` in a subprocess: (exit status, stdout, stderr) lines."""
        cmd = [sys.executable, "-m", "kafkafmt", "dump", *map(str, files), *flags]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=REPO_ROOT)
        return p.returncode, p.stdout.splitlines(), p.stderr.splitlines()

    def kafkafmt_dump_inprocess(self, files: list[Path], *flags: str) -> tuple[int, list[str], list[str]]:
        """The same CLI entry point (``kafkafmt.cli.main``) in this process: no interpreter start per call.
        (Only the dump tools' threads run during a dump phase; stdout/stderr are swapped under a lock.)"""
        import contextlib
        import io
        from kafkafmt import cli
        out, err = io.StringIO(), io.StringIO()
        with _STDIO_LOCK, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = cli.main(["dump", *map(str, files), *flags])
            except SystemExit as e:  # argparse
                rc = e.code if isinstance(e.code, int) else 1
        return rc, out.getvalue().splitlines(), err.getvalue().splitlines()

    # -- phase 1: the broker -----------------------------------------------------------------------
    def _default_produce_version(self, data: bytes) -> int:
        try:
            batches = list(MemoryRecords(data).batches())
        except KafkaFmtError:
            batches = []
        if batches and all(b.magic < 2 for b in batches):
            return 2
        if not batches and _legacy_magic(data):
            return 2
        return 8

    def run_broker(self, case: Case, res: CaseResult) -> None:
        if self.cluster is None:
            self.cluster = Cluster()
        broker = self.cluster.broker(case.broker)
        topic = case.topic_name
        ctx = {"now": int(time.time() * 1000), "lat": []}
        with broker.client() as c:
            err, msg = c.create_topic(topic, case.topic)
            if err:
                raise CaseError(f"CreateTopics {topic} {case.topic}: {error_name(err)} {msg}")
            c.wait_for_leader(topic)
            for i, p in enumerate(case.produce):
                self._alter(broker, c, case, i, res)
                if "hex" in p:
                    data = bytes.fromhex(p["hex"])
                else:
                    data = build_record_set(materialize(p["batches"], ctx))
                for m in p.get("mutate", []):
                    buf = bytearray(data)
                    if "xor" in m:
                        buf[m["at"]] ^= int(m["xor"])
                    if "set" in m:
                        new = bytes.fromhex(m["set"])
                        buf[m["at"]:m["at"] + len(new)] = new
                    data = bytes(buf)
                version = p.get("version") or self._default_produce_version(data)
                wall = int(time.time() * 1000)
                r = c.produce_retrying(topic, 0, data, version=version)
                st = ProduceStep(i, data, version, r.error_code, r.base_offset, r.log_append_time, r.error_message,
                                 wall)
                res.produce.append(st)
                ctx["lat"].append(r.log_append_time if r.log_append_time >= 0 else None)
            self._alter(broker, c, case, len(case.produce), res)
            for i, f in enumerate(case.fetch):
                version = int(f.get("version", 4))
                r = c.fetch(topic, 0, int(f.get("offset", 0)), version=version,
                            max_bytes=int(f.get("maxBytes", 1 << 20)),
                            partition_max_bytes=int(f.get("partitionMaxBytes", f.get("maxBytes", 1 << 20))))
                res.fetches.append(FetchStep(i, f, version, int(f.get("offset", 0)), r.error_code,
                                             r.high_watermark, r.records))
        snap = self.workdir / "snapshots" / topic
        snap.mkdir(parents=True, exist_ok=True)
        for p in sorted(broker.partition_dir(topic).iterdir()):
            if p.suffix in (".log", ".index", ".timeindex") or (case.alter and p.name == _EPOCH_CHECKPOINT):
                shutil.copyfile(p, snap / p.name)
        res.snapshot = snap
        self._fill_lat(res)
        res._ctx = ctx  # type: ignore[attr-defined]

    def _alter(self, broker, client, case: Case, before_produce: int, res: CaseResult,
               timeout: float = 30.0) -> None:
        """Send the case's ``alter`` steps due before produce request ``before_produce``
        (IncrementalAlterConfigs), then wait until the broker has applied them: in ZooKeeper mode the
        change reaches the log through a config-change notification (``ZkConfigManager`` logs
        "Processing override for entityPath: topics/<topic>", then ``TopicConfigHandler`` calls
        ``UnifiedLog.updateConfig``)."""
        for a in (a for a in case.alter if a["beforeProduce"] == before_produce):
            marker = f"Processing override for entityPath: topics/{case.topic_name} "
            seen = _count_lines(broker.dir / "kafka.log", marker)
            err, msg = client.alter_topic_configs(case.topic_name, a["configs"])
            res.alters.append((err, msg))
            if a.get("error"):
                if err != _code(a["error"]):
                    raise CaseError(f"IncrementalAlterConfigs {a['configs']}: the broker answered "
                                    f"{error_name(err)} {msg or ''}, the case expects {a['error']}")
                continue
            if err:
                raise CaseError(f"IncrementalAlterConfigs {case.topic_name} {a['configs']}: {error_name(err)} {msg}")
            deadline = time.monotonic() + timeout
            while _count_lines(broker.dir / "kafka.log", marker) <= seen:
                if time.monotonic() > deadline:
                    raise CaseError(f"the broker did not apply {a['configs']} within {timeout}s")
                time.sleep(0.02)
            time.sleep(_CONFIG_SETTLE_S)

    def _fill_lat(self, res: CaseResult) -> None:
        """The broker's log-append time of each successful append (from the response, else the log)."""
        log = _read_log(res.snapshot)
        batches = []
        try:
            batches = list(MemoryRecords(log).batches())
        except KafkaFmtError:
            pass
        for st in res.produce:
            if st.error_code != 0:
                continue
            if st.log_append_time >= 0:
                st.lat = st.log_append_time
                continue
            for b in batches:
                if b.last_offset >= st.base_offset and b.timestamp_type == TimestampType.LOG_APPEND_TIME:
                    st.lat = b.max_timestamp
                    break

    # -- phase 3: checks ----------------------------------------------------------------------------
    def check_produce(self, case: Case, res: CaseResult) -> None:
        broker_codes = [st.error_code for st in res.produce]
        exp = case.expect.get("errors")
        if exp is not None:
            exp_codes = [_code(x) for x in exp]
            if exp_codes != broker_codes:
                res.add("produce", ERROR, f"the broker answered {[error_name(c) for c in broker_codes]}, the case "
                        f"expects {[error_name(c) for c in exp_codes]} (fix the case, or Kafka behaves "
                        f"differently than documented)" + _messages(res))
                return
        if "produce" not in case.checks or not res.produce:
            return
        try:
            codes, outs, notes = predict_produce(case, res.produce)
        except ImportError as e:
            res.add("produce", ERROR, f"kafkafmt produce path failed to import ({e.name or e})")
            return
        if codes != broker_codes:
            res.add("produce", DIFFER, f"error codes: broker {[error_name(c) for c in broker_codes]} vs kafkafmt "
                    f"{[error_name(c) for c in codes]}" + _messages(res) + ("; " + "; ".join(notes) if notes else ""))
            return
        log = _read_log(res.snapshot)
        predicted = b"".join(outs)
        status, why = compare_records(case, log, predicted)
        res.add("produce", status, f"errors {[error_name(c) for c in codes]}; .log vs kafkafmt validator output: {why}")

    def check_stored(self, case: Case, res: CaseResult) -> None:
        spec = case.expect.get("log")
        if spec is None or "stored" not in case.checks:
            return
        ctx = dict(getattr(res, "_ctx", {"now": 0}))
        ctx["lat"] = [st.lat for st in res.produce]
        batches = []
        for b in spec:
            if "from" in b:
                i, j = b["from"]
                base = dict(case.produce[i]["batches"][j])
                base.update({k: v for k, v in b.items() if k != "from"})
                b = base
            batches.append(b)
        expected = build_record_set(materialize(batches, ctx))
        log = _read_log(res.snapshot)
        status, why = compare_records(case, log, expected, "kafkafmt build of expect.log")
        res.add("stored", status, f".log vs kafkafmt build of expect.log: {why}")

    def check_fetch(self, case: Case, res: CaseResult) -> None:
        if not res.fetches or "fetch" not in case.checks:
            return
        problems, done, pend = [], 0, []
        log_files = _segment_files(res.snapshot, ".log")
        ctx = dict(getattr(res, "_ctx", {"now": 0}))
        ctx["lat"] = [st.lat for st in res.produce]
        for fs in res.fetches:
            label = f"fetch #{fs.index} (v{fs.version} @{fs.offset})"
            exp = fs.spec.get("expect")
            if exp is not None:
                if "error" in exp and _code(exp["error"]) != fs.error_code:
                    problems.append(f"{label}: broker error {error_name(fs.error_code)}, case expects {exp['error']}")
                elif "batches" in exp or "tailHex" in exp:
                    want = build_record_set(materialize(exp.get("batches", []), ctx)) + \
                        bytes.fromhex(exp.get("tailHex", ""))
                    status, why = compare_records(case, fs.records or b"", want, "kafkafmt build of expect")
                    if status != AGREE:
                        problems.append(f"{label}: {why}")
                    else:
                        done += 1
            try:
                pred = predict_fetch(case, res, fs, log_files)
            except NotImplementedError as e:
                pend.append(str(e))
                continue
            p_code, p_records = pred
            if p_code != fs.error_code:
                problems.append(f"{label}: error broker {error_name(fs.error_code)} vs kafkafmt {error_name(p_code)}")
                continue
            status, why = compare_records(case, fs.records or b"", p_records or b"")
            if status != AGREE:
                problems.append(f"{label}: records: {why}")
            else:
                done += 1
        if problems:
            res.add("fetch", DIFFER, "; ".join(problems))
        elif pend:  # some fetch could not be predicted: the check does not agree as a whole
            res.add("fetch", PENDING, f"{done} comparison(s) identical, not predicted: {'; '.join(pend)}")
        elif done:
            res.add("fetch", AGREE, f"{done} comparison(s) identical")
        else:
            res.add("fetch", NOT_APPLICABLE, "nothing to compare")

    def check_alter(self, case: Case, res: CaseResult) -> None:
        """Each ``alter`` step: the broker's answer vs kafkafmt's validation of the changed topic config
        (``LogConfig.with_properties``; a ``ConfigError`` is Kafka's ``ConfigException`` → INVALID_CONFIG,
        and Kafka's message ends with kafkafmt's)."""
        if not case.alter or "alter" not in case.checks:
            return
        props, problems = dict(case.topic), []
        for i, (a, (err, msg)) in enumerate(zip(case.alter, res.alters)):
            new = {**props, **a["configs"]}
            new = {k: v for k, v in new.items() if v is not None}
            try:
                _log_config(case, new)
                ours, why = 0, None
            except KafkaFmtError as e:
                ours, why = _code("INVALID_CONFIG"), e.reason
            if ours != err:
                problems.append(f"alter #{i} {a['configs']}: broker {error_name(err)} {msg or ''} vs kafkafmt "
                                f"{error_name(ours)} {why or ''}")
            elif err and not (msg or "").endswith(str(why)):
                problems.append(f"alter #{i}: message: broker {msg!r} vs kafkafmt {why!r}")
            if not err:
                props = new
        res.add("alter", DIFFER if problems else AGREE,
                "; ".join(problems) or f"{len(res.alters)} IncrementalAlterConfigs answer(s) as kafkafmt validates them")

    def check_read(self, case: Case, res: CaseResult) -> None:
        if "read" not in case.checks:
            return
        if self.oracle is None:
            res.add("read", PENDING, "no Kafka oracle given")
            return
        log = _read_log(res.snapshot)
        if not log:
            res.add("read", NOT_APPLICABLE, "empty log")
            return
        try:
            theirs = self.oracle.call("read", bytes=log)
        except Exception as e:  # OracleError
            res.add("read", ERROR, f"Kafka's reader failed on the broker's own log: {e}")
            return
        try:
            ours = kafkafmt_read(log)
        except KafkaFmtError as e:
            res.add("read", DIFFER, f"kafkafmt cannot read the broker's .log: {type(e).__name__}: {e}")
            return
        why = compare_read(theirs, ours)
        res.add("read", DIFFER if why else AGREE, why or f"{len(ours)} batches, every field equal")

    # -- dumps --------------------------------------------------------------------------------------
    def run_log_dumps(self, results: list[CaseResult]) -> None:
        todo = [r for r in results if r.snapshot is not None and "dump" in r.case.checks]
        groups = {r.case.id: _segment_files(r.snapshot, ".log") for r in todo}
        with ThreadPoolExecutor(2) as ex:
            fj = ex.submit(self.batched, self.kafka_dump_log, groups, "--deep-iteration", "--print-data-log")
            fk = ex.submit(self.batched, self.kafkafmt_dump, groups, "--deep", "--print-data-log")
            jres, kres = fj.result(), fk.result()
        for r in todo:
            k = r.case.id
            if k not in jres:
                r.add("dump", NOT_APPLICABLE, "no .log file")
                continue
            why = _compare_tool_outputs(jres[k], kres[k])
            n = len(groups[k])
            r.add("dump", DIFFER if why else AGREE, why or f"{n} .log file(s), {len(jres[k][1])} lines identical")

    def batched(self, tool, groups: dict, *flags: str) -> dict:
        """Run ``tool`` (kafka_dump_log / kafkafmt_dump) over every group's files in as few calls as
        possible and split the results per group: stdout by the ``Dumping <file>`` headers, stderr by
        the file paths its reports name.  A JVM that dies on one file (an exception ends
        DumpLogSegments, and loses the reports it prints at the end) is re-run on the groups before
        and after that file; unattributable stderr makes the batch split in halves.
        Returns ``{key: (rc, stdout_lines, stderr_lines)}``."""
        keys = [k for k, v in groups.items() if v]
        if not keys:
            return {}
        if len(keys) == 1:
            return {keys[0]: tool(groups[keys[0]], *flags)}
        files = [f for k in keys for f in groups[k]]
        owner = {str(f): k for k in keys for f in groups[k]}
        rc, out, err = tool(files, *flags)
        split = _split_dump(out, files)

        def sub(ks):
            return self.batched(tool, {k: groups[k] for k in ks}, *flags)

        if any(ln.startswith("Exception in thread") for ln in err):
            dumped = [ln[8:] for ln in out if ln.startswith("Dumping ") and ln[8:] in owner]
            i = keys.index(owner[dumped[-1]]) if dumped else 0
            res = sub(keys[:i])
            res.update(sub([keys[i]]))
            res.update(sub(keys[i + 1:]))
            return res
        per: dict = {k: [] for k in keys}
        blocks: list[list[str]] = []
        for line in err:
            if line.startswith(" ") and blocks:
                blocks[-1].append(line)
            else:
                blocks.append([line])
        paths = sorted(owner, key=len, reverse=True)
        for b in blocks:
            hit = next((p for p in paths if p in b[0]), None)
            if hit is None:
                half = len(keys) // 2
                res = sub(keys[:half])
                res.update(sub(keys[half:]))
                return res
            per[owner[hit]].extend(b)
        return {k: (1 if any(ln.startswith("kafkafmt: error") for ln in per[k]) else (0 if not per[k] else rc),
                    [ln for f in groups[k] for ln in split.get(str(f), [])], per[k]) for k in keys}

    def run_index_dumps(self, results: list[CaseResult]) -> None:
        todo = [r for r in results if r.snapshot is not None and "dump-index" in r.case.checks]
        if not todo:
            return
        # An empty .log with its preallocated (all-zero) .index makes DumpLogSegments die with
        # NoSuchElementException (entry 0 = (0, 0) names no batch); checked once, where a case asks
        # for it ("dumpEmptyLogIndex"), not on every rejected produce.
        skipped = [r for r in todo if not _read_log(r.snapshot) and not r.case.raw.get("dumpEmptyLogIndex")]
        for r in skipped:
            r.add("dump-index", NOT_APPLICABLE, "empty log (see a case with dumpEmptyLogIndex)")
        todo = [r for r in todo if r not in skipped]
        groups = {r.case.id: _segment_files(r.snapshot, ".index") + _segment_files(r.snapshot, ".timeindex")
                  for r in todo}
        probs: dict[str, list[str]] = {k: [] for k in groups}
        for flags in ((), ("--verify-index-only",), ("--index-sanity-check",)):
            with ThreadPoolExecutor(2) as ex:
                fj = ex.submit(self.batched, self.kafka_dump_log, groups, *flags)
                fk = ex.submit(self.batched, self.kafkafmt_dump_inprocess, groups, *flags)
                jres, kres = fj.result(), fk.result()
            for k in groups:
                if k not in jres:
                    continue
                why = _compare_tool_outputs(jres[k], kres[k])
                if why:
                    probs[k].append(f"{' '.join(flags) or 'dump'}: {why}")
        for r in todo:
            files = groups[r.case.id]
            if not files:
                r.add("dump-index", NOT_APPLICABLE, "no index files")
                continue
            entries = 0
            for f in files:
                size = 12 if f.suffix == ".timeindex" else 8
                data = f.read_bytes()
                entries += sum(1 for i in range(0, len(data) - size + 1, size) if any(data[i:i + size]))
            p = probs[r.case.id]
            r.add("dump-index", DIFFER if p else AGREE,
                  "; ".join(p) if p else f"{len(files)} index file(s), {entries} non-zero entries, "
                  "dump / --verify-index-only / --index-sanity-check identical")

    def run_segments(self, results: list[CaseResult]) -> None:
        todo = [r for r in results if r.snapshot is not None and "segments" in r.case.checks]
        if not todo:
            return
        written: dict[str, Path] = {}
        probs: dict[str, list[str]] = {}
        for r in todo:
            try:
                d, p = replay_segments(self, r)
                written[r.case.id], probs[r.case.id] = d, p
            except NotImplementedError as e:
                r.add("segments", PENDING, str(e))
            except Exception as e:
                r.add("segments", ERROR, f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=3)}")
        # the real kafka-dump-log on the files kafkafmt wrote (after a clean close)
        logs = {k: _segment_files(d, ".log") for k, d in written.items()}
        idx = {k: _segment_files(d, ".index") + _segment_files(d, ".timeindex") for k, d in written.items()}
        deep = self.batched(self.kafka_dump_log, logs, "--deep-iteration")
        verify = self.batched(self.kafka_dump_log, idx, "--verify-index-only")
        sanity = self.batched(self.kafka_dump_log, idx, "--index-sanity-check")
        for r in todo:
            k = r.case.id
            if k not in written:
                continue
            p = probs[k]
            notes = []
            if k in deep:
                rc, out, err = deep[k]
                # non-consecutive offsets are a property of the data (crafted cases), not a mismatch
                bad = [ln for ln in out if ln.startswith("Found ")] + \
                    [ln for b in _stderr_blocks(err) if not b[0].startswith("Non-consecutive offsets") for ln in b]
                if rc or bad:
                    p.append(f"kafka-dump-log --deep-iteration on kafkafmt's segments: exit {rc}: {(bad or out)[-3:]}")
            if k in verify:
                rc, out, err = verify[k]
                known = r.case.raw.get("knownTimeIndexMismatch")
                blocks = _stderr_blocks(err)
                if known and blocks and all(b[0].startswith("Found timestamp mismatch") for b in blocks) and not rc:
                    notes.append(f"kafka-dump-log reports the expected time index mismatch ({known})")
                elif rc or err:
                    p.append(f"kafka-dump-log --verify-index-only on kafkafmt's indexes: exit {rc}: {err[:4]}")
            if k in sanity:
                rc, out, err = sanity[k]
                passed = [ln for ln in out if ln.endswith(("passed sanity check.", " is empty."))]
                if rc or err or len(passed) != len(idx[k]):
                    p.append(f"kafka-dump-log --index-sanity-check on kafkafmt's indexes: exit {rc}: "
                             f"{(err or out)[-3:]}")
            n = len(list(r.snapshot.iterdir()))
            if p:
                r.add("segments", DIFFER, "; ".join(p))
            else:
                r.add("segments", AGREE, f"{n} files identical to the broker's; kafka-dump-log --deep-iteration, "
                      "--verify-index-only, --index-sanity-check clean on kafkafmt's closed segments"
                      + (f"; {'; '.join(notes)}" if notes else ""))

    # -- all -------------------------------------------------------------------------------------
    def run(self, cases: list[Case], *, on_result=None) -> list[CaseResult]:
        results: list[CaseResult] = []
        t_start = time.monotonic()
        for case in cases:
            res = CaseResult(case)
            t0 = time.monotonic()
            try:
                self.run_broker(case, res)
            except BrokerError:
                raise
            except Exception as e:  # a bad case or a broken connection: this case only
                res.setup_error = f"{type(e).__name__}: {e}"
            res.seconds = time.monotonic() - t0
            results.append(res)
            self.log(f"broker done: {case.id} ({res.seconds:.2f}s)")
        ok = [r for r in results if r.setup_error is None]
        t_checks = time.monotonic()
        self.timings["broker"] = t_checks - t_start
        for r in ok:
            t0 = time.monotonic()
            for fn in (self.check_produce, self.check_stored, self.check_fetch, self.check_read, self.check_alter):
                try:
                    fn(r.case, r)
                except Exception as e:
                    r.add(fn.__name__.replace("check_", ""), ERROR,
                          f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=4)}")
            r.seconds += time.monotonic() - t0
        t0 = time.monotonic()
        self.timings["checks"] = t0 - t_checks
        for name, fn in (("log dumps", self.run_log_dumps), ("index dumps", self.run_index_dumps),
                         ("segments", self.run_segments)):
            t = time.monotonic()
            fn(ok)
            self.timings[name] = time.monotonic() - t
        share = (time.monotonic() - t0) / max(1, len(ok))
        for r in ok:
            r.seconds += share
        if on_result:
            for r in results:
                on_result(r)
        return results


# ------------------------------------------------------------------------------------------ helpers
def compare_records(case: Case, got: bytes, want: bytes, label_b: str = "kafkafmt") -> tuple[str, str]:
    """(status, detail) of a byte comparison; a case may allow compressed payloads to be encoded
    differently (``allowCodecDifference``: why), then they must be equal once decompressed."""
    why = explain_records_diff(got, want, "broker", label_b)
    if why is None:
        return AGREE, f"{len(got)} bytes identical"
    allow = case.raw.get("allowCodecDifference")
    if allow:
        try:
            norm = codec_normalized_diff(got, want)
        except KafkaFmtError as e:
            norm = f"cannot decompress: {e}"
        if norm is None:
            return AGREE, f"identical except compressed payload bytes ({allow}); decompressed identical [{why}]"
        return DIFFER, f"{why}; even decompressed: {norm}"
    return DIFFER, why


def _code(x) -> int:
    if isinstance(x, int):
        return x
    from .client import ERROR_NAMES
    for k, v in ERROR_NAMES.items():
        if v == x:
            return k
    raise CaseError(f"unknown error name {x!r}")


def _messages(res: CaseResult) -> str:
    msgs = [f"#{st.index}: {st.error_message}" for st in res.produce if st.error_message]
    return f" (broker messages: {'; '.join(msgs)})" if msgs else ""


def _split_dump(lines: list[str], files: list[Path]) -> dict[str, list[str]]:
    """Split one multi-file dump into per-file lines by its ``Dumping <file>`` headers."""
    names = {str(f) for f in files}
    out: dict[str, list[str]] = {}
    cur = None
    for line in lines:
        if line.startswith("Dumping ") and line[8:] in names:
            cur = line[8:]
            out[cur] = [line]
            continue
        if cur is not None:
            out[cur].append(line)
    return out


def _split_stderr(lines: list[str], files: list[Path]) -> dict[str, list[str]]:
    """Attribute stderr groups (a header naming a file, then indented lines) to files."""
    names = sorted({str(f) for f in files}, key=len, reverse=True)
    out: dict[str, list[str]] = {}
    cur = None
    for line in lines:
        hit = next((n for n in names if n in line), None)
        if hit is not None:
            cur = hit
            out.setdefault(cur, []).append(line)
        elif cur is not None and line.startswith(" "):
            out[cur].append(line)
        else:
            out.setdefault("?", []).append(line)
    return out


def kafkafmt_read(log: bytes) -> list[dict]:
    """kafkafmt's reading of a record set, in the oracle ``read`` op's field names."""
    out = []
    for b in MemoryRecords(log).batches():
        recs = []
        for r in b.records():
            recs.append({"offset": r.offset, "timestamp": r.timestamp, "sequence": r.sequence,
                         "key": None if r.key is None else bytes(r.key).hex(),
                         "value": None if r.value is None else bytes(r.value).hex(),
                         "headers": [{"key": h.key, "value": None if h.value is None else bytes(h.value).hex()}
                                     for h in r.headers]})
        out.append({"magic": b.magic, "sizeInBytes": b.size_in_bytes, "isValid": b.is_valid(),
                    "checksum": b.checksum, "compression": b.compression.kafka_name,
                    "timestampType": b.timestamp_type.kafka_name, "maxTimestamp": b.max_timestamp,
                    "baseOffset": b.base_offset, "lastOffset": b.last_offset, "count": b.count,
                    "producerId": b.producer_id, "producerEpoch": b.producer_epoch,
                    "baseSequence": b.base_sequence, "lastSequence": b.last_sequence,
                    "partitionLeaderEpoch": b.partition_leader_epoch, "isTransactional": b.is_transactional,
                    "isControlBatch": b.is_control, "records": recs})
    return out


_READ_BATCH_FIELDS = ("magic", "sizeInBytes", "isValid", "checksum", "compression", "timestampType", "maxTimestamp",
                      "baseOffset", "lastOffset", "count", "producerId", "producerEpoch", "baseSequence",
                      "lastSequence", "partitionLeaderEpoch", "isTransactional", "isControlBatch")
_READ_RECORD_FIELDS = ("offset", "timestamp", "sequence", "key", "value", "headers")


def compare_read(theirs: dict, ours: list[dict]) -> str | None:
    tb = theirs.get("batches", [])
    if len(tb) != len(ours):
        return f"Kafka reads {len(tb)} batches, kafkafmt {len(ours)}"
    for i, (t, o) in enumerate(zip(tb, ours)):
        for f in _READ_BATCH_FIELDS:
            if t.get(f) != o.get(f):
                return f"batch #{i} {f}: Kafka {t.get(f)!r} vs kafkafmt {o.get(f)!r}"
        tr, orr = t.get("records", []), o["records"]
        if len(tr) != len(orr):
            return f"batch #{i}: Kafka reads {len(tr)} records, kafkafmt {len(orr)}"
        for j, (a, b) in enumerate(zip(tr, orr)):
            for f in _READ_RECORD_FIELDS:
                if a.get(f) != b.get(f):
                    return f"batch #{i} record #{j} {f}: Kafka {a.get(f)!r} vs kafkafmt {b.get(f)!r}"
    return None


def predict_fetch(case: Case, res: CaseResult, fs: FetchStep, log_files: list[Path]):
    """kafkafmt's fetch path (``kafkafmt.broker.fetch.fetch``) over the broker's own segment file that
    holds the fetch offset (a fetch reads one segment) -> (error code, bytes on the wire)."""
    seg = log_files[0] if log_files else None
    for f in log_files:
        if int(f.name.split(".")[0]) <= fs.offset:
            seg = f
    data = seg.read_bytes() if seg is not None else b""
    cfg = topic_config(case)  # after every alter: the fetches come last
    max_bytes = int(fs.spec.get("partitionMaxBytes", fs.spec.get("maxBytes", 1 << 20)))
    r = kafkafmt_fetch(data, topic_config=cfg, fetch_version=fs.version, fetch_offset=fs.offset, max_bytes=max_bytes)
    code = 0 if not r.error else _code(r.error)
    return code, r.wire_records


#: broker-level log settings of every profile (BASE_BROKER_CONFIG) as topic properties
#: the test broker's own log settings (conformance/broker.py BASE_BROKER_CONFIG)
_BROKER_LOG_DEFAULTS = {"log.segment.bytes": "1048576", "log.index.size.max.bytes": "8192"}


#: after the broker logs a topic config change, the handler applies it to the log in the same thread
#: within microseconds; this margin covers the gap between the log line and UnifiedLog.updateConfig
_CONFIG_SETTLE_S = 0.1


#: the partition's leader epoch checkpoint (``LeaderEpochCheckpointFile``): compared in cases that alter
#: the topic, since ``UnifiedLog.updateConfig`` re-initialises the cache when the record version changes
_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"


def _count_lines(path: Path, marker: str) -> int:
    try:
        return path.read_text(encoding="utf-8", errors="replace").count(marker)
    except FileNotFoundError:
        return 0


def _compare_tool_outputs(j, k) -> str | None:
    """kafka-dump-log's (rc, stdout, stderr) vs kafkafmt dump's: same stdout lines; if a tool died, the
    same exception (Kafka class and message); else the same stderr report blocks (in any order)."""
    jrc, jout, jerr = j
    krc, kout, kerr = k
    jfail, kfail = _tool_failure(jerr), _tool_failure(kerr)
    if jfail and jout:
        # DumpLogSegments dies on the first failing file; kafkafmt dump reports it and goes on:
        # compare kafkafmt's output up to the end of that file's section
        last = max(i for i, ln in enumerate(jout) if ln.startswith("Dumping ")) if any(
            ln.startswith("Dumping ") for ln in jout) else 0
        nxt = next((i for i in range(len(jout), len(kout)) if kout[i].startswith("Dumping ")), len(kout)) \
            if kout[:last + 1] == jout[:last + 1] else len(kout)
        kout = kout[:nxt]
    why = explain_lines_diff(jout, kout)
    if why:
        return why
    if jfail or kfail:
        if not (jfail and kfail):
            return f"failure: kafka-dump-log {jfail} vs kafkafmt dump {kfail}"
        if kfail[0] == "DumpToolError":  # names its Java exception only in the API, not in the CLI text
            return None
        if jfail != kfail:
            return f"failure: kafka-dump-log {jfail} vs kafkafmt dump {kfail}"
        return None
    if _stderr_blocks(jerr) != _stderr_blocks(kerr):
        return explain_lines_diff(jerr, kerr, "kafka-dump-log stderr", "kafkafmt dump stderr") or \
            "stderr reports differ (order aside)"
    if (jrc == 0) != (krc == 0):
        return f"exit status: kafka-dump-log {jrc}, kafkafmt dump {krc}"
    return None


def _tool_failure(lines: list[str]) -> tuple[str, str] | None:
    """(Kafka exception simple name, message) if a dump tool died: the JVM's 'Exception in thread
    "main" <class>: <message>' line, or kafkafmt's 'kafkafmt: error: <file>: <Error>: <message>'
    (mapped to the Kafka exception kafkafmt's error class mirrors)."""
    import re
    from kafkafmt import errors as kerrors
    for line in lines:
        m = re.match(r'Exception in thread "main" ([\w.$]+)(?:: (.*))?$', line)
        if m:
            return m.group(1).rsplit(".", 1)[-1], m.group(2) or ""
        m = re.match(r"kafkafmt: error: .*?: (\w+): (.*)$", line)
        if m:
            cls = getattr(kerrors, m.group(1), None)
            if cls is None:
                try:
                    from kafkafmt.log import errors as lerrors
                    cls = getattr(lerrors, m.group(1), None)
                except ImportError:
                    cls = None
            name = getattr(cls, "kafka_exception", "") or m.group(1)
            return name, m.group(2)
    return None


def _stderr_blocks(lines: list[str]) -> list[tuple[str, ...]]:
    """kafka-dump-log's error reports as blocks (a header line + its indented lines), sorted: the
    tool keeps them in hash maps, so their order between files is not meaningful."""
    blocks: list[list[str]] = []
    for line in lines:
        if line.startswith(" ") and blocks:
            blocks[-1].append(line)
        else:
            blocks.append([line])
    return sorted(tuple(b) for b in blocks)


def replay_segments(runner: Runner, r: CaseResult) -> tuple[Path, list[str]]:
    """kafkafmt.log.Log replays the case's successful appends (same topic config, the broker's clock);
    its segment files must equal the broker's.  Returns the closed log's directory and the problems."""
    case = r.case
    d = runner.workdir / "kafkafmt-logs" / f"{case.topic_name}-0"
    if d.exists():
        shutil.rmtree(d)
    clock = SimulatedClock(r.produce[0].wall_now if r.produce else 0)
    cfg = topic_config(case, 0)
    log = Log(d, cfg, clock, topic_partition=(case.topic_name, 0), leader_epoch=0)
    problems = []
    try:
        for st in r.produce:
            if topic_config(case, st.index) != cfg:  # the case's alter steps (UnifiedLog.updateConfig)
                cfg = topic_config(case, st.index)
                log.update_config(cfg)
            if st.error_code != 0:
                continue
            clock.set(st.lat if st.lat is not None else st.wall_now)
            try:
                log.append_as_leader(st.data)
            except KafkaFmtError as e:
                problems.append(f"request {st.index}: the broker appended it, kafkafmt.log raised "
                                f"{type(e).__name__}: {e}")
        names = sorted(p.name for p in r.snapshot.iterdir() if p.name != _EPOCH_CHECKPOINT)
        ours = sorted(p.name for p in d.iterdir() if p.suffix in (".log", ".index", ".timeindex"))
        if names != ours:
            problems.append(f"segment files: broker {names} vs kafkafmt {ours}")
        for name in names:
            a = (r.snapshot / name).read_bytes()
            bp = d / name
            if not bp.exists():
                continue
            b = bp.read_bytes()
            if name.endswith(".log"):
                status, detail = compare_records(case, a, b)
                why = None if status == AGREE else detail
            else:
                why = explain_index_diff(a, b, time_index=name.endswith(".timeindex"))
            if why:
                problems.append(f"{name}: {why}")
    finally:
        log.close()
    if case.alter:  # a record-version change re-initialises the leader epoch cache (deleted below v2)
        theirs, mine = (p / _EPOCH_CHECKPOINT for p in (r.snapshot, d))
        t, m = (f.read_text() if f.exists() else None for f in (theirs, mine))
        if t != m:
            problems.append(f"{_EPOCH_CHECKPOINT}: broker {t!r} vs kafkafmt {m!r}")
    return d, problems


def results_to_json(results: list[CaseResult]) -> str:
    return json.dumps([{"id": r.case.id, "status": r.status, "xfail": r.case.xfail, "seconds": round(r.seconds, 3),
                        "setupError": r.setup_error,
                        "checks": [{"name": c.name, "status": c.status, "detail": c.detail} for c in r.checks]}
                       for r in results], indent=2)


__all__ = ["Runner", "CaseResult", "Check", "AGREE", "DIFFER", "PENDING", "ERROR", "NOT_APPLICABLE",
           "results_to_json",
           "kafkafmt_read", "compare_read", "predict_produce", "topic_config"]


def _legacy_magic(data: bytes) -> bool:
    """Whether ``data`` starts with an entry whose magic byte (read by the batch walker) is 0 or 1."""
    try:
        return 0 <= magic_at(data, 0) < MAGIC_VALUE_V2
    except KafkaFmtError:  # fewer bytes than reach the magic byte
        return False
