"""``kafkafmt dump``: kafka-dump-log's output for ``.log``, ``.index``, ``.timeindex`` and raw captures."""
from __future__ import annotations

import json
import os
import sys

from ..dump import dump_log
from ..errors import KafkaFmtError
from ..io import open_readonly
from ..spec import batch_to_json
from ..dump import iter_file_batches


def register(sub) -> None:
    p = sub.add_parser(
        "dump", help="print record sets and index files as kafka-dump-log does",
        description="Print the batches (and with --deep the records) of record-set files: Kafka .log "
                    "segments or raw captures (e.g. a .bin of one produce/fetch payload, mixed magics "
                    "allowed), in kafka-dump-log's exact line format; .index and .timeindex files are "
                    "dumped and checked as kafka-dump-log does. --json prints one JSON object per batch "
                    "(JSON Lines) that `kafkafmt build` turns back into bytes.")
    p.add_argument("files", nargs="*", metavar="FILE", help="files to dump")
    p.add_argument("--files", dest="files_csv", metavar="F1,F2", help="kafka-dump-log style comma-separated list")
    p.add_argument("--deep", "--deep-iteration", dest="deep", action="store_true",
                   help="print one line per record, decompressing wrappers and batches")
    p.add_argument("--print-data-log", action="store_true", help="also print keys and payloads (implies --deep)")
    p.add_argument("--skip-record-metadata", action="store_true", help="omit per-record metadata")
    p.add_argument("--max-bytes", type=int, default=None, help="dump only the first N bytes of each record file")
    p.add_argument("--verify-index-only", action="store_true", help="check indexes against the log, print no entries")
    p.add_argument("--index-sanity-check", action="store_true", help="only run the index sanity check")
    p.add_argument("--max-message-size", type=int, default=5242880, help="bytes read per index entry (default 5242880)")
    p.add_argument("--json", action="store_true",
                   help="JSON Lines: one object per batch, records nested with --deep (default on with --json)")
    p.set_defaults(func=run)


def _start_offset(name: str) -> int | None:
    stem = name.split(".")[0]
    return int(stem) if stem.isdigit() else None


def run(args) -> int:
    files = list(args.files)
    if args.files_csv:
        files += [f for f in args.files_csv.split(",") if f]
    if not files:
        print('Missing required argument "[files]"', file=sys.stderr)
        return 2
    rc = 0
    stderr_tail: list[str] = []
    for path in files:
        name = os.path.basename(path)
        suffix = name[name.rfind("."):] if "." in name else ""
        if not os.path.exists(path):
            print(f"kafkafmt: error: no such file: {path}", file=sys.stderr)
            rc = 1
            continue
        if suffix in (".index", ".timeindex"):
            if args.json:
                print(f"kafkafmt: --json does not apply to index files, skipping {path}", file=sys.stderr)
                continue
            print(f"Dumping {path}")
            try:
                from ..log import dump as index_dump
            except ImportError:  # pragma: no cover - index support ships with kafkafmt.log
                print("kafkafmt: index dumping needs kafkafmt.log", file=sys.stderr)
                return 1
            fn = index_dump.dump_index if suffix == ".index" else index_dump.dump_time_index
            kw = {"verify_only": args.verify_index_only, "sanity_check_only": args.index_sanity_check}
            if suffix == ".index":
                kw["max_message_size"] = args.max_message_size
            try:
                out, err = fn(path, **kw)
            except KafkaFmtError as e:
                print(f"kafkafmt: error: {path}: {type(e).__name__}: {e}", file=sys.stderr)
                rc = 1
                continue
            for line in out:
                print(line)
            stderr_tail += err
            continue
        with open_readonly(path) as buf:
            if args.json:
                rc |= _dump_json(path, buf, args)
                continue
            print(f"Dumping {path}")
            start = _start_offset(name) if suffix == ".log" else None
            res = dump_log(buf, filename=name, abspath=os.path.abspath(path), deep=args.deep,
                           print_data=args.print_data_log, skip_metadata=args.skip_record_metadata,
                           max_bytes=args.max_bytes, start_offset=start, emit=print)
            stderr_tail += res.stderr
            if res.error is not None:
                print(f"kafkafmt: error: {path}: {type(res.error).__name__}: {res.error}", file=sys.stderr)
                rc = 1
    for line in stderr_tail:
        print(line, file=sys.stderr)
    return rc


def _dump_json(path: str, buf, args) -> int:
    pos = 0
    try:
        end = len(buf) if args.max_bytes is None else min(len(buf), args.max_bytes)
        for batch in iter_file_batches(buf, end=end):
            obj = {"file": path, **batch_to_json(batch, deep=True)}
            print(json.dumps(obj, separators=(",", ":")))
            pos = batch.end
        if pos < end:
            print(json.dumps({"file": path, "trailingBytes": end - pos, "position": pos}), file=sys.stderr)
    except KafkaFmtError as e:
        print(f"kafkafmt: error: {path}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0
