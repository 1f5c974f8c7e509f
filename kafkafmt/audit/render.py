"""An :class:`~kafkafmt.audit.report.AuditReport` as people and programs read it: a text table, JSON
Lines (one object per topic-partition) and a self-contained HTML page with a plot (inline SVG: no
script, no network, no file beside it).  All three only format ``AuditReport.to_dict()``."""
from __future__ import annotations

import datetime
import html
import io
import json

from ..errors import UnsupportedOperationError

__all__ = ["render_table", "render_json", "render_html", "FORMATS"]

FORMATS = ("table", "json", "html")


def _when(ms: int | None) -> str:
    if ms is None:
        return "never"
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%SZ")


def _magic_cell(p: dict, m: str) -> str:
    c = p["magics"].get(m)
    return "-" if c is None else f"{c['batches']}/{c['records']}/{c['bytes']}"


def _partition_rows(d: dict) -> list[list[str]]:
    rows = []
    for p in d["partitions"]:
        cl = p["cleaner"]
        cleaner = (f"{cl['batches_before']}/{cl['records']}/{cl['bytes_before']} -> "
                   f"{cl['batches_after']}/{cl['records_after']}/{cl['bytes_after']}" if cl["batches_before"] else "-")
        rows.append([f"{p['topic']}-{p['partition']}", str(p["segments"]), _magic_cell(p, "v0"), _magic_cell(p, "v1"),
                     _magic_cell(p, "v2"), str(p["records_without_timestamp"]), "yes" if p["compacted"] else "no",
                     _when(p["retention"]["legacy_deleted_at_ms"]) if p["legacy"]["batches"] else "-", cleaner])
    return rows


_HEAD = ["partition", "segments", "v0 batches/records/bytes", "v1 b/r/B", "v2 b/r/B", "no timestamp", "compacted",
         "v0/v1 deleted by retention", "v0/v1 b/r/B -> after the cleaner"]


def _grid(head: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    line = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    return "\n".join([line(head), line(["-" * w for w in widths]), *map(line, rows)])


def render_table(report) -> str:
    """The report as text: one line per partition, then the client generations."""
    d = report.to_dict()
    out = [f"kafkafmt audit: {', '.join(d['inputs'])} for Kafka {d['target']} at {_when(d['now_ms'])}", "",
           _grid(_HEAD, _partition_rows(d)), ""]
    for p in d["partitions"]:
        if p["legacy"]["batches"]:
            out.append(f"{p['topic']}-{p['partition']}: {p['legacy']['batches']} v0/v1 batches "
                       f"(offsets {p['legacy']['first_offset']}..{p['legacy']['last_offset']}): {p['legacy_status']}")
    refused = [c for c in d["clients"] if not (c["can_produce"] and c["can_fetch"])]
    out.append("")
    out.append(f"clients a {d['target']} broker no longer answers: " +
               (", ".join(f"{c['name']} ({c['refused']})" for c in refused) if refused else "none"))
    t = d["totals"]
    out.append(f"{t['partitions']} partitions, {t['segments']} segments; {t['legacy_partitions']} hold v0/v1 data "
               f"({t['compacted_legacy_partitions']} of them compacted: they never age out)")
    return "\n".join(out) + "\n"


def render_json(report) -> str:
    """JSON Lines: one object per topic-partition (each names the target line and the clock)."""
    d = report.to_dict()
    return "".join(json.dumps({"now_ms": d["now_ms"], **p}, sort_keys=True) + "\n" for p in d["partitions"])


def _plot_svg(d: dict) -> str:
    """Bytes per message format for each partition, and the v0/v1 bytes after the 4.x cleaner's rewrite."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - matplotlib is in the readers extra
        raise UnsupportedOperationError("--format html needs matplotlib (pip install 'kafkafmt[readers]')") from None
    names = [f"{p['topic']}-{p['partition']}" for p in d["partitions"]]
    with plt.rc_context({"svg.hashsalt": "kafkafmt-audit", "svg.fonttype": "none"}):
        fig, ax = plt.subplots(figsize=(8, 0.45 * len(names) + 2.2))
        left = [0.0] * len(names)
        for m, colour in (("v0", "#c0392b"), ("v1", "#e67e22"), ("v2", "#2e86c1")):
            vals = [p["magics"].get(m, {}).get("bytes", 0) for p in d["partitions"]]
            ax.barh(names, vals, left=left, color=colour, label=f"{m} bytes")
            left = [a + b for a, b in zip(left, vals)]
        after = [p["cleaner"]["bytes_after"] if p["cleaner"]["applies"] else 0 for p in d["partitions"]]
        ax.scatter(after, names, marker="|", s=200, color="black", label="v0/v1 bytes after the cleaner",
                   zorder=3)
        ax.invert_yaxis()
        ax.set_xlabel("bytes on disk")
        ax.set_title(f"What the log directories hold (target Kafka {d['target']})")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2, fontsize="small", frameon=False)
        fig.tight_layout()
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": "kafkafmt audit"})
        plt.close(fig)
    svg = buf.getvalue()
    return svg[svg.index("<svg"):]


def _html_table(head: list[str], rows: list[list[str]]) -> str:
    th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    trs = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{trs}</tbody></table>"


_CSS = ("body{font-family:sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}"
        "td,th{border:1px solid #ccc;padding:.25em .5em;text-align:left;font-size:.9em}th{background:#f3f3f3}"
        ".refused{color:#c0392b}")


def render_html(report) -> str:
    """One HTML page, nothing external: the partitions, the plot (inline SVG), the clients and the rows."""
    d = report.to_dict()
    status = [[f"{p['topic']}-{p['partition']}", p["legacy_status"], p["config_source"],
               ", ".join(p["clients_refused"]) or "-"] for p in d["partitions"]]
    clients = [[c["name"], c["clients"], f"v{c['produce_max']}", f"v{c['fetch_max']}",
                "yes" if c["can_produce"] else "no", "yes" if c["can_fetch"] else "no", c["refused"] or c["reads"]]
               for c in d["clients"]]
    rows = [[r["key"], r["what"], str(r["3.9"]), str(r["4.4"]), r["source"]] for r in d["rows"]]
    title = f"kafkafmt audit for Kafka {d['target']}"
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">', f"<title>{html.escape(title)}</title>",
        f"<style>{_CSS}</style></head><body>", f"<h1>{html.escape(title)}</h1>",
        f"<p>{html.escape(', '.join(d['inputs']))} at {html.escape(_when(d['now_ms']))}</p>",
        '<div class="plot">', _plot_svg(d), "</div>",
        "<h2>Partitions</h2>", _html_table(_HEAD, _partition_rows(d)),
        "<h2>What becomes of the v0/v1 data</h2>",
        _html_table(["partition", "v0/v1 data", "topic configuration from", "clients refused"], status),
        "<h2>Client generations</h2>",
        _html_table(["generation", "clients", "newest Produce", "newest Fetch", "can produce", "can fetch",
                     "why not / what it reads"], clients),
        "<h2>The Kafka line's rules applied</h2>", _html_table(["row", "what", "3.9", "4.4", "source"], rows),
        "</body></html>", ""])
