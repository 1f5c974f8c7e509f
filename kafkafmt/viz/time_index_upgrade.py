"""The time index on an upgrade from Kafka 0.10.0.1 to 0.10.1.1 (KIP-33), as the last live run left it.

The record of the last live run (:mod:`kafkafmt.scenarios.checked`, ``"time_index_upgrade"``) holds, per phase
of the upgrade, the segment files of two partitions (one on a broker stopped cleanly on 0.10.0.1, one on a
broker killed) and the ListOffsets v1 answers after new records were written, each beside kafkafmt's ``Log``
driven through the same steps.  This module draws three tables of it, each row labelled with the release
that confirmed the model (``checked on 0.10.1.1``) or what it did instead:

* :func:`sizes_rows`: the ``.timeindex`` size of each segment, per phase and broker;
* :func:`retention_rows`: the segments 0.10.0.1 wrote, kept or deleted by 0.10.1.1's time retention;
* :func:`list_offsets_rows`: what ListOffsets v1 answered for each target on each broker.

:func:`upgrade_html` puts them together for a notebook.
"""
from __future__ import annotations

import datetime as _dt
import html

from ..scenarios.checked import LiveRecord
from . import tables
from .live_record import mark

__all__ = ["BROKERS", "PHASES", "sizes_rows", "retention_rows", "list_offsets_rows", "upgrade_html"]

#: topic → how its broker left 0.10.0.1 (``kafkarig.time_index.TOPICS``)
BROKERS = {"ti-clean": "stopped cleanly", "ti-crash": "killed"}
#: phase → what it is (``kafkarig.time_index.PHASES``)
PHASES = {"0.10.0": "written on 0.10.0.1, then the broker stopped or killed",
          "binaries": "0.10.1.1's jars on the same directory (IBP and format 0.10.0), just started",
          "protocol": "a few records, then a rolling restart with IBP and format 0.10.1",
          "written": "new records written, time retention run",
          "stopped": "both brokers stopped cleanly"}


def _segments(files: dict | None) -> dict[int, dict[str, dict]]:
    """A partition's files by segment: base offset → suffix (``.log``, ``.index``, ``.timeindex``) → file."""
    out: dict[int, dict[str, dict]] = {}
    for name, f in (files or {}).items():
        base, _, suffix = name.partition(".")
        out.setdefault(int(base), {})["." + suffix] = f
    return dict(sorted(out.items()))


def _sizes_text(files: dict | None) -> str:
    """``0: 1,200 B · 15: 36 B``: each segment's base offset and its ``.timeindex`` size (``none`` without one)."""
    if files is None:
        return "not recorded"
    segs = _segments(files)
    return " · ".join(f"{base}: {s['.timeindex']['size']:,} B" if ".timeindex" in s else f"{base}: none"
                      for base, s in segs.items()) or "no segment"


def sizes_rows(rec: LiveRecord) -> list[dict]:
    """Per phase: each broker's ``.timeindex`` sizes by segment base offset, and the phase's label."""
    return [{"phase": phase, "what happened": PHASES.get(phase, phase),
             **{how: _sizes_text(rec.time_index_real(f"{phase}/files/{topic}")) for topic, how in BROKERS.items()},
             "live run": mark(rec.time_index_phase(phase))} for phase in rec.time_index_phases]


def _offsets(bases) -> str:
    return ", ".join(str(b) for b in sorted(bases)) or "none"


def retention_rows(rec: LiveRecord, *, before: str = "0.10.0", start: str = "binaries",
                   after: str = "written") -> list[dict]:
    """Per broker: the segments written on 0.10.0.1 (phase ``before``), whether their ``.timeindex`` had an
    entry when 0.10.1.1 started (phase ``start``), which of them time retention kept or deleted by phase
    ``after``, and the label of that phase's files check."""
    out = []
    for topic, how in BROKERS.items():
        old = _segments(rec.time_index_real(f"{before}/files/{topic}"))
        started = _segments(rec.time_index_real(f"{start}/files/{topic}"))
        left = _segments(rec.time_index_real(f"{after}/files/{topic}"))
        entries = [started.get(b, {}).get(".timeindex", {}).get("hex", "") != "" for b in old]
        index = ("entries (rebuilt by recovery)" if entries and all(entries) else
                 "no entry" if not any(entries) else "entries in some")
        kept, deleted = [b for b in old if b in left], [b for b in old if b not in left]
        out.append({"broker on 0.10.0.1": how, "its segments (base offsets)": _offsets(old),
                    ".timeindex at 0.10.1.1's start": index,
                    "after time retention on 0.10.1.1": f"kept: {_offsets(kept)}; deleted: {_offsets(deleted)}",
                    "live run": mark(rec.time_index_check(f"{after}/files/{topic}"))})
    return out


def _target(t: int) -> str:
    if t == -2:
        return "-2 (earliest)"
    if t == -1:
        return "-1 (latest)"
    return f"{t} ({_dt.datetime.fromtimestamp(t / 1000, _dt.timezone.utc):%Y-%m-%d %H:%M:%S.%f}"[:-3] + " UTC)"


def list_offsets_rows(rec: LiveRecord, phase: str = "written") -> list[dict]:
    """Per ListOffsets v1 target: the offset each broker answered (``-1``: none found) and the model's."""
    real = {t: rec.time_index_real(f"{phase}/list-offsets/{t}") or [] for t in BROKERS}
    model = {t: rec.time_index_model(f"{phase}/list-offsets/{t}") or [] for t in BROKERS}
    first = next(iter(BROKERS))
    out = []
    for i, answer in enumerate(real[first]):
        row = {"target (timestamp ms)": _target(answer[0])}
        for topic, how in BROKERS.items():
            r = real[topic][i] if i < len(real[topic]) else None
            m = model[topic][i] if i < len(model[topic]) else None
            row[f"{how}: offset"] = "—" if r is None else r[3]
            row[f"{how}: model"] = "—" if m is None else m[3]
        out.append(row)
    return out


def upgrade_html(rec: LiveRecord) -> str:
    """The three tables, titled, with each ListOffsets check's label below its table."""
    if not rec.time_index_phases:
        return "<p>The record holds no live run of the time index's upgrade (make history-record).</p>"
    cluster = (rec.data.get("time_index_upgrade") or {}).get("cluster", "").replace(" -> ", " → ")  # escaped there
    labels = "".join(f"<p style='margin:2px 0'>{html.escape(how)}: "
                     f"{html.escape(mark(rec.time_index_check(f'written/list-offsets/{topic}')))}</p>"
                     for topic, how in BROKERS.items())
    return (tables.table_html(sizes_rows(rec), outcomes=("live run",), max_cell_em=30,
                              title=f".timeindex size per segment (base offset: bytes), {cluster}")
            + tables.table_html(retention_rows(rec), outcomes=("live run",), max_cell_em=26,
                                title="The segments 0.10.0.1 wrote, under 0.10.1.1's time retention (10 days)")
            + tables.table_html(list_offsets_rows(rec), max_cell_em=24,
                                title="ListOffsets v1 after the upgrade: the offset answered (-1: none)")
            + labels)
