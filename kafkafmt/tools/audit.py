"""``kafkafmt audit``: what broker log directories hold and what a Kafka line will do with it (kafkafmt.audit)."""
from __future__ import annotations

import sys

from . import add_kafka_line, choose_kernels


def register(sub) -> None:
    p = sub.add_parser(
        "audit", help="audit log directories before an upgrade: old formats, compaction, retention, old clients",
        description="Read broker log directories (log.dirs entries or <topic>-<partition> directories) without "
                    "changing them and report, per topic-partition: batches, records and bytes per message format "
                    "(v0, v1, v2), timestamp types, records without a timestamp, whether the topic is compacted "
                    "(its v0/v1 batches then never age out), when time retention deletes the v0/v1 data, what "
                    "Kafka 4.x's cleaner would write for it (KAFKA-13093) and which client generations the target "
                    "line no longer answers (KIP-896).  Topic configurations are not in a log directory (Kafka "
                    "keeps them in ZooKeeper or the KRaft metadata): they come from kafkafmt gen's manifest, "
                    "else -c/--compacted, else Kafka's defaults.")
    p.add_argument("log_dirs", nargs="+", metavar="LOG_DIR", help="a broker's log.dirs entry or a partition directory")
    add_kafka_line(p, default="4.4", what="audit for")
    p.add_argument("--format", default="table", choices=("table", "json", "html"),
                   help="table (for people), json (JSON Lines: one object per topic-partition) or html (a "
                        "self-contained page with a plot)")
    p.add_argument("-o", "--output", default=None, metavar="FILE", help="write there (atomically) instead of stdout")
    p.add_argument("-c", "--config", action="append", default=[], metavar="TOPIC:KEY=VALUE",
                   help="a topic setting, e.g. orders:cleanup.policy=compact; TOPIC * sets it for every topic (repeatable)")
    p.add_argument("--compacted", action="append", default=[], metavar="TOPIC",
                   help="the topic is compacted (same as -c TOPIC:cleanup.policy=compact; repeatable)")
    p.add_argument("--now-ms", type=int, default=None, help="the broker clock in epoch ms (default: now)")
    p.add_argument("--fail-on", choices=("legacy",), default=None,
                   help="legacy: exit 1 when any v0/v1 batch is found (for CI pipelines)")
    p.add_argument("--quiet", action="store_true", help="no progress bar (shown on stderr, when a terminal, for "
                   "audits that take more than a second)")
    p.set_defaults(func=run)


def run(args) -> int:
    choose_kernels(args.log_dirs, "the audit", "kafkafmt.records.columnar")  # small log directories: no compile, no numba
    from ..audit import audit_log_dirs, parse_topic_options, plan_audit
    from ..audit.render import render_html, render_json, render_table
    from ..io import atomic_write
    overrides = parse_topic_options(args.config, args.compacted)
    total = sum(s.stat().st_size for _, segs in plan_audit(args.log_dirs) for s in segs)
    from tqdm.auto import tqdm
    with tqdm(total=total, unit="B", unit_scale=True, desc="audit", file=sys.stderr, delay=1.0,
              disable=args.quiet or None) as bar:
        report = audit_log_dirs(args.log_dirs, args.kafka_line, args.now_ms, topic_config=overrides, progress=bar.update)
    text = {"table": render_table, "json": render_json, "html": render_html}[args.format](report)
    if args.output:
        from ..log.lock import hold_for_file
        with hold_for_file(args.output):  # a report written into a broker's log directory takes its lock
            atomic_write(args.output, text.encode("utf-8"))
    else:
        sys.stdout.write(text)
    if args.fail_on == "legacy" and report.legacy_batches:
        print(f"kafkafmt audit: {report.legacy_batches} v0/v1 batches found (--fail-on legacy)", file=sys.stderr)
        return 1
    return 0
