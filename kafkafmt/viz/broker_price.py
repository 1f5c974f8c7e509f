"""Notebook 05 (seeds 000 and 004): what the broker pays, in CPU and memory, for the consumers still on an old
format, measured on real brokers and predicted for a reader's own mix.

Two sources, never mixed up:

* **measured**: the tables ``make bench-conversion --docs`` writes (``docs/_data/bench/conversion_*.json``, each
  with the run's record: command, machine, load, date): broker CPU per GB served to a consumer of each fetch
  generation on each release, the heap of one large fetch eager (1.1.1) against lazy (2.8.2, KIP-283), and the
  produce CPU per producer generation that shows KIP-31's saving.  :func:`measured` reads one of them.
* **predicted**: :func:`mix_costs` turns a consumer mix (the shares of 0.9, 0.10 and 0.11+ consumers), a release
  and a throughput into broker CPU and memory with :mod:`kafkafmt.costs`: each generation reads a sample log
  as a consumer does (:func:`kafkafmt.costs.consume`, one Fetch of its version at a time: v1 for 0.9, which reads
  message format v0; v3 for 0.10, format v1; the newest version the release answers for 0.11+) and the counts
  are priced with the per-operation costs measured on that release (:func:`kafkafmt.costs.predict`).  A
  consumer the release no longer answers (Fetch v0-v3 on 4.x, KIP-896) is shown refused, not priced.
"""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

from .. import kafka_lines
from ..errors import ConfigError

#: the consumer generations of the mix: (name, the Fetch version its clients send, the format it reads)
GENERATIONS = (("0.9", 1, 0), ("0.10", 3, 1), ("0.11+", None, 2))
#: the benchmark tables notebook 05 shows (``docs/_data/bench/<name>.json``)
BENCH_TABLES = ("conversion_fetch", "conversion_heap", "conversion_produce", "conversion_model")
#: below this, a heap measurement of ``conversion_heap`` is the method's noise (benchmarks/conversion.py's note)
NOISE_MB = 0.5
#: the sample log the mix is priced on: 100 batches of 200 records (the benchmark's batch size), several
#: fetches of 1 MiB, each more than one lazy chunk (128 KiB)
SAMPLE_BATCHES, SAMPLE_RECORDS = 100, 200


# ------------------------------------------------------------------------------------------------ measured
@dataclass(frozen=True)
class Measured:
    """One benchmark table: its title, columns and rows, note, and the run's record (command, machine, load, date)."""

    title: str
    columns: list
    rows: list
    note: str
    record: str

    def frame(self):
        import pandas as pd
        return pd.DataFrame(self.rows, columns=_unique(self.columns))


def _unique(columns) -> list[str]:
    """Column names made unique (the benchmark repeats "x zero-copy" after each conversion's column)."""
    out, seen = [], {}
    for c in columns:
        seen[c] = seen.get(c, 0) + 1
        out.append(c if seen[c] == 1 else f"{c} ({seen[c]})")
    return out


def record_line(doc: dict) -> str:
    """A benchmark run's record in one line: its command, machine, load and date."""
    m = doc.get("machine") or {}
    machine = (f"{m.get('cpu', '?')}, {m.get('cores', '?')} cores" if isinstance(m, dict) else str(m))
    return f"{doc.get('command', 'make bench-conversion')} on {machine}, load {doc.get('load', '?')}, {doc.get('date', '?')}"


def bench_dir(root: str | Path | None = None) -> Path:
    """``docs/_data/bench`` of the checkout above ``root`` (default: the working directory, e.g. ``notebooks/``;
    a copy of the notebooks opened elsewhere links its own ``docs/_data/bench`` to the checkout's, as it links
    ``build/derived``)."""
    from .derived import project_root
    return project_root(root) / "docs" / "_data" / "bench"


def measured(name: str, root: str | Path | None = None) -> Measured:
    """The benchmark table ``name`` (one of :data:`BENCH_TABLES`) as ``make bench-conversion --docs`` wrote it."""
    if name not in BENCH_TABLES:
        raise ConfigError(f"no benchmark table {name!r}: one of {', '.join(BENCH_TABLES)}")
    path = bench_dir(root) / f"{name}.json"
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"no measured table at {path}: run make bench-conversion (with --docs)") from None
    except ValueError as e:
        raise ConfigError(f"{path} is not a benchmark table: {e}") from None
    return Measured(doc.get("title", name), list(doc.get("columns", [])), list(doc.get("rows", [])),
                    doc.get("note", ""), record_line(doc))


def show_measured(name: str, root: str | Path | None = None):
    """:func:`measured` as a cell's output: the title, the table (in parts when it is wider than a page,
    :func:`kafkafmt.viz.tables.column_parts`), the note and the run's record."""
    import html

    from IPython.display import HTML

    from .tables import table_html
    m = measured(name, root)
    return HTML(f"<p><b>{html.escape(m.title)}</b></p>{table_html(m.frame())}"
                f"<p style='color:#444'>{html.escape(m.note)}</p>"
                f"<p style='color:#444'><b>Measured</b> by {html.escape(m.record)}.</p>")


def _column(m: Measured, name: str) -> list:
    cols = _unique(m.columns)
    if name not in cols:
        raise ConfigError(f"the benchmark table {m.title!r} has no column {name!r} (columns: {', '.join(cols)})")
    i = cols.index(name)
    return [r[i] for r in m.rows]


def _times(x) -> str:
    return "-" if x is None else f"{x:.1f}×"


def fetch_finding(codec: str = "lz4", root: str | Path | None = None) -> str:
    """Per measured release, what a 0.9 (to message format v0) and a 0.10 consumer (to v1) cost the broker
    against a zero-copy read of the same ``codec`` log (the ratios of ``conversion_fetch``), a release a line."""
    m = measured("conversion_fetch", root)
    rows = [r for r in zip(_column(m, "release"), _column(m, "conversion"), _column(m, "codec"),
                           _column(m, "x zero-copy (2)"), _column(m, "x zero-copy")) if r[2] == codec]
    parts = [f"{release} ({conversion}) {_times(to0)} / {_times(to1)}" for release, conversion, _, to0, to1 in rows
             if to0 is not None or to1 is not None]
    if not parts:
        raise ConfigError(f"no down-converted {codec} fetch was measured")
    return (f"Measured broker CPU per GB served from a {codec} log, against a zero-copy read "
            f"(a 0.9 consumer / a 0.10 consumer):\n" + "\n".join(f"  {p}" for p in parts))


def heap_finding(root: str | Path | None = None) -> str:
    """The heap one large down-converted fetch holds while in flight, eager against lazy (``conversion_heap``)."""
    m = measured("conversion_heap", root)
    rows = list(zip(_column(m, "release"), _column(m, "conversion"), _column(m, "response MB"),
                    _column(m, "held while in flight MB")))
    def held_mb(x) -> str:  # the benchmark's note: below 0.5 MB is the method's noise
        return "-" if x is None else f"{x} MB" if x >= NOISE_MB else f"under {NOISE_MB} MB (the method's noise)"
    return "Heap held while one large down-converted fetch is in flight:\n" + "\n".join(
        f"  {release} ({conversion}) {held_mb(held)} for a {response} MB response"
        for release, conversion, response, held in rows)


def produce_finding(root: str | Path | None = None) -> str:
    """KIP-31's saving per codec: a 0.9 broker's produce CPU against a 0.10 broker's (``conversion_produce``)."""
    m = measured("conversion_produce", root)
    ratio = next((c for c in _unique(m.columns) if c.startswith("0.9 / 0.10")), None)
    if ratio is None:
        raise ConfigError(f"the benchmark table {m.title!r} has no 0.9 / 0.10 ratio column")
    parts = [f"{codec} {_times(x)}" for codec, x in zip(_column(m, "codec"), _column(m, ratio)) if x is not None]
    return ("Broker CPU per GB produced, a 0.9 broker recompressing every compressed set against a 0.10 broker\n"
            f"setting only the wrapper offset (KIP-31): {', '.join(parts) or 'not measured'}.")


# ------------------------------------------------------------------------------------------------ predicted
def sample_log(line: str, codec: str) -> bytes:
    """The log a broker of ``line`` stores by default (its ``message.format.version``'s format) in ``codec``."""
    from ..config import BrokerConfig, LogConfig
    from .costs import sample_log as build_log
    magic = LogConfig.from_properties({}, broker=BrokerConfig(kafka_line=line)).to_magic
    return build_log(magic=magic, codec=codec, batches=SAMPLE_BATCHES, records_per_batch=SAMPLE_RECORDS)


def fetch_version_of(generation: str, line: str) -> int | None:
    """The Fetch version a consumer of ``generation`` sends to a broker of ``line`` (the newest both have: a
    0.11+ client negotiates the broker's newest, KIP-35), or ``None`` when the broker no longer answers it."""
    version = {g: v for g, v, _ in GENERATIONS}[generation]
    newest = kafka_lines.value("fetch.max_version", line)
    version = newest if version is None else min(version, newest)
    return None if version < kafka_lines.value("fetch.min_version", line) else version


@functools.lru_cache(maxsize=64)
def consumer_read(line: str, codec: str, fetch_version: int):
    """A consumer's whole read of :func:`sample_log` (``line``, ``codec``) with Fetch ``fetch_version``: the
    counts do not depend on the mix or the throughput, which only scale them (kept, so the panel's sliders are
    quick)."""
    from ..costs import consume
    return consume(sample_log(line, codec), line=line, fetch_version=fetch_version)


def mix_costs(share_09: float, share_010: float, release: str, mb_per_s: float, codec: str = "lz4",
              table=None) -> list[dict]:
    """One row per consumer generation: its share of ``mb_per_s`` (MB of log read per second, all consumers),
    the Fetch version it sends, how the broker serves it, and the predicted broker CPU (cores: CPU seconds per
    second), the bytes it converts per second (allocated) and the memory one in-flight fetch holds.  The 0.11+
    share is what the other two leave."""
    from ..costs import load_table, predict
    if not (0 <= share_09 <= 1 and 0 <= share_010 <= 1) or share_09 + share_010 > 1 + 1e-9:
        raise ValueError(f"the shares of 0.9 ({share_09:g}) and 0.10 ({share_010:g}) consumers must be between 0 "
                         "and 1 and add up to at most 1")
    if mb_per_s <= 0:
        raise ValueError("the throughput must be more than 0 MB/s")
    line = kafka_lines.check_line(release)
    t = table or load_table()
    rows = []
    for (gen, _, reads), share in zip(GENERATIONS, (share_09, share_010, 1 - share_09 - share_010)):
        share = max(0.0, share)
        version = fetch_version_of(gen, line)
        row = {"consumers": gen, "share": share, "fetch_version": version, "served": "", "mb_per_s": share * mb_per_s,
               "cpu_cores": 0.0, "conversion_cores": 0.0, "converted_mb_per_s": 0.0, "held_per_fetch_bytes": 0,
               "measured_on": ""}
        if version is None:
            row["served"] = f"refused: Kafka {line} answers Fetch v{kafka_lines.value('fetch.min_version', line)}+ only"
            rows.append(row)
            continue
        read = consumer_read(line, codec, version)
        per_request = read.counts.scaled(1 / read.requests)
        k = share * mb_per_s * 1e6 / read.counts.bytes_read
        p = predict(read.counts.scaled(k), line, t)
        one = predict(per_request, line, t)
        row.update(served="zero-copy" if read.counts.zero_copy else f"down-converted to v{reads} "
                   f"({read.counts.conversion})",
                   cpu_cores=p.cpu_s, conversion_cores=p.cpu_s - p.parts.get("read", 0.0) - p.parts.get("requests", 0.0),
                   converted_mb_per_s=read.counts.converted_bytes * k / 1e6, held_per_fetch_bytes=one.memory_bytes,
                   measured_on=p.measured_on)
        rows.append(row)
    return rows


def mix_table(share_09: float, share_010: float, release: str, mb_per_s: float, codec: str = "lz4", table=None):
    """:func:`mix_costs` as a DataFrame."""
    import pandas as pd
    return pd.DataFrame(mix_costs(share_09, share_010, release, mb_per_s, codec, table))


def mix_caption(df, values: dict) -> str:
    """The mix's predicted broker CPU, what the old consumers add, and the memory of their fetches, in words."""
    from .tables import size
    total, conv = df["cpu_cores"].sum(), df["conversion_cores"].sum()
    refused = df[df["served"].str.startswith("refused") & (df["share"] > 0)]
    held = df[df["held_per_fetch_bytes"] > 0]
    text = (f"<b>{total:.3f} broker cores</b> to serve {values['mb_per_s']:g} MB/s on Kafka {values['release']}"
            f" ({values['codec']} log)")
    text += (f"; {conv:.3f} of them convert for the old consumers ({conv / total:.0%})" if total and conv else
             "; every consumer read is zero-copy")
    if not held.empty:
        text += (f"; each of their fetches holds up to <b>{size(held['held_per_fetch_bytes'].max())}</b> "
                 f"({', '.join(sorted(set(s.split('(')[-1].rstrip(')') for s in held['served'])))})")
    if not refused.empty:
        text += f"; {', '.join(refused['consumers'])} consumers are refused (KIP-896)"
    measured_on = sorted(set(df["measured_on"]) - {""})
    if measured_on:
        text += f". Costs measured on Kafka {', '.join(measured_on)}"
    return text + "."


def mix_view(df):
    """Predicted broker CPU per consumer generation (zero-copy, converted, refused) and the table behind it."""
    from . import plots, tables
    colors = [plots.GREY if s.startswith("refused") else plots.GREEN if s == "zero-copy" else plots.AMBER
              for s in df["served"]]
    fig = plots.bar_plot([f"{g} consumers" for g in df["consumers"]], df["cpu_cores"], value_fmt=".3f",
                         xlabel="consumer generation", ylabel="broker CPU (cores)", colors=colors,
                         bar_text=["refused" if s.startswith("refused") else f"{v:.3f}"
                                   for s, v in zip(df["served"], df["cpu_cores"])],
                         legend=[(plots.GREEN, "zero-copy"), (plots.AMBER, "down-converted"),
                                 (plots.GREY, "refused")],
                         title="predicted: broker CPU per consumer generation")
    table = tables.table_html(df, labels={"mb_per_s": "MB/s read", "cpu_cores": "CPU (cores)",
                                          "conversion_cores": "of which converting",
                                          "converted_mb_per_s": "converted MB/s (allocated)",
                                          "held_per_fetch_bytes": "held per fetch", "fetch_version": "fetch version"},
                              units={"held_per_fetch_bytes": "bytes"})
    return fig, table


def releases(table=None) -> list[str]:
    """The releases a cost table was measured on, oldest first (the panel's choices)."""
    from ..costs import load_table
    t = table or load_table()
    return sorted(t.releases, key=kafka_lines.order)


def mix_panel(table=None):
    """Notebook 05's panel: the shares of 0.9 and 0.10 consumers (0.11+ take the rest), a measured release, the
    log's codec and the throughput read; the predicted broker CPU and memory."""
    import ipywidgets as w

    from .widgets import Panel
    choices = releases(table)
    pct = {"readout_format": ".0%", "style": {"description_width": "initial"}}
    return Panel({"share_09": w.FloatSlider(value=0.3, min=0, max=1, step=0.05, description="0.9 consumers", **pct),
                  "share_010": w.FloatSlider(value=0.2, min=0, max=0.7, step=0.05, description="0.10 consumers",
                                             **pct),
                  "release": w.Dropdown(options=choices, value="2.8.2" if "2.8.2" in choices else choices[-1],
                                        description="Kafka"),
                  "mb_per_s": w.FloatLogSlider(value=100, base=10, min=0, max=3, step=0.25, description="MB/s read",
                                               style={"description_width": "initial"}),
                  "codec": w.Dropdown(options=["none", "gzip", "snappy", "lz4"], value="lz4", description="codec")},
                 lambda **v: mix_table(table=table, **v), mix_view, title="Your consumers, your broker",
                 caption=mix_caption,
                 adapt={"share_010": lambda v: {"max": round(1 - v["share_09"], 2)}})


__all__ = ["GENERATIONS", "BENCH_TABLES", "Measured", "measured", "show_measured", "record_line", "bench_dir",
           "fetch_finding", "heap_finding", "produce_finding", "sample_log", "consumer_read", "fetch_version_of",
           "mix_costs", "mix_table", "mix_caption", "mix_view", "mix_panel", "releases"]
