"""``kafkafmt explain produce|fetch``: the broker's decisions on a record-set file, step by step.

Registered by ``kafkafmt/cli.py`` (``COMMAND_MODULES``) through :func:`register`; for tests,
:func:`make_parser` builds a stand-alone parser and :func:`main` runs it.

    kafkafmt explain produce batch.bin --topic-config message.format.version=0.10.0 --offset 100
    kafkafmt explain fetch 00000000000000000000.log --fetch-version 3 --json
"""
from __future__ import annotations

import argparse
import json
import sys

from .. import kafka_lines
from ..cli import main as kafkafmt_main
from ..cli import make_parser as kafkafmt_parser
from ..config import KEYS_BY_NAME, KEYS_BY_SERVER_NAME, BrokerConfig, ConfigError, LogConfig
from ..errors import KafkaFmtError
from ..io import atomic_write, read_input
from . import LazyChoices, add_format, add_kafka_line

__all__ = ["register", "make_parser", "main", "run_produce", "run_fetch", "run_lines", "parse_topic_config"]


def parse_topic_config(pairs, kafka_line: str = kafka_lines.DEFAULT_LINE) -> LogConfig:
    """``k=v`` strings → LogConfig on a broker of ``kafka_line``.  Topic settings by Kafka name; broker
    settings (``inter.broker.protocol.version``, ``log.*`` defaults, ``kafkafmt.*``) go to its BrokerConfig."""
    topic, broker = {}, {}
    for p in pairs or ():
        if "=" not in p:
            raise ConfigError(f"--topic-config expects key=value, got {p!r}")
        k, v = (x.strip() for x in p.split("=", 1))
        is_broker = k in BrokerConfig.PROPERTY_NAMES or (k in KEYS_BY_SERVER_NAME and k not in KEYS_BY_NAME)
        (broker if is_broker else topic)[k] = v
    return LogConfig.from_properties(topic, broker=BrokerConfig.from_properties(broker, kafka_line=kafka_line))


def _read(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    return read_input(path)


def _write_output(path: str | None, data: bytes) -> None:
    if path:
        from ..log.lock import hold_for_file
        with hold_for_file(path):  # into a broker's log directory: never under a running broker
            atomic_write(path, data)


def _origins() -> tuple[str, ...]:
    from ..broker.append import ORIGINS
    return ORIGINS


def register(sub) -> None:
    p = sub.add_parser(
        "explain", help="explain what a Kafka broker (3.9, or --kafka-line) does with a produce or a fetch, step by step",
        description="Run the broker's rules (UnifiedLog + LogValidator on produce; KafkaApis + RecordsUtil.downConvert "
                    "on fetch) on a record-set file and print every decision with the Kafka class/method or seed "
                    "section it comes from.")
    esub = p.add_subparsers(dest="explain_command", metavar="{produce,fetch,lines}")
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])

    pp = esub.add_parser(
        "produce", help="validate a produce payload and assign offsets (LogValidator)",
        description="Validate FILE (one partition's produce payload: record batches of any magic) as the leader "
                    "does, and print the trace, the outcome and the resulting offsets/timestamps. Exit status 1 "
                    "when the broker would reject the append (the error and trace are still printed).")
    pp.add_argument("file", metavar="FILE", help="record-set bytes ('-' for stdin)")
    pp.add_argument("--topic-config", "-c", action="append", default=[], metavar="K=V",
                    help="topic setting, Kafka name (message.format.version=0.10.0, message.timestamp.type="
                         "LogAppendTime, compression.type=gzip, cleanup.policy=compact, ...), or a broker "
                         "setting (inter.broker.protocol.version=3.9; kafkafmt's default is 2.8, the last "
                         "that honours message.format.version); repeatable")
    add_kafka_line(pp)
    pp.add_argument("--offset", type=int, default=0, help="log end offset: the first offset to assign (default 0)")
    pp.add_argument("--now", type=int, default=None, help="broker clock in ms (default: the wall clock)")
    pp.add_argument("--origin", choices=LazyChoices(_origins), default="CLIENT", metavar="ORIGIN",
                    help="AppendOrigin: %(choices)s (default CLIENT)")
    pp.add_argument("--leader-epoch", type=int, default=0, help="partition leader epoch to stamp (default 0)")
    pp.add_argument("--produce-version", type=int, default=None,
                    help="ProduceRequest version, to apply ProduceRequest.validateRecords too")
    add_format(pp, json_alias=True, json_help="one object: outcome, trace steps")
    _add_accounting_flag(pp)
    pp.add_argument("--partition", metavar="TOPIC:P", default="topic:0",
                    help="FILE's partition (default topic:0); it decides, with --with, the order the broker visits "
                         "the request's partitions")
    pp.add_argument("--with", dest="with_partitions", action="append", default=[], metavar="TOPIC:P=FILE",
                    help="another partition of the same Produce request (the same topic settings), repeatable: the "
                         "accounting is then the request's, whose TemporaryMemoryBytes is the last visited "
                         "partition's before Kafka 4.3 (KAFKA-15894, row metrics.multi_partition)")
    pp.add_argument("--scala", choices=("2.11", "2.12", "2.13"), default=None,
                    help="the broker's Scala build, which orders the request's partitions (default: 2.12 before "
                         "the 3.0 line, 2.13 from it)")
    pp.add_argument("--output", "-o", metavar="OUT", help="write the bytes that would be appended to OUT")
    pp.set_defaults(func=run_produce)

    fp = esub.add_parser(
        "fetch", help="answer a fetch: zero-copy or down-conversion, with the cost",
        description="Serve a fetch of FILE (a log segment or record set) to a client of the given fetch version "
                    "(or maximum message format) and print the trace, the outcome, the conversion cost table, the "
                    "broker CPU and memory kafkafmt.costs predicts from it (per-operation costs measured on real "
                    "brokers by make bench-conversion) and Kafka's own accounting (KIP-188; on 2.x, the chunks "
                    "converted).")
    fp.add_argument("file", metavar="FILE", help="log bytes ('-' for stdin)")
    g = fp.add_mutually_exclusive_group()
    g.add_argument("--fetch-version", type=int, default=None,
                   help="FetchRequest version (default: the newest the line answers, 17 on 3.9)")
    g.add_argument("--client-magic", type=int, choices=(0, 1, 2), default=None,
                   help="highest message format the client reads (0 → fetch v1, 1 → v3, 2 → latest)")
    fp.add_argument("--fetch-offset", type=int, default=None, help="fetch offset (default: the log start)")
    fp.add_argument("--log-start-offset", type=int, default=None,
                    help="the partition's log start offset (default: for a segment file NNN.log, the larger of "
                         "its base offset and the log-start-offset-checkpoint entry; else the first batch)")
    fp.add_argument("--max-bytes", type=int, default=None, help="partition max bytes (default: no limit)")
    fp.add_argument("--follower", action="store_true", help="the fetch comes from a follower replica")
    fp.add_argument("--topic-config", "-c", action="append", default=[], metavar="K=V",
                    help="topic setting, Kafka name (message.format.version=0.10.0, "
                         "message.downconversion.enable=false, compression.type=zstd, ...); repeatable")
    add_kafka_line(fp)
    add_format(fp, json_alias=True, json_help="one object: outcome, cost, trace steps")
    _add_accounting_flag(fp)
    fp.add_argument("--output", "-o", metavar="OUT", help="write the records of the response to OUT")
    fp.set_defaults(func=run_fetch)

    lp = esub.add_parser(
        "lines", help="list what differs between the Kafka lines kafkafmt models (0.9 ... 4.4)",
        description="Print the table kafkafmt's rules read where Kafka releases differ (kafkafmt.kafka_lines): "
                    "one row per difference between neighbouring releases, with its values before and after, "
                    "the release and the KIP or JIRA that made it.")
    lp.add_argument("--area", choices=sorted({c.area for c in kafka_lines.CHANGES}), help="only this area")
    add_format(lp, json_alias=True, json_help="a list of rows")
    lp.set_defaults(func=run_lines)


def _add_accounting_flag(parser) -> None:
    parser.add_argument("--accounting", action="store_true",
                        help="print only Kafka's own accounting of the request (KIP-188 RecordConversionStats: "
                             "what the broker spends, what its metrics show); an error on a line before 1.0")


def _partition(text: str) -> tuple[str, int]:
    topic, _, p = text.rpartition(":")
    if not topic or not p.isdigit():
        raise ConfigError(f"a partition is TOPIC:P (e.g. clicks:0), not {text!r}")
    return topic, int(p)


def _request(res, config: LogConfig, args):
    """The request's :class:`~kafkafmt.broker.accounting.Accounting`: of FILE alone, or, with ``--with``, of the
    Produce request of every partition named (``request_accounting``, KAFKA-15894)."""
    from ..broker.accounting import accounting, request_accounting
    from ..broker.validator import validate_messages_and_assign_offsets
    line = config.broker.kafka_line
    others = getattr(args, "with_partitions", None) or []
    if not others:
        return accounting(res, line)
    parts = {_partition(args.partition): res}
    for spec in others:
        name, eq, path = spec.partition("=")
        if not eq or not path:
            raise ConfigError(f"--with takes TOPIC:P=FILE, not {spec!r}")
        key = _partition(name)
        if key in parts:
            raise ConfigError(f"partition {key[0]}:{key[1]} is named twice in one Produce request")
        parts[key] = validate_messages_and_assign_offsets(_read(path), config, offset=args.offset, now=args.now,
                                                          origin=args.origin, partition_leader_epoch=args.leader_epoch,
                                                          produce_version=args.produce_version)
    return request_accounting(parts, line, getattr(args, "scala", None))


def _accounting(res, config: LogConfig, args) -> dict | None:
    """The request's accounting as JSON (None before KIP-188); with ``--accounting`` on such a line, the
    ConfigError saying so."""
    from ..broker.accounting import has_accounting
    line = config.broker.kafka_line
    if not has_accounting(line) and not args.accounting:
        return None
    return _request(res, config, args).to_dict()


def _print_accounting(res, config: LogConfig, out, args=None) -> None:
    from ..broker.accounting import has_accounting
    line = config.broker.kafka_line
    if has_accounting(line):
        print("", file=out)
        for text in _request(res, config, args).lines():
            print(text, file=out)
    else:
        print(f"\nKafka {line} computes no conversion accounting (KIP-188 came in Kafka 1.0)", file=out)


def _accounting_lines(res, config: LogConfig, args=None) -> list[str]:
    return _request(res, config, args).lines()


def _predicted(res, config: LogConfig) -> tuple[dict | None, str]:
    """:mod:`kafkafmt.costs`' predicted broker CPU and memory of the fetch ``res`` on the configured line (from the
    cost table ``make bench-conversion`` measured), as JSON and as one line; ``None`` and the reason when the
    broker answered nothing or no table is shipped."""
    from ..costs import Counts, load_table, predict
    line = config.broker.kafka_line
    if res.error or res.connection_closed:
        return None, "predicted broker cost: none (the broker answered no records)"
    try:
        p = predict(Counts.from_fetch_result(res, line), line, load_table())
    except ConfigError as e:
        return None, f"predicted broker cost: none ({e})"
    held = {"eager": "the whole converted response (eager, before KIP-283)",
            "lazy": "one converted chunk (lazy, KIP-283)"}.get(kafka_lines.value("fetch.down_conversion_mode", line)
                                                               if not res.zero_copy else "", "none (zero-copy)")
    return p.to_dict(), (f"predicted broker cost (kafkafmt.costs; per-operation costs measured on Kafka "
                         f"{p.measured_on}, {p.table}): CPU {p.cpu_s * 1e6:,.1f} µs, memory held "
                         f"{p.memory_bytes:,} bytes: {held}")


def _dump_json(obj) -> str:
    def default(v):
        if isinstance(v, (bytes, bytearray, memoryview)):
            return bytes(v).hex()
        if hasattr(v, "kafka_name"):
            return v.kafka_name
        return str(v)
    return json.dumps(obj, default=default, indent=2)


def _rows(trace, line: str = kafka_lines.DEFAULT_LINE) -> list[dict]:
    """The rows of :mod:`kafkafmt.kafka_lines` the trace applied on ``line`` (key, what, source), for the
    outcome: each key's row in effect on the line (its first row when the line predates them all)."""
    if trace is None:
        return []
    return [(kafka_lines.row(k, line) or kafka_lines.rows(k)[0]).to_dict() for k in kafka_lines.rows_applied(trace)]


def _print_rows(trace, config: LogConfig, out) -> None:
    """The rows the trace applied on the line: those whose value differs from 3.9's, then those it applied with
    3.9's value (e.g. row ``fetch.eager_nothing_converted`` on 1.1, a rule of the eager path 3.9 no longer takes)."""
    line = config.broker.kafka_line
    shown = [(r, kafka_lines.change(r["key"]).shown(line)) for r in _rows(trace, line)]
    differ = [(r, v) for r, v in shown if v != r["3.9"]]
    same = [(r, v) for r, v in shown if v == r["3.9"]]
    if differ:
        print(f"\nKafka {line} line: {len(differ)} difference(s) from 3.9 applied "
              "(kafkafmt.kafka_lines):", file=out)
        for r, value in differ:
            print(f"  {r['key']:<28} {r['3.9']!s:>24} → {value!s:<10} {r['source']}", file=out)
    if same:
        print(f"\nKafka {line} line: {len(same)} row(s) applied with 3.9's value (kafkafmt.kafka_lines):", file=out)
        for r, value in same:
            print(f"  {r['key']:<28} {value!s:>24}   {r['source']}", file=out)


def run_produce(args, out=None) -> int:
    from ..broker.validator import validate_messages_and_assign_offsets
    out = out or sys.stdout
    config = parse_topic_config(args.topic_config, args.kafka_line)
    data = _read(args.file)
    try:
        res = validate_messages_and_assign_offsets(data, config, offset=args.offset, now=args.now,
                                                   origin=args.origin, partition_leader_epoch=args.leader_epoch,
                                                   produce_version=args.produce_version)
    except KafkaFmtError as e:
        trace = getattr(e, "trace", None)
        if args.json:
            print(_dump_json({"outcome": "rejected", "error": e.kafka_exception, "error_code": e.error_code,
                              "message": e.reason, "record_errors": getattr(e, "record_errors", None),
                              "kafka_line_rows": _rows(trace, config.broker.kafka_line),
                              "trace": trace.to_dicts() if trace else []}),
                  file=out)
        else:
            if trace:
                print(trace.render(), file=out)
            _print_rows(trace, config, out)
            print(f"\noutcome: REJECTED with {e.kafka_exception}"
                  + (f" (error code {e.error_code})" if e.error_code is not None else "") + f": {e.reason}", file=out)
            for b, i, m in getattr(e, "record_errors", []) or []:
                print(f"  record error: batch {b} record {i}: {m}", file=out)
        return 1
    _write_output(args.output, res.records)
    acc = _accounting(res, config, args)
    if args.accounting:
        print(_dump_json(acc) if args.json else "\n".join(_accounting_lines(res, config, args)), file=out)
        return 0
    if args.json:
        print(_dump_json({"outcome": "appended", **res.to_dict(), "accounting": acc,
                          "kafka_line_rows": _rows(res.trace, config.broker.kafka_line),
                          "trace": res.trace.to_dicts()}), file=out)
        return 0
    print(res.trace.render(), file=out)
    _print_rows(res.trace, config, out)
    print(f"\noutcome: APPENDED via {res.path}", file=out)
    d = res.to_dict()
    for k in ("first_offset", "last_offset", "next_offset", "max_timestamp", "shallow_offset_of_max_timestamp",
              "message_size_maybe_changed", "converted", "recompressed", "size", "num_converted_records",
              "temporary_memory_bytes"):
        print(f"  {k:<34} {d[k]}", file=out)
    _print_accounting(res, config, out, args)
    if args.output:
        print(f"  wrote {len(res.records)} bytes to {args.output}", file=out)
    return 0


def run_fetch(args, out=None) -> int:
    from ..broker.fetch import fetch
    from ..log.files import segment_log_start_offset
    out = out or sys.stdout
    config = parse_topic_config(args.topic_config, args.kafka_line)
    data = _read(args.file)
    log_start = args.log_start_offset if args.log_start_offset is not None else segment_log_start_offset(args.file)
    res = fetch(data, topic_config=config, fetch_version=args.fetch_version, client_max_magic=args.client_magic,
                fetch_offset=args.fetch_offset, is_follower=args.follower, max_bytes=args.max_bytes,
                log_start_offset=log_start)
    _write_output(args.output, res.records)
    acc = _accounting(res, config, args)
    if args.accounting:
        print(_dump_json(acc) if args.json else "\n".join(_accounting_lines(res, config)), file=out)
        return 1 if res.error else 0
    predicted, predicted_line = _predicted(res, config)
    if args.json:
        print(_dump_json({**res.to_dict(), "accounting": acc, "predicted": predicted,
                          "kafka_line_rows": _rows(res.trace, config.broker.kafka_line),
                          "trace": res.trace.to_dicts()}),
              file=out)
        return 1 if res.error else 0
    print(res.trace.render(), file=out)
    _print_rows(res.trace, config, out)
    if res.connection_closed:
        print(f"\noutcome: NO RESPONSE: the broker closes the connection ({res.error})", file=out)
    elif res.error:
        print(f"\noutcome: ERROR {res.error}", file=out)
    elif res.zero_copy:
        print(f"\noutcome: ZERO-COPY, {len(res.records)} bytes sent as stored", file=out)
    elif res.sent_as_is:
        print(f"\noutcome: SENT AS IT WAS: nothing to convert to v{res.to_magic}, the slice's {len(res.records)} bytes "
              f"sent unconverted (row fetch.eager_nothing_converted), response size {res.wire_size}", file=out)
    else:
        print(f"\noutcome: DOWN-CONVERTED to v{res.to_magic}: {len(res.records)} bytes converted, response size "
              f"{res.wire_size}" + (f"; next fetch: {res.deferred_error}" if res.deferred_error else ""), file=out)
    print("\ncost (kafkafmt's count):", file=out)
    print(res.cost.table(), file=out)
    print(f"\n{predicted_line}", file=out)
    _print_accounting(res, config, out)
    if args.output:
        print(f"wrote {len(res.records)} bytes to {args.output}", file=out)
    return 1 if res.error else 0


def run_lines(args, out=None) -> int:
    out = out or sys.stdout
    rows = [c.to_dict() for c in kafka_lines.changes(args.area)]
    if args.json:
        print(_dump_json(rows), file=out)
        return 0
    for r in rows:
        print(f"{r['area']:<13} {r['key']:<44} Kafka {r['release']:<7} {r['before']!s:>24} → {r['after']!s:<14} "
              f"{r['source']}", file=out)
        print(f"{'':<13} {r['what']}", file=out)
    return 0


def make_parser() -> argparse.ArgumentParser:
    """The ``kafkafmt`` parser (every command, explain included)."""
    return kafkafmt_parser()


def main(argv=None) -> int:
    """``kafkafmt`` with ``argv`` (the shared entry point in :mod:`kafkafmt.cli`)."""
    return kafkafmt_main(argv)
