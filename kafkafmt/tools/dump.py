"""``kafkafmt dump``: kafka-dump-log's output for ``.log``, ``.index``, ``.timeindex`` and raw captures."""
from __future__ import annotations

import json
import os
import sys

from ..errors import KafkaFmtError, NoSuchFileError
from . import add_format, add_kafka_line, compile_notice


def register(sub) -> None:
    p = sub.add_parser(
        "dump", help="print record sets and index files as kafka-dump-log does",
        description="Print the batches (and with --deep the records) of record-set files: Kafka .log "
                    "segments or raw captures (e.g. a .bin of one produce/fetch payload, mixed magics "
                    "allowed), in kafka-dump-log's exact line format; .index and .timeindex files are "
                    "dumped and checked as kafka-dump-log does. --format json (or --json) prints one JSON object per batch "
                    "(JSON Lines) that `kafkafmt build` turns back into bytes.")
    p.add_argument("files", nargs="*", metavar="FILE", help="files to dump")
    p.add_argument("--files", dest="files_csv", metavar="F1,F2", help="kafka-dump-log style comma-separated list")
    p.add_argument("--deep", "--deep-iteration", dest="deep", action="store_true",
                   help="print one line per record, decompressing wrappers and batches")
    p.add_argument("--print-data-log", action="store_true",
                   help="also print keys and payloads (implies --deep on lines from 1.1 on: row dump.print_data_deep)")
    p.add_argument("--skip-record-metadata", action="store_true", help="omit per-record metadata")
    add_kafka_line(p, what="imitate the kafka-dump-log of: its line format (row dump.format: 0.9 … 2.8 print "
                   "their own DumpLogSegments' lines; 4.4's v0/v1 record lines end without the stray '}', "
                   "KAFKA-14579)")
    p.add_argument("--max-bytes", type=int, default=None, help="dump only the first N bytes of each record file")
    p.add_argument("--verify-index-only", action="store_true", help="check indexes against the log, print no entries")
    p.add_argument("--index-sanity-check", action="store_true", help="only run the index sanity check")
    p.add_argument("--max-message-size", type=int, default=5242880, help="bytes read per index entry (default 5242880)")
    add_format(p, json_alias=True, json_help="JSON Lines: one object per batch, its records nested, that `kafkafmt "
               "build` turns back into bytes; table: kafka-dump-log's lines")
    p.add_argument("--strict", action="store_true",
                   help="exit 1 when a batch is invalid (isvalid: false), the file ends in invalid bytes or an "
                        "index check reports a problem (kafka-dump-log reports these and exits 0, as does the default)")
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
    if args.deep and args.format != "json" and not args.print_data_log and not args.skip_record_metadata:
        from ..records.dump_log import COLUMNAR_MIN_BYTES
        largest = max((os.path.getsize(f) for f in files if os.path.isfile(f)), default=0)
        if largest >= COLUMNAR_MIN_BYTES:  # the columnar core decodes it: say so if its kernels must compile
            compile_notice("the deep dump's columnar decoder", "kafkafmt.records.columnar", largest)
    rc = 0
    stderr_tail: list[str] = []
    bar = _progress(files)
    for path in files:
        try:
            rc |= _dump_file(path, args, stderr_tail)
        except KafkaFmtError as e:
            _error(path, e)
            rc = 1
        if bar is not None:
            bar.update(os.path.getsize(path) if os.path.isfile(path) else 0)
    if bar is not None:
        bar.close()
    for line in stderr_tail:
        print(line, file=sys.stderr)
    return rc


def _progress(files: list[str]):
    """A bar of the bytes dumped, file by file, on stderr: only when it is a terminal and the lines go elsewhere
    (a file, a pipe), and only for a dump that lasts more than two seconds; else None."""
    if not sys.stderr.isatty() or sys.stdout.isatty():
        return None
    from tqdm import tqdm
    total = sum(os.path.getsize(f) for f in files if os.path.isfile(f))
    return tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc="dump", delay=2.0, leave=False,
                file=sys.stderr)


def _error(path: str, e: KafkaFmtError) -> None:
    print(f"kafkafmt: error: {path}: {type(e).__name__}: {e}", file=sys.stderr)


def _dump_file(path: str, args, stderr_tail: list[str]) -> int:
    """Dump one file; the exit status it adds (1 for an error, or with ``--strict`` for anything invalid)."""
    name = os.path.basename(path)
    suffix = name[name.rfind("."):] if "." in name else ""
    if os.path.isdir(path):
        raise NoSuchFileError(f"is a directory; give the segment files (e.g. {os.path.join(path, '*.log')})")
    if not os.path.exists(path):
        raise NoSuchFileError("no such file")
    if suffix in (".index", ".timeindex"):
        if args.json:
            print(f"kafkafmt: --json does not apply to index files, skipping {path}", file=sys.stderr)
            return 0
        print(f"Dumping {path}")
        from ..log import index_dump
        fn = index_dump.dump_index if suffix == ".index" else index_dump.dump_time_index
        kw = {"verify_only": args.verify_index_only, "sanity_check_only": args.index_sanity_check}
        if suffix == ".index":
            kw["max_message_size"] = args.max_message_size
            kw["kafka_line"] = args.kafka_line
        out, err = fn(path, **kw)
        for line in out:
            print(line)
        stderr_tail += err
        return int(bool(args.strict and err))
    from ..io import open_readonly
    from ..records.dump_log import dump_log
    with open_readonly(path) as buf:
        if args.json:
            return _dump_json(path, buf, args)
        print(f"Dumping {path}")
        start = _start_offset(name) if suffix == ".log" else None
        res = dump_log(buf, filename=name, abspath=os.path.abspath(path), deep=args.deep,
                       print_data=args.print_data_log, skip_metadata=args.skip_record_metadata,
                       max_bytes=args.max_bytes, start_offset=start, emit_lines=_print_lines,
                       kafka_line=args.kafka_line)
    stderr_tail += res.stderr
    if res.error is not None:
        _error(path, res.error)
        return 1
    if args.strict and (res.invalid_batches or (res.trailing_bytes and args.max_bytes is None)):
        print(f"kafkafmt: error: {path}: --strict: {res.invalid_batches} invalid batch(es), "
              f"{res.trailing_bytes} invalid trailing byte(s)", file=sys.stderr)
        return 1
    return 0


def _print_lines(lines: list[str]) -> None:
    """``print`` of each line, in one write."""
    sys.stdout.write("\n".join(lines) + "\n")


def _dump_json(path: str, buf, args) -> int:
    from ..records.dump_log import iter_file_batches
    from ..records.spec import batch_to_json
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
        _error(path, e.with_traceback(None))
        return 1
    return 0
