"""``kafkafmt audit``: the three formats, -o, --fail-on legacy, -c/--compacted, --help and one-line errors."""
from __future__ import annotations

import json
import re

import pytest

from kafkafmt.cli import main
from kafkafmt.log.readonly import file_states
from mixed_sample import START_MS

NOW = str(START_MS + 3600000)


def _run(capsys, *argv) -> tuple[int, str, str]:
    rc = main(["audit", *map(str, argv)])
    out, err = capsys.readouterr()
    return rc, out, err


def test_table_and_fail_on_legacy(mixed, capsys):
    rc, out, err = _run(capsys, mixed, "--now-ms", NOW, "--quiet")
    assert rc == 0 and err == ""
    assert re.search(r"^accounts-0 +\d+ +\d+/\d+/\d+ .* yes +never", out, re.M)
    assert "0.10.1-0.10.2 (Produce v2 < v3 (KIP-896); Fetch v3 < v4 (KIP-896))" in out
    rc, _, err = _run(capsys, mixed, "--now-ms", NOW, "--quiet", "--fail-on", "legacy")
    assert rc == 1 and "v0/v1 batches found" in err
    rc, out, _ = _run(capsys, mixed / "modern-0", "--now-ms", NOW, "--quiet", "--fail-on", "legacy")
    assert rc == 0 and "modern-0" in out and "hold v0/v1 data" in out


def test_json_lines_one_object_per_partition(mixed, capsys):
    rc, out, _ = _run(capsys, mixed, "--format", "json", "--now-ms", NOW, "--quiet", "--compacted", "clicks")
    assert rc == 0
    objs = [json.loads(line) for line in out.splitlines()]
    assert [(o["topic"], o["partition"]) for o in objs] == [("accounts", 0), ("accounts", 1), ("clicks", 0),
                                                            ("modern", 0)]
    keys = {"topic", "partition", "dir", "target", "now_ms", "segments", "bytes", "magics", "timestamp_types",
            "records_without_timestamp", "legacy", "compacted", "config_source", "legacy_status", "retention",
            "cleaner", "clients_refused", "clients_reading_legacy", "first_segment_offset", "next_offset"}
    for o in objs:
        assert set(o) == keys and o["target"] == "4.4" and o["now_ms"] == int(NOW)
        assert set(o["magics"]) <= {"v0", "v1", "v2"}
    clicks = objs[2]
    assert clicks["compacted"] and clicks["config_source"] == "kafkafmt-gen.json + option"
    assert clicks["cleaner"]["applies"] and clicks["retention"]["legacy_deleted_at_ms"] is None
    assert objs[3]["legacy"]["batches"] == 0 and objs[3]["clients_reading_legacy"] == []


def test_html_is_self_contained_and_reproducible(mixed, tmp_path, capsys):
    pages = []
    for i in range(2):
        out = tmp_path / f"r{i}" / "audit.html"
        rc, stdout, _ = _run(capsys, mixed, "--format", "html", "-o", out, "--now-ms", NOW, "--quiet")
        assert rc == 0 and stdout == ""
        pages.append(out.read_text())
    page = pages[0]
    assert pages[0] == pages[1]
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert page.count("<svg") == 1 and ("<rect" in page or "<path" in page)
    assert not re.search(r"<script|<link|<img|src=|url\((?!#)|@import", page, re.I)
    assert not re.search(r'href="(?!#)', page)
    for text in ("accounts-0", "KAFKA-13093", "KIP-896", "0.10.1-0.10.2", "v0 bytes"):
        assert text in page


def test_read_only_through_the_cli(mixed, capsys, tmp_path):
    dirs = [mixed, *sorted(p for p in mixed.iterdir() if p.is_dir())]
    before = {d: file_states(d) for d in dirs}
    for fmt in ("table", "json", "html"):
        _run(capsys, mixed, "--format", fmt, "-o", tmp_path / f"x.{fmt}", "--quiet")
    assert {d: file_states(d) for d in dirs} == before


def test_help_and_one_line_errors(mixed, tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        main(["audit", "--help"])
    assert e.value.code == 0 and "--fail-on" in capsys.readouterr().out
    for argv, name in (([tmp_path / "missing"], "NoSuchFileError"), ([tmp_path], "NoSuchFileError"),
                       ([mixed, "-c", "accounts"], "ConfigError"),
                       ([mixed, "-c", "accounts:retention.ms=soon"], "ConfigError")):
        rc, out, err = _run(capsys, *argv, "--quiet")
        assert rc == 1 and out == ""
        assert err.startswith(f"kafkafmt: error: {name}: ") and err.count("\n") == 1, err
