"""The documentation site's generated tables (docs/_ext/kafkafmt_tables.py) hold every row of the data they
are drawn from, and the benchmark JSON under docs/_data/bench/ renders (without building the site)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ci_mode import import_or_skip

import_or_skip("sphinx", reason="the docs extra (make docs) is not installed")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "_ext"))
import kafkafmt_tables as kt  # noqa: E402

sys.path.remove(str(ROOT / "docs" / "_ext"))


def _body_rows(table) -> list[list[str]]:
    tbody = next(n for n in table.findall() if n.tagname == "tbody")
    return [[entry.astext() for entry in row.children] for row in tbody.children]


def test_error_table_lists_every_kafkafmt_error_class():
    from kafkafmt import errors
    defined = {c for c in vars(errors).values()
               if isinstance(c, type) and issubclass(c, errors.KafkaFmtError) and c.__module__ == errors.__name__}
    assert set(kt.error_classes()) == defined
    assert kt.error_classes()[0] is errors.KafkaFmtError


def test_a_table_has_one_row_per_item_and_code_cells():
    table = kt.table(["a", "b"], [["`x.y`", 1], ["plain", None]], widths=[1, 2])
    assert _body_rows(table) == [["x.y", "1"], ["plain", ""]]
    assert any(n.tagname == "literal" for n in table.findall())


@pytest.mark.parametrize("path", sorted((ROOT / "docs" / "_data" / "bench").glob("*.json")), ids=lambda p: p.stem)
def test_every_benchmark_file_renders_a_table(path):
    doc = json.loads(path.read_text())
    columns, rows = kt.bench_rows(doc)
    assert columns and rows and all(len(r) == len(columns) for r in rows), path.name
    assert doc.get("source") and (doc.get("machine") or doc.get("command")), f"{path.name}: where the figures come from"


def test_the_bench_file_is_bench_py_s_own_results_table():
    doc = json.loads((ROOT / "docs" / "_data" / "bench" / "bench.json").read_text())
    columns, rows = kt.bench_rows(doc)
    assert columns[:3] == ["task", "data", "kafkafmt rec/s"]
    assert {r[0] for r in rows} >= {"columnar", "deep", "build", "build-columns", "down"}
    assert [r for r in rows if r[:2] == ["columnar", "v2-none"]][0][7] == "2.82x"  # vs aiokafka-c, as measured


def _literals(node) -> list[str]:
    return [n.astext() for n in node.findall() if n.tagname == "literal"]


def test_inline_code_shows_the_double_backquoted_parts_as_code():
    para = kt.inline_code("``earliest`` or JSON ``{\"t\": {\"0\": 1}}``; exclusive")
    assert para.astext() == 'earliest or JSON {"t": {"0": 1}}; exclusive'
    assert _literals(para) == ["earliest", '{"t": {"0": 1}}']


def test_kafka_lines_columns_are_at_least_their_longest_word():
    """Every narrow column of the Kafka-lines table is as wide as its header and its longest word (capped), so the
    browser never breaks a header or a version inside a word ("sinc/e", "0.10./0")."""
    from kafkafmt import kafka_lines
    rows = [c.to_dict() for c in kafka_lines.changes(None)]
    columns = list(rows[0])
    shares = dict(zip(columns, kt.column_shares(columns, rows, {"what": 24})))
    assert shares["what"] == 24
    for c in columns:
        if c != "what":
            assert shares[c] >= min(10, len(c)) + 3, c
    assert shares["since"] >= len("0.10.0") + 3 and shares["release"] >= len("release") + 3


def _build_site_module():
    import importlib.util
    spec = importlib.util.spec_from_file_location("kafkafmt_build_site", ROOT / "docs" / "_ext" / "build_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_warning_fails_the_site_build(tmp_path):
    """``make docs`` fails on any Sphinx warning (a new docstring's broken markup, a link to no page), so the
    site's build stays warning-free; the same page without the broken link builds."""
    build_site = _build_site_module()
    src = tmp_path / "src"
    src.mkdir()
    (src / "index.md").write_text("# A page\n\nSee {doc}`no-such-page`.\n")
    assert build_site.sphinx_build(src, tmp_path / "warned") != 0
    (src / "index.md").write_text("# A page\n\nNothing broken.\n")
    assert build_site.sphinx_build(src, tmp_path / "clean") == 0
