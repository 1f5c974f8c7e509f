"""The record of the last live run on the pages: which real release confirmed each modelled outcome.

The labels come from :mod:`kafkafmt.scenarios.checked` (``checked on 0.10.2.2``, or what the release did
instead, with its bytes); this module draws them: a grid of the shipped scenarios' steps coloured by what
the releases did (:func:`steps_figure`), a scenario's steps as a table (:func:`steps_html`), one step's
comparisons (:func:`step_html`), the checks per release (:func:`releases_figure`) and, where a seed's text
and the release disagree, the seed's sentence beside the release's bytes (:func:`seed_vs_release_html`).
The notebooks read the record shipped with the package (:data:`kafkafmt.scenarios.checked.RECORD`, written by
``make history-record``), so they run from any directory, a copy of the notebooks included.
"""
from __future__ import annotations

import html
from functools import lru_cache

from ..errors import KafkaFmtError
from ..scenarios.checked import LiveRecord, load_record, seed_vs_release
from . import plots, tables

__all__ = ["record", "model_steps", "steps_figure", "steps_html", "scenarios_html", "step_html", "releases_figure",
           "releases_html", "seed_vs_release_html", "mark", "show", "shipped", "STATE_COLOURS"]

#: a verdict's state → its colour on a figure
STATE_COLOURS = {"checked": plots.GREEN, "differs": plots.RED, "not run": "#d0d0d0"}


def record(path=None) -> LiveRecord:
    """The record at ``path``, by default the one shipped with kafkafmt
    (:func:`kafkafmt.scenarios.checked.load_record`)."""
    return load_record(path)


@lru_cache(maxsize=32)
def model_steps(name: str) -> tuple[str, ...]:
    """The step names of the shipped scenario ``name``, as the model runs it."""
    from ..scenarios import load_scenario
    return tuple(s.name for s in load_scenario(name).steps)


def shipped() -> list[str]:
    """The names of the shipped scenarios (``kafkafmt/scenarios/data``), each a row of :func:`steps_figure`."""
    from ..scenarios import shipped_scenarios
    return list(shipped_scenarios())


def mark(v) -> str:
    """A verdict as a table cell: ``✓ checked on …``, ``✗ … did otherwise …`` or the reason it was not run."""
    return ("✓ " if v.checked else "✗ " if v.state == "differs" else "") + v.label


def steps_figure(rec: LiveRecord, names):
    """One row per scenario, one cell per step: green where the releases did what the model says, red where a
    release did otherwise, grey where the step was not run live; the releases the brokers ran are written in."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch, Rectangle
    names = list(names)
    if not names:
        raise ValueError("no scenario to draw")
    width = max(len(model_steps(n)) for n in names)
    fig, ax = plt.subplots(figsize=(7.6, 0.62 * len(names) + 1.5), layout="constrained", dpi=plots.DISPLAY_DPI)
    plt.close(fig)
    for y, name in enumerate(names):
        for x in range(1, len(model_steps(name)) + 1):
            v = rec.step(name, x)
            ax.add_patch(Rectangle((x - 0.45, y - 0.4), 0.9, 0.8, color=STATE_COLOURS[v.state], ec="white"))
            ax.text(x, y, str(x), ha="center", va="center", fontsize=7,
                    color="white" if v.state != "not run" else "#333")
    ax.set_xlim(0.4, width + 0.6)
    ax.set_ylim(len(names) - 0.5, -0.5)
    ax.set_yticks(range(len(names)), names, fontsize="small")
    ax.set_xticks(range(1, width + 1), [str(i) for i in range(1, width + 1)], fontsize="x-small")
    ax.set_xlabel("step of the scenario (number)")
    ax.set_ylabel("shipped scenario (name)")
    ax.set_title(f"The shipped scenarios on real releases (record of {rec.recorded})")
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    fig.legend(handles=[Patch(color=STATE_COLOURS["checked"], label="the releases did what the model says"),
                        Patch(color=STATE_COLOURS["differs"], label="a release did otherwise"),
                        Patch(color=STATE_COLOURS["not run"], label="not run live")],
               loc="outside lower center", ncols=3, fontsize="small")
    return fig


def steps_html(rec: LiveRecord, name: str) -> str:
    """Every step of scenario ``name``: the releases its brokers ran and the label."""
    return tables.table_html(rec.steps_table(name, model_steps(name)), outcomes=("live",), max_cell_em=44,
                             labels={"brokers": "brokers ran", "agree": "comparisons agreeing", "live": "live run"},
                             title=f"{name}, live")


def scenarios_html(rec: LiveRecord, names) -> str:
    """:func:`steps_figure` of the scenarios ``names``, then each one's :func:`steps_html`."""
    names = list(names)
    return plots.figure_html(steps_figure(rec, names)) + "".join(steps_html(rec, n) for n in names)


def step_html(rec: LiveRecord, name: str, step: int) -> str:
    """One step's live comparisons: what was compared, the model's side, the release's, and whether they agree."""
    v = rec.step(name, step)
    head = (f"<p><b>On real releases:</b> <span style='color:{STATE_COLOURS[v.state] if v.state != 'not run' else '#555'}'>"
            f"{html.escape(mark(v))}</span></p>")
    if not v.rows:
        return head
    rows = [{"compared": r["what"], "model": r["model"], "release": r["real"],
             "verdict": ("⚠ the seed's proposal: " + r["proposal"]) if r.get("proposal") else
             "✓ agrees" if r["agree"] else "✗ differs"} for r in v.rows]
    return head + tables.table_html(rows, outcomes=("verdict",), max_cell_em=34,
                                    labels={"verdict": "release vs model"})


def releases_figure(rec: LiveRecord):
    """Per release, the live checks that agreed with the model and those that did not (stacked bars)."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch
    summary = rec.release_summary()
    fig, ax = plt.subplots(figsize=(7.2, 3.6), layout="constrained", dpi=plots.DISPLAY_DPI)
    plt.close(fig)
    labels = [s["release"] for s in summary]
    agree = [s["agree"] for s in summary]
    differ = [len(s["differ"]) for s in summary]
    ax.bar(labels, agree, color=plots.GREEN, edgecolor="#333", linewidth=0.6)
    bars = ax.bar(labels, differ, bottom=agree, color=plots.RED, edgecolor="#333", linewidth=0.6)
    ax.bar_label(bars, labels=[f"{a} of {a + d}" for a, d in zip(agree, differ)], padding=2, fontsize="small")
    ax.margins(y=0.15)
    ax.set_xlabel("Kafka release run live")
    ax.set_ylabel("checks (count)")
    ax.set_title(f"Produce, fetch and client checks per release (record of {rec.recorded})")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(handles=[Patch(color=plots.GREEN, label="agrees with the model"),
                       Patch(color=plots.RED, label="the release did otherwise")], fontsize="small", loc="lower right")
    return fig


def releases_html(rec: LiveRecord) -> str:
    """The same per release as a table, naming the checks that differ."""
    rows = [{"release": s["release"], "checks": s["checks"], "agree": s["agree"],
             "differ": ", ".join(s["differ"]) or "✓ none"} for s in rec.release_summary()]
    return tables.table_html(rows, labels={"agree": "agree with the model", "differ": "the release did otherwise"},
                             outcomes=("differ",))


def show(html_text: str):
    """An HTML fragment of this module as a cell's output."""
    from IPython.display import HTML
    return HTML(html_text)


def seed_vs_release_html(rec: LiveRecord, names, *, checks: dict | None = None, max_bytes: int = 160) -> str:
    """Where the seed's text and Kafka differ in the scenarios ``names`` (one name or several): the seed's
    sentence, what Kafka does, what the release did in the live run and the bytes it served or stored
    (annotated, field by field); ``checks``: scenario name → step → (release, check) of a release check that
    sent the step's request (:func:`kafkafmt.scenarios.checked.seed_vs_release`)."""
    from .byteview import byte_view_html
    names = [names] if isinstance(names, str) else list(names)
    out = []
    for name, d in ((n, d) for n in names for d in seed_vs_release(rec, n, (checks or {}).get(n))):
        seed = "".join(f"<blockquote style='margin:4px 0 4px 12px;color:#444'>{html.escape(q)}</blockquote>"
                       for q in d["seed"])
        colour = {"checked": "#1b5e20", "differs": "#b71c1c"}.get(d["state"], "#555")
        part = (f"<div class='kf-seed-vs-release' style='margin:10px 0'><p><b>{html.escape(name)}, step {d['step']}. "
                f"{html.escape(d['name'])}</b></p>{seed}<p><i>Kafka:</i> {html.escape(d['kafka'])}</p>"
                f"<p><i>The release, live:</i> <span style='color:{colour}'>{html.escape(d['release'])}</span></p>")
        if d["did"]:
            part += "<ul style='margin:2px 0'>" + "".join(
                f"<li>{html.escape(what)}: <b>{html.escape(real)}</b></li>" for what, real in d["did"]) + "</ul>"
        if d.get("check"):
            part += f"<p><i>The same request, live:</i> {html.escape(d['check'])}</p>"
        for what, hex_text in d["bytes"]:
            data = bytes.fromhex(hex_text)
            try:
                view = byte_view_html(data, max_bytes=max_bytes)
            except KafkaFmtError:  # bytes kafkafmt cannot walk: shown as they are
                view = f"<pre style='white-space:pre-wrap'>{data[:max_bytes].hex(' ')}</pre>"
            part += (f"<p style='margin:6px 0 2px'>{html.escape(what)}: {len(data)} bytes"
                     f"{f', the first {max_bytes} shown' if len(data) > max_bytes else ''}</p>" + view)
        out.append(part + "</div>")
    return "".join(out) or f"<p>{html.escape(', '.join(names))}: no step where the seed's text and Kafka differ.</p>"
