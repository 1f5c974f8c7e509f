"""The house rules that a scan of the package's source can check (shared/design/architecture.md):
one batch walker, one definition of every wire layout constant.

Each check parses ``kafkafmt/`` with :mod:`ast` (no import, no execution) and fails naming file,
line and what was found.  ``test_*_catches_*`` feed each check a small reintroduced offender, so a
check that can no longer fail is a failing test too.
"""
from __future__ import annotations

import ast
import functools
import sys
from pathlib import Path

import kafkafmt
from kafkafmt import constants

PACKAGE = Path(kafkafmt.__file__).resolve().parent
#: the two modules where wire layouts and their derived constants are defined
DEFINITIONS = {"layout.py", "constants.py"}
#: the one Python batch walker
WALKER = "records/walker.py"
#: compiled (numba) mirrors of the walker's rules: they cannot call Python, so they walk entries
#: themselves, with the walker's constants (imported from constants.py / layout.py), and hand anything
#: they do not expect back to it; tests/records/test_columnar_fast.py and tests/log/test_log_cleaner_scan.py
#: (memory_spans) check them against it
COMPILED_WALKS = {("records/fast/kernels.py", "decode_legacy_plain"), ("records/fast/kernels.py", "legacy_plain_run"),
                  ("records/fast/kernels.py", "decode_legacy_inner"), ("records/fast/kernels.py", "memory_spans")}

#: names a batch loop needs: the entry framing (offset:int64 size:int32, magic at byte 16) or the walker's step
FRAMING_NAMES = {"LOG_ENTRY", "LOG_OVERHEAD", "SIZE_OFFSET", "OFFSET_OFFSET", "MAGIC_OFFSET",
                 "HEADER_SIZE_UP_TO_MAGIC", "next_span", "_SIZE_AT", "_MAGIC_AT"}
#: the attribute bits of every format (LegacyRecord / DefaultRecordBatch), as literals
ATTRIBUTE_BITS = {v for k, v in vars(constants).items() if k.endswith("_MASK") and isinstance(v, int)}
#: the header offsets no other module may spell as a literal index (magic byte, end of the log header,
#: end of the v2 batch header)
HEADER_OFFSETS = {constants.MAGIC_OFFSET, constants.HEADER_SIZE_UP_TO_MAGIC, constants.RECORD_BATCH_OVERHEAD}
#: constants.py's names; a module assigning one of them (with or without leading underscores) a literal restates it
DEFINED = {k for k, v in vars(constants).items() if k.isupper() and isinstance(v, int) and not isinstance(v, bool)}


@functools.cache
def _sources() -> tuple[tuple[str, ast.Module], ...]:
    """Every module of the package, parsed once per session (the checks only read the trees)."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        out.append((rel, ast.parse(path.read_text(), filename=rel)))
    return tuple(out)


@functools.cache
def _nodes(tree: ast.Module) -> tuple[ast.AST, ...]:
    """``ast.walk(tree)``, walked once per tree (several checks read every node of every module)."""
    return tuple(ast.walk(tree))


def _names(node: ast.AST) -> set[str]:
    """Every identifier ``node`` mentions (names and attribute names)."""
    found = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            found.add(n.id)
        elif isinstance(n, ast.Attribute):
            found.add(n.attr)
    return found


def _int_literal(node: ast.AST) -> int | None:
    """The value of an integer literal (``-1`` and ``2**31 - 1`` included), else None."""
    try:
        value = ast.literal_eval(node)
    except ValueError:
        if isinstance(node, ast.BinOp) and not _names(node):
            try:
                value = eval(compile(ast.Expression(node), "<literal>", "eval"), {"__builtins__": {}})
            except Exception:
                return None
        else:
            return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _functions(tree: ast.Module):
    """``(qualified name, node)`` of every function and class, outermost first."""
    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                yield name, child
                yield from visit(child, name + ".")
            else:
                yield from visit(child, prefix)
    yield from visit(tree, "")


def batch_loops(rel: str, tree: ast.Module) -> list[str]:
    """``while`` loops that step through entries by their framing: a second batch walker."""
    found = []
    for name, fn in _functions(tree):
        if isinstance(fn, ast.ClassDef) or rel == WALKER or (rel, name.split(".")[-1]) in COMPILED_WALKS:
            continue
        for loop in (n for n in ast.walk(fn) if isinstance(n, ast.While)):
            framing = _names(loop) & FRAMING_NAMES
            if framing:
                found.append(f"{rel}:{loop.lineno} {name}: a while loop over {sorted(framing)}")
    return sorted(set(found))


def restated_constants(rel: str, tree: ast.Module) -> list[str]:
    """Literal attribute masks, literal header offsets and re-assigned layout constants outside layout/constants."""
    if rel.split("/")[-1] in DEFINITIONS and "/" not in rel:
        return []
    found = []
    for n in _nodes(tree):
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.BitAnd):
            for lit, other in ((n.left, n.right), (n.right, n.left)):
                value = _int_literal(lit)
                if value in ATTRIBUTE_BITS and any("attr" in x.lower() for x in _names(other)):
                    found.append(f"{rel}:{n.lineno}: attributes masked with the literal {value:#04x}")
        elif isinstance(n, ast.Subscript):
            index = n.slice
            parts = [index] + ([index.left, index.right] if isinstance(index, ast.BinOp) else [])
            for p in parts:
                if _int_literal(p) in HEADER_OFFSETS and isinstance(p, ast.Constant):
                    found.append(f"{rel}:{n.lineno}: the header offset {p.value} as a literal index")
        elif isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None and _int_literal(n.value) is not None:
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            for t in targets:
                if isinstance(t, ast.Name) and t.id.lstrip("_") in DEFINED | {"CODEC_MASK", "LEGACY_TS_TYPE_BIT"}:
                    found.append(f"{rel}:{n.lineno}: {t.id} = {ast.unparse(n.value)} restates constants.py")
    return found


def test_one_batch_walker():
    """Only records/walker.py steps through entries by their length field (and the compiled kernels
    that mirror it for plain v0/v1 runs, listed above)."""
    offenders = [line for rel, tree in _sources() for line in batch_loops(rel, tree)]
    assert offenders == [], "a second batch loop; walk with kafkafmt.records.walker.BatchWalker:\n" + "\n".join(offenders)


def test_no_restated_layout_constant():
    offenders = [line for rel, tree in _sources() for line in restated_constants(rel, tree)]
    assert offenders == [], "use kafkafmt.layout / kafkafmt.constants:\n" + "\n".join(offenders)


# --- the checks themselves fail on what they guard against ---------------------------------------------

SECOND_LOOP = '''
import os
from ..constants import HEADER_SIZE_UP_TO_MAGIC
from ..records.walker import FILE, BatchSpan, next_span

class FileRecords:
    def batches_from(self, start=0, end=None):
        pos = start
        while end - pos >= FILE.header:
            header = os.pread(self._fd, HEADER_SIZE_UP_TO_MAGIC, pos)
            span = next_span(header, pos, end, FILE, base=pos)
            if not isinstance(span, BatchSpan):
                return
            yield span
            pos = span.end
'''

HAND_WALK = '''
import struct
from ..constants import LOG_OVERHEAD

def spans(buf):
    p = 0
    while p + LOG_OVERHEAD <= len(buf):
        offset, size = struct.unpack_from(">qi", buf, p)
        yield p
        p += LOG_OVERHEAD + size
'''

RESTATED = '''
_CODEC_MASK = 0x07
_NO_TIMESTAMP = -1
INT32_MAX = 2**31 - 1

def codec(batch, data, p):
    return batch.attributes & 7, data[p + 16] < 2, data[16], data[p + _ATTRS_AT] & 0x08
'''


def test_batch_loop_check_catches_the_old_file_loop():
    assert len(batch_loops("log/file_records.py", ast.parse(SECOND_LOOP))) == 1
    assert len(batch_loops("dump.py", ast.parse(HAND_WALK))) == 1
    assert batch_loops(WALKER, ast.parse(SECOND_LOOP)) == []


def test_constant_check_catches_masks_offsets_and_restated_names():
    found = restated_constants("records/columnar.py", ast.parse(RESTATED))
    assert sorted(f.split(": ", 1)[1] for f in found) == sorted([
        "_CODEC_MASK = 7 restates constants.py",
        "_NO_TIMESTAMP = -1 restates constants.py",
        "INT32_MAX = 2 ** 31 - 1 restates constants.py",
        "attributes masked with the literal 0x07",
        "the header offset 16 as a literal index",
        "the header offset 16 as a literal index",
        "attributes masked with the literal 0x08",
    ])
    assert restated_constants("constants.py", ast.parse(RESTATED)) == []


# --- the floors (shared/design/architecture.md), from the code's imports --------------------------------

#: the part of the package each top-level name belongs to, and that part's floor; a module imports only
#: its own part or a lower floor
PARTS = {
    **dict.fromkeys(["layout", "constants", "errors", "crc", "varint", "io", "limits", "kernel_mode", ""], "ground"),
    "compression": "codecs", "config": "codecs", "kafka_lines": "codecs", "line_verdicts": "codecs",
    "records": "records",
    # the records floor's modules under their short public names (re-exports: kafkafmt.MODULE_ALIASES)
    **dict.fromkeys(["spec", "annotate", "dump", "kip228", "samples"], "records"),
    "broker": "broker", "log": "log",
    **dict.fromkeys(["gen", "scenarios", "spark", "audit", "probes", "costs"], None),  # each its own part
    "viz": "viz",
    **dict.fromkeys(["tools", "cli", "__main__"], "tools"),
}
FLOOR = {"ground": 1, "codecs": 2, "records": 3, "broker": 4, "log": 5, "gen": 6, "scenarios": 6, "spark": 6,
         "audit": 6, "probes": 6, "costs": 6, "viz": 7, "tools": 8}
#: imports the architecture allows between parts of one floor: Spark reads the audit, and the pipeline reads
#: the generator's manifest (kafkafmt-gen.json) and its topic settings (gen.workload_file.log_config)
#: and the audit reads topic settings the same way (gen.workload_file.log_config); the pipeline's conversion costs
#: carry kafkafmt.costs' prediction
SIDEWAYS = {("spark", "audit"), ("spark", "gen"), ("audit", "gen"), ("spark", "costs")}
#: import circles today (sorted module names); none since the KIP-33 comparison moved to kafkafmt.gen
KNOWN_CIRCLES: list[list[str]] = []


def _module_name(rel: str) -> str:
    parts = ["kafkafmt"] + rel[:-3].split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _part(module: str) -> str:
    top = module.split(".")[1] if "." in module else ""
    part = PARTS.get(top, top)
    return top if part is None else part


def module_imports(sources) -> dict[str, set[str]]:
    """``{module: modules of kafkafmt it imports}``, at module level or inside a function alike."""
    modules = {_module_name(rel) for rel, _ in sources}
    graph = {}
    for rel, tree in sources:
        me = _module_name(rel)
        package = me.split(".") if rel.endswith("__init__.py") else me.split(".")[:-1]
        found = set()
        for n in _nodes(tree):
            if isinstance(n, ast.ImportFrom):
                base = ".".join(package[:len(package) - n.level + 1] + ([n.module] if n.module else [])) \
                    if n.level else n.module
                for a in n.names:
                    found.add(f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base)
            elif isinstance(n, ast.Import):
                found.update(a.name for a in n.names)
        graph[me] = {m for m in found if m in modules and m != me}
    return graph


def upward_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """``(importer, imported)`` for every import of a higher floor, or of another part of the same floor."""
    out = []
    for a, targets in graph.items():
        for b in targets:
            pa, pb = _part(a), _part(b)
            if pa != pb and (FLOOR[pb] > FLOOR[pa] or FLOOR[pb] == FLOOR[pa] and (pa, pb) not in SIDEWAYS):
                out.append((a, b))
    return sorted(out)


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def test_every_module_has_a_floor():
    unknown = {_module_name(rel) for rel, _ in _sources() if _part(_module_name(rel)) not in FLOOR}
    assert unknown == set(), "add the new part to PARTS/FLOOR (and to shared/design/architecture.md)"


def test_no_upward_import():
    found = upward_imports(module_imports(_sources()))
    assert found == [], "an import points up: " + ", ".join(f"{a} -> {b}" for a, b in found)


def test_no_import_circle():
    assert import_circles(module_imports(_sources())) == KNOWN_CIRCLES


def test_floor_checks_catch_an_upward_import_and_a_circle():
    graph = {"kafkafmt.records.memory": {"kafkafmt.log.segment"}, "kafkafmt.log.segment": {"kafkafmt.records.memory"},
             "kafkafmt.spark.plan": {"kafkafmt.audit.x", "kafkafmt.log.view"}, "kafkafmt.scenarios.x": {"kafkafmt.spark.plan"},
             "kafkafmt.records.dump_log": {"kafkafmt.records.walker"}, "kafkafmt.constants": {"kafkafmt.layout"}}
    assert upward_imports(graph) == [("kafkafmt.records.memory", "kafkafmt.log.segment"),
                                     ("kafkafmt.scenarios.x", "kafkafmt.spark.plan")]
    assert import_circles(graph) == [["kafkafmt.log.segment", "kafkafmt.records.memory"]]
    tree = ast.parse("from ..log import view\nfrom . import walker\nimport kafkafmt.cli\n")
    assert module_imports([("records/memory.py", tree), ("log/view.py", ast.parse("")), ("log/__init__.py", ast.parse("")),
                           ("records/walker.py", ast.parse("")), ("cli.py", ast.parse(""))])["kafkafmt.records.memory"] \
        == {"kafkafmt.log.view", "kafkafmt.records.walker", "kafkafmt.cli"}


# --- the product apart from its test rig -----------------------------------------------------------------

REPO = PACKAGE.parent
#: where the test rig and the tests live in a checkout; the wheel holds none of it
RIG_DIRS = ("conformance", "tests")
#: names of a checkout's root a module must not compute
CHECKOUT_NAMES = {"REPO_ROOT", "REPO", "ROOT", "CHECKOUT"}


def rig_modules() -> set[str]:
    """The top-level names the rig and the tests make importable (``kafkarig``, ``ci_mode``, ...), and the
    directories themselves (``tests``, ``conformance``)."""
    names = set(RIG_DIRS)
    for top in RIG_DIRS:
        for path in (REPO / top).iterdir():
            if path.suffix == ".py" or (path / "__init__.py").is_file():
                names.add(path.stem)
    return names


def _imported_tops(tree: ast.AST) -> set[str]:
    found = set()
    for n in _nodes(tree):
        if isinstance(n, ast.ImportFrom) and n.level == 0 and n.module:
            found.add(n.module.split(".")[0])
        elif isinstance(n, ast.Import):
            found.update(a.name.split(".")[0] for a in n.names)
    return found


def rig_imports(sources, rig: set[str]) -> list[str]:
    """``"path: name"`` for every import of the test rig or the tests by a module of the package."""
    return sorted(f"{rel}: {name}" for rel, tree in sources for name in _imported_tops(tree) & rig)


def _file_climb(node: ast.AST) -> int | None:
    """How many directories ``node`` climbs from ``__file__``'s (``Path(__file__).parent`` is 0,
    ``.parent.parent`` and ``.parents[1]`` are 1, ``os.path.dirname(__file__)`` is 0); None if not such a path."""
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        if isinstance(node.value, ast.Attribute) and node.value.attr == "parent" or _file_rooted(node.value):
            inner = _file_climb(node.value)
            return 0 if inner is None else inner + 1
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "parents" \
            and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int):
        return node.slice.value if _file_rooted(node.value.value) else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "dirname" and node.args:
        inner = _file_climb(node.args[0])
        return (0 if _file_rooted(node.args[0]) else None) if inner is None else inner + 1
    return None


def _file_rooted(node: ast.AST) -> bool:
    """``__file__``, or a call/attribute chain on it (``Path(__file__)``, ``Path(__file__).resolve()``)."""
    while True:
        if isinstance(node, ast.Name):
            return node.id == "__file__"
        if isinstance(node, ast.Call):
            node = node.args[0] if node.args and not isinstance(node.func, ast.Attribute) else node.func
        elif isinstance(node, ast.Attribute) and node.attr not in ("parent", "parents"):
            node = node.value
        else:
            return False


#: calls that make a path of their first argument
PATH_MAKERS = {"Path", "PurePath", "open", "join", "exists", "isfile", "isdir"}


def _callee(call: ast.Call) -> str | None:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def checkout_paths(sources) -> list[str]:
    """``"path:line: what"`` for every module that reaches for a source checkout: a name of the checkout's
    root, a path climbing from ``__file__`` out of the package, or a path spelled from a checkout
    directory (``Path("conformance/...")``, ``open("tests/...")``)."""
    out = []
    for rel, tree in sources:
        depth = rel.count("/")  # directories between the module and the package root
        for n in _nodes(tree):
            if isinstance(n, ast.Name) and n.id in CHECKOUT_NAMES:
                out.append(f"{rel}:{n.lineno}: the checkout's root {n.id}")
            climb = _file_climb(n)
            if climb is not None and climb > depth:
                out.append(f"{rel}:{n.lineno}: a path climbing out of the package from __file__")
            if isinstance(n, ast.Call) and _callee(n) in PATH_MAKERS and n.args and isinstance(n.args[0], ast.Constant) \
                    and isinstance(n.args[0].value, str) \
                    and n.args[0].value.split("/")[0] in (*RIG_DIRS, "benchmarks", "notebooks", "kafkafmt"):
                out.append(f"{rel}:{n.lineno}: a checkout path {n.args[0].value!r}")
    return sorted(out, key=lambda f: (f.split(":")[0], int(f.split(":")[1])))


def test_the_package_never_imports_the_test_rig():
    rig = rig_modules()
    assert {"kafkarig", "ci_mode", "tests", "conformance"} <= rig
    assert rig_imports(_sources(), rig) == []


def test_the_package_uses_no_checkout_path():
    assert checkout_paths(_sources()) == []


def test_rig_checks_catch_an_import_and_a_checkout_path():
    rig = rig_modules()
    code = ast.parse("import kafkarig.broker\nfrom tests.ci_mode import in_ci\nfrom ci_mode import skip_or_fail\n"
                     "from .records import walker\nimport os\n")
    assert rig_imports([("log/x.py", code)], rig) == ["log/x.py: ci_mode", "log/x.py: kafkarig", "log/x.py: tests"]
    code = ast.parse("from pathlib import Path\nimport os\n"
                     "REPO_ROOT = Path(__file__).resolve().parents[2]\n"
                     "a = Path(__file__).resolve().parent.parent.parent / 'conformance'\n"
                     "b = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))\n"
                     "c = Path('conformance/.cache/lib')\n"
                     "d = {}.get('conformance', [])\n"
                     "ok = Path(__file__).parent / 'data'\n"
                     "also_ok = Path(__file__).resolve().parents[1] / 'shipped'\n")
    assert checkout_paths([("gen/x.py", code)]) == [
        "gen/x.py:3: the checkout's root REPO_ROOT", "gen/x.py:3: a path climbing out of the package from __file__",
        "gen/x.py:4: a path climbing out of the package from __file__",
        "gen/x.py:5: a path climbing out of the package from __file__",
        "gen/x.py:6: a checkout path 'conformance/.cache/lib'"]


# --- no function over 80 lines ---------------------------------------------------------------------------

MAX_FUNCTION_LINES = 80
#: today's long functions that are another piece of work's (broker/fetch.py and broker/validator.py are
#: being rewritten as sequences of named steps); shrink this as they are broken up
KNOWN_LONG: set[str] = set()


def long_functions(sources) -> dict[str, int]:
    """``{"path:qualified name": lines}`` of every function longer than MAX_FUNCTION_LINES (def to last line)."""
    out = {}
    for rel, tree in sources:
        for name, fn in _functions(tree):
            if not isinstance(fn, ast.ClassDef) and fn.end_lineno - fn.lineno + 1 > MAX_FUNCTION_LINES:
                out[f"{rel}:{name}"] = fn.end_lineno - fn.lineno + 1
    return out


def test_no_function_over_80_lines():
    found = long_functions(_sources())
    assert sorted(set(found) - KNOWN_LONG) == [], found
    assert sorted(KNOWN_LONG - set(found)) == [], "fixed: remove it from KNOWN_LONG"


def test_length_check_counts_from_def_to_last_line():
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES - 1))
    assert long_functions([("a.py", ast.parse(f"def f():\n{body}"))]) == {}
    method = "".join("    " + line + "\n" for line in f"def f(self):\n{body}    y = 1".splitlines())
    assert long_functions([("a.py", ast.parse(f"class C:\n{method}"))]) == {"a.py:C.f": MAX_FUNCTION_LINES + 1}


def test_public_module_aliases_re_export_the_records_modules():
    """``kafkafmt.spec`` & co. (the spellings of the help texts and the notebooks) are plain modules that
    re-export a records-floor module: every public name is the records module's own object, and they hold
    nothing else (no state that could differ between the two names)."""
    import importlib

    import kafkafmt
    for alias, target in kafkafmt.MODULE_ALIASES.items():
        short, full = importlib.import_module(alias), importlib.import_module(target)
        assert short is not full and short.__all__ == full.__all__, alias
        for name in full.__all__:
            assert getattr(short, name) is getattr(full, name), f"{alias}.{name}"
        own = {n for n, v in vars(short).items() if not n.startswith("__") and getattr(full, n, object()) is not v}
        assert own == set(), f"{alias} defines {sorted(own)} of its own"
    assert not any(type(f).__name__ == "_ModuleAlias" for f in sys.meta_path), "no import hook"


# --- one record builder for the views ------------------------------------------------------------------------

#: the parts that show records rather than model a Kafka component: they build records with
#: kafkafmt.records.build_records, the one way the views, samples and probes write them
VIEW_PARTS = ("viz/", "probes/")


def builder_calls(sources) -> list[str]:
    """``"path:line"`` for every ``MemoryRecordsBuilder(...)`` made in a view or a probe."""
    return [f"{rel}:{n.lineno}" for rel, tree in sources if rel.startswith(VIEW_PARTS) for n in _nodes(tree)
            if isinstance(n, ast.Call) and _callee(n) == "MemoryRecordsBuilder"]


def test_views_build_records_with_the_one_builder():
    found = builder_calls(_sources())
    assert found == [], "use kafkafmt.records.build_records: " + ", ".join(found)


def test_builder_check_catches_a_builder_in_a_view():
    code = ast.parse("from ..records import MemoryRecordsBuilder, records\n"
                     "def batch():\n    b = MemoryRecordsBuilder(2, 'none')\n    b.append(0, b'k', b'v')\n"
                     "    return records.MemoryRecordsBuilder(2).build()\n")
    assert builder_calls([("viz/x.py", code), ("broker/x.py", code)]) == ["viz/x.py:3", "viz/x.py:5"]


# --- no private name read across modules ---------------------------------------------------------------------

def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_definitions(tree: ast.Module) -> set[str]:
    """The private names a module defines: functions, classes, module and class attributes, ``self._x``."""
    found = set()
    for n in _nodes(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(n.name)
        elif isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for t in n.targets if isinstance(n, ast.Assign) else [n.target]:
                for e in ast.walk(t):
                    if isinstance(e, ast.Name):
                        found.add(e.id)
                    elif isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id in ("self", "cls"):
                        found.add(e.attr)
    return {f for f in found if _private(f)}


def private_reads(sources) -> list[str]:
    """``"path:line: what"`` for every private name of kafkafmt used outside the module that defines it: imported
    (``from .builder import _headers``), or read from another module or another module's object
    (``plots._figure``, ``log._policy``, ``index._truncate_to_entries``).  A class's own methods may use its
    private state wherever they are written (``self._x`` in a mixin)."""
    own = {rel: private_definitions(tree) for rel, tree in sources}
    every = set().union(*own.values())
    out = []
    for rel, tree in sources:
        for n in _nodes(tree):
            if isinstance(n, ast.ImportFrom) and (n.level or (n.module or "").split(".")[0] == "kafkafmt"):
                out += [f"{rel}:{n.lineno}: imports {a.name}" for a in n.names if _private(a.name)]
            elif isinstance(n, ast.Attribute) and _private(n.attr) and n.attr in every - own[rel] \
                    and not (isinstance(n.value, ast.Name) and n.value.id in ("self", "cls")):
                out.append(f"{rel}:{n.lineno}: reads {ast.unparse(n)}")
    return sorted(out)


def test_no_private_name_read_across_modules():
    found = private_reads(_sources())
    assert found == [], "give it a public, documented name (or move the code to its owner):\n" + "\n".join(found)


def test_private_check_catches_an_import_and_a_read():
    owner = ast.parse("class Log:\n    def __init__(self):\n        self._policy = 1\n"
                      "    def _add_segment(self, s):\n        pass\n\ndef _headers(h):\n    return h\n")
    user = ast.parse("from .builder import _headers, build\nfrom .. import compression as _compression\n"
                     "def clean(log, seg):\n    log._add_segment(seg)\n    _compression.x()\n"
                     "    return log._policy, self._policy, log.__class__, log._unknown\n")
    mixin = ast.parse("class Loading:\n    def load(self):\n        self._add_segment(1)\n        return self._policy\n")
    assert private_reads([("log/log.py", owner), ("log/cleaner/clean.py", user), ("log/loader.py", mixin)]) == [
        "log/cleaner/clean.py:1: imports _headers", "log/cleaner/clean.py:4: reads log._add_segment",
        "log/cleaner/clean.py:6: reads log._policy"]
    same = ast.parse("class Log:\n    def __init__(self):\n        self._policy = 1\n"
                     "    def same_policy(self, other):\n        return other._policy == self._policy\n")
    assert private_reads([("log/log.py", same)]) == []
