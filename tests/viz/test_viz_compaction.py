"""Notebook 09's findings (kafkafmt.viz.compaction), each checked on the panel the notebook shows, and
every cleaning pass behind them checked against Kafka 3.9.2's own cleaner: with the ``kafka`` fixture
each pass is also run by ``CleanerThread.cleanFilthiestLog`` (conformance/oracle/CleanerOracle.java)
on a copy of the partition taken just before it, and the two must leave byte-identical ``.log``,
``.index`` and ``.timeindex`` files, ``.log`` modification times and checkpoints."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from kafkafmt.viz import compaction


def _text(panel):
    return re.sub(r"<[^>]+>", "", panel.caption_html)


# ------------------------------------------------------------------------------------------ holes
def test_holes_panel_relative_offsets_skip_and_consumer_offsets_are_kafkas():
    p = compaction.holes_panel()
    rows = p.data["rows"]
    rel = [r["relative offset (stored)"] for r in rows]
    assert rel[0] == 0 and any(b - a > 1 for a, b in zip(rel, rel[1:]))  # a hole: not 0..n-1
    w = p.data["wrapper"]
    # the absolute offsets computed from the stored bytes are the ones kafkafmt's reader yields
    assert [r["absolute offset (consumer)"] for r in rows] == [r.offset for r in w.records()]
    assert rows[-1]["absolute offset (consumer)"] == w.last_offset
    assert _text(p).startswith(f"Wrapper at offset {w.last_offset}: {len(rows)} inner messages with relative "
                               f"offsets {', '.join(map(str, rel))}")
    assert "hole: " not in p.view.value and "removed" in p.view.value


def test_holes_panel_wrapper_choice_follows_the_keys():
    p = compaction.holes_panel()
    first = p.data["wrapper"].last_offset
    assert len(p.controls["wrapper"].options) == p.data["holed"] >= 2
    p.set(wrapper=1)
    assert p.data["wrapper"].last_offset != first
    p.set(keys=40)
    assert p.error is None and len(p.controls["wrapper"].options) == p.data["holed"] == 4
    p.set(keys=4)  # four keys: every wrapper keeps all or nothing, no hole
    assert p.error is not None and "no cleaned wrapper has a hole" in p.error


def test_holes_partition_is_kafkas(kafka):
    compaction.cleaned_holes.cache_clear()
    holed, wrappers, before, after = compaction.cleaned_holes(12)
    assert kafka == [True] and len(holed) == 2 and after < before
    compaction.cleaned_holes.cache_clear()


def test_holes_dump_deep_iteration_names_the_hole(log_oracle_or_skip):
    """kafka-dump-log --deep-iteration on the cleaned segment reports the wrapper's non-consecutive offsets."""
    with compaction.new_partition() as d:
        compaction.holes_partition(d, 12)
        ends = {w.last_offset for w in compaction.holed_wrappers(d)}
        holed = {seg for seg, _, b in compaction.batches(d) if b.last_offset in ends}
        out, err, exc = log_oracle_or_skip.dump("--deep-iteration", "--files",
                                                ",".join(str(p) for p in sorted(d.glob("*.log"))))
    assert exc is None
    named = {int(Path(line.split(" in ")[-1].strip()).stem) for line in out + err if "Non-consecutive offsets" in line}
    assert named == holed  # one line per segment holding a wrapper with a hole


@pytest.fixture
def log_oracle_or_skip():
    from kafkarig.log_oracle import log_oracle_or_skip as get
    return get()


# ------------------------------------------------------------------------------------- tombstones
def test_v2_tombstone_goes_at_first_pass_plus_delete_retention():
    for first in (0.5, 1, 2):
        rows = compaction.tombstone_passes(2, first_pass_min=first, interval_min=0.5, delete_retention_min=2)
        assert rows[0]["delete_horizon_min"] == first + 2  # written by the first pass (KIP-534)
        assert compaction.removed_at(rows) == first + 2


def test_v1_tombstone_follows_segment_mtimes_not_the_first_pass():
    rows = compaction.tombstone_passes(1, first_pass_min=1, interval_min=1, delete_retention_min=2)
    assert all(r["delete_horizon_min"] is None for r in rows)  # no header field in v1
    assert compaction.removed_at(rows) == 5.0
    sweep = compaction.tombstone_sweep(2, 1)
    v1 = [r["removed_at_min"] for r in sweep if r["format"] == "v1"]
    v2 = [r["removed_at_min"] for r in sweep if r["format"] == "v2"]
    assert v2 == sorted(v2) and v1 != sorted(v1)  # v2 follows the first pass; v1 does not
    assert min(v1) > 2 and min(v2) > 2  # never before delete.retention.ms


def test_tombstone_schedules_are_kafkas(kafka):
    for magic in (1, 2):
        compaction.tombstone_passes(magic, first_pass_min=1, interval_min=1, delete_retention_min=2)
    assert len(kafka) >= 5 and all(kafka)


def test_tombstone_panel_caption_and_controls():
    p = compaction.tombstone_panel()
    assert _text(p).startswith("A tombstone written at minute 0 with delete.retention.ms = 2 min disappears "
                               "between minute 3.5 and 5 in v1, between 2.25 and 6 in v2")
    assert "it goes at minute 3" in _text(p)
    p.set(magic=1)
    assert "it goes at minute 5" in _text(p)
    p.set(delete_retention_min=1)
    assert "delete.retention.ms = 1 min" in _text(p) and p.error is None


# ---------------------------------------------------------------------------------- dedupe buffer
def test_dedupe_buffer_that_fills_cleans_a_prefix_per_pass():
    assert compaction.map_entries(40 * 24) == 36
    rows = compaction.dedupe_passes(40, 60)
    assert [r["checkpoint"] for r in rows] == [36, 72, 108, 144, 176]
    assert all(r["mapped_up_to"] - r["from_offset"] <= 36 for r in rows)
    big = compaction.dedupe_passes(200, 60)
    assert len(big) == 1 and big[0]["checkpoint"] == 176 and big[-1]["records_left"] == rows[-1]["records_left"]


def test_a_full_map_stops_even_at_a_key_it_holds():
    """60 keys and room for exactly 60: the pass stops at the first update after the map is full."""
    assert compaction.map_entries(67 * 24) == 60 and compaction.map_entries(70 * 24) == 63
    assert len(compaction.dedupe_passes(67, 60)) == 3 and len(compaction.dedupe_passes(70, 60)) == 1


def test_dedupe_passes_are_kafkas(kafka):
    compaction.dedupe_passes(40, 60)
    assert kafka == [True] * 5 + [False]
    kafka.clear()
    compaction.dedupe_passes(67, 60)
    assert kafka == [True] * 3 + [False]


def test_dedupe_panel():
    p = compaction.dedupe_panel()
    assert _text(p).startswith("5 passes to clean the log once")
    p.set(dedupe_entries=200)
    assert _text(p).startswith("1 passes") or _text(p).startswith("1 pass")


# ------------------------------------------------------------------------------------ old formats
def test_old_format_kept_forever():
    rows = compaction.old_format_passes()
    assert all(r["v1_records"] == 30 and r["oldest_magic"] == 1 and r["oldest_offset"] == 0 for r in rows)
    assert len({r["v2_records"] for r in rows}) > 1  # the hot keys' v2 data is compacted meanwhile


def test_old_format_passes_are_kafkas(kafka):
    compaction.old_format_passes(phases=3)
    assert kafka == [True] * 3


def test_old_format_panel():
    p = compaction.old_format_panel()
    assert "still holds 30 v1 records" in _text(p)
    p.set(cold_keys=10, codec="none")
    assert "still holds 10 v1 records" in _text(p) and p.error is None


# ------------------------------------------------------- the real 0.10.2.2 holes, the cleaner's rows by line
def test_holes_by_line_puts_kafkafmt_beside_the_real_release():
    rows = compaction.holes_by_line()
    real, line_0_10_2, line_3_9 = rows
    assert real["cleaner"] == "Kafka 0.10.2.2 (real)"
    assert real["holed wrappers' offsets"] == "; ".join(
        ",".join(map(str, offs)) for offs in compaction.real_holes_data()["holed"])
    # kafkafmt on the 0.10.2 line leaves every recorded file (tests/history/test_holes_0_10_vs_kafka.py, by the CLI)
    assert line_0_10_2["files identical to 0.10.2.2's"] == "yes"
    assert line_3_9["holed wrappers' offsets"] == real["holed wrappers' offsets"]


def test_holes_by_line_names_the_files_that_differ(monkeypatch):
    """A cleaner leaving another file (here: another modification time) is reported file by file, not as
    agreement."""
    rec = compaction.real_holes()
    files = dict(rec["files"])
    name = next(n for n in files if n.endswith(".log") and files[n]["hex"])
    files[name] = {**files[name], "mtime_ms": files[name]["mtime_ms"] + 1}
    monkeypatch.setattr(compaction, "real_holes", lambda: {**rec, "files": files})
    row = compaction.holes_by_line(("0.10.2",))[1]
    assert row["files identical to 0.10.2.2's"] == f"no: {name}"


def test_cleaner_lines_table_one_row_per_cleaner_row():
    from kafkafmt import kafka_lines
    from kafkafmt.log.cleaner import compared
    table = compaction.cleaner_lines_table()
    assert [r["row"] for r in table] == list(compared.CLEANER_KEYS_SHOWN)
    # every row of area cleaner (and every codec row) is in the table
    shown = {r["row"] for r in table}
    assert {c.key for c in kafka_lines.changes() if c.area in ("cleaner", "codec")} <= shown
    by = {r["row"]: r for r in table}
    # four columns, whatever the number of lines: a line's value is in its run
    assert all(list(r) == ["row", "by line", "changed in", "checked on"] for r in table)
    assert by["cleaner.map_reach"]["by line"] == \
        "0.9: whole segments · 0.10.0: fully mapped segments · 0.10.1 – 4.4: record that fills the map"
    assert by["cleaner.legacy_to_v2"]["by line"] == "0.9 – 3.9: no · 4.4: yes"
    assert "0.10.2: 1024 / 0" in by["codec.gzip_stream"]["by line"]
    assert "KAFKA-4298" in by["cleaner.legacy_rebuild_magic"]["changed in"]


def test_checked_on_follows_the_comparisons_run():
    """"checked on" is derived from the tables the comparisons take: no transactions before 0.11, lz4 compared
    on 0.9.0.1, 0.10.0.1, 0.10.2.2 and 1.1.1 only, snappy on every old release compared, zstd from 2.1.1."""
    from kafkafmt.log.cleaner import compared
    assert compared.checked_on("cleaner.txn_metadata_scope")[0] == "0.11.0.3"
    assert compared.checked_on("codec.lz4_java") == ("0.9.0.1", "0.10.0.1", "0.10.2.2", "1.1.1", "3.9.2", "4.4.0")
    assert compared.checked_on("codec.snappy_java") == ("0.9.0.1", "0.10.0.1", "0.10.1.1", "0.10.2.2", "0.11.0.3",
                                                        "1.1.1", "2.1.1", "2.8.2", "3.9.2", "4.4.0")
    assert "0.9.0.1" in compared.checked_on("cleaner.map_reach")  # v0-small-map, v0-tiny-map
    assert "0.10.0.1" not in compared.checked_on("cleaner.time_index_offset")  # no time index on 0.10.0
    # a release compared on no workload is on no row
    everything = {r for k in compared.CLEANER_KEYS_SHOWN for r in compared.checked_on(k)}
    assert everything == set(compared.RELEASES) | set(compared.JAR_RELEASES)
    row = {r["row"]: r for r in compaction.cleaner_lines_table()}["codec.zstd_jni"]
    assert row["checked on"] == "2.1.1, 2.8.2, 3.9.2, 4.4.0"
