"""Notebook 11: Kafka from 0.9 to 4.4, the whole arc, each difference a row of :mod:`kafkafmt.kafka_lines`
and each release the rig ran live labelled with what it confirmed (:mod:`kafkafmt.scenarios.checked`).

The arc is every release that made a change (each row's ``since``) and every line kafkafmt models
(:data:`~kafkafmt.kafka_lines.KAFKA_LINES`), oldest first; per release: the rows it brought (area, what,
KIP or JIRA) and, where the live record holds a release of that line, how many of its produce, fetch and
client checks agreed with the model.
"""
from __future__ import annotations

import re
from collections import Counter

from .. import kafka_lines as _lines
from . import plots, tables

__all__ = ["arc_releases", "AREAS", "areas", "rows_table", "line_summary", "live_release", "arc_figure", "checks_figure",
           "check_kinds", "release_view", "release_caption", "arc_panel", "arc_finding"]

#: the areas of the rows, in the order a request meets them (an area not named here comes after them)
AREAS = ("protocol", "producer", "produce", "fetch", "consumer", "log", "topic config", "broker config", "cleaner",
         "dump", "codec", "metrics")


def areas() -> list[str]:
    """The areas of :data:`~kafkafmt.kafka_lines.CHANGES` in :data:`AREAS` order, any other after them."""
    found = {c.area for c in _lines.CHANGES}
    return [a for a in AREAS if a in found] + sorted(found - set(AREAS))
#: a check's kind: the first part of its name (``produce/raw/magic1-gzip`` → ``produce``); a ``dump/`` check
#: compares the release's own DumpLogSegments with ``kafkafmt dump`` in that release's format (row ``dump.format``)
KIND_WORDS = {"produce": "raw produce", "fetch": "raw fetch", "client-produce": "client produce",
              "client-consume": "client consume", "dump": "dump text (its own format)"}


def arc_releases() -> list[str]:
    """Every release of the arc, oldest first: each row's ``since`` and each line kafkafmt models."""
    return sorted({c.since for c in _lines.CHANGES} | set(_lines.KAFKA_LINES), key=_lines.order)


def rows_table() -> list[dict]:
    """Every row of :mod:`kafkafmt.kafka_lines`, oldest release first: what changed, from what to what, the KIP
    or JIRA and where it can be read."""
    order = areas()
    rows = sorted(_lines.CHANGES, key=lambda c: (_lines.order(c.since), order.index(c.area)))
    return [{"release": c.release, "area": c.area, "what": c.what, "before": _text(c.before), "after": _text(c.after),
             "KIP / JIRA": c.source} for c in rows]


def _text(v) -> str:
    if isinstance(v, tuple) and len(v) == 4:  # a topic key's ConfigDef spec
        return f"{v[0]}, default {v[1]}"
    if v is None:
        return "—"
    return str(v)


def _sources(text: str) -> list[str]:
    """The KIPs and JIRAs a row's source names (``KIP-98 (KAFKA-4816)`` → ``KIP-98``, ``KAFKA-4816``)."""
    return re.findall(r"KIP-\d+|KAFKA-\d+", text)


def _source_order(s: str) -> tuple:
    kind, n = s.split("-")
    return kind, int(n)


def _headline(what: str) -> str:
    """A row's ``what`` up to its first explanation (``: …`` or `` (…``)."""
    cut = min((i for i in (what.find(": "), what.find(" (")) if i > 0), default=len(what))
    return what[:cut]


def live_release(rec, line: str) -> str | None:
    """The release of ``line`` the live record holds (``0.10.1`` → ``0.10.1.1``), or None."""
    for r in (rec.releases if rec is not None else ()):
        if _lines.check_line(r) == line:
            return r
    return None


def check_kinds(rec, release: str) -> list[dict]:
    """The record's checks of ``release`` by kind: how many ran and how many agreed with the model."""
    counts, agree = Counter(), Counter()
    for c in rec.checks(release):
        kind = c["check"].split("/", 1)[0]
        counts[kind] += 1
        agree[kind] += bool(c["agree"])
    return [{"kind": KIND_WORDS.get(k, k), "checks": n, "agree": agree[k]} for k, n in counts.items()]


def line_summary(rec=None) -> list[dict]:
    """One row per release of the arc: how many differences it brought, their KIPs / JIRAs, what they are, and
    the release run live for that line with its checks agreeing."""
    out = []
    for rel in arc_releases():
        rows = [c for c in _lines.CHANGES if c.since == rel]
        sources = sorted({s for c in rows for s in _sources(c.source)}, key=_source_order)
        live = live_release(rec, rel) if rel in _lines.KAFKA_LINES else None
        if live:
            kinds = [k for k in check_kinds(rec, live) if k["kind"] != KIND_WORDS["dump"]]
            n, a = sum(k["checks"] for k in kinds), sum(k["agree"] for k in kinds)
            shown = f"{'✓' if a == n else '✗'} {live}: {a} of {n} checks agree"
        else:
            shown = "—"
        out.append({"release": rel, "line": "yes" if rel in _lines.KAFKA_LINES else "—", "changes": len(rows),
                    "KIP / JIRA": ", ".join(sources) or "—",
                    "what changed": "; ".join(dict.fromkeys(_headline(c.what) for c in rows)) or "—",
                    "run live": shown})
    return out


def arc_figure(rec=None):
    """The arc at a glance: one column per release, one row per area, a dot per difference (its size the
    number of rows); releases run live are marked on the axis."""
    import matplotlib.pyplot as plt
    releases = arc_releases()
    counts = Counter((c.since, c.area) for c in _lines.CHANGES)
    fig, ax = plt.subplots(figsize=(8.6, 4.2), layout="constrained", dpi=plots.DISPLAY_DPI)
    plt.close(fig)
    rows = areas()
    for (since, area), n in counts.items():
        x, y = releases.index(since), rows.index(area)
        ax.scatter([x], [y], s=40 + 45 * n, color="C0", alpha=0.75, edgecolor="#333", linewidth=0.5, zorder=3)
        if n > 1:
            ax.text(x, y, str(n), ha="center", va="center", fontsize=7, color="white", zorder=4)
    live = [i for i, r in enumerate(releases) if rec is not None and r in _lines.KAFKA_LINES and live_release(rec, r)]
    for i in live:
        ax.axvspan(i - 0.45, i + 0.45, color=plots.GREEN, alpha=0.10, zorder=0)
    ax.set_xticks(range(len(releases)), releases, rotation=45, fontsize="small")
    ax.set_yticks(range(len(rows)), rows, fontsize="small")
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlabel("Kafka release that made the change (shaded: a release of its line run live)")
    ax.set_ylabel("area of the rule (name)")
    ax.set_title(f"{len(_lines.CHANGES)} differences between Kafka releases, 0.9 to 4.4 (dot size: rows)")
    ax.grid(True, alpha=0.25)
    return fig


def checks_figure(rec):
    """Which release confirmed what: releases run live (columns) × kind of check (rows), each cell the checks
    agreeing with the model out of those run."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import LinearSegmentedColormap
    releases = rec.releases
    kinds = list(KIND_WORDS.values())
    fig, ax = plt.subplots(figsize=(7.6, 3.4), layout="constrained", dpi=plots.DISPLAY_DPI)
    plt.close(fig)
    cmap = LinearSegmentedColormap.from_list("agree", [plots.RED, "#fff1d6", plots.GREEN])
    for x, rel in enumerate(releases):
        by_kind = {k["kind"]: k for k in check_kinds(rec, rel)}
        for y, kind in enumerate(kinds):
            k = by_kind.get(kind)
            if k is None:
                ax.add_patch(plt.Rectangle((x - 0.45, y - 0.4), 0.9, 0.8, color="#eeeeee"))
                continue
            share = k["agree"] / k["checks"]
            ax.add_patch(plt.Rectangle((x - 0.45, y - 0.4), 0.9, 0.8, color=cmap(share)))
            ax.text(x, y, f"{k['agree']}/{k['checks']}", ha="center", va="center", fontsize=8,
                    color="white" if share in (0.0, 1.0) else "#333")
    ax.set_xlim(-0.5, len(releases) - 0.5)
    ax.set_ylim(len(kinds) - 0.5, -0.5)
    ax.set_xticks(range(len(releases)), releases, fontsize="small")
    ax.set_yticks(range(len(kinds)), kinds, fontsize="small")
    ax.set_xlabel("Kafka release run live (broker and clients)")
    ax.set_ylabel("kind of check (name)")
    ax.set_title(f"Checks agreeing with the model / checks run (record of {rec.recorded})")
    return fig


def arc_finding(rec) -> dict:
    """The headline numbers: differences, releases, KIPs / JIRAs; releases and checks run live and agreeing
    (``DumpLogSegments`` text apart: each release formats it its own way)."""
    summary = rec.release_summary()
    return {"rows": len(_lines.CHANGES), "releases": len(arc_releases()),
            "sources": len({s for c in _lines.CHANGES for s in _sources(c.source)}),
            "live_releases": len(summary), "checks": sum(s["checks"] for s in summary),
            "agree": sum(s["agree"] for s in summary), "differ": [f"{s['release']} {d}" for s in summary
                                                                  for d in s["differ"]]}


def release_view(d: dict):
    """A release of the arc: the rows it brought, and the checks of its line's release run live."""
    head = tables.table_html(d["rows"], title=f"what {d['release']} changed ({len(d['rows'])} rows)",
                             max_cell_em=40) if d["rows"] else f"<p>{d['release']}: no difference kafkafmt models.</p>"
    if not d["live"]:
        return (head, f"<p>No release of {d['release']} was run live.</p>")
    return (head, tables.table_html(d["checks"], outcomes=("live run",), max_cell_em=44,
                                    title=f"{d['live']} run live: every check"))


def release_caption(d: dict, values: dict) -> str:
    if not d["live"]:
        return f"{d['release']}: <b>{len(d['rows'])} differences</b>; not run live."
    checks = [c for c in d["checks"] if not c["check"].startswith("dump/")]
    agree = sum(c["live run"].startswith("✓") for c in checks)
    return (f"{d['release']}: <b>{len(d['rows'])} differences</b>; {d['live']} run live, "
            f"<b>{agree} of {len(checks)} produce, fetch and client checks agree</b> with the model "
            "(DumpLogSegments' text apart: each release prints its own way).")


def _release_data(release: str, rec=None) -> dict:
    from .live_record import mark
    rows = [{"area": c.area, "what": c.what, "before": _text(c.before), "after": _text(c.after),
             "KIP / JIRA": c.source} for c in _lines.CHANGES if c.since == release]
    live = live_release(rec, release) if release in _lines.KAFKA_LINES else None
    checks = []
    if live:
        for c in rec.checks(live):
            checks.append({"check": c["check"], "request": c["request"], "model's rule": c.get("model_rule", ""),
                           "live run": mark(rec.release_check(live, c["check"]))})
    return {"release": release, "rows": rows, "live": live, "checks": checks}


def arc_panel(rec=None):
    """Pick a release of the arc: what it changed, and every check of its line's release run live."""
    from functools import partial

    import ipywidgets as w

    from .widgets import Panel
    releases = arc_releases()
    default = next((r for r in releases if live_release(rec, r) and r in _lines.KAFKA_LINES), releases[0])
    return Panel({"release": w.Dropdown(options=releases, value=default, description="release")},
                 partial(_release_data, rec=rec), release_view, title="One release of the arc",
                 caption=release_caption)
