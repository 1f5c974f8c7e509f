"""kafkafmt.audit stays on its floor (docs: architecture, floor 6): it imports the log and what lies below,
never Spark, viz, tools, scenarios, conformance or the command line; and nothing below imports it."""
from __future__ import annotations

import ast
from pathlib import Path

import kafkafmt

PKG = Path(kafkafmt.__file__).parent
ABOVE_OR_BESIDE = {"spark", "viz", "tools", "scenarios", "conformance", "cli", "audit"}


def _kafkafmt_imports(path: Path) -> set[str]:
    """The kafkafmt sub-packages/modules ``path`` imports (first component under kafkafmt)."""
    rel = path.relative_to(PKG).with_suffix("").parts
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(rel[:-node.level]) if node.level <= len(rel) else []
                parts = base + (node.module.split(".") if node.module else [])
                if not parts:
                    parts = [a.name for a in node.names]
            elif node.module and node.module.startswith("kafkafmt"):
                parts = node.module.split(".")[1:]
            else:
                continue
            out.add(parts[0] if parts else "")
        elif isinstance(node, ast.Import):
            out |= {a.name.split(".")[1] for a in node.names if a.name.startswith("kafkafmt.")}
    return out


def test_audit_imports_only_the_log_and_below():
    for path in sorted((PKG / "audit").glob("*.py")):
        assert not (_kafkafmt_imports(path) - {"audit"}) & ABOVE_OR_BESIDE, path


def test_nothing_below_imports_audit():
    below = [p for d in ("records", "broker", "log", "compression") for p in (PKG / d).rglob("*.py")]
    below += [PKG / f for f in ("config.py", "kafka_lines.py", "constants.py", "layout.py", "errors.py", "io.py")]
    for path in below:
        assert "audit" not in _kafkafmt_imports(path), path
