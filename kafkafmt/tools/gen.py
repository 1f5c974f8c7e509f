"""``kafkafmt gen``: generate sample Kafka log directories from a seeded workload file (docs/how-to/gen.md)."""
from __future__ import annotations

import json
import os
import sys
from importlib.util import find_spec

from . import add_format, add_kafka_line


def _shipped_names() -> list[str]:
    """The names of the shipped workload files (:func:`kafkafmt.gen.workload_file.shipped_workloads`'s keys),
    read from the package's directory without importing :mod:`kafkafmt.gen` (the generator, numpy)."""
    (root,) = find_spec("kafkafmt.gen").submodule_search_locations
    return sorted(os.path.splitext(n)[0] for n in os.listdir(os.path.join(root, "shipped"))
                  if n.endswith((".yaml", ".yml", ".json")))


def register(sub) -> None:
    p = sub.add_parser("gen", help="generate sample log directories from a seeded workload file",
                       description="Simulate the producers of a workload file (YAML/JSON; shipped: "
                                   f"{', '.join(_shipped_names())}) through the broker's produce path and "
                                   "write a log directory as a Kafka broker's log.dirs entry holds it: one "
                                   "<topic>-<partition> directory per partition (.log, .index, .timeindex, "
                                   "leader-epoch-checkpoint) and the log-dir checkpoint files.  Written to a "
                                   "temporary directory and renamed into place.")
    p.add_argument("--workload", "--scenario", dest="workload", default="default",
                   help="workload file or shipped name (default: default; --scenario is its older name)")
    p.add_argument("--out", default=None, help="output log directory (default: data/logs/<workload name>)")
    p.add_argument("--size", default=None, help="total bytes to append, e.g. 200MB or 1GB: producer rates are scaled "
                                                "to fit (default: the workload as written)")
    p.add_argument("--seed", type=int, default=None, help="override the workload's seed")
    p.add_argument("--jobs", type=int, default=None, help="worker processes (default: one per core; 1 = no pool)")
    p.add_argument("--force", action="store_true",
                   help="replace the output directory if it exists (its .lock taken first: a directory a running "
                        "broker holds is refused, unchanged)")
    add_kafka_line(p, what="write the logs as (the broker's produce path, log and cleaner)")
    p.add_argument("--quiet", action="store_true", help="no progress bar, no summary")
    add_format(p, json_help="the manifest written beside the logs (kafkafmt-gen.json): its partitions, producers, "
               "what the broker refused")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..gen.generator import generate_logs
    from ..gen.workload_file import load_workload
    workload = load_workload(args.workload)
    from dataclasses import replace
    if args.seed is not None:
        workload = replace(workload, seed=args.seed)
    if args.kafka_line != workload.kafka_line:
        workload = replace(workload, kafka_line=args.kafka_line)
    out = args.out or f"data/logs/{workload.name}"
    manifest = generate_logs(workload, out, size=args.size, jobs=args.jobs,
                             progress=not args.quiet and args.format != "json" and sys.stderr.isatty(), force=args.force)
    if args.format == "json":
        print(json.dumps({"out": out, **manifest}, indent=1, default=str))
    elif not args.quiet:
        parts = manifest["partitions"]
        print(f"{out}: {len(parts)} partitions, {sum(p['log_end_offset'] - p['log_start_offset'] for p in parts):,} "
              f"records, {sum(p['size'] for p in parts):,} bytes in {sum(p['segments'] for p in parts)} segments "
              f"({manifest['elapsed_s']:.1f} s)")
        rejected = {}
        for p in parts:
            for q in p["producers"]:
                for k, v in q["rejected"].items():
                    rejected[k] = rejected.get(k, 0) + v
        if rejected:
            print(f"batches refused by the broker: {json.dumps(rejected)}")
    return 0
