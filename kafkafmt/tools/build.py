"""``kafkafmt build``: write the record set a JSON spec describes (the format ``dump --json`` prints)."""
from __future__ import annotations

import sys

from . import add_format


def register(sub) -> None:
    p = sub.add_parser(
        "build", help="write the record set a JSON spec describes",
        description="Read a JSON spec (JSON Lines as printed by `kafkafmt dump --json`, a JSON array of "
                    "batch objects, or {\"batches\": [...]}) and write the record-set bytes. "
                    "`dump --json` followed by `build` reproduces uncompressed input byte for byte. "
                    "Fields left out get the values Kafka's MemoryRecordsBuilder writes. "
                    "See docs/reference/spec-format.md.")
    p.add_argument("spec", metavar="SPEC.json", help="the spec file, or - for standard input")
    p.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="where to write the bytes (atomically); inside a broker's log directory (a segment of a "
                        "<topic>-<partition> directory) the directory's .lock is taken first, and a running "
                        "broker's directory is refused unchanged")
    add_format(p, json_help="one object: {output, bytes, batches}; table: a line on stderr")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..io import atomic_write, read_input
    from ..records.spec import build_record_set, load_spec
    text = sys.stdin.buffer.read() if args.spec == "-" else read_input(args.spec)
    specs = [s for s in load_spec(text) if not (isinstance(s, dict) and "trailingBytes" in s)]
    data = build_record_set(specs)
    from ..log.lock import hold_for_file
    with hold_for_file(args.output):  # a segment of a broker's log directory: never under a running broker
        atomic_write(args.output, data)
    if args.format == "json":
        import json
        print(json.dumps({"output": args.output, "bytes": len(data), "batches": len(specs)}))
    else:
        print(f"wrote {len(data)} bytes, {len(specs)} batch(es) to {args.output}", file=sys.stderr)
    return 0
