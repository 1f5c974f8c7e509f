"""Write kafkafmt/scenarios/record/last-live-run.json: every live check of kafkafmt against old Kafka releases.

    make history-record                       # everything below (about 10 min of live brokers)
    python conformance/history/record.py 0.10.2.2 0.11.0.3   # some releases (the rest of the record is kept)
    python conformance/history/record.py seed000              # seed 000's phases on a mixed cluster
    python conformance/history/record.py scenarios            # every shipped scenario, live
    python conformance/history/record.py seed004-migration    # one shipped scenario, live
    python conformance/history/record.py time-index           # the time index on an upgrade 0.10.0.1 -> 0.10.1.1

Four parts, each run on real brokers and clients and compared with kafkafmt's model:

* **releases**: for each release of ``conformance/kafkarig/releases.py`` one ZooKeeper and one broker, the
  checks of ``kafkarig.history.plan`` (raw produces and fetches, ``DumpLogSegments``, the clients of each era);
* **seed000**: seed 000's rolling upgrade and rollback on a mixed 0.9.0.1 + 0.10.2.2 cluster
  (``kafkarig.seed000``), phase by phase;
* **time-index**: KIP-33's time index on an upgrade from 0.10.0.1 to 0.10.1.1, one broker stopped cleanly and
  one killed before the jars are swapped (``kafkarig.time_index``), phase by phase: each partition's segment
  files against kafkafmt's ``Log`` and ListOffsets v1 against ``Log.fetch_offset_by_timestamp``;
* **scenarios**: every shipped scenario (``kafkafmt/scenarios/data``) run as ``kafkafmt scenario run FILE
  --live`` runs it (:func:`kafkarig.live_scenario.run_live`, its Python API), step by step and row by row;
  a scenario the rig cannot run live is recorded with the reason, so a scenario that becomes runnable
  (seed 003 on 0.11, the time index upgrade) slots in at the next run under its name.

The record is read by :mod:`kafkafmt.scenarios.checked` (notebooks 03, 06, 07 and 11 show its labels:
"checked on 0.10.2.2", or what the release did instead).  Its schema (``"schema": 2``)::

    {"schema": 2,
     "recorded": "YYYY-MM-DD",                      # the day of the last write (UTC); nothing else is a date
     "releases": {RELEASE: {"checks": [CHECK, ...]}},
     "seed000": {"cluster": "0.9.0.1+0.10.2.2", "phases": {PHASE: {"checks": [CHECK, ...]}}},
     "time_index_upgrade": {"cluster": "0.10.0.1 -> 0.10.1.1", "phases": {TPHASE: {"checks": [TCHECK, ...]}}},
     "scenarios": {NAME: SCENARIO},
     "seconds": {"releases": {RELEASE: s}, "seed000": {PHASE: s}, "time_index_upgrade": {TPHASE: s},
                 "scenarios": {NAME: s}}}   # durations, apart

    CHECK    = {"release", "check", "client", "request", "expected", "real", "agree", "detail", "model_rule",
                "extra"}       # kafkarig.history.Check.to_dict(), slimmed by slim_check:
               # "expected"/"real": the hex of bytes, an error name or a list of records (the clients' checks);
               # "real" is "= expected" when identical; bytes longer than HEX_LIMIT are "N bytes, crc32 X" when
               # the two agree (kept whole where they disagree: a page shows them)
    TPHASE   = "0.10.0" | "binaries" | "protocol" | "written" | "stopped"   # kafkarig.time_index.PHASES
    TCHECK   = CHECK of "<TPHASE>/files/<topic>" (topic "ti-clean": its broker stopped cleanly on 0.10.0.1,
               "ti-crash": killed), "expected"/"real" {FILE: {"size": n, "hex": "..."}} (the segment files, each
               index's hex without its preallocated trailing zeros), "extra": {"segments": [...]}
             | CHECK of "written/list-offsets/<topic>", "expected"/"real" [[target, error, timestamp, offset], ...]
               (ListOffsets v1); kept whole (slim_check shortens only hex strings)
    SCENARIO = {"status": "ran", "ok": bool, "releases": {BROKER: "0.9.0.1→0.10.0.1"}, "steps": [STEP, ...],
                "not_run": ["12. phase 2.2.1: ...", ...]}          # steps after one a release refused
             | {"status": "not live", "why": "broker A: ..."}     # the rig cannot run it (one line)
             | {"status": "failed", "why": "..."}                 # the live run could not go on
    STEP     = {"step": N, "name": "...", "brokers": {BROKER: RELEASE}, "seed_vs_kafka": bool, "rows": [ROW, ...]}
    ROW      = {"what", "model", "real", "agree", "detail"?, "proposal"?, "real_hex"?}
               # kafkafmt.scenarios.live.LiveRow; "proposal": the row puts a seed's proposal no release shipped
               # ("model": its outcome) beside what the release did (never counted as a disagreement);
               # "real_hex": the release's bytes, kept for a Fetch row (up to FETCH_HEX_LIMIT bytes), for a
               # row that disagrees and for the byte rows of a step where the seed's text and Kafka differ

Written atomically; the run's disagreements are printed, one a line.  Run it only when the machine is
quiet (it starts one or two JVMs at a time, for minutes).
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import sys
import time
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))          # kafkarig
sys.path.insert(0, str(HERE.parent.parent))   # kafkafmt of this checkout

from kafkarig.releases import RELEASES, ReleaseError, release  # noqa: E402

OUT = HERE.parents[1] / "kafkafmt" / "scenarios" / "record" / "last-live-run.json"
SCHEMA = 2
#: agreeing bytes longer than this are recorded as their length and CRC-32, not their hex
HEX_LIMIT = 256
#: a Fetch row of a live scenario keeps the release's bytes up to this length (the pages show them)
FETCH_HEX_LIMIT = 1024
#: the check keys holding bytes as hex
_HEX_KEYS = ("expected", "real")
#: the record's key of the time index upgrade (its part is named ``time-index`` on the command line)
TIME_INDEX = "time_index_upgrade"
#: the parts whose durations ``"seconds"`` keeps
PARTS_TIMED = ("releases", "seed000", TIME_INDEX, "scenarios")


def _is_hex(v) -> bool:
    return isinstance(v, str) and len(v) % 2 == 0 and all(c in "0123456789abcdef" for c in v)


def digest(hex_text: str) -> str:
    """``"N bytes, crc32 X"``: bytes too long to record, named well enough to tell two runs apart."""
    data = bytes.fromhex(hex_text)
    return f"{len(data)} bytes, crc32 {zlib.crc32(data):08x}"


def slim_check(check: dict) -> dict:
    """A check as recorded (a new dict): "real" is "= expected" when identical; where the release and the model
    agree, the decoded records of a fetch and the segment copies are dropped and bytes longer than
    :data:`HEX_LIMIT` become :func:`digest`; where they disagree, both sides stay whole."""
    out = dict(check)
    extra = dict(out.get("extra") or {})
    if out["agree"] and out["real"] == out["expected"]:
        out["real"] = "= expected"
    drop = ("segment", "stored", "fetched", "model_converted") + (("expected_records", "real_records")
                                                                 if out["agree"] else ())
    for key in drop:
        extra.pop(key, None)
    if out["agree"]:
        for key in _HEX_KEYS:
            if _is_hex(out[key]) and len(out[key]) > 2 * HEX_LIMIT:
                out[key] = digest(out[key])
        if _is_hex(extra.get("payload")) and len(extra["payload"]) > 2 * HEX_LIMIT:
            extra["payload"] = digest(extra["payload"])
    out["extra"] = extra
    return out


def shape_row(row, *, keep_bytes: bool) -> dict:
    """One :class:`~kafkafmt.scenarios.live.LiveRow` as recorded: the release's bytes as hex only when
    ``keep_bytes`` or the row disagrees."""
    out = {"what": row.what, "model": row.model, "real": row.real, "agree": bool(row.agree)}
    if row.detail:
        out["detail"] = row.detail
    if getattr(row, "proposal", ""):
        out["proposal"] = row.proposal
    data = bytes(getattr(row, "real_bytes", b"") or b"")
    fetch = row.what.startswith("Fetch ") and len(data) <= FETCH_HEX_LIMIT
    if data and (keep_bytes or not row.agree or fetch):
        out["real_hex"] = data.hex()
    return out


_BYTE_ROWS = ("Fetch ", "disk ")


def shape_report(report, scenario) -> dict:
    """A :class:`~kafkafmt.scenarios.live.LiveReport` of ``scenario`` as recorded (schema :data:`SCHEMA`)."""
    steps = []
    for n, name, rows in report.steps:
        seed_vs_kafka = bool(scenario.steps[n - 1].seed_vs_kafka) if n <= len(scenario.steps) else False
        steps.append({"step": n, "name": name, "brokers": dict(report.brokers_at.get(n, {})),
                      "seed_vs_kafka": seed_vs_kafka,
                      "rows": [shape_row(r, keep_bytes=seed_vs_kafka and r.what.startswith(_BYTE_ROWS))
                               for r in rows]})
    return {"status": "ran", "ok": bool(report.ok and not report.not_run), "releases": dict(report.releases),
            "steps": steps, "not_run": list(report.not_run)}


def upgrade(record: dict) -> tuple[dict, dict]:
    """A record of any schema as schema :data:`SCHEMA`, and the durations found inside it (schema 1 kept
    ``seconds`` beside the checks): ``(record, seconds)``."""
    seconds = dict(record.get("seconds") or {}) if record.get("schema") == SCHEMA else {}
    seconds = {k: dict(seconds.get(k) or {}) for k in PARTS_TIMED}
    out = {"schema": SCHEMA, "recorded": record.get("recorded", ""), "releases": {}, "scenarios": {}}
    for v, r in (record.get("releases") or {}).items():
        if "seconds" in r:
            seconds["releases"][v] = r["seconds"]
        out["releases"][v] = {"checks": [slim_check(c) for c in r["checks"]]}
    if record.get("seed000"):
        seed = record["seed000"]
        phases = {}
        for name, phase in seed["phases"].items():
            if "seconds" in phase:
                seconds["seed000"][name] = phase["seconds"]
            phases[name] = {"checks": [slim_check(c) for c in phase["checks"]]}
        out["seed000"] = {"cluster": seed["cluster"], "phases": phases}
    if record.get(TIME_INDEX):
        out[TIME_INDEX] = record[TIME_INDEX]
    out["scenarios"] = dict(record.get("scenarios") or {})
    return out, seconds


def finish(record: dict, seconds: dict, today: _dt.date) -> dict:
    """The record in its written order: releases in :data:`RELEASES` order, scenarios by name, the
    durations last."""
    order = list(RELEASES)
    releases = dict(sorted(record["releases"].items(),
                           key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)))
    out = {"schema": SCHEMA, "recorded": today.isoformat(), "releases": releases}
    if "seed000" in record:
        out["seed000"] = record["seed000"]
    if TIME_INDEX in record:
        out[TIME_INDEX] = record[TIME_INDEX]
    out["scenarios"] = dict(sorted(record["scenarios"].items()))
    out["seconds"] = {"releases": dict(sorted(seconds["releases"].items(),
                                              key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order))),
                      "seed000": seconds["seed000"], TIME_INDEX: seconds.get(TIME_INDEX, {}),
                      "scenarios": dict(sorted(seconds["scenarios"].items()))}
    return out


def parse_args(argv: list[str], shipped: list[str]) -> dict:
    """What to run: ``{"releases": [...], "seed000": bool, "time_index": bool, "scenarios": [...], "partial":
    bool}``; every part without arguments; a ValueError (one line) for a word that is none of a release,
    ``seed000``, ``time-index``, ``scenarios`` or a shipped scenario's name."""
    if not argv:
        return {"releases": list(RELEASES), "seed000": True, "time_index": True, "scenarios": list(shipped),
                "partial": False}
    out = {"releases": [], "seed000": False, "time_index": False, "scenarios": [], "partial": True}
    for a in argv:
        if a == "seed000":
            out["seed000"] = True
        elif a == "time-index":
            out["time_index"] = True
        elif a == "scenarios":
            out["scenarios"] += [s for s in shipped if s not in out["scenarios"]]
        elif a in shipped:
            out["scenarios"].append(a)
        else:
            try:
                out["releases"].append(release(a).version)
            except ReleaseError as e:
                raise ValueError(f"{a}: not a release, 'seed000', 'time-index', 'scenarios' nor a shipped scenario "
                                 f"({e})") from None
    return out


def write(record: dict, path: Path = OUT) -> None:
    """``record`` as indented JSON at ``path``, atomically (tmp + fsync + rename)."""
    tmp = path.with_suffix(".json.tmp")
    with open(tmp, "w") as f:
        json.dump(record, f, indent=1, sort_keys=False, ensure_ascii=False)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    tmp.replace(path)


# ------------------------------------------------------------------------------------------- the live parts
def run_releases(versions: list[str], record: dict, seconds: dict) -> None:
    from kafkarig.history import run_release
    from kafkarig.oldcluster import OldCluster
    for v in versions:
        rel = release(v)
        t0 = time.monotonic()
        with OldCluster(rel.version) as cluster:
            checks = run_release(cluster, cluster.add_broker(1, rel.version), rel)
        record["releases"][rel.version] = {"checks": [slim_check(c.to_dict()) for c in checks.values()]}
        seconds["releases"][rel.version] = round(time.monotonic() - t0, 1)
        bad = [c for c in checks.values() if not c.agree and not c.check.startswith("dump/")]
        print(f"{rel.version}: {len(checks)} checks, {len(bad)} disagreement(s), "
              f"{time.monotonic() - t0:.0f}s", flush=True)
        for c in bad:
            print(f"  {c.check}: {c.detail[:240]}", flush=True)


def run_seed000(record: dict, seconds: dict) -> None:
    from kafkarig.seed000 import run_seed000 as run
    seed = run()
    record["seed000"] = {"cluster": seed["cluster"], "phases": {}}
    seconds["seed000"] = {"total": seed["seconds"]}
    for name, phase in seed["phases"].items():
        record["seed000"]["phases"][name] = {"checks": [slim_check(c) for c in phase["checks"]]}
        seconds["seed000"][name] = phase["seconds"]
        for c in phase["checks"]:
            if not c["agree"]:
                print(f"  seed000/{name}: {c['check']}: {c['detail'][:240]}", flush=True)
    print(f"seed000: {len(seed['phases'])} phases, {seed['seconds']:.0f}s", flush=True)


def shape_time_index(run: dict) -> tuple[dict, dict]:
    """:func:`kafkarig.time_index.run_time_index_upgrade`'s result as recorded: ``(part, seconds)``, the part
    ``{"cluster", "phases": {phase: {"checks": [...]}}}`` (each check through :func:`slim_check`), the seconds
    per phase and ``"total"``."""
    part = {"cluster": run["cluster"], "phases": {}}
    seconds = {"total": run["seconds"]}
    for name, phase in run["phases"].items():
        part["phases"][name] = {"checks": [slim_check(c) for c in phase["checks"]]}
        seconds[name] = phase["seconds"]
    return part, seconds


def run_time_index(record: dict, seconds: dict) -> None:
    from kafkarig.time_index import run_time_index_upgrade
    run = run_time_index_upgrade()
    record[TIME_INDEX], seconds[TIME_INDEX] = shape_time_index(run)
    for name, phase in run["phases"].items():
        for c in phase["checks"]:
            if not c["agree"]:
                print(f"  time-index/{c['check']}: {c['detail'][:240]}", flush=True)
    print(f"time-index: {len(run['phases'])} phases, {run['seconds']:.0f}s", flush=True)


def run_scenarios(names: list[str], record: dict, seconds: dict) -> None:
    from kafkafmt.scenarios import load_scenario
    from kafkafmt.scenarios.live import LiveRunFailed, LiveUnsupported
    from kafkarig.live_scenario import run_live
    for name in names:
        scenario = load_scenario(name)
        t0 = time.monotonic()
        try:
            report = run_live(scenario)
        except LiveUnsupported as e:
            record["scenarios"][name] = {"status": "not live", "why": e.reason}
            seconds["scenarios"].pop(name, None)
            print(f"{name}: not run live: {e.reason}", flush=True)
            continue
        except LiveRunFailed as e:
            record["scenarios"][name] = {"status": "failed", "why": e.reason}
            seconds["scenarios"][name] = round(time.monotonic() - t0, 1)
            print(f"{name}: the live run failed: {e.reason}", flush=True)
            continue
        seconds["scenarios"][name] = round(time.monotonic() - t0, 1)
        shaped = shape_report(report, scenario)
        record["scenarios"][name] = shaped
        bad = [(s["step"], r) for s in shaped["steps"] for r in s["rows"] if not r["agree"] and not r.get("proposal")]
        print(f"{name}: {len(shaped['steps'])} steps live, {len(bad)} disagreement(s)"
              + (f", not run: {len(shaped['not_run'])} step(s)" if shaped["not_run"] else "")
              + f", {time.monotonic() - t0:.0f}s", flush=True)
        for n, r in bad:
            print(f"  step {n}: {r['what']}: model {r['model'][:120]} | real {r['real'][:120]}", flush=True)


USAGE = """usage: record.py [-h] [PART ...]

Run the live checks against real Kafka releases and write what they found to
kafkafmt/scenarios/record/last-live-run.json (make history-record).  With no PART, every part;
otherwise only the parts named, the rest of the file kept as it was.

PART is one of:
  RELEASE        one release's checks (0.9.0.1, 0.10.0.1, 0.10.1.1, 0.10.2.2, 0.11.0.3, 1.1.1, 2.8.2)
  seed000        seed 000's phases and rollback on a mixed 0.9.0.1 + 0.10.2.2 cluster
  time-index     the time index on an upgrade from 0.10.0.1 to 0.10.1.1
  scenarios      every shipped scenario run live (kafkafmt scenario run FILE --live)
  SCENARIO       one shipped scenario by name (e.g. seed004-migration)
"""


def main(argv: list[str]) -> int:
    from kafkafmt.scenarios import shipped_scenarios
    if {"-h", "--help"} & set(argv):
        print(USAGE, end="")
        return 0
    try:
        todo = parse_args(argv, list(shipped_scenarios()))
    except ValueError as e:
        print(f"history-record: {e}", file=sys.stderr)
        return 2
    old = json.loads(OUT.read_text()) if OUT.exists() and todo["partial"] else {}
    record, seconds = upgrade(old)
    try:
        run_releases(todo["releases"], record, seconds)
        if todo["seed000"]:
            run_seed000(record, seconds)
        if todo["time_index"]:
            run_time_index(record, seconds)
        run_scenarios(todo["scenarios"], record, seconds)
    except ReleaseError as e:
        print(f"history-record: {e}", file=sys.stderr)
        return 2
    write(finish(record, seconds, _dt.datetime.now(_dt.timezone.utc).date()))
    print(f"wrote {OUT.relative_to(HERE.parent.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
