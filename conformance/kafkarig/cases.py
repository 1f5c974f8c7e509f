"""Differential cases as data: ``conformance/cases/*.json``.

A case file is ``{"group": ..., "about": ..., "defaults": {...}, "cases": [case, ...]}``; each case
(merged over ``defaults``) is a scenario a user can copy and edit::

    {
      "name": "v1-gzip-inplace",                    # unique within the group; test id "group/name"
      "about": "what the case shows",
      "broker": "legacy",                           # broker profile (kafkarig.broker.PROFILES)
      "topic": {"message.format.version": "0.10.2"},# per-topic configs (CreateTopics)
      "produce": [                                  # one Produce request each, in order
        {"version": 2,                              # optional (magic 0/1 -> 2, v2 -> 8)
         "batches": [<kafkafmt record-set spec>],   # the format `kafkafmt dump --json` prints
         "hex": "...",                              # ... or raw bytes
         "mutate": [{"at": 21, "xor": 1}]}          # optional byte edits after building (corruption)
      ],
      "expect": {"errors": ["NONE"],                # the case author's expectation (a guard)
                 "log": [<spec>, {"from": [0, 0], "baseOffset": 0, "partitionLeaderEpoch": 0}]},
      "alter": [{"beforeProduce": 1,                # change the live topic's configs before produce
                 "configs": {"message.format.version": "0.10.0"}}],  # request 1 (len(produce): before
                                                    # the fetches); IncrementalAlterConfigs SET, null DELETEs;
                                                    # "error": "INVALID_CONFIG" = the broker must reject it
      "fetch": [{"version": 0, "offset": 0, "expect": {"batches": [...], "tailHex": "..."}}],
      "xfail": "reason (a kafkafmt bug; strict)",   # the case is expected to DIFFER
      "kafkaBug": "a genuine Kafka bug this case documents"
    }

Timestamps (``timestamp``, ``maxTimestamp``, ``baseTimestamp``, ``storedTimestamp``) may be
``"now"``, ``"now-3600000"``, ``"now+5"`` (wall clock when the case starts) or ``"lat"``,
``"lat[1]"`` (the broker's log-append time of produce request 0 / 1, for expectations).
``records`` may be a generator: ``{"count": 20, "key": "k{i}", "value": "v{i}", "timestamp": 1000,
"timestampStep": 1, "valueBytes": 100}`` (``null`` key/value allowed; ``valueBytes`` pads with ``x``).
In ``expect.log`` a batch ``{"from": [i, j], ...}`` is batch ``j`` of produce request ``i`` with
the given fields overridden.
"""
from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from .paths import CASES_DIR

TS_KEYS = {"timestamp", "maxTimestamp", "baseTimestamp", "storedTimestamp", "logAppendTime"}
_TS_EXPR = re.compile(r"^\s*(now|lat)(?:\[(\d+)\])?\s*(?:([+-])\s*(\d+))?\s*$")

#: checks a case may run (default: every one that applies)
ALL_CHECKS = ("produce", "stored", "fetch", "dump", "dump-index", "read", "segments", "alter")


class CaseError(ValueError):
    """A case file is malformed."""


@dataclass
class Case:
    id: str
    group: str
    name: str
    file: Path
    about: str = ""
    broker: str = "legacy"
    topic: dict = field(default_factory=dict)
    produce: list = field(default_factory=list)
    fetch: list = field(default_factory=list)
    alter: list = field(default_factory=list)
    expect: dict = field(default_factory=dict)
    checks: tuple = ALL_CHECKS
    xfail: str | None = None
    kafka_bug: str | None = None
    raw: dict = field(default_factory=dict, repr=False)

    def topic_at(self, before_produce: int | None = None) -> dict:
        """The topic's configs in force when produce request ``before_produce`` is sent (``None``: after
        every ``alter``, i.e. at the fetches): ``topic`` with the alters up to it applied in order."""
        out = dict(self.topic)
        for a in self.alter:
            if a.get("error") or (before_produce is not None and a["beforeProduce"] > before_produce):
                continue  # a rejected alter changes nothing
            for k, v in a["configs"].items():
                if v is None:
                    out.pop(k, None)
                else:
                    out[k] = v
        return out

    @property
    def topic_name(self) -> str:
        return re.sub(r"[^a-zA-Z0-9-]", "-", f"{self.group}-{self.name}")[:200]


def _merge(defaults: dict, case: dict) -> dict:
    out = copy.deepcopy(defaults)
    for k, v in case.items():
        if k == "topic" and isinstance(v, dict):
            out["topic"] = {**out.get("topic", {}), **v}
        else:
            out[k] = copy.deepcopy(v)
    return out


def load_file(path: Path) -> list[Case]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise CaseError(f"{path}: not JSON: {e}") from None
    group = doc.get("group") or path.stem
    defaults = doc.get("defaults", {})
    cases = []
    seen = set()
    for raw in doc.get("cases", []):
        c = _merge(defaults, raw)
        name = c.get("name")
        if not name:
            raise CaseError(f"{path}: a case without a name")
        if name in seen:
            raise CaseError(f"{path}: duplicate case name {name!r}")
        seen.add(name)
        checks = c.get("checks", ALL_CHECKS)
        unknown = set(checks) - set(ALL_CHECKS)
        if unknown:
            raise CaseError(f"{path}: case {name}: unknown checks {sorted(unknown)}")
        checks = tuple(ch for ch in checks if ch not in set(c.get("skipChecks", ())))
        alter = _load_alter(path, name, c.get("alter", []), len(c.get("produce", [])))
        cases.append(Case(id=f"{group}/{name}", group=group, name=name, file=path, about=c.get("about", ""),
                          broker=c.get("broker", "legacy"), topic={k: str(v) for k, v in c.get("topic", {}).items()},
                          produce=c.get("produce", []), fetch=c.get("fetch", []), alter=alter,
                          expect=c.get("expect", {}),
                          checks=checks, xfail=c.get("xfail"), kafka_bug=c.get("kafkaBug"), raw=c))
    return cases


def _load_alter(path: Path, name: str, alter, n_produce: int) -> list[dict]:
    """A case's ``alter`` steps, checked and sorted by ``beforeProduce`` (stable: same-point steps keep
    their order); values become strings, ``null`` stays (a DELETE)."""
    if not isinstance(alter, list):
        raise CaseError(f"{path}: case {name}: 'alter' must be a list")
    out = []
    for i, a in enumerate(alter):
        where = f"{path}: case {name}: alter[{i}]"
        if not isinstance(a, dict) or set(a) - {"beforeProduce", "configs", "about", "error"}:
            raise CaseError(f"{where}: expected {{'beforeProduce': int, 'configs': {{...}}}}")
        at, cfg = a.get("beforeProduce"), a.get("configs")
        if not isinstance(at, int) or isinstance(at, bool) or not 0 <= at <= n_produce:
            raise CaseError(f"{where}: beforeProduce must be an int in 0..{n_produce} (the case has "
                            f"{n_produce} produce requests; {n_produce} = after the last one)")
        if not isinstance(cfg, dict) or not cfg:
            raise CaseError(f"{where}: configs must be a non-empty object of topic configs")
        out.append({"beforeProduce": at, "configs": {k: None if v is None else str(v) for k, v in cfg.items()},
                    "error": a.get("error")})
    return sorted(out, key=lambda a: a["beforeProduce"])


def load_cases(directory: Path | None = None, select: list[str] | None = None) -> list[Case]:
    """Every case of ``conformance/cases/*.json``; ``select`` keeps ids/groups/names matching any item
    (exact, or a substring)."""
    directory = directory or CASES_DIR
    cases: list[Case] = []
    for path in sorted(directory.glob("*.json")):
        cases.extend(load_file(path))
    ids = [c.id for c in cases]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise CaseError(f"duplicate case ids: {sorted(dup)}")
    if select:
        cases = [c for c in cases if any(s == c.id or s == c.group or s in c.id for s in select)]
    return cases


# ------------------------------------------------------------------------------------------ materialize
def eval_timestamp(v, ctx: dict):
    if not isinstance(v, str):
        return v
    m = _TS_EXPR.match(v)
    if not m:
        raise CaseError(f"bad timestamp expression {v!r} (use an int, 'now', 'now-N', 'lat', 'lat[i]+N')")
    kind, idx, sign, num = m.groups()
    if kind == "now":
        base = ctx["now"]
    else:
        lats = ctx.get("lat") or []
        i = int(idx or 0)
        if i >= len(lats) or lats[i] is None or lats[i] < 0:
            raise CaseError(f"{v!r}: no log-append time known for produce request {i}")
        base = lats[i]
    delta = int(num or 0) * (-1 if sign == "-" else 1)
    return base + delta


def _expand_records(gen: dict, ctx: dict) -> list[dict]:
    n = int(gen["count"])
    out = []
    ts0 = eval_timestamp(gen.get("timestamp", -1), ctx)
    step = int(gen.get("timestampStep", 0))
    pad = gen.get("valueBytes")

    def fmt(t, i):
        if t is None:
            return None
        s = str(t).replace("{i}", str(i))
        return s

    for i in range(n):
        r = {"key": fmt(gen.get("key"), i), "value": fmt(gen.get("value", "v{i}"), i),
             "timestamp": ts0 if ts0 == -1 else ts0 + i * step}
        if pad and r["value"] is not None:
            r["value"] = r["value"].ljust(int(pad), "x")
        if "headers" in gen:
            r["headers"] = gen["headers"]
        if "offsetStart" in gen:
            r["offset"] = int(gen["offsetStart"]) + i * int(gen.get("offsetStep", 1))
        out.append(r)
    return out


def materialize(obj, ctx: dict):
    """Copy of a spec with timestamp expressions evaluated and record generators expanded."""
    if isinstance(obj, list):
        return [materialize(x, ctx) for x in obj]
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if k == "records" and isinstance(v, dict):
                out[k] = [materialize(r, ctx) for r in _expand_records(v, ctx)]
            elif k in TS_KEYS:
                out[k] = eval_timestamp(v, ctx)
            else:
                out[k] = materialize(v, ctx)
        return out
    return obj


__all__ = ["Case", "CaseError", "load_cases", "load_file", "materialize", "eval_timestamp", "CASES_DIR",
           "ALL_CHECKS"]


def error_code(x) -> int:
    """A Kafka error code from a case: the number, or its name (``"INVALID_CONFIG"``)."""
    if isinstance(x, int):
        return x
    from .client import ERROR_NAMES
    for k, v in ERROR_NAMES.items():
        if v == x:
            return k
    raise CaseError(f"unknown error name {x!r}")
