"""Notebook 10 (Kafka 4): for each seed, what the 4.4 line kept, changed or removed, shown on bytes and
scenarios; and the audit of the sample logs.

Everything here runs kafkafmt's rules twice, once per Kafka line (``BrokerConfig(kafka_version=...)``),
and every difference it names is a row of :mod:`kafkafmt.kafka_lines` (its KIP or JIRA):

* :func:`line_rows` – the rows themselves, as people read them;
* :func:`seed_outcomes` – each seed's behaviours (:data:`PROBES`), each probed on both lines through the
  produce path (:func:`kafkafmt.broker.validator.validate_messages_and_assign_offsets`), the fetch path
  (:func:`kafkafmt.broker.fetch.fetch`), the topic configuration, the log (time index) and the 4.x
  cleaner's rewrite (:func:`kafkafmt.log.legacy_to_v2.rewrite_as_v2`, KAFKA-13093); the verdict (kept,
  changed, removed) is computed from the two outcomes, never typed;
* :func:`explain_both` – one produce or fetch explained on both lines, step by step, side by side;
* :func:`upgrade_step` – the shipped scenario ``kafka4-upgrade`` (:mod:`kafkafmt.scenarios`) step by step;
* :func:`cleaner_rewrite` – the bytes of a v0/v1 entry before and after the 4.4 cleaner's rewrite;
* :func:`sample_audit` / :func:`audit_rows` – :func:`kafkafmt.audit.audit_log_dirs` over the sample
  logs (``kafkafmt gen``'s shipped ``default`` workload, the logs notebooks 04/05 read).

What a live broker showed and kafkafmt cannot compute (how each real client fails) is measured in
``tests/conformance/test_kafka44_broker.py``; the notebook cites it.
"""
from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

from .. import kafka_lines
from ..broker.consumer import consumer_view
from ..broker.fetch import fetch
from ..broker.validator import validate_messages_and_assign_offsets
from ..config import BrokerConfig, LogConfig
from ..errors import KafkaFmtError
from ..records.memory import MemoryRecords
from .anatomy import build, sample_records

LINES = kafka_lines.KAFKA_LINES
NOW_MS = 1_700_000_000_000
#: the 3.9 side of the seeds' upgrades: IBP 2.8 (ZooKeeper mode), so message.format.version still counts
OLD_FORMAT = "0.10.0"
SEEDS = {"000": "KIP-32 (timestamps, message format v1)", "001": "KIP-33 variant (the time index)",
         "002": "KIP-228 (negative timestamps)", "003": "idempotence modes (off/safe/required)",
         "004": "KIP-31 (relative offsets in compressed wrappers)"}


def broker(line: str) -> BrokerConfig:
    """A broker of ``line``: 3.9 with IBP 2.8 (the seeds' clusters), or 4.4 (KRaft, no IBP)."""
    return BrokerConfig(kafka_version=line)


def topic(line: str, message_format_version: str | None = None, **kw) -> LogConfig:
    """A topic on a ``line`` broker; ``message_format_version`` is set on 3.9 only (4.4 has no such key)."""
    if message_format_version is not None and line == "3.9":
        kw["message_format_version"] = message_format_version
    return LogConfig(broker=broker(line), **kw)


# ================================================================================================
# the rows
def line_rows(area: str | None = None) -> list[dict]:
    """Every row of :mod:`kafkafmt.kafka_lines` (or one ``area``): what differs, the value on each line,
    the KIP/JIRA and the release."""
    return [{"area": c.area, "what": c.what, "3.9": _shown(c.shown("3.9")), "4.4": _shown(c.shown("4.4")),
             "source": c.source, "release": c.release, "key": c.key} for c in kafka_lines.changes(area)]


def _shown(v) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if v == kafka_lines.INT64_MAX:
        return "Long.MAX_VALUE"
    return str(v)


# ================================================================================================
# the probes: one behaviour of a seed, run on each line
def _produce(line: str, magic: int, *, codec: str = "none", mfv: str | None = OLD_FORMAT, produce_version=None,
             ts=None, producer_id: int = -1, records: int = 3) -> str:
    recs = sample_records(records, seed=7)
    if ts is not None:
        recs = [(ts, k, v, h) for _, k, v, h in recs]
    try:  # the producer's own MemoryRecordsBuilder refuses some values before any broker sees them
        data = _idempotent(recs, codec) if producer_id >= 0 else build(magic, codec, recs)
    except KafkaFmtError as e:
        return f"refused by the producer: {e.kafka_exception or type(e).__name__}"
    if produce_version is None:
        produce_version = 2 if magic < 2 else 9
    try:
        cfg = topic(line, mfv)
        res = validate_messages_and_assign_offsets(data, cfg, now=NOW_MS, produce_version=produce_version)
    except KafkaFmtError as e:
        return f"refused: {e.kafka_exception or type(e).__name__}"
    how = "converted" if res.converted else "in place"
    rec = ", recompressed" if res.recompressed else ""
    return f"stored as v{res.to_magic} ({how}{rec})"


def _idempotent(recs, codec: str) -> bytes:
    from ..constants import CompressionType, TimestampType
    from ..records.builder import MemoryRecordsBuilder
    b = MemoryRecordsBuilder(2, CompressionType.from_name(codec), TimestampType.CREATE_TIME, 0,
                             producer_id=1000, producer_epoch=0, base_sequence=0)
    for ts, k, v, h in recs:
        b.append(ts, k, v, h)
    return b.build()


#: what 3.9 leaves on disk in the seeds' upgrades: a v0 message set, a gzip v1 wrapper, a v2 batch
def mixed_log(codec: str = "gzip") -> bytes:
    """v0 messages, then a v1 wrapper (``codec``), then a v2 batch: what a seeds' upgrade left on disk."""
    parts, offset = [], 0
    for magic, n in ((0, 2), (1, 3), (2, 2)):
        parts.append(build(magic, "none" if magic == 0 else codec, sample_records(n, seed=magic), base_offset=offset))
        offset += n
    return b"".join(parts)


def _fetch(line: str, fetch_version: int, client_magic: int, *, codec: str = "gzip") -> str:
    res = fetch(mixed_log(codec), topic_config=topic(line, OLD_FORMAT), fetch_version=fetch_version)
    if res.error is not None:
        closed = ", the broker closes the connection" if res.connection_closed else ""
        return f"refused: {res.error}{closed}"
    view = consumer_view(res.records, client_magic=client_magic)
    got = "zero-copy" if res.zero_copy else f"down-converted to v{res.to_magic}"
    magics = sorted({b.magic for b in MemoryRecords(res.records).batches()})
    work = f", {res.cost.compressions} recompression(s)" if res.cost.compressions else ""
    return f"{got}: {len(view.records)} records in " + "+".join(f"v{m}" for m in magics) + work


def _topic_key(line: str, name: str, value: str) -> str:
    try:
        LogConfig.from_properties({name: value}, broker=broker(line))
    except KafkaFmtError as e:
        return f"refused: {type(e).__name__}"
    return f"{name}={value} accepted"


def _list_offsets_v0(line: str) -> str:
    oldest = kafka_lines.value("list_offsets.min_version", line)
    return "answered" if oldest <= 0 else f"refused: UnsupportedVersionException (oldest v{oldest})"


def _time_index(line: str) -> str:
    """The ``.timeindex`` bytes of a log written through the leader: a digest people can compare."""
    import hashlib

    from ..log import Log, SimulatedClock
    tmp = Path(tempfile.mkdtemp(prefix="kafkafmt-k4-"))
    try:
        cfg = LogConfig(broker=broker(line), segment_bytes=1_048_576, index_interval_bytes=0)
        log = Log(tmp / "t-0", cfg, clock=SimulatedClock(NOW_MS))
        for i in range(12):
            recs = [(NOW_MS + 1000 * i + j, k, v, h) for j, (_, k, v, h) in enumerate(sample_records(2, seed=i))]
            log.append_as_leader(build(2, "none", recs))
        log.flush()
        log.close()
        files = sorted((tmp / "t-0").glob("*.timeindex"))
        data = b"".join(f.read_bytes() for f in files)
        entries = sum(1 for i in range(0, len(data), 12) if data[i:i + 12] != bytes(12))
        return f"{entries} entries, sha256 {hashlib.sha256(data).hexdigest()[:12]}"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _cleaner(line: str, codec: str = "gzip") -> str:
    before = build(1, codec, sample_records(5, seed=4))
    if not kafka_lines.value("cleaner.legacy_to_v2", line):
        return f"kept as v1 ({len(before)} bytes)"
    after = rewrite(before)
    magics = sorted({b.magic for b in MemoryRecords(after).batches()})
    return f"rewritten as v{'+'.join(map(str, magics))} ({len(after)} bytes)"


@dataclass(frozen=True)
class Probe:
    """One behaviour a seed introduced or discussed, probed on each line; ``rows``: the kafka_lines rows
    it meets (where the lines differ, they say why)."""

    seed: str
    behaviour: str
    run: Callable[[str], str]
    rows: tuple[str, ...] = ()


PROBES: tuple[Probe, ...] = (
    Probe("000", "a 0.10 producer sends v1 messages (Produce v2)", lambda ln: _produce(ln, 1),
          ("produce.min_version",)),
    Probe("000", "a current producer's v2 batch (CreateTime timestamps)", lambda ln: _produce(ln, 2, mfv=None)),
    Probe("000", "a record 2 h ahead of the broker's clock", lambda ln: _produce(ln, 2, mfv=None, ts=NOW_MS + 7_200_000),
          ("topic.default.message.timestamp.after.max.ms",)),
    Probe("000", "a 0.9 consumer (Fetch v1) reads the v0+v1+v2 log", lambda ln: _fetch(ln, 1, 0, codec="none"),
          ("fetch.min_version", "fetch.down_conversion")),
    Probe("000", "a current consumer (Fetch v17) reads the v0+v1+v2 log",
          lambda ln: _fetch(ln, 17, 2, codec="none")),
    Probe("000", "topic key message.format.version=0.10.0",
          lambda ln: _topic_key(ln, "message.format.version", "0.10.0"), ("topic.removed.message.format.version",)),
    Probe("001", "ListOffsets v0 (offsets before a time, per segment: what KIP-33 replaced)", _list_offsets_v0,
          ("list_offsets.min_version",)),
    Probe("001", "the time index of v2 appends (one entry per batch)", _time_index),
    Probe("001", "segment.bytes=2000 (notebook 03's small segments, one time index each)",
          lambda ln: _topic_key(ln, "segment.bytes", "2000"), ("topic.check.segment.bytes",)),
    Probe("002", "a v2 record with timestamp -1 (NO_TIMESTAMP)", lambda ln: _produce(ln, 2, mfv=None, ts=-1)),
    Probe("002", "a producer asked for a timestamp a day before the epoch (-86400000)", lambda ln: _produce(ln, 2, mfv=None, ts=-86_400_000)),
    Probe("003", "an idempotent v2 batch to a topic of message.format.version 0.10.0",
          lambda ln: _produce(ln, 2, producer_id=1000), ("produce.record_version",)),
    Probe("004", "a 0.10 producer's gzip v1 wrapper (relative offsets)", lambda ln: _produce(ln, 1, codec="gzip"),
          ("produce.min_version",)),
    Probe("004", "a 0.9 consumer (Fetch v1) reads a log with gzip v1 wrappers", lambda ln: _fetch(ln, 1, 0),
          ("fetch.min_version", "fetch.down_conversion")),
    Probe("004", "the cleaner meets a gzip v1 wrapper on a compacted topic", _cleaner, ("cleaner.legacy_to_v2",)),
)


#: rows that change a bound or a default (a refusal under them is a change, not a removal)
_CHANGED_BOUND = ("topic.default.", "topic.check.")


def verdict(v39: str, v44: str, rows: tuple[str, ...] = ()) -> str:
    """``kept`` (the same outcome on both lines), ``removed`` (4.4 refuses what 3.9 did, by a row that
    removes something) or ``changed`` (anything else, e.g. a refusal under a new default or bound)."""
    if v39 == v44:
        return "kept"
    if (v44.startswith("refused") and not v39.startswith("refused")
            and not all(r.startswith(_CHANGED_BOUND) for r in rows)):
        return "removed"
    return "changed"


@lru_cache(maxsize=1)
def _outcomes() -> tuple:
    out = []
    for p in PROBES:
        v39, v44 = p.run("3.9"), p.run("4.4")
        rows = [kafka_lines.change(k) for k in p.rows] if v39 != v44 else []
        out.append({"seed": p.seed, "behaviour": p.behaviour, "Kafka 3.9": v39, "Kafka 4.4": v44,
                    "verdict": verdict(v39, v44, p.rows), "why (kafka_lines)": "; ".join(f"{r.key} ({r.source})" for r in rows)
                    or "-"})
    return tuple(out)


def seed_outcomes(seed: str | None = None) -> list[dict]:
    """Every probe of ``seed`` (default: all seeds) with its outcome on each line and the verdict."""
    if seed is not None and seed not in SEEDS:
        raise ValueError(f"seed must be one of {', '.join(SEEDS)}")
    return [dict(r) for r in _outcomes() if seed is None or r["seed"] == seed]


def verdict_counts() -> dict[str, dict[str, int]]:
    """Per seed: how many probed behaviours 4.4 kept, changed and removed."""
    out = {s: {"kept": 0, "changed": 0, "removed": 0} for s in SEEDS}
    for r in _outcomes():
        out[r["seed"]][r["verdict"]] += 1
    return out


# ================================================================================================
# the 4.4 cleaner's rewrite, on bytes
def rewrite(legacy: bytes, *, delete_horizon_ms: int = NOW_MS + 86_400_000) -> bytes:
    """What Kafka 4.x's cleaner writes for the v0/v1 entries ``legacy``, every record kept (KAFKA-13093)."""
    from ..log.legacy_to_v2 import rewrite_as_v2
    return b"".join(rewrite_as_v2(b, delete_horizon_ms=delete_horizon_ms) for b in MemoryRecords(legacy).batches())


def cleaner_rewrite(magic: int = 1, codec: str = "gzip", records: int = 3) -> dict:
    """A v0/v1 record set before and after the 4.4 cleaner's rewrite: bytes, entries and batches."""
    if magic not in (0, 1):
        raise ValueError("the cleaner rewrites v0/v1 entries; pick magic 0 or 1")
    before = build(magic, codec, sample_records(records, seed=4))
    after = rewrite(before)
    return {"magic": magic, "codec": codec, "records": records, "before": before, "after": after,
            "entries_before": sum(1 for _ in MemoryRecords(before).batches()),
            "batches_after": sum(1 for _ in MemoryRecords(after).batches())}


# ================================================================================================
# one produce or fetch, explained on both lines
REQUESTS = ("produce", "fetch")
GENERATIONS = tuple(g.name for g in kafka_lines.CLIENT_GENERATIONS)
FORMATS_39 = ("0.9.0", "0.10.0", "3.0")


def _generation(name: str):
    for g in kafka_lines.CLIENT_GENERATIONS:
        if g.name == name:
            return g
    raise ValueError(f"client generation must be one of {', '.join(GENERATIONS)}")


def _magic_of_produce(version: int) -> int:
    """The format a Produce request of ``version`` carries: v0-v1 → v0, v2 → v1, v3+ → v2 (KIP-32, KIP-98)."""
    return 0 if version < 2 else 1 if version == 2 else 2


def _explain_produce(line: str, g, mfv: str, codec: str) -> tuple[str, list]:
    magic = _magic_of_produce(g.produce_max)
    data = build(magic, codec if magic or codec != "zstd" else "none", sample_records(3, seed=1))
    try:
        res = validate_messages_and_assign_offsets(data, topic(line, mfv), now=NOW_MS, produce_version=g.produce_max)
    except KafkaFmtError as e:
        return f"✗ rejected: {e.kafka_exception or type(e).__name__}", list(getattr(e, "trace", None) or [])
    how = "converted" if res.converted else "in place"
    return f"✓ appended as v{res.to_magic} ({how}{', recompressed' if res.recompressed else ''})", list(res.trace)


def _explain_fetch(line: str, g, mfv: str, codec: str) -> tuple[str, list]:
    from ..broker.fetch import max_magic_for_fetch_version
    res = fetch(mixed_log(codec if codec != "zstd" else "gzip"), topic_config=topic(line, mfv),
                fetch_version=g.fetch_max)
    if res.error is not None:
        how = "no response, connection closed" if res.connection_closed else res.error
        return f"✗ {how} ({res.error})", list(res.trace)
    view = consumer_view(res.records, client_magic=max_magic_for_fetch_version(g.fetch_max))
    if view.error:
        return f"✗ the client fails: {view.error}", list(res.trace)
    got = "zero-copy" if res.zero_copy else f"↓ converted to v{res.to_magic}"
    return f"{'✓ ' if res.zero_copy else ''}{got}, {len(view.records)} records read", list(res.trace)


def explain_both(request: str = "fetch", client: str = "0.10.0", message_format_version: str = OLD_FORMAT,
                 codec: str = "gzip") -> dict:
    """One ``request`` (produce: the client's newest version and format; fetch: of the v0+v1+v2 log) from a
    ``client`` generation, explained by a 3.9 broker (IBP 2.8, the topic at ``message_format_version``)
    and by a 4.4 broker: per line the outcome and every step, and the kafka_lines rows applied."""
    if request not in REQUESTS:
        raise ValueError(f"request must be one of {REQUESTS}")
    g = _generation(client)
    run = _explain_produce if request == "produce" else _explain_fetch
    out = {"request": request, "client": g.to_dict(), "version": g.produce_max if request == "produce" else g.fetch_max}
    for line in LINES:
        outcome, steps = run(line, g, message_format_version, codec)
        out[line] = {"outcome": outcome,
                     "steps": [{"#": i + 1, "rule": s.rule, "decision": s.decision, "source": s.source,
                                "row": s.values.get("kafka_line_row") or ""} for i, s in enumerate(steps)],
                     "rows": kafka_lines.rows_applied(steps)}
    return out


# ================================================================================================
# the shipped scenario, step by step
SCENARIO = "kafka4-upgrade"


@lru_cache(maxsize=1)
def _scenario():
    from ..scenarios import load_scenario, run_scenario
    return run_scenario(load_scenario(SCENARIO))


def upgrade_steps() -> int:
    """How many steps ``kafka4-upgrade`` has."""
    return len(_scenario().steps)


def upgrade_step(step: int) -> dict:
    """Step ``step`` (1-based) of the shipped scenario ``kafka4-upgrade`` (:mod:`kafkafmt.scenarios`): every
    hop with its conversion, bytes and error, the step's warnings and where Kafka differs from the seed;
    in the shape :func:`kafkafmt.viz.upgrade.scenario_view` draws."""
    from .upgrade import HOP_COLUMNS
    res = _scenario()
    if not 1 <= step <= len(res.steps):
        raise ValueError(f"{SCENARIO} has steps 1..{len(res.steps)}")
    s = res.steps[step - 1]
    return {"scenario": SCENARIO, "steps": len(res.steps), "name": s.name, "ok": s.ok, "warnings": list(s.warnings),
            "seed_vs_kafka": s.seed_vs_kafka, "hops": [{k: r.to_dict()[k] for k in HOP_COLUMNS} for r in s.rows]}


# ================================================================================================
# the audit of the sample logs
SAMPLE = "default"
from ..log.files import MANIFEST  # noqa: E402  (the generated log directory's manifest)


def sample_logs(root=None) -> Path:
    """The sample logs: ``kafkafmt gen``'s shipped ``default`` workload (seeded), as notebooks 04/05 leave
    them in ``build/derived/default/logs``; else generated once into ``build/kafka4/default/logs``
    (atomically, by :func:`kafkafmt.gen.generator.generate_logs`; the same bytes either way)."""
    from .derived import project_root
    base = project_root(root)
    for d in (base / "build" / "derived" / SAMPLE / "logs", base / "build" / "kafka4" / SAMPLE / "logs"):
        if (d / MANIFEST).is_file():
            return d
    from ..gen.generator import generate_logs
    from ..gen.workload_file import load_workload as load_scenario
    generate_logs(load_scenario(SAMPLE), d, progress=False, jobs=1)
    return d


def sample_now_ms() -> int:
    """The audit's clock: the end of the sample workload (its ``start_ms + duration_ms``)."""
    from ..gen.workload_file import load_workload as load_scenario
    w = load_scenario(SAMPLE)
    return w.start_ms + w.duration_ms


@lru_cache(maxsize=8)
def _sample_audit(logs: str, target: str, compacted: tuple[str, ...]):
    from ..audit import audit_log_dirs
    return audit_log_dirs([logs], target=target, now_ms=sample_now_ms(),
                          topic_config={t: {"cleanup.policy": "compact"} for t in compacted})


def sample_audit(target: str = "4.4", compacted: tuple[str, ...] = (), root=None):
    """:func:`kafkafmt.audit.audit_log_dirs` over the sample logs for ``target``, the topics in
    ``compacted`` taken as ``cleanup.policy=compact`` (``-c TOPIC:cleanup.policy=compact``): a compacted
    topic's old data is cleaned on a copy by the target line's cleaner, as the command does.  Each
    combination is computed once."""
    return _sample_audit(str(sample_logs(root)), kafka_lines.check_line(target), tuple(sorted(compacted)))


def audit_rows(report) -> list[dict]:
    """One row per topic-partition, for people: bytes per format, v0/v1 batches, what becomes of them."""
    rows = []
    for p in report.to_dict()["partitions"]:
        m, cl = p["magics"], p["cleaner"]
        rows.append({"partition": f"{p['topic']}-{p['partition']}", "segments": p["segments"],
                     "v0 bytes": m.get("v0", {}).get("bytes", 0), "v1 bytes": m.get("v1", {}).get("bytes", 0),
                     "v2 bytes": m.get("v2", {}).get("bytes", 0), "v0/v1 batches": p["legacy"]["batches"],
                     "no timestamp": p["records_without_timestamp"], "compacted": p["compacted"],
                     "v0/v1 bytes after the cleaner": cl["bytes_after"] if cl["applies"] else None,
                     "what becomes of the v0/v1 data": p["legacy_status"]})
    return rows


def audit_finding(report) -> dict:
    """The headline numbers: v0/v1 share of the bytes, partitions holding them, client generations refused."""
    d = report.to_dict()
    t = d["totals"]["magics"]
    legacy = sum(t.get(m, {}).get("bytes", 0) for m in ("v0", "v1"))
    total = sum(c["bytes"] for c in t.values())
    refused = [c["name"] for c in d["clients"] if not (c["can_produce"] and c["can_fetch"])]
    cleaned = [p for p in d["partitions"] if p["cleaner"]["applies"]]
    return {"legacy_bytes": legacy, "bytes": total, "legacy_share": legacy / total if total else 0.0,
            "legacy_partitions": d["totals"]["legacy_partitions"], "partitions": d["totals"]["partitions"],
            "clients_refused": refused,
            "cleaner_bytes_before": sum(p["cleaner"]["bytes_before"] for p in cleaned),
            "cleaner_bytes_after": sum(p["cleaner"]["bytes_after"] for p in cleaned)}


def audit_plot(report):
    """Bytes per message format for every partition (stacked), with the v0/v1 bytes the 4.x cleaner would
    write where it applies."""
    from . import plots
    rows = audit_rows(report)
    names = [r["partition"] for r in rows]
    fig, ax = plots._figure((7.2, 0.42 * len(names) + 2.0))
    left = [0.0] * len(rows)
    for col, colour in (("v0 bytes", plots.RED), ("v1 bytes", plots.AMBER), ("v2 bytes", "#1f77b4")):
        vals = [r[col] / 1024 for r in rows]
        if not any(vals):
            continue
        ax.barh(names, vals, left=left, color=colour, edgecolor="#333", linewidth=0.5, label=col.replace(" bytes", ""))
        left = [a + b for a, b in zip(left, vals)]
    after = [(r["v0/v1 bytes after the cleaner"] / 1024, r["partition"]) for r in rows
             if r["v0/v1 bytes after the cleaner"] is not None]
    if after:
        ax.scatter([a for a, _ in after], [n for _, n in after], marker="|", s=300, color="black", zorder=3,
                   label="v0/v1 after the 4.4 cleaner")
    ax.invert_yaxis()
    plots._axes(ax, title=f"the sample logs on disk (target Kafka {report.target})", xlabel="KiB on disk",
                ylabel="topic-partition")
    ax.grid(False, axis="y")
    ax.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=4, frameon=False)
    return fig


# ================================================================================================
# the notebook's panels
_VERDICT_SHOWN = {"kept": "✓ kept", "changed": "⚠ changed", "removed": "✗ removed"}


def seeds_caption(rows: list[dict], values: dict) -> str:
    """How many of the shown behaviours 4.4 kept, changed and removed."""
    n = {v: sum(r["verdict"] == v for r in rows) for v in _VERDICT_SHOWN}
    which = "every seed" if values["seed"] == "all" else f"seed {values['seed']}, {SEEDS[values['seed']]}"
    return (f"{which}: of {len(rows)} behaviours probed on both lines, Kafka 4.4 <b>kept {n['kept']}</b>, "
            f"<b>changed {n['changed']}</b> and <b>removed {n['removed']}</b>.")


def seeds_view(rows: list[dict]):
    from . import tables
    shown = [{**r, "verdict": _VERDICT_SHOWN[r["verdict"]]} for r in rows]
    return tables.table_html(shown, outcomes=("verdict",), max_cell_em=30)


def seeds_panel():
    """Each seed's behaviours on Kafka 3.9 and 4.4, with the verdict and the rows that explain it."""
    import ipywidgets as w

    from .widgets import Panel
    options = [("all seeds", "all")] + [(f"{s} · {t}", s) for s, t in SEEDS.items()]
    return Panel({"seed": w.Dropdown(options=options, value="all", description="seed", layout=w.Layout(width="420px"))},
                 lambda seed: seed_outcomes(None if seed == "all" else seed), seeds_view,
                 title="What Kafka 4.4 kept, changed and removed, seed by seed", caption=seeds_caption)


def explain_caption(d: dict, values: dict) -> str:
    g = d["client"]
    name = "Produce" if d["request"] == "produce" else "Fetch"
    rows = [r for r in d["4.4"]["rows"] if kafka_lines.value(r, "3.9") != kafka_lines.value(r, "4.4")]
    why = ", ".join(f"{r} ({kafka_lines.change(r).source})" for r in rows) or "none"
    return (f"{g['clients']}: {name} v{d['version']}. <b>Kafka 3.9:</b> {_esc(d['3.9']['outcome'])}; "
            f"<b>Kafka 4.4:</b> {_esc(d['4.4']['outcome'])}. Rows of kafka_lines on the 4.4 side: {_esc(why)}.")


def _esc(text: str) -> str:
    import html
    return html.escape(str(text))


def explain_view(d: dict):
    """The two traces side by side; a step that reads a row of kafka_lines names it."""
    from . import tables
    cols = []
    for line in LINES:
        steps = [{"#": s["#"], "rule": s["rule"], "decision": s["decision"],
                  "source": s["source"] + (f" · row {s['row']}" if s["row"] else "")} for s in d[line]["steps"]]
        t = tables.table_html(steps, title=f"Kafka {line}: {d[line]['outcome']}", outcomes=(), max_cell_em=16)
        cols.append(f"<div style='flex:1 1 0;min-width:0'>{t}</div>")
    return f"<div style='display:flex;gap:12px;align-items:flex-start'>{''.join(cols)}</div>"


def explain_panel():
    """One produce or fetch from a client generation, explained by a 3.9 and a 4.4 broker side by side."""
    import ipywidgets as w

    from .widgets import Panel
    controls = {"request": w.ToggleButtons(options=REQUESTS, value="fetch", description="request"),
                "client": w.Dropdown(options=GENERATIONS, value="0.10.0", description="client"),
                "message_format_version": w.Dropdown(options=FORMATS_39, value="3.0",
                                                     description="3.9 topic's message.format.version"),
                "codec": w.Dropdown(options=["none", "gzip", "snappy", "lz4"], value="gzip", description="codec")}
    return Panel(controls, explain_both, explain_view, title="One request, both lines", caption=explain_caption)


def upgrade_panel():
    """The shipped scenario ``kafka4-upgrade`` step by step (the views of notebook 06's scenario stepper)."""
    import ipywidgets as w

    from .upgrade import scenario_caption, scenario_view
    from .widgets import Panel
    return Panel({"step": w.IntSlider(value=6, min=1, max=upgrade_steps(), description="step")},
                 upgrade_step, scenario_view, title=f"Scenario {SCENARIO}", caption=scenario_caption)


def cleaner_caption(d: dict, values: dict) -> str:
    b, a = len(d["before"]), len(d["after"])
    unit = "compressed wrapper" if d["codec"] != "none" else "message"
    return (f"{d['entries_before']} v{d['magic']} {unit}(s), {b} bytes → <b>{d['batches_after']} v2 batch(es), "
            f"{a} bytes</b> ({a - b:+d} bytes, {(a - b) / b:+.0%}) after the 4.4 cleaner "
            f"({kafka_lines.change('cleaner.legacy_to_v2').source}).")


def cleaner_view(d: dict):
    from .byteview import byte_view_html
    side = [f"<div style='flex:1 1 600px;min-width:0'><b>{t}</b>{byte_view_html(x, max_bytes=400)}</div>"
            for t, x in (("before: on disk, written by 3.9", d["before"]), ("after: the 4.4 cleaner's rewrite", d["after"]))]
    return f"<div style='display:flex;gap:16px;align-items:flex-start;flex-wrap:wrap'>{''.join(side)}</div>"


def cleaner_panel():
    """A v0/v1 record set before and after the 4.4 cleaner rewrites it (KAFKA-13093), byte by byte."""
    import ipywidgets as w

    from .widgets import Panel
    return Panel({"magic": w.Dropdown(options=[("v1", 1), ("v0", 0)], value=1, description="format"),
                  "codec": w.Dropdown(options=["none", "gzip", "snappy", "lz4"], value="gzip", description="codec"),
                  "records": w.IntSlider(value=3, min=1, max=6, description="records")},
                 cleaner_rewrite, cleaner_view, title="The 4.4 cleaner meets an old entry", caption=cleaner_caption)


def _audit_compute(target: str, compacted: str):
    topics = sorted({p.topic for p in sample_audit().partitions})
    chosen = tuple(topics) if compacted == "every topic" else () if compacted == "none" else (compacted,)
    return sample_audit(target, chosen)


def audit_caption(report, values: dict) -> str:
    f = audit_finding(report)
    kept = sum(p.legacy.bytes for p in report.partitions if p.compacted and not p.cleaner()["applies"])
    if f["cleaner_bytes_before"]:
        cleaned = (f" The cleaner would rewrite {tables_size(f['cleaner_bytes_before'])} of v0/v1 entries as "
                   f"{tables_size(f['cleaner_bytes_after'])} of v2.")
    elif kept:
        row = kafka_lines.change("cleaner.legacy_to_v2")
        cleaned = (f" The Kafka {report.target} cleaner keeps {tables_size(kept)} of v0/v1 entries as they are "
                   f"(they are rewritten from Kafka {row.release} on: {row.source}).")
    else:
        cleaned = " No compacted topic holds v0/v1 data: only retention removes it."
    refused = ", ".join(f["clients_refused"]) or "none"
    return (f"<b>{f['legacy_share']:.0%} of the bytes</b> ({tables_size(f['legacy_bytes'])} of "
            f"{tables_size(f['bytes'])}) are v0/v1, in {f['legacy_partitions']} of {f['partitions']} partitions. "
            f"Client generations a Kafka {report.target} broker refuses: {refused}.{cleaned}")


def tables_size(n: int) -> str:
    from .tables import size
    return size(n)


def audit_view(report):
    """The plot, then the table for people (columns that are zero in every partition left out)."""
    from . import tables
    rows = audit_rows(report)
    empty = [c for c in ("v0 bytes", "no timestamp") if not any(r[c] for r in rows)]
    shown = [{k: ("✓ " + v if k == "what becomes of the v0/v1 data" and v == "no v0/v1 data" else v)
              for k, v in r.items() if k not in empty} for r in rows]
    units = {c: "bytes" for c in ("v0 bytes", "v1 bytes", "v2 bytes", "v0/v1 bytes after the cleaner")}
    return audit_plot(report), tables.table_html(shown, units=units, outcomes=("what becomes of the v0/v1 data",),
                                                 title="kafkafmt audit of the sample logs")


def audit_panel():
    """The audit of the sample logs for a target line, with a topic taken as compacted (what the cleaner does)."""
    import ipywidgets as w

    from .widgets import Panel
    topics = sorted({p.topic for p in sample_audit().partitions})
    return Panel({"target": w.ToggleButtons(options=list(LINES), value="4.4", description="target"),
                  "compacted": w.Dropdown(options=["none", *topics, "every topic"], value="none",
                                          description="compacted topic")},
                 _audit_compute, audit_view, title="kafkafmt audit: the sample logs", caption=audit_caption)


__all__ = ["LINES", "SEEDS", "PROBES", "Probe", "line_rows", "seed_outcomes", "verdict", "verdict_counts", "mixed_log",
           "rewrite", "cleaner_rewrite", "explain_both", "REQUESTS", "GENERATIONS", "upgrade_step", "upgrade_steps",
           "SCENARIO", "sample_logs", "sample_now_ms", "sample_audit", "audit_rows", "audit_finding", "audit_plot",
           "legacy_deleted_at",
           "seeds_panel", "explain_panel", "upgrade_panel", "cleaner_panel", "audit_panel"]


def legacy_deleted_at(report) -> int | None:
    """When retention by time has deleted every segment holding v0/v1 data (ms; None: some never are)."""
    times = [p.retention()["legacy_deleted_at_ms"] for p in report.partitions if p.legacy.batches]
    return None if not times or None in times else max(times)
