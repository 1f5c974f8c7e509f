"""Run a :class:`~kafkafmt.scenarios.loader.Scenario` on a :class:`~kafkafmt.scenarios.cluster.Cluster`.

Each step's actions run in order; the result holds, per step, the :class:`PathRow` of every hop, the
step's expectations checked against them, and warnings quoting the seed where a step is unsafe or
lossy (stated in the file with ``warn:`` or found by :func:`automatic_warnings`).  An error a hop
meets (a broker rejecting a batch, zstd to a v1 topic…) is an outcome in its row, never a crash.

A broker whose release refuses to start with the settings a ``configure`` gives it (a row
``refused to start``, :meth:`Cluster.configure`) ends the run there, as it ends a real rolling bounce:
the operator restarts it on its previous settings, bounces no further broker, and the plan's later steps,
which presume the change, are not run (:attr:`ScenarioResult.not_run`, shown by :func:`render`).
"""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field

from ..errors import KafkaFmtError
from ..records import MemoryRecords
from .cluster import Cluster
from .loader import SELECTORS, Scenario, ScenarioError, load_scenario
from .model import PathRow
from .quotes import quote

__all__ = ["run_scenario", "run_file", "ScenarioResult", "StepResult", "automatic_warnings", "render", "refusal"]


@dataclass
class StepResult:
    name: str
    rows: list
    cite: list = field(default_factory=list)
    checks: list = field(default_factory=list)  #: {"expect": ..., "ok": bool, "got": [...], "place": ...}
    warnings: list = field(default_factory=list)
    seed_vs_kafka: str | None = None
    conformance: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(c["ok"] for c in self.checks)

    def to_dict(self, *, with_measured: bool = True) -> dict:
        return {"name": self.name, "ok": self.ok, "cite": [quote(c) for c in self.cite],
                "rows": [r.to_dict(with_measured=with_measured) for r in self.rows], "checks": self.checks,
                "warnings": self.warnings, "seed_vs_kafka": self.seed_vs_kafka, "conformance": self.conformance}


@dataclass
class ScenarioResult:
    scenario: Scenario
    steps: list
    #: the steps not run, ``(number, name)``, because a broker refused to start at an earlier one (:attr:`stopped`)
    not_run: list = field(default_factory=list)
    #: why the run stopped before the end (the refusal, as the release words it), or None
    stopped: str | None = None

    @property
    def ok(self) -> bool:
        return all(s.ok for s in self.steps) and not self.not_run

    @property
    def failed_checks(self) -> list:
        return [(s.name, c) for s in self.steps for c in s.checks if not c["ok"]]

    def step(self, name: str) -> StepResult:
        return next(s for s in self.steps if s.name == name)

    def to_rows(self, *, with_measured: bool = False) -> list[dict]:
        """One flat dict per hop, with its step's number and name (for a DataFrame or a notebook table)."""
        out = []
        for i, s in enumerate(self.steps, 1):
            for r in s.rows:
                d = r.to_dict(with_measured=with_measured)
                detail = d.pop("detail")
                out.append({"step": i, "step_name": s.name, **d,
                            **{f"detail.{k}": v for k, v in detail.items() if k not in ("hex", "read", "sent")}})
        return out

    def to_dict(self, *, with_measured: bool = True) -> dict:
        return {"name": self.scenario.name, "title": self.scenario.title, "source": self.scenario.source,
                "ok": self.ok, "steps": [s.to_dict(with_measured=with_measured) for s in self.steps],
                "stopped": self.stopped, "not_run": [{"step": n, "name": name} for n, name in self.not_run]}


def run_file(name_or_path, **kw) -> ScenarioResult:
    return run_scenario(load_scenario(name_or_path), **kw)


def run_scenario(scenario: Scenario, *, keep_cluster: bool = False, progress: bool = False, on_step=None):
    """Run every step; returns :class:`ScenarioResult` (and the cluster too with ``keep_cluster``:
    then the caller closes it).  ``on_step(number, step, result, cluster)`` is called after each step with
    the :class:`~kafkafmt.scenarios.loader.Step`, its :class:`StepResult` and the model's cluster as the
    step left it (a live run performs the step for real there, :mod:`kafkafmt.scenarios.live`)."""
    sc = copy.deepcopy(scenario)
    cluster = Cluster(sc.brokers, sc.partitions)
    results = []
    stopped = None
    steps = sc.steps
    if progress:
        from tqdm import tqdm
        steps = tqdm(steps, desc=sc.name, unit="step", leave=False)
    try:
        for step in steps:
            rows: list[PathRow] = []
            for act, args, place in step.actions:
                try:
                    rows.extend(_do(cluster, sc, act, args))
                except KafkaFmtError as e:  # a scenario that asks the impossible of the cluster itself
                    raise ScenarioError(f"{place}: {e.reason}") from None
                if refusal(rows):  # the step's later actions presume the bounce
                    break
            sr = StepResult(step.name, rows, step.cite, seed_vs_kafka=step.seed_vs_kafka,
                            conformance=step.conformance)
            for exp, place in step.expect:
                sr.checks.append(_check(exp, rows, place))
            sr.warnings = [quote(q) for q in step.warn]
            for w in automatic_warnings(rows, sc):
                if w not in sr.warnings:
                    sr.warnings.append(w)
            results.append(sr)
            if on_step is not None:
                on_step(len(results), step, sr, cluster)
            cluster.clock.advance(1000)
            stopped = refusal(rows)
            if stopped:
                break
    except BaseException:
        cluster.close()
        raise
    not_run = [(i, st.name) for i, st in enumerate(sc.steps, 1) if i > len(results)]
    result = ScenarioResult(scenario, results, not_run, stopped if not_run else None)
    if keep_cluster:
        return result, cluster
    cluster.close()
    return result


def refusal(rows: list[PathRow]) -> str | None:
    """The first broker's refusal to start among a step's rows, in words (None: every bounce started)."""
    for r in rows:
        if r.path == "broker" and r.conversion == "refused to start":
            return (f"broker {r.actor} (Kafka {r.detail['version']}) refused to start: {r.detail['reason']} "
                    f"(restarted on its previous settings)")
    return None


def _do(cluster: Cluster, sc: Scenario, act: str, a: dict) -> list[PathRow]:
    if act == "configure":
        names = list(cluster.brokers) if a["broker"] == "all" else [a["broker"]]
        rows = []
        for n in names:  # a rolling bounce: it stops at the first broker that refuses to start
            rows.append(cluster.configure(n, version=a.get("version"), properties=a.get("properties"),
                                          kip228=a.get("kip228"), idempotence_modes=a.get("idempotence_modes")))
            if refusal(rows[-1:]):
                break
        return rows
    if act == "produce":
        ts = a.get("timestamps") or [None] * int(a.get("records", 3))
        return cluster.produce(sc.producers[a["producer"]], int(a.get("partition", 0)), ts)
    if act == "replicate":
        return cluster.replicate()
    if act == "consume":
        return cluster.consume(sc.consumers[a["consumer"]], int(a.get("partition", 0)), int(a.get("offset", 0)))
    if act == "shutdown":
        return cluster.shutdown(a["broker"])
    if act == "nuke":
        return [cluster.nuke(a["broker"], a.get("partitions"))]
    if act == "start":
        return [cluster.start(a["broker"])]
    if act == "elect":
        return [cluster.elect(int(a["partition"]), a["broker"])]
    if act == "upgrade":
        return _upgrade(sc, a)
    if act == "show_disk":
        p = int(a.get("partition", 0))
        data = cluster.log_bytes(a["broker"], p)
        magics = cluster.magics_on_disk(a["broker"], p)
        return [PathRow("disk", a["broker"], p, magic_out=max(magics) if magics else None, bytes_out=len(data),
                        records=sum(1 for _ in MemoryRecords(data).records()),
                        detail={"magics": magics, "batches": len(magics), "hex": data.hex()})]
    if act == "compact":
        return [cluster.compact(a["broker"], int(a.get("partition", 0)), a.get("cleaner"))]
    if act == "advance_clock":
        cluster.clock.advance(int(a["ms"]))
        return []
    raise AssertionError(act)  # the loader only lets known actions through


def _upgrade(sc: Scenario, a: dict) -> list[PathRow]:
    rows = []
    if "producer" in a:
        p = sc.producers[a["producer"]]
        for k in ("version", "produce_version", "kip228", "idempotence", "compression"):
            if k in a:
                setattr(p, k, str(a[k]) if k in ("version", "compression", "idempotence") else a[k])
        rows.append(PathRow("client", p.name, conversion="upgraded", detail={"version": p.version}))
    if "consumer" in a:
        c = sc.consumers[a["consumer"]]
        for k in ("version", "fetch_version", "kip228"):
            if k in a:
                setattr(c, k, str(a[k]) if k == "version" else a[k])
        rows.append(PathRow("client", c.name, conversion="upgraded", detail={"version": c.version}))
    return rows


def _value(row: PathRow, key: str):
    if key == "ok":
        return row.error is None
    if key.startswith("detail."):
        return row.detail.get(key[len("detail."):])
    return getattr(row, key)


def _check(exp: dict, rows: list[PathRow], place: str) -> dict:
    sel = [r for r in rows if r.path == exp["path"] and ("actor" not in exp or r.actor == exp["actor"])
           and ("partition" not in exp or r.partition == exp["partition"])
           and ("producer" not in exp or exp["producer"] in (r.actor, r.detail.get("producer")))]
    fields = {k: v for k, v in exp.items() if k not in SELECTORS}
    got = [{k: _value(r, k) for k in fields} | {"actor": r.actor} for r in sel]
    ok = bool(sel) and all(_matches(_value(r, k), v) for r in sel for k, v in fields.items())
    return {"place": place, "expect": exp, "ok": ok, "got": got}


def _matches(got, want) -> bool:
    if isinstance(want, str) and isinstance(got, str) and want.endswith("*"):
        return got.startswith(want[:-1])
    return got == want


def automatic_warnings(rows: list[PathRow], sc: Scenario) -> list[str]:
    """Warnings the outcome itself calls for, each quoting the seed sentence that names the risk."""
    out = []

    def add(key, why):
        w = f"{why} — {quote(key)}"
        if w not in out:
            out.append(w)

    for r in rows:
        if r.path == "consumer" and r.magic_out is not None and r.magic_out > r.detail.get("can_parse_up_to", 2):
            how = r.error or (f"it stalls: no record, no error; it only logs {r.detail['logged']}"
                              if r.detail.get("outcome") == "stalls" else "garbled records")
            add("004.old_consumers", f"{r.actor} got v{r.magic_out} data it cannot parse ({how})")
        if r.path == "consumer" and r.conversion.startswith("converted down"):
            add("004.penalty", f"{r.actor}: {r.conversion}, no zero-copy")
        if r.path == "leader" and r.conversion == "converted down v1→v0":
            add("000.p1.6.2", "the producer's timestamps are dropped on disk (v1→v0)")
        if r.path == "leader" and "downgraded" in r.detail:
            add("003.downside", "the broker converted an idempotent batch and dropped its producer state")
        if r.path in ("leader", "producer") and r.error and "Idempotent" in r.error:
            add("003.untenable", f"{r.actor}: idempotent produce failed")
        if r.path == "leader" and r.detail.get("timestamp_extended") and not _broker_kip228(sc, r.actor):
            add("002.producers", "a KIP-228 batch reached a broker without KIP-228 support")
        if r.path == "consumer" and not _consumer_kip228(sc, r.actor) and any(
                x["extended"] for x in r.detail.get("read", [])):
            add("002.consumers", f"{r.actor} (not KIP-228-aware) read records of a KIP-228 extended batch")
        if r.path == "broker" and r.conversion == "data deleted":
            gone = {p: n for p, n in r.detail["offsets_on_no_other_replica"].items() if n}
            add("000.t.3.2", f"{r.actor}'s copy of partition(s) {r.detail['partitions']} is deleted" +
                (f"; {gone} offset(s) per partition existed on no other replica and are lost" if gone else
                 "; every offset is on another replica"))
        behind = sorted(c.name for c in sc.consumers.values() if r.path == "broker" and r.magic_out
                        and r.conversion == "bounced" and magic_for_consumer(c) < r.magic_out)
        if behind and r.detail.get("kafka_line"):  # a 4.x broker: no down-conversion, old fetches unanswered
            add("004.old_consumers", f"broker {r.actor} runs Kafka {r.detail['kafka_line']}: consumer(s) "
                                     f"{', '.join(behind)} get no answer (no down-conversion, KIP-724/KIP-896)")
        elif behind:
            writers = ", ".join(x.actor for x in rows if x.path == "broker" and x.conversion == "bounced"
                                and x.magic_out == r.magic_out and not x.detail.get("kafka_line"))
            add("000.p2.1", f"broker(s) {writers} now write v{r.magic_out}; consumer(s) {', '.join(behind)} read "
                            "only older formats (down-conversion, no zero-copy)")
    return out


def magic_for_consumer(c) -> int:
    from ..broker.fetch import max_magic_for_fetch_version
    from .versions import client_api_versions
    v = c.fetch_version if c.fetch_version is not None else client_api_versions(c.version)[1]
    return max_magic_for_fetch_version(v)


def _broker_kip228(sc: Scenario, name: str) -> bool:
    return any(b.kip228 for b in sc.brokers if b.name == name)


def _consumer_kip228(sc: Scenario, name: str) -> bool:
    c = sc.consumers.get(name)
    return bool(c and c.kip228)


# ------------------------------------------------------------------------------------------------
_COLS = ("path", "actor", "partition", "request", "magic_in", "magic_out", "conversion", "recompressed", "records",
         "records_touched", "bytes_in", "bytes_out", "error")


def render(result: ScenarioResult, fmt: str = "table", *, with_measured: bool = False) -> str:
    """The result as ``table`` (plain text), ``markdown`` or ``json``."""
    if fmt == "json":
        return json.dumps(result.to_dict(with_measured=with_measured), indent=2, default=str)
    md = fmt == "markdown"
    lines = [f"# {result.scenario.title}" if md else result.scenario.title, ""]
    for i, s in enumerate(result.steps, 1):
        status = "ok" if s.ok else "EXPECTATION FAILED"
        lines.append(f"## {i}. {s.name} [{status}]" if md else f"{i}. {s.name}  [{status}]")
        for c in s.cite:
            lines.append(f"> {quote(c)}" if md else f"   cites {quote(c)}")
        lines.append("")
        lines.extend(_table([[_cell(r, c) for c in _COLS] for r in s.rows], _COLS, md))
        ind = "- " if md else "   "
        for r in s.rows:
            if r.path == "disk":
                lines.append(f"{ind}{r.actor} partition {r.partition} .log ({r.bytes_out} bytes, magics "
                             f"{r.detail['magics']}):")
                h = r.detail["hex"]
                lines.extend(f"     {h[i:i + 64]}" for i in range(0, len(h), 64))
            if r.path == "consumer" and r.detail.get("read"):
                reads = ", ".join(f"{x['offset']}:{x['timestamp']}({x['meaning']})" for x in r.detail["read"][:6])
                lines.append(f"{ind}{r.actor} read offset:timestamp {reads}")
        for r in s.rows:
            if r.path == "broker" and r.conversion == "refused to start":
                lines.append(f"{ind}REFUSED: broker {r.actor} (Kafka {r.detail['version']}) does not start: "
                             f"{r.error}; the operator restarts it on its previous settings")
        for c in s.checks:
            mark = "PASS" if c["ok"] else "FAIL"
            lines.append(f"{ind}expect {mark}: {c['expect']}" + ("" if c["ok"] else f" got {c['got']}"))
        if s.seed_vs_kafka:
            lines.append(f"{ind}seed vs Kafka: {s.seed_vs_kafka}")

        if s.conformance:
            lines.append(f"{ind}checked against a live Kafka 3.9.2 broker by: {', '.join(s.conformance)}")
        for w in s.warnings:
            lines.append(f"{ind}WARNING: {w}")
        lines.append("")
    if result.not_run:
        lines.append(f"NOT RUN, {result.stopped}:")
        lines.extend(f"{ind}{n}. {name}" for n, name in result.not_run)
        lines.append("")
        lines.append(f"{len(result.steps)} of {len(result.steps) + len(result.not_run)} steps run (a broker refused "
                     f"to start at step {len(result.steps)}), {len(result.failed_checks)} failed expectation(s)")
    else:
        lines.append(f"{len(result.steps)} steps, {len(result.failed_checks)} failed expectation(s)")
    return "\n".join(lines)


def _cell(r: PathRow, c: str) -> str:
    v = getattr(r, c)
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    return str(v)


def _table(rows, cols, md: bool) -> list[str]:
    if not rows:
        return []
    if md:
        out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        out += ["| " + " | ".join(x.replace("|", "\\|") for x in r) + " |" for r in rows]
        return out + [""]
    w = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(cols)]
    out = ["   " + "  ".join(c.ljust(w[i]) for i, c in enumerate(cols)).rstrip()]
    out += ["   " + "  ".join(x.ljust(w[i]) for i, x in enumerate(r)).rstrip() for r in rows]
    return out
