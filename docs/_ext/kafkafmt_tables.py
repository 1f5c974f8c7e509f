"""Reference tables drawn from kafkafmt's own data, never typed: a Sphinx extension of the documentation site.

Directives (MyST: a fenced block ```` ```{kafka-lines} ````):

- ``kafka-lines``: every row of :data:`kafkafmt.kafka_lines.CHANGES` (what differs between Kafka releases, each
  with its KIP or JIRA), its columns those of ``LineChange.to_dict()``; option ``:area:`` keeps one area.
- ``topic-keys``: every topic key of :mod:`kafkafmt.config` on the default Kafka line and the newest (type,
  defaults, validator, the broker setting that gives its default, whether kafkafmt models it).
- ``kafkafmt-errors``: every exception class of :mod:`kafkafmt.errors` (its base, the Kafka exception it mirrors,
  Kafka's error code, its docstring's first sentence).
- ``decode-limits``: the fields of :class:`kafkafmt.limits.DecodeLimits` (default, environment variable).
- ``spark-options``: the options of the Spark data source, from :mod:`kafkafmt.spark.options`; argument ``read``
  (``READ_OPTIONS``) or ``write`` (``WRITE_OPTIONS``).
- ``tutorial-list``: each tutorial (the staged ``tutorials/*.ipynb``) with its title as a link, its question
  and its finding, read from the notebook (:func:`kafkafmt.viz.report.notebook_summary` / ``notebook_finding``).
- ``bench-table``: a benchmark's results from a JSON file (``docs/_data/bench/*.json``, the format
  ``benchmarks/*.py`` write, see :func:`bench_rows`); argument: the file, relative to ``docs/``.

Each table is built as docutils nodes from the objects at build time, so a new row of the code is a new row
of the site.
"""
from __future__ import annotations

import inspect
import json
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

DOCS = Path(__file__).resolve().parents[1]


def _cell(value) -> nodes.entry:
    entry = nodes.entry()
    if isinstance(value, nodes.Node):
        entry += value
        return entry
    text = "" if value is None else str(value)
    if text.startswith("`") and text.endswith("`") and len(text) > 1:
        entry += nodes.paragraph("", "", nodes.literal(text=text[1:-1]))
    else:
        entry += nodes.paragraph(text=text)
    return entry


def table(headers: list[str], rows: list[list], *, caption: str = "", widths: list[int] | None = None,
          wide: bool = False) -> nodes.table:
    """A docutils table of ``rows`` under ``headers``; a cell written ```x``` shows as code.  ``widths``: the
    columns' shares of the page's width (a long key then wraps in its column); else each column takes the width
    its text needs.  ``wide``: the table takes the whole width of the window, not the text's column."""
    sizing = ["colwidths-given", "kafkafmt-fixed"] if widths else ["colwidths-auto"]
    tbl = nodes.table(classes=["kafkafmt-table", *sizing, *(["kafkafmt-wide"] if wide else [])])
    if caption:
        tbl += nodes.title(text=caption)
    group = nodes.tgroup(cols=len(headers))
    tbl += group
    for w in widths or [1] * len(headers):
        group += nodes.colspec(colwidth=w)
    head = nodes.thead()
    row = nodes.row()
    for h in headers:
        row += _cell(h)
    head += row
    group += head
    body = nodes.tbody()
    for values in rows:
        row = nodes.row()
        for v in values:
            row += _cell(v)
        body += row
    group += body
    return tbl


def inline_code(text: str) -> nodes.paragraph:
    """A paragraph of ``text`` whose parts in double backquotes (reStructuredText's inline literals, as the
    docstrings write them) show as code."""
    para = nodes.paragraph()
    for i, part in enumerate(text.split("``")):
        if part:
            para += nodes.literal(text=part) if i % 2 else nodes.Text(part)
    return para


def _code(value) -> str:
    return f"`{value}`"


def _first_sentence(doc: str | None) -> str:
    text = " ".join((doc or "").split())
    end = text.find(". ")
    return text if end < 0 else text[:end + 1]



#: the shares of the Kafka-lines table's columns of prose and identifiers (which wrap); the others get their longest word
_LINE_TEXT_WIDTHS = {"key": 16, "what": 24, "where": 16}


def column_shares(columns: list[str], rows: list[dict], text: dict[str, int], *, cap: int = 10) -> list[int]:
    """Each column's share of a fixed-layout table: ``text[column]`` for the columns of prose, else the longest
    word of the column, header included (at most ``cap`` characters), plus three for the cell's padding, so that
    neither a header nor a version breaks inside a word ("sinc/e", "0.10./0")."""
    def longest(column):
        words = [w for v in [column, *(r.get(column) for r in rows)] for w in str("" if v is None else v).split()]
        return min(cap, max(map(len, words), default=1))
    return [text.get(c) or longest(c) + 3 for c in columns]


class KafkaLines(SphinxDirective):
    option_spec = {"area": directives.unchanged}

    def run(self):
        from kafkafmt import kafka_lines

        rows = [c.to_dict() for c in kafka_lines.changes(self.options.get("area"))]
        columns = list(rows[0]) if rows else ["key"]
        body = [[_code(v) if k == "key" else v for k, v in r.items()] for r in rows]
        return [table(columns, body, widths=column_shares(columns, rows, _LINE_TEXT_WIDTHS), wide=True)]


def _check_text(check) -> str:
    if not check:
        return ""
    kind, *args = check
    if kind == "at_least":
        return f"≥ {args[0]}"
    if kind == "between":
        return f"{args[0]} … {args[1]}"
    if kind in ("in", "list_in"):
        return ("one of " if kind == "in" else "a list of ") + ", ".join(map(str, args[0]))
    return kind.replace("_", " ")


class TopicKeys(SphinxDirective):
    def run(self):
        from kafkafmt import config, kafka_lines

        # the default line and the newest, where the keys differ most
        by_line = {line: config.keys_by_name(line) for line in (kafka_lines.DEFAULT_LINE, kafka_lines.KAFKA_LINES[-1])}
        names = list(dict.fromkeys(name for keys in by_line.values() for name in keys))
        rows = []
        for name in names:
            key = next(keys[name] for keys in by_line.values() if name in keys)
            defaults = [config.format_value(keys[name], keys[name].default) if name in keys else "(removed)"
                        for keys in by_line.values()]
            rows.append([_code(name), key.type, *defaults, _check_text(key.check),
                         _code(key.server_name) if key.server_name else "", "yes" if key.modelled else "kept"])
        headers = ["key", "type", *[f"default {line}" for line in by_line], "valid values", "broker default",
                   "modelled"]
        return [table(headers, rows, widths=[24, 8, 12, 12, 16, 20, 8])]


def error_classes():
    """The exception classes :mod:`kafkafmt.errors` defines, base first, in source order."""
    from kafkafmt import errors

    found = [c for _, c in inspect.getmembers(errors, inspect.isclass)
             if issubclass(c, errors.KafkaFmtError) and c.__module__ == errors.__name__]
    return sorted(found, key=lambda c: inspect.getsourcelines(c)[1])


class KafkaFmtErrors(SphinxDirective):
    def run(self):
        from kafkafmt import errors

        rows = []
        for cls in error_classes():
            base = next((b.__name__ for b in cls.__bases__ if issubclass(b, errors.KafkaFmtError)), "")
            others = [b.__name__ for b in cls.__bases__ if not issubclass(b, errors.KafkaFmtError)]
            rows.append([_code(cls.__name__), ", ".join(filter(None, [base, *others])), cls.kafka_exception,
                         "" if cls.error_code is None else cls.error_code, _first_sentence(cls.__doc__)])
        return [table(["class", "bases", "Kafka exception", "error code", "meaning"], rows,
                      widths=[20, 18, 20, 8, 34])]


class DecodeLimitsTable(SphinxDirective):
    def run(self):
        import dataclasses

        from kafkafmt import limits

        rows = [[_code(f.name), f.metadata.get("what", ""), f"{f.default:,}", _code(f"KAFKAFMT_{f.name.upper()}"),
                 _code(f.metadata.get("refused_with", ""))] for f in dataclasses.fields(limits.DecodeLimits)]
        return [table(["limit", "what it bounds", "default", "environment variable", "refused with"], rows)]


def _fmt(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.2f}"
    if isinstance(value, int):
        return f"{value:,}"
    return "" if value is None else str(value)


def _bench_module():
    """``benchmarks/bench.py``, whose :func:`rate_table` turns its own ``results.json`` into the table it prints."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("kafkafmt_bench", DOCS.parent / "benchmarks" / "bench.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def bench_rows(doc: dict) -> tuple[list[str], list[list]]:
    """A benchmark file's table.  Either ``benchmarks/bench.py``'s own ``results.json`` (rows of timings per
    task and engine, made into a table by that script's ``rate_table``) or ``{"columns": [...], "rows": [[...]]}``
    for figures kept in that simpler form; other keys (``command``, ``machine``, ``load``, ``date``,
    ``source``, ``target``, ``note``) are the run's circumstances, shown with the table."""
    if "columns" not in doc:
        return _bench_module().rate_table(doc)
    columns = doc["columns"]
    rows = [[r.get(c) for c in columns] if isinstance(r, dict) else list(r) for r in doc["rows"]]
    return columns, [[_fmt(v) for v in r] for r in rows]


def _machine(value) -> str:
    if isinstance(value, dict):
        load = value.get("load_avg")
        parts = [f"{value.get('cpu', '')}, {value.get('cores', '?')} cores", f"Python {value.get('python', '?')}"]
        parts += [f"{k} {value[k]}" for k in ("numba", "pyarrow") if k in value]
        parts += [value["peers"]] if "peers" in value else []
        if load:
            parts.append("load average " + ", ".join(f"{x:.1f}" for x in load))
        return "; ".join(parts)
    return str(value)


class BenchTable(SphinxDirective):
    required_arguments = 1

    def run(self):
        path = DOCS / self.arguments[0]
        self.env.note_dependency(str(path))
        doc = json.loads(path.read_text(encoding="utf-8"))
        columns, rows = bench_rows(doc)
        facts = [f"{k}: {_machine(doc[k]) if k == 'machine' else doc[k]}"
                 for k in ("command", "machine", "load", "date", "target", "source") if doc.get(k)]
        if "records" in doc and "columns" not in doc:
            facts.insert(0, f"records per dataset: {doc['records']:,}; the run took {doc.get('seconds', 0):.0f} s")
        out = []
        if facts:
            lst = nodes.bullet_list(classes=["kafkafmt-bench-facts"])
            for fact in facts:
                lst += nodes.list_item("", nodes.paragraph(text=fact))
            out.append(lst)
        out.append(table(columns, rows, caption=doc.get("title", "")))
        if doc.get("note"):
            out.append(nodes.paragraph(text=doc["note"]))
        return out


class SparkOptions(SphinxDirective):
    required_arguments = 1

    def run(self):
        from kafkafmt.spark import options

        which = {"read": options.READ_OPTIONS, "write": options.WRITE_OPTIONS}.get(self.arguments[0])
        if which is None:
            raise self.error(f"spark-options takes read or write, not {self.arguments[0]!r}")
        rows = [[_code(o.name), o.default if o.default.startswith("(") else _code(o.default), inline_code(o.meaning)]
                for o in which]
        return [table(["option", "default", "meaning"], rows, widths=[23, 13, 64])]


class TutorialList(SphinxDirective):
    def run(self):
        from kafkafmt.viz.report import notebook_finding, notebook_summary

        folder = Path(self.env.srcdir) / "tutorials"
        lines = []
        for nb in sorted(folder.glob("*.ipynb")):
            self.env.note_dependency(str(nb))
            title, question = notebook_summary(nb)
            heading, finding = notebook_finding(nb)
            lines += [f"{{doc}}`{title} <{nb.stem}>`", f": {question}" if question else ": (no question stated)"]
            if heading:
                lines += ["", f"  **Finding: {heading}.** " + " ".join(finding.split())]
            lines.append("")
        return self.parse_text_to_nodes("\n".join(lines))


def setup(app):
    app.add_directive("kafka-lines", KafkaLines)
    app.add_directive("topic-keys", TopicKeys)
    app.add_directive("kafkafmt-errors", KafkaFmtErrors)
    app.add_directive("decode-limits", DecodeLimitsTable)
    app.add_directive("bench-table", BenchTable)
    app.add_directive("tutorial-list", TutorialList)
    app.add_directive("spark-options", SparkOptions)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
