"""Notebook 10 (Kafka 4): for each seed, what the 4.4 line kept, changed or removed, shown on bytes and
scenarios; and the audit of the sample logs.  Panels, tables and plots only: what they show is computed by
:mod:`kafkafmt.probes` (the probes, their typed outcomes and verdicts), :mod:`kafkafmt.kafka_lines` (the
rows), :mod:`kafkafmt.scenarios` and :mod:`kafkafmt.audit`.

* :func:`line_rows` – the rows that tell 3.9 from 4.4, as people read them;
* :func:`seed_outcomes` – each seed's behaviours probed on both lines (:func:`kafkafmt.probes.seed_outcomes`),
  as table rows;
* :func:`explain_both` – one produce or fetch explained on both lines, step by step, side by side
  (:func:`kafkafmt.probes.explain_on_lines`);
* :func:`upgrade_step` – the shipped scenario ``kafka4-upgrade`` (:mod:`kafkafmt.scenarios`) step by step;
* :func:`cleaner_rewrite` – the bytes of a v0/v1 entry before and after the 4.4 cleaner's rewrite;
* :func:`sample_audit` / :func:`audit_rows` – :func:`kafkafmt.audit.audit_log_dirs` over the sample
  logs (``kafkafmt gen``'s shipped ``default`` workload, the logs notebooks 04/05 read).

What a live broker showed and kafkafmt cannot compute (how each real client fails) is measured in
``tests/conformance/test_kafka44_broker.py``; the notebook cites it.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from .. import kafka_lines
from ..line_verdicts import Verdict
from ..probes import PROBES, REQUESTS, SEEDS, Probe, cleaner_rewrite, explain_on_lines, mixed_log, rewrite
from ..probes import seed_outcomes as probe_outcomes
from ..probes.lines import NOW_MS, OLD_FORMAT  # noqa: F401 (the notebook's clock and older format)
from ..probes.requests import GENERATIONS

#: the lines notebook 10 compares
LINES = kafka_lines.COMPARED_LINES
FORMATS_39 = ("0.9.0", "0.10.0", "3.0")


# ================================================================================================
# the rows
def line_rows(area: str | None = None) -> list[dict]:
    """The rows of :mod:`kafkafmt.kafka_lines` (or one ``area``) that tell 3.9 from 4.4: what differs, the
    value on each line, the KIP/JIRA and the release."""
    older, newer = LINES
    return [{"area": c.area, "what": c.what, older: _shown(c.shown(older)), newer: _shown(c.shown(newer)),
             "source": c.source, "release": c.release, "key": c.key}
            for c in kafka_lines.rows_between(older, newer) if area is None or c.area == area]


def _shown(v) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if v == kafka_lines.INT64_MAX:
        return "Long.MAX_VALUE"
    return str(v)


# ================================================================================================
# the probes, as table rows
def seed_outcomes(seed: str | None = None) -> list[dict]:
    """Every probe of ``seed`` (default: all seeds) with its outcome on each line, the verdict and the rows
    that explain a difference, as table rows (:func:`kafkafmt.probes.seed_outcomes`)."""
    older, newer = LINES
    return [{"seed": r["seed"], "behaviour": r["behaviour"], f"Kafka {older}": r["older"].text,
             f"Kafka {newer}": r["newer"].text, "verdict": r["verdict"].value,
             "why (kafka_lines)": "; ".join(f"{c.key} ({c.source})" for c in r["rows"]) or "-"}
            for r in probe_outcomes(seed, older, newer)]


def verdict_counts() -> dict[str, dict[str, int]]:
    """Per seed: how many probed behaviours 4.4 kept, changed and removed."""
    out = {s: {v.value: 0 for v in (Verdict.KEPT, Verdict.CHANGED, Verdict.REMOVED)} for s in SEEDS}
    for r in seed_outcomes():
        out[r["seed"]][r["verdict"]] = out[r["seed"]].get(r["verdict"], 0) + 1
    return out


def explain_both(request: str = "fetch", client: str = "0.10.0", message_format_version: str = OLD_FORMAT,
                 codec: str = "gzip") -> dict:
    """One ``request`` from a ``client`` generation explained by a 3.9 broker (IBP 2.8, the topic at
    ``message_format_version``) and a 4.4 broker (:func:`kafkafmt.probes.explain_on_lines`)."""
    return explain_on_lines(request, client, message_format_version, codec, LINES)


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
    fig, ax = plots.new_figure((7.2, 0.42 * len(names) + 2.0))
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
    plots.label_axes(ax, title=f"the sample logs on disk (target Kafka {report.target})", xlabel="KiB on disk",
                ylabel="topic-partition")
    ax.grid(False, axis="y")
    ax.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=4, frameon=False)
    return fig


# ================================================================================================
# the notebook's panels
_VERDICT_SHOWN = {Verdict.KEPT.value: "✓ kept", Verdict.CHANGED.value: "⚠ changed", Verdict.REMOVED.value: "✗ removed",
                  Verdict.ADDED.value: "+ added"}


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


__all__ = ["LINES", "SEEDS", "PROBES", "Probe", "line_rows", "seed_outcomes", "verdict_counts", "mixed_log",
           "rewrite", "cleaner_rewrite", "explain_both", "REQUESTS", "GENERATIONS", "upgrade_step", "upgrade_steps",
           "SCENARIO", "sample_logs", "sample_now_ms", "sample_audit", "audit_rows", "audit_finding", "audit_plot",
           "legacy_deleted_at",
           "seeds_panel", "explain_panel", "upgrade_panel", "cleaner_panel", "audit_panel"]


def legacy_deleted_at(report) -> int | None:
    """When retention by time has deleted every segment holding v0/v1 data (ms; None: some never are)."""
    times = [p.retention()["legacy_deleted_at_ms"] for p in report.partitions if p.legacy.batches]
    return None if not times or None in times else max(times)
