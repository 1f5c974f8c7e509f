"""``kafkafmt annotate``: every byte of a record-set file labelled with its field."""
from __future__ import annotations

from . import add_format


def register(sub) -> None:
    p = sub.add_parser("annotate", help="label every byte of a record set with its field",
                       description="Print a hex view of a record-set file where each line is one field "
                                   "(offset, bytes, field path = value), from kafkafmt's wire-layout definitions.")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--width", type=int, default=16, help="hex bytes shown per field before eliding (default 16)")
    p.add_argument("--deep", action="store_true",
                   help="also the fields inside compressed payloads (positions marked + are in the decompressed "
                        "bytes); a v0/v1 wrapper's inner offsets with the absolute offsets and the holes")
    add_format(p, ("table",))
    p.set_defaults(func=run)


def run(args) -> int:
    from ..io import open_readonly
    from ..records.annotate import render
    with open_readonly(args.file) as buf:
        print(render(buf, width=args.width, decompressed=args.deep))
    return 0
