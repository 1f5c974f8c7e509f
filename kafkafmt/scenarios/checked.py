"""Which real release confirmed a modelled outcome: the record of the last live run, read for the pages.

kafkafmt's rules are a model; the test rig of a source checkout runs the same produces, fetches, clients and
scenarios on real brokers and clients of Kafka 0.9.0.1 … 2.8.2 and writes what each release did to one JSON
record (``kafkafmt/scenarios/record/last-live-run.json``, ``make history-record``; its schema is in the docstring
of ``conformance/history/record.py``).  This module reads such a record, given by path, and answers for a
scenario's step or row, a release check, a phase of seed 000's mixed cluster or a check of the time index's
upgrade from 0.10.0.1 to 0.10.1.1 (KIP-33):

* ``checked on 0.10.2.2``: the release did what the model says;
* ``0.10.0.1 did otherwise: …``: what the release did instead, with its bytes where it stored or served
  other bytes (the release is right; the model is to be fixed);
* ``not run live: …``: the rig could not run it (a proposal no release shipped, a step after one a release
  refused), or the record does not hold it.

:func:`seed_vs_release` puts a seed's own sentence beside what the release did, with the bytes, where the
seed and Kafka differ.  The product never runs the rig; it only reads the file the rig wrote.

>>> rec = LiveRecord.from_dict({"schema": 2, "recorded": "2026-11-27", "releases": {"0.10.2.2": {"checks": [
...     {"release": "0.10.2.2", "check": "fetch/raw/v1", "expected": "00", "real": "= expected", "agree": True}]}}})
>>> rec.release_check("0.10.2.2", "fetch/raw/v1").label
'checked on 0.10.2.2'
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path

from ..errors import KafkaFmtError
from ..kafka_lines import order

__all__ = ["RecordError", "Verdict", "LiveRecord", "load_record", "seed_vs_release", "SCHEMA", "BYTES_SHOWN",
           "AGREEMENT", "TIME_INDEX"]

#: the record schema this module reads (``conformance/history/record.py``)
SCHEMA = 2
#: how many bytes a label quotes (a panel shows them all)
BYTES_SHOWN = 16
#: the record's key of the time index's upgrade from 0.10.0.1 to 0.10.1.1 (``kafkarig.time_index``)
TIME_INDEX = "time_index_upgrade"


class RecordError(KafkaFmtError):
    """A live-run record that cannot be read: missing, not JSON, or not of :data:`SCHEMA` (one line: the path
    and the reason)."""

    kafka_exception = "RecordError"


@dataclass(frozen=True)
class Verdict:
    """What the record says about one modelled outcome.

    ``state`` is ``"checked"`` (every release that ran it agrees with the model), ``"differs"`` (a release did
    otherwise: ``model`` / ``real`` / ``real_hex`` / ``detail`` say what) or ``"not run"`` (``label`` says why);
    ``releases`` are the releases that ran it, oldest first.
    """

    state: str
    label: str
    releases: tuple = ()
    model: str = ""
    real: str = ""
    real_hex: str = ""
    detail: str = ""
    rows: tuple = field(default=(), repr=False)

    @property
    def checked(self) -> bool:
        return self.state == "checked"

    @property
    def real_bytes(self) -> bytes:
        return bytes.fromhex(self.real_hex) if self.real_hex else b""

    def to_dict(self) -> dict:
        return {"state": self.state, "label": self.label, "releases": list(self.releases), "model": self.model,
                "real": self.real, "real_hex": self.real_hex, "detail": self.detail}


def releases_text(releases) -> str:
    """``0.9.0.1 + 0.10.0.1``: releases oldest first, each once."""
    return " + ".join(sorted(set(releases), key=order))


def quoted(hex_text: str, limit: int = BYTES_SHOWN) -> str:
    """``"151 bytes: 00 00 00 …"``: the length and the first ``limit`` bytes of hex."""
    data = bytes.fromhex(hex_text)
    more = " …" if len(data) > limit else ""
    return f"{len(data)} bytes: {data[:limit].hex(' ')}{more}"


def _not_run(why: str) -> Verdict:
    return Verdict("not run", f"not run live: {why}")


def _from_rows(rows: list, releases: tuple, *, empty: str = "nothing to compare") -> Verdict:
    """One verdict from comparisons that ran on ``releases``: checked when all agree, else the first that did
    not (and how many more)."""
    rels = releases_text(releases)
    if not rows:
        return Verdict("not run", f"ran on {rels}: {empty}", releases)
    bad = [r for r in rows if not r["agree"] and not r.get("proposal")]  # a seed's proposal is shown, not counted
    if not bad:
        return Verdict("checked", f"checked on {rels}", releases, rows=tuple(rows))
    r = bad[0]
    hex_text = r.get("real_hex", "")
    more = f" ({len(bad) - 1} more comparison{'s' if len(bad) > 2 else ''} differ)" if len(bad) > 1 else ""
    shown = f" (bytes {quoted(hex_text)})" if hex_text else ""
    return Verdict("differs", f"{rels} did otherwise: {r['what']}: {r['real']}{shown}{more}", releases,
                   r["model"], r["real"], hex_text, r.get("detail", ""), tuple(rows))


def _check_rows(checks: list[dict]) -> list[dict]:
    """Release checks as comparison rows (``what`` / ``model`` / ``real`` / ``agree`` / ``real_hex``)."""
    out = []
    for c in checks:
        real = c["expected"] if c["real"] == "= expected" else c["real"]
        hex_text = real if _is_hex(real) else ""
        text = _short(real)
        out.append({"what": f"{c['check']} on {c['release']}", "model": _short(c["expected"]), "real": text,
                    "agree": bool(c["agree"]), "real_hex": hex_text, "detail": c.get("detail", "")})
    return out


def _is_hex(v) -> bool:
    return isinstance(v, str) and bool(v) and len(v) % 2 == 0 and all(ch in "0123456789abcdef" for ch in v)


def _short(v) -> str:
    """A check's side as one line: bytes as their length, records as their count, an error as its name."""
    if _is_hex(v):
        return f"{len(v) // 2} bytes"
    if v == "":
        return "no bytes"
    if isinstance(v, list) and all(isinstance(x, str) for x in v):
        return f"{len(v)} printed lines"
    if isinstance(v, list):
        errors = [x["error"] for x in v if isinstance(x, dict) and "error" in x]
        stalls = [x for x in v if isinstance(x, dict) and "stalls" in x]
        if stalls:
            return "stalls: no record, no error"
        n = len(v) - len(errors)
        empty = [x for x in v if isinstance(x, dict) and "offset" in x and x.get("key") is None
                 and x.get("value") is None]
        hollow = (f" ({len(empty)} of them, offsets {empty[0]['offset']}-{empty[-1]['offset']}, with neither key nor "
                  "value)") if empty else ""
        return f"{n} record{'s' if n != 1 else ''}{hollow}" + (f", then {errors[0]}" if errors else "")
    return str(v)


def time_index_release(check: dict) -> str:
    """The release of the broker a check of the time index's upgrade ran on (its ``client``, ``broker 1
    (0.10.1.1)``), else the last release of its ``release`` (``0.10.0.1 -> 0.10.1.1``)."""
    m = re.search(r"\(([0-9.]+)\)$", check.get("client", ""))
    return m.group(1) if m else check["release"].split()[-1]


def _time_index_side(v) -> str:
    """A side of a time index check in words: a partition's files (the ``.timeindex`` sizes) or ListOffsets
    answers (their offsets)."""
    if isinstance(v, dict):
        logs = [n for n in v if n.endswith(".log")]
        sizes = [str(f["size"]) for n, f in sorted(v.items()) if n.endswith(".timeindex")]
        return f"{len(logs)} segment{'s' if len(logs) != 1 else ''}, .timeindex sizes {', '.join(sizes) or 'none'}"
    if isinstance(v, list):
        return "offsets " + ", ".join(str(a[3]) for a in v)
    return str(v)


class LiveRecord:
    """A record of the last live run (:func:`load_record`)."""

    def __init__(self, data: dict, source: str = "<dict>") -> None:
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            found = data.get("schema") if isinstance(data, dict) else type(data).__name__
            raise RecordError(f"{source}: not a live-run record of schema {SCHEMA} (found {found!r}); "
                              "regenerate it with make history-record")
        self.data, self.source = data, source

    @classmethod
    def from_dict(cls, data: dict) -> LiveRecord:
        return cls(data)

    # -- what it holds ---------------------------------------------------------------------------------
    @property
    def recorded(self) -> str:
        """The day of the run (``YYYY-MM-DD``)."""
        return self.data.get("recorded", "")

    @property
    def releases(self) -> list[str]:
        """The releases whose checks the record holds, oldest first."""
        return sorted(self.data.get("releases", {}), key=order)

    def checks(self, release: str) -> list[dict]:
        """Every check recorded on ``release`` (the record's dicts)."""
        return list(self.data.get("releases", {}).get(release, {}).get("checks", []))

    @property
    def scenario_names(self) -> list[str]:
        return sorted(self.data.get("scenarios", {}))

    def scenario(self, name: str) -> dict | None:
        return self.data.get("scenarios", {}).get(name)

    # -- release checks ----------------------------------------------------------------------------------
    def release_check(self, release: str, check: str) -> Verdict:
        """One check (``produce/raw-v1/magic2-none-idempotent``) on one release."""
        found = [c for c in self.checks(release) if c["check"] == check]
        if not found:
            return _not_run(f"no check {check} on {release} in the record")
        return _from_rows(_check_rows(found), (release,))

    def check_across(self, check: str, releases=None) -> Verdict:
        """One check on every release of the record that ran it (or of ``releases``): "checked on 0.11.0.3 +
        1.1.1 + 2.8.2", or the first release that did otherwise."""
        rels = [r for r in (releases or self.releases) if any(c["check"] == check for c in self.checks(r))]
        if not rels:
            return _not_run(f"no release in the record ran {check}")
        found = [c for r in rels for c in self.checks(r) if c["check"] == check]
        bad = [c for c in found if not c["agree"]]
        if bad:
            return _from_rows(_check_rows(bad), tuple(sorted({c["release"] for c in bad}, key=order)))
        return _from_rows(_check_rows(found), tuple(rels))

    def release_summary(self, *, skip=("dump/",)) -> list[dict]:
        """Per release: how many checks it ran, how many agree with the model, and the ones that differ
        (checks whose name starts with ``skip`` are counted apart: ``dump/`` compares printed text, whose
        formatting is each release's own)."""
        out = []
        for r in self.releases:
            checks = [c for c in self.checks(r) if not c["check"].startswith(skip)]
            out.append({"release": r, "checks": len(checks), "agree": sum(c["agree"] for c in checks),
                        "differ": [c["check"] for c in checks if not c["agree"]]})
        return out

    # -- seed 000's mixed cluster --------------------------------------------------------------------------
    def seed000_phase(self, phase: str) -> Verdict:
        """A phase (``mixed``, ``binaries``, ``protocol``, ``format``, ``rollback``) of seed 000's upgrade on
        the mixed cluster."""
        seed = self.data.get("seed000")
        if not seed or phase not in seed.get("phases", {}):
            return _not_run(f"no phase {phase!r} of seed 000's mixed cluster in the record")
        rows = _check_rows(seed["phases"][phase]["checks"])
        return _from_rows(rows, tuple(seed["cluster"].split("+")))

    def seed000_checks(self, phase: str) -> list[dict]:
        """The checks (the record's dicts) of one phase of seed 000's mixed cluster."""
        return list(((self.data.get("seed000") or {}).get("phases", {}).get(phase) or {}).get("checks", []))

    def seed000_check(self, phase: str, check: str) -> Verdict:
        """One check of a phase of seed 000's mixed cluster (``seed000/rollback/consume/java-0.9.0.1/p1``);
        its ``model`` is what the model said, in words."""
        found = [c for c in self.seed000_checks(phase) if c["check"] == check]
        if not found:
            return _not_run(f"no check {check} in phase {phase!r} of seed 000's mixed cluster")
        return _from_rows(_check_rows(found), tuple(self.data["seed000"]["cluster"].split("+")))

    # -- the time index on an upgrade from 0.10.0.1 to 0.10.1.1 -----------------------------------------------
    @property
    def time_index_phases(self) -> list[str]:
        """The phases of the time index's upgrade the record holds, in the order they ran (``0.10.0``,
        ``binaries``, ``protocol``, ``written``, ``stopped``)."""
        return list(((self.data.get(TIME_INDEX) or {}).get("phases") or {}))

    def time_index_checks(self, phase: str) -> list[dict]:
        """The checks (the record's dicts) of one phase of the time index's upgrade."""
        return list((((self.data.get(TIME_INDEX) or {}).get("phases") or {}).get(phase) or {}).get("checks", []))

    def time_index_check(self, check: str) -> Verdict:
        """One check of the time index's upgrade (``written/list-offsets/ti-crash``, ``binaries/files/ti-clean``;
        the phase is its first part), labelled with the release its broker ran: ``checked on 0.10.1.1``, or what
        the release did instead."""
        c = self._time_index_found(check)
        if c is None:
            return _not_run(f"no check {check} of the time index's upgrade in the record")
        real = c["expected"] if c["real"] == "= expected" else c["real"]
        row = {"what": check, "model": _time_index_side(c["expected"]), "real": _time_index_side(real),
               "agree": bool(c["agree"]), "detail": c.get("detail", "")}
        return _from_rows([row], (time_index_release(c),))

    def time_index_phase(self, phase: str) -> Verdict:
        """Every check of one phase of the time index's upgrade, labelled with the release its brokers ran."""
        checks = self.time_index_checks(phase)
        if not checks:
            return _not_run(f"no phase {phase!r} of the time index's upgrade in the record")
        rows = [{"what": c["check"], "model": _time_index_side(c["expected"]),
                 "real": _time_index_side(c["expected"] if c["real"] == "= expected" else c["real"]),
                 "agree": bool(c["agree"]), "detail": c.get("detail", "")} for c in checks]
        return _from_rows(rows, tuple(sorted({time_index_release(c) for c in checks}, key=order)))

    def time_index_real(self, check: str):
        """What the release did in one check of the time index's upgrade: its files (``{name: {"size", "hex"}}``)
        or its ListOffsets answers (``[[target, error, timestamp, offset], ...]``); None if not recorded."""
        c = self._time_index_found(check)
        if c is None:
            return None
        return c["expected"] if c["real"] == "= expected" else c["real"]

    def time_index_model(self, check: str):
        """The model's side of one check of the time index's upgrade (None if not recorded)."""
        c = self._time_index_found(check)
        return None if c is None else c["expected"]

    def _time_index_found(self, check: str) -> dict | None:
        phase = check.split("/", 1)[0]
        return next((c for c in self.time_index_checks(phase) if c["check"] == check), None)

    @staticmethod
    def describe(value) -> str:
        """A check's side in words (bytes by length, records by count, an error by name, a stall as such)."""
        return _short(value)

    # -- scenarios -----------------------------------------------------------------------------------------
    def _scenario_or_verdict(self, name: str):
        sc = self.scenario(name)
        if sc is None:
            return None, _not_run(f"{name} is not in the record of {self.recorded or 'the last run'}")
        if sc.get("status") != "ran":
            return None, _not_run(sc.get("why", sc.get("status", "")))
        return sc, None

    def step(self, name: str, number: int) -> Verdict:
        """Step ``number`` (1-based) of the shipped scenario ``name``."""
        sc, why = self._scenario_or_verdict(name)
        if why:
            return why
        for s in sc["steps"]:
            if s["step"] == number:
                return _from_rows(s["rows"], tuple(s["brokers"].values()))
        for n in sc.get("not_run", []):
            if n.split(".", 1)[0] == str(number):
                return _not_run(f"a release refused step {sc['steps'][-1]['step']} (its row says why)"
                                if sc["steps"] else "a release refused an earlier step")
        return _not_run(f"{name} has no step {number} in the record")

    def row(self, name: str, number: int, what: str) -> Verdict:
        """The comparisons of step ``number`` whose ``what`` starts with ``what`` (``"Fetch v1 p0"``,
        ``"replica B p0"``, ``"c-v0"``)."""
        sc, why = self._scenario_or_verdict(name)
        if why:
            return why
        s = next((s for s in sc["steps"] if s["step"] == number), None)
        if s is None:
            return self.step(name, number)
        rows = [r for r in s["rows"] if r["what"].startswith(what)]
        if not rows:
            return _not_run(f"step {number} of {name} compared nothing named {what!r}")
        return _from_rows(rows, tuple(s["brokers"].values()))

    def steps_table(self, name: str, model_steps=None) -> list[dict]:
        """Every step of scenario ``name``: its number and name, the releases its brokers ran, how many
        comparisons agreed, and the label.  ``model_steps`` (the step names of the scenario as shipped) lists
        the steps the record lacks too."""
        sc = self.scenario(name)
        names = list(model_steps or [])
        if sc is not None and sc.get("status") == "ran":
            recorded = {s["step"]: s for s in sc["steps"]}
            names = names or [s["name"] for s in sc["steps"]]
        else:
            recorded = {}
        out = []
        for n, step_name in enumerate(names, 1):
            s = recorded.get(n)
            v = self.step(name, n)
            out.append({"step": n, "name": step_name,
                        "brokers": releases_text(s["brokers"].values()) if s else "—",
                        "agree": f"{sum(r['agree'] for r in s['rows'])} of {len(s['rows'])}" if s else "—",
                        "live": ("✓ " if v.checked else "✗ " if v.state == "differs" else "") + v.label})
        return out


#: the committed record of the last live run, shipped with the package (``make history-record`` writes it)
RECORD = Path(__file__).resolve().parent / "record" / "last-live-run.json"


def load_record(path: str | PathLike | None = None) -> LiveRecord:
    """The record at ``path``, by default the one shipped with kafkafmt (:data:`RECORD`); a
    :class:`RecordError`, one line, if it cannot be read."""
    p = RECORD if path is None else Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except OSError as e:
        raise RecordError(f"{p}: cannot read the live-run record: {e.strerror or e}") from None
    except ValueError as e:
        raise RecordError(f"{p}: not JSON: {e}") from None
    return LiveRecord(data, str(p))


#: how a scenario's ``seed_vs_kafka`` note opens when it says Kafka does what the seed wrote (not a disagreement)
AGREEMENT = ("Kafka 3.9 agrees",)


def seed_vs_release(record: LiveRecord, name: str, checks: dict | None = None) -> list[dict]:
    """Where a shipped scenario's seed and Kafka differ (its steps with a ``seed_vs_kafka`` note that does not
    open with :data:`AGREEMENT`): the seed's own sentences, what Kafka does instead, and what the release did
    in the live run (its label; ``did``: what its clients and brokers did; ``bytes``: what it served or stored
    for the step's fetches and disks).

    ``checks`` maps a step number to a release check that sent the step's request to a real broker
    (``{1: ("0.11.0.3", "produce/raw-v1/magic2-none-idempotent")}``): its label, what the release answered,
    and the request's bytes are shown too (for a step the scenario cannot run live, or beside it)."""
    from .loader import load_scenario
    from .quotes import quote
    scenario = load_scenario(name)
    out = []
    for n, step in enumerate(scenario.steps, 1):
        if not step.seed_vs_kafka or step.seed_vs_kafka.startswith(AGREEMENT):
            continue
        v = record.step(name, n)
        sc = record.scenario(name) or {}
        s = next((s for s in sc.get("steps", []) if s["step"] == n), None)
        shown = [(r["what"], r["real_hex"]) for r in (s or {}).get("rows", []) if r.get("real_hex")]
        did = [(r["what"], r["real"] + (f" (the seed's {r['proposal']}: {r['model']})" if r.get("proposal") else ""))
               for r in (s or {}).get("rows", []) if not r["what"].startswith(("replica ", "disk ", "Fetch "))]
        d = {"step": n, "name": step.name, "seed": [quote(c) for c in step.cite], "kafka": step.seed_vs_kafka,
             "release": v.label, "state": v.state, "did": did, "bytes": shown}
        if n in (checks or {}):
            release, check = checks[n]
            c = next((c for c in record.checks(release) if c["check"] == check), None)
            cv = record.release_check(release, check)
            if c is not None:
                answer = (f"answered error code {c['extra']['error_code']}" if c["extra"].get("error_code")
                          else f"stored it ({_short(c['expected'])})")
                d["check"] = f"{c['request']} sent to {release}: it {answer}, as the model says " \
                    f"({c['model_rule']}): {cv.label}" if cv.checked else cv.label
                if _is_hex(c["extra"].get("payload")):
                    d["bytes"] = [*shown, (f"the request's records ({check})", c["extra"]["payload"])]
            else:
                d["check"] = cv.label
        out.append(d)
    return out
