"""Scenario files (YAML or JSON) → a checked :class:`Scenario`, with errors that name file, line and field.

The format is documented in ``docs/how-to/scenario.md``.  Every problem raises :class:`ScenarioError`
(a :class:`~kafkafmt.errors.KafkaFmtError`) whose message is one line:
``FILE:LINE: steps[2].do[0].produce.producer: unknown producer 'p9' (known: p-old, p-new)``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import yaml

from ..config import KEYS_BY_NAME, KEYS_BY_SERVER_NAME
from ..errors import KafkaFmtError
from .model import IDEMPOTENCE_MODES, BrokerSpec, ConsumerSpec, ProducerSpec, removed_properties, topic_config_for
from .quotes import QUOTES
from .versions import normalize_api_version

__all__ = ["Scenario", "Step", "ScenarioError", "load_scenario", "parse_scenario", "shipped_scenarios",
           "resolve_scenario", "ACTIONS", "EXPECT_FIELDS"]


class ScenarioError(KafkaFmtError):
    """A scenario file is malformed (the message names the file, the line and the field)."""

    kafka_exception = "ScenarioError"


#: action → (required keys, optional keys)
ACTIONS = {
    "configure": ({"broker"}, {"version", "properties", "kip228", "idempotence_modes"}),
    "produce": ({"producer"}, {"partition", "records", "timestamps"}),
    "replicate": (set(), set()),
    "consume": ({"consumer"}, {"partition", "offset"}),
    "shutdown": ({"broker"}, set()),
    "nuke": ({"broker"}, {"partitions"}),
    "start": ({"broker"}, set()),
    "elect": ({"broker", "partition"}, set()),
    "upgrade": (set(), {"producer", "consumer", "version", "produce_version", "fetch_version", "kip228",
                        "idempotence", "compression"}),
    "show_disk": ({"broker"}, {"partition"}),
    "advance_clock": ({"ms"}, set()),
    "compact": ({"broker"}, {"partition", "cleaner"}),
}
#: records one produce action may write (scenarios explain; they are not load tests)
MAX_RECORDS = 10_000
#: fields an expectation may test (PathRow fields, plus detail.<key>)
EXPECT_FIELDS = {"magic_in", "magic_out", "conversion", "recompressed", "records", "error", "request", "ok",
                 "records_touched"}
#: keys of an expectation that select rows (``producer``: a leader row of that producer's request)
SELECTORS = ("path", "actor", "partition", "producer")
_PATHS = ("producer", "leader", "follower", "consumer", "broker", "disk", "client")


@dataclass
class Step:
    name: str
    actions: list  #: [(action, args, place)]
    cite: list = field(default_factory=list)  #: quote ids
    expect: list = field(default_factory=list)  #: [(dict, place)]
    warn: list = field(default_factory=list)  #: quote ids this step is warned with
    seed_vs_kafka: str | None = None  #: where the seed and Kafka 3.9 differ at this step
    place: str = ""
    conformance: list = field(default_factory=list)  #: live-broker cases (conformance/cases) of this step


@dataclass
class Scenario:
    name: str
    title: str
    source: str
    brokers: list
    producers: dict
    consumers: dict
    partitions: list
    steps: list
    about: str = ""
    seeds: list = field(default_factory=list)


class _Doc:
    """The parsed document with a line number for every path (``steps[0].do[1].produce``)."""

    def __init__(self, source: str, text: str):
        self.source = source
        self.lines: dict[str, int] = {}
        self._seen: set[int] = set()
        try:
            node = yaml.compose(text)
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            line = mark.line + 1 if mark else "?"
            problem = getattr(e, "problem", None) or str(e).splitlines()[0]
            raise ScenarioError(f"{source}:{line}: not valid YAML/JSON: {problem}") from None
        if node is None:
            raise ScenarioError(f"{source}:1: the file is empty")
        self.data = self._py(node, "")

    def _py(self, node, path: str):
        self.lines[path] = node.start_mark.line + 1
        if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)):
            if id(node) in self._seen:  # an alias: refused, so that no file can expand without bound
                raise self.error(path, "YAML anchors and aliases are not supported in scenario files")
            self._seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            out = {}
            for k, v in node.value:
                key = str(yaml.safe_load(yaml.serialize(k)))
                out[key] = self._py(v, f"{path}.{key}" if path else key)
            return out
        if isinstance(node, yaml.SequenceNode):
            return [self._py(v, f"{path}[{i}]") for i, v in enumerate(node.value)]
        return yaml.safe_load(yaml.serialize(node))

    def error(self, path: str, msg: str) -> ScenarioError:
        p = path
        while p and p not in self.lines:
            p = p.rsplit(".", 1)[0] if "." in p else ""
        line = self.lines.get(p, 1)
        return ScenarioError(f"{self.source}:{line}: {path or '(top)'}: {msg}")


def _get(doc: _Doc, d: dict, key: str, path: str, kind, *, required: bool = True, default=None):
    full = f"{path}.{key}" if path else key
    if key not in d:
        if required:
            raise doc.error(path, f"missing field '{key}'")
        return default
    v = d[key]
    if kind is not None and not isinstance(v, kind) or (kind is int and isinstance(v, bool)):
        want = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise doc.error(full, f"expected {want}, got {type(v).__name__} {v!r}")
    return v


def _names(items) -> str:
    return ", ".join(items) or "none"


def parse_scenario(text: str, source: str = "<scenario>") -> Scenario:
    """Parse and check a scenario document (see ``docs/how-to/scenario.md``)."""
    doc = _Doc(source, text)
    top = doc.data
    if not isinstance(top, dict):
        raise doc.error("", "the top level must be a mapping")
    unknown = set(top) - {"name", "title", "about", "seeds", "brokers", "producers", "consumers", "partitions",
                          "steps"}
    if unknown:
        raise doc.error(sorted(unknown)[0], "unknown field (expected name, title, about, seeds, brokers, producers, "
                                            "consumers, partitions, steps)")
    name = str(_get(doc, top, "name", "", (str,)))
    brokers = [_broker(doc, b, f"brokers[{i}]") for i, b in enumerate(_get(doc, top, "brokers", "", list))]
    if not brokers:
        raise doc.error("brokers", "at least one broker is needed")
    for kind in ("brokers", "producers", "consumers"):
        seen = set()
        for i, item in enumerate(top.get(kind) or []):
            n = item.get("name") if isinstance(item, dict) else None
            if n in seen:
                raise doc.error(f"{kind}[{i}].name", f"duplicate name {n!r}")
            seen.add(n)
    producers = {}
    for i, p in enumerate(_get(doc, top, "producers", "", list, required=False, default=[])):
        spec = _producer(doc, p, f"producers[{i}]")
        producers[spec.name] = spec
    consumers = {}
    for i, c in enumerate(_get(doc, top, "consumers", "", list, required=False, default=[])):
        spec = _consumer(doc, c, f"consumers[{i}]")
        consumers[spec.name] = spec
    bnames = [b.name for b in brokers]
    partitions = []
    for i, p in enumerate(_get(doc, top, "partitions", "", list, required=False, default=[{}])):
        path = f"partitions[{i}]"
        if not isinstance(p, dict):
            raise doc.error(path, "expected a mapping with leader and replicas")
        for k in ("leader",):
            if k in p and p[k] not in bnames:
                raise doc.error(f"{path}.{k}", f"unknown broker {p[k]!r} (known: {_names(bnames)})")
        for j, r in enumerate(p.get("replicas", [])):
            if r not in bnames:
                raise doc.error(f"{path}.replicas[{j}]", f"unknown broker {r!r} (known: {_names(bnames)})")
        partitions.append(p)
    ctx = {"brokers": bnames, "producers": list(producers), "consumers": list(consumers),
           "partitions": len(partitions)}
    steps = [_step(doc, s, f"steps[{i}]", ctx) for i, s in enumerate(_get(doc, top, "steps", "", list))]
    return Scenario(name, str(top.get("title", name)), source, brokers, producers, consumers, partitions, steps,
                    about=str(top.get("about", "")), seeds=[str(s) for s in top.get("seeds", [])])


def _check_keys(doc: _Doc, d, path: str, allowed: set, what: str):
    if not isinstance(d, dict):
        raise doc.error(path, f"expected a mapping ({what})")
    for k in d:
        if k not in allowed:
            raise doc.error(f"{path}.{k}", f"unknown field (a {what} has: {_names(sorted(allowed))})")


def _version(doc: _Doc, d: dict, path: str) -> str:
    if "version" not in d:
        return "3.9"
    v = d["version"]
    if isinstance(v, float):
        raise doc.error(f"{path}.version", f"write the version as a string (\"{v}\" reads as the number {v})")
    try:
        normalize_api_version(str(v))
    except KafkaFmtError as e:
        raise doc.error(f"{path}.version", e.reason) from None
    return str(v)


def _properties(doc: _Doc, d: dict, path: str) -> dict:
    props = _get(doc, d, "properties", path, dict, required=False, default={})
    for k, v in props.items():
        if k not in KEYS_BY_NAME and k not in KEYS_BY_SERVER_NAME and k != "inter.broker.protocol.version":
            raise doc.error(f"{path}.properties.{k}", "not a Kafka topic property or inter.broker.protocol.version")
        if isinstance(v, float):
            raise doc.error(f"{path}.properties.{k}", f"write the value as a string (\"{v}\" reads as a number)")
    return {str(k): v for k, v in props.items()}


def _broker(doc: _Doc, d, path: str) -> BrokerSpec:
    _check_keys(doc, d, path, {"name", "version", "properties", "kip228", "idempotence_modes"}, "broker")
    spec = BrokerSpec(str(_get(doc, d, "name", path, (str,))), _version(doc, d, path), _properties(doc, d, path),
                      bool(d.get("kip228", False)), bool(d.get("idempotence_modes", False)))
    gone = removed_properties(spec)
    if gone:
        raise doc.error(f"{path}.properties.{gone[0]}", f"Kafka {spec.kafka_line} no longer knows it (KIP-724)")
    try:
        topic_config_for(spec)
    except KafkaFmtError as e:
        raise doc.error(f"{path}.properties", e.reason) from None
    return spec


def _producer(doc: _Doc, d, path: str) -> ProducerSpec:
    _check_keys(doc, d, path, {"name", "version", "produce_version", "compression", "idempotence", "kip228"},
                "producer")
    _mode(doc, d, path)
    _codec(doc, d, path)
    return ProducerSpec(str(_get(doc, d, "name", path, (str,))), _version(doc, d, path),
                        _get(doc, d, "produce_version", path, int, required=False),
                        str(d.get("compression", "none")), str(d.get("idempotence", "off")).lower(),
                        bool(d.get("kip228", False)))


def _mode(doc: _Doc, d, path: str):
    if "idempotence" in d and str(d["idempotence"]).lower() not in IDEMPOTENCE_MODES:
        raise doc.error(f"{path}.idempotence", f"unknown mode {d['idempotence']!r} (one of {_names(IDEMPOTENCE_MODES)})")


def _codec(doc: _Doc, d, path: str):
    if "compression" in d and str(d["compression"]).lower() not in ("none", "gzip", "snappy", "lz4", "zstd"):
        raise doc.error(f"{path}.compression", f"unknown codec {d['compression']!r} (none, gzip, snappy, lz4, zstd)")


def _consumer(doc: _Doc, d, path: str) -> ConsumerSpec:
    _check_keys(doc, d, path, {"name", "version", "fetch_version", "kip228"}, "consumer")
    return ConsumerSpec(str(_get(doc, d, "name", path, (str,))), _version(doc, d, path),
                        _get(doc, d, "fetch_version", path, int, required=False), bool(d.get("kip228", False)))


def _quote_ids(doc: _Doc, v, path: str) -> list:
    ids = [v] if isinstance(v, str) else v
    if not isinstance(ids, list):
        raise doc.error(path, "expected a quote id or a list of quote ids")
    for i, q in enumerate(ids):
        if q not in QUOTES:
            raise doc.error(f"{path}[{i}]", f"unknown seed quote id {q!r} (see kafkafmt.scenarios.quotes)")
    return list(ids)


def _step(doc: _Doc, d, path: str, ctx: dict) -> Step:
    _check_keys(doc, d, path, {"name", "do", "cite", "expect", "warn", "seed_vs_kafka", "conformance"}, "step")
    conf = d.get("conformance", [])
    if not isinstance(conf, list) or not all(isinstance(c, str) and c.count("/") == 1 for c in conf):
        raise doc.error(f"{path}.conformance", "expected a list of conformance case ids ('group/name')")
    actions = []
    for i, a in enumerate(_get(doc, d, "do", path, list)):
        apath = f"{path}.do[{i}]"
        if not isinstance(a, dict) or len(a) != 1:
            raise doc.error(apath, f"an action is a mapping with one key ({_names(ACTIONS)})")
        (act, args), = a.items()
        if act not in ACTIONS:
            raise doc.error(f"{apath}.{act}", f"unknown action (one of {_names(ACTIONS)})")
        args = {} if args is None else args
        required, optional = ACTIONS[act]
        _check_keys(doc, args, f"{apath}.{act}", required | optional, f"'{act}' action")
        for k in required:
            if k not in args:
                raise doc.error(f"{apath}.{act}", f"missing field '{k}'")
        _check_refs(doc, act, args, f"{apath}.{act}", ctx)
        actions.append((act, args, f"{doc.source}:{doc.lines.get(apath, 1)}: {apath}.{act}"))
    expect = []
    for i, e in enumerate(_get(doc, d, "expect", path, list, required=False, default=[])):
        epath = f"{path}.expect[{i}]"
        if not isinstance(e, dict) or "path" not in e:
            raise doc.error(epath, "an expectation is a mapping with 'path' and fields to compare")
        if e["path"] not in _PATHS:
            raise doc.error(f"{epath}.path", f"unknown path {e['path']!r} (one of {_names(_PATHS)})")
        for k in e:
            if k not in SELECTORS and k not in EXPECT_FIELDS and not k.startswith("detail."):
                raise doc.error(f"{epath}.{k}", f"unknown field (one of {_names(sorted(EXPECT_FIELDS))} or detail.<key>)")
        expect.append((e, epath))
    return Step(str(d.get("name", path)), actions, _quote_ids(doc, d.get("cite", []), f"{path}.cite"), expect,
                _quote_ids(doc, d.get("warn", []), f"{path}.warn"), d.get("seed_vs_kafka"), path, list(conf))


def _check_refs(doc: _Doc, act: str, args: dict, path: str, ctx: dict):
    for key, kind in (("broker", "brokers"), ("producer", "producers"), ("consumer", "consumers")):
        if key in args:
            v = args[key]
            ok = v in ctx[kind] or (key == "broker" and act == "configure" and v == "all")
            if not ok:
                raise doc.error(f"{path}.{key}", f"unknown {key} {v!r} (known: {_names(ctx[kind])})")
    if "partition" in args:
        p = args["partition"]
        if not isinstance(p, int) or isinstance(p, bool) or not 0 <= p < ctx["partitions"]:
            raise doc.error(f"{path}.partition", f"expected a partition number 0..{ctx['partitions'] - 1}, got {p!r}")
    for key in ("records", "offset", "ms", "produce_version", "fetch_version"):
        if key in args and (not isinstance(args[key], int) or isinstance(args[key], bool) or args[key] < 0):
            raise doc.error(f"{path}.{key}", f"expected a non-negative integer, got {args[key]!r}")
    for key in ("records", "timestamps"):
        n = args.get(key)
        n = len(n) if isinstance(n, list) else n
        if isinstance(n, int) and n > MAX_RECORDS:
            raise doc.error(f"{path}.{key}", f"at most {MAX_RECORDS} records per produce step, got {n}")
    if "timestamps" in args and (not isinstance(args["timestamps"], list) or not all(
            isinstance(t, int) and not isinstance(t, bool) or t is None for t in args["timestamps"])):
        raise doc.error(f"{path}.timestamps", "expected a list of integers (ms) or nulls (now)")
    if "partitions" in args and args["partitions"] != "led" and not (
            isinstance(args["partitions"], list) and all(isinstance(p, int) for p in args["partitions"])):
        raise doc.error(f"{path}.partitions", "expected a list of partition numbers or 'led'")
    if "properties" in args:
        _properties(doc, args, path)
    _version(doc, args, path)
    _mode(doc, args, path)
    _codec(doc, args, path)


# ------------------------------------------------------------------------------------------------
def shipped_scenarios() -> dict[str, Path]:
    """The scenarios shipped in the package: name (file stem) → path."""
    root = resources.files("kafkafmt.scenarios") / "data"
    return {Path(str(p)).stem: Path(str(p)) for p in sorted(root.iterdir(), key=lambda x: x.name)
            if p.name.endswith((".yaml", ".yml", ".json"))}


def resolve_scenario(name_or_path) -> Path:
    """A file path, or the name of a shipped scenario."""
    p = Path(name_or_path)
    if p.is_file():
        return p
    shipped = shipped_scenarios()
    if str(name_or_path) in shipped:
        return shipped[str(name_or_path)]
    raise ScenarioError(f"{name_or_path}: no such file, and no shipped scenario of that name "
                        f"(shipped: {_names(shipped)})")


def load_scenario(name_or_path) -> Scenario:
    p = resolve_scenario(name_or_path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ScenarioError(f"{p}: cannot read: {e}") from None
    return parse_scenario(text, str(p))
