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

The statuses of a check and a case are :mod:`kafkarig.results`'s; kafkafmt's predictions are
:mod:`kafkarig.predict`'s, the comparisons :mod:`kafkarig.compare`'s, the tools :mod:`kafkarig.dump_log`'s
and the ``segments`` replay :mod:`kafkarig.replay`'s.  This module drives the broker and the phases.
"""
from __future__ import annotations

import shutil
import tempfile
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from kafkafmt.constants import MAGIC_VALUE_V2, TimestampType
from kafkafmt.errors import KafkaFmtError
from kafkafmt.records import MemoryRecords
from kafkafmt.records.spec import build_record_set
from kafkafmt.records.walker import magic_at

from .broker import BrokerError, Cluster
from .cases import Case, CaseError, error_code, materialize
from .client import error_name
from .compare import compare_read, compare_records, compare_tool_outputs, stderr_blocks
from .dump_log import DumpTools, batched
from .predict import kafkafmt_read, log_config, predict_fetch, predict_produce, read_log, segment_files
from .replay import EPOCH_CHECKPOINT, replay_segments
from .results import AGREE, DIFFER, ERROR, NOT_APPLICABLE, PENDING, CaseResult, FetchStep, ProduceStep


# ------------------------------------------------------------------------------------------ the runner
class Runner:
    """Run cases on a :class:`Cluster` (started on demand) and compare with kafkafmt.

    ``oracle``: an object with ``call(op, **fields)`` (:class:`kafkarig.oracle.KafkaOracle`) for the
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
        #: kafka-dump-log and kafkafmt dump
        self.tools = DumpTools(self.workdir)
        #: seconds per phase of the last run (broker, checks, log dumps, index dumps, segments)
        self.timings: dict[str, float] = {}

    def close(self) -> None:
        try:
            self.tools.close()
            if self._own_cluster and self.cluster is not None:
                self.cluster.close()
        finally:
            if self._own_workdir:
                shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> "Runner":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

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
            if p.suffix in (".log", ".index", ".timeindex") or (case.alter and p.name == EPOCH_CHECKPOINT):
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
                if err != error_code(a["error"]):
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
        log = read_log(res.snapshot)
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
            exp_codes = [error_code(x) for x in exp]
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
        log = read_log(res.snapshot)
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
        log = read_log(res.snapshot)
        status, why = compare_records(case, log, expected, "kafkafmt build of expect.log")
        res.add("stored", status, f".log vs kafkafmt build of expect.log: {why}")

    def check_fetch(self, case: Case, res: CaseResult) -> None:
        if not res.fetches or "fetch" not in case.checks:
            return
        problems, done, pend = [], 0, []
        log_files = segment_files(res.snapshot, ".log")
        ctx = dict(getattr(res, "_ctx", {"now": 0}))
        ctx["lat"] = [st.lat for st in res.produce]
        for fs in res.fetches:
            label = f"fetch #{fs.index} (v{fs.version} @{fs.offset})"
            exp = fs.spec.get("expect")
            if exp is not None:
                if "error" in exp and error_code(exp["error"]) != fs.error_code:
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
                log_config(case, new)
                ours, why = 0, None
            except KafkaFmtError as e:
                ours, why = error_code("INVALID_CONFIG"), e.reason
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
        log = read_log(res.snapshot)
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
        groups = {r.case.id: segment_files(r.snapshot, ".log") for r in todo}
        with ThreadPoolExecutor(2) as ex:
            fj = ex.submit(batched, self.tools.kafka_dump_log, groups, "--deep-iteration", "--print-data-log")
            fk = ex.submit(batched, self.tools.kafkafmt_dump, groups, "--deep", "--print-data-log")
            jres, kres = fj.result(), fk.result()
        for r in todo:
            k = r.case.id
            if k not in jres:
                r.add("dump", NOT_APPLICABLE, "no .log file")
                continue
            why = compare_tool_outputs(jres[k], kres[k])
            n = len(groups[k])
            r.add("dump", DIFFER if why else AGREE, why or f"{n} .log file(s), {len(jres[k][1])} lines identical")

    def run_index_dumps(self, results: list[CaseResult]) -> None:
        todo = [r for r in results if r.snapshot is not None and "dump-index" in r.case.checks]
        if not todo:
            return
        # An empty .log with its preallocated (all-zero) .index makes DumpLogSegments die with
        # NoSuchElementException (entry 0 = (0, 0) names no batch); checked once, where a case asks
        # for it ("dumpEmptyLogIndex"), not on every rejected produce.
        skipped = [r for r in todo if not read_log(r.snapshot) and not r.case.raw.get("dumpEmptyLogIndex")]
        for r in skipped:
            r.add("dump-index", NOT_APPLICABLE, "empty log (see a case with dumpEmptyLogIndex)")
        todo = [r for r in todo if r not in skipped]
        groups = {r.case.id: segment_files(r.snapshot, ".index") + segment_files(r.snapshot, ".timeindex")
                  for r in todo}
        probs: dict[str, list[str]] = {k: [] for k in groups}
        for flags in ((), ("--verify-index-only",), ("--index-sanity-check",)):
            with ThreadPoolExecutor(2) as ex:
                fj = ex.submit(batched, self.tools.kafka_dump_log, groups, *flags)
                fk = ex.submit(batched, self.tools.kafkafmt_dump_inprocess, groups, *flags)
                jres, kres = fj.result(), fk.result()
            for k in groups:
                if k not in jres:
                    continue
                why = compare_tool_outputs(jres[k], kres[k])
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
                d, p = replay_segments(self.workdir, r)
                written[r.case.id], probs[r.case.id] = d, p
            except NotImplementedError as e:
                r.add("segments", PENDING, str(e))
            except Exception as e:
                r.add("segments", ERROR, f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=3)}")
        # the real kafka-dump-log on the files kafkafmt wrote (after a clean close)
        logs = {k: segment_files(d, ".log") for k, d in written.items()}
        idx = {k: segment_files(d, ".index") + segment_files(d, ".timeindex") for k, d in written.items()}
        deep = batched(self.tools.kafka_dump_log, logs, "--deep-iteration")
        verify = batched(self.tools.kafka_dump_log, idx, "--verify-index-only")
        sanity = batched(self.tools.kafka_dump_log, idx, "--index-sanity-check")
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
                    [ln for b in stderr_blocks(err) if not b[0].startswith("Non-consecutive offsets") for ln in b]
                if rc or bad:
                    p.append(f"kafka-dump-log --deep-iteration on kafkafmt's segments: exit {rc}: {(bad or out)[-3:]}")
            if k in verify:
                rc, out, err = verify[k]
                known = r.case.raw.get("knownTimeIndexMismatch")
                blocks = stderr_blocks(err)
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


def _messages(res: CaseResult) -> str:
    msgs = [f"#{st.index}: {st.error_message}" for st in res.produce if st.error_message]
    return f" (broker messages: {'; '.join(msgs)})" if msgs else ""


#: after the broker logs a topic config change, the handler applies it to the log in the same thread
#: within microseconds; this margin covers the gap between the log line and UnifiedLog.updateConfig
_CONFIG_SETTLE_S = 0.1


def _count_lines(path: Path, marker: str) -> int:
    try:
        return path.read_text(encoding="utf-8", errors="replace").count(marker)
    except FileNotFoundError:
        return 0


def _legacy_magic(data: bytes) -> bool:
    """Whether ``data`` starts with an entry whose magic byte (read by the batch walker) is 0 or 1."""
    try:
        return 0 <= magic_at(data, 0) < MAGIC_VALUE_V2
    except KafkaFmtError:  # fewer bytes than reach the magic byte
        return False


__all__ = ["Runner"]
