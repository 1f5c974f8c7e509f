"""``kafkafmt pipeline``: the Spark jobs that turn a log directory into Parquet tables for the notebooks."""
from __future__ import annotations

from . import add_format


def register(sub) -> None:
    p = sub.add_parser("pipeline", help="run the Spark pipeline jobs over a log directory (Parquet out)",
                       description="Read a log directory (a broker's log.dirs entry, or `kafkafmt gen` output) with "
                                   "Spark and write, under --out: segments.parquet (timestamps, size, when retention "
                                   "deletes each segment by time, under LogAppendTime, and by size), "
                                   "producer_skew.parquet, offsets_for_times.parquet (KIP-32's earlier messages), "
                                   "conversion_costs.parquet (per fetch version, the fetch path's cost model) and, "
                                   "apart, the measurements: conversion_timings.parquet and timings.json.")
    p.add_argument("--logs", default="data/logs/default", help="log directory (default data/logs/default)")
    p.add_argument("--out", default=None, help="output directory (default data/derived/<name of --logs>)")
    p.add_argument("--master", default=None, help="Spark master URL (default: local[2], or the session helper's)")
    p.add_argument("--targets", type=int, default=50, help="offsetsForTimes targets per partition (default 50)")
    p.add_argument("--window", type=int, default=101,
                   help="records in the rolling median that skew is measured against (default 101)")
    p.add_argument("--sample-segments", type=int, default=2,
                   help="segments per topic timed to calibrate the conversion cost (default 2)")
    p.add_argument("--retention-ms", type=int, default=None, help="override retention.ms for every topic")
    p.add_argument("--retention-bytes", type=int, default=None, help="override retention.bytes for every topic")
    p.add_argument("--quiet", action="store_true", help="no progress bar, no summary")
    add_format(p, json_help="one object: outputs (table name -> path) and timings")
    p.set_defaults(func=run)


def run(args) -> int:
    import os
    import sys
    from pathlib import Path

    from ..errors import NoSuchFileError
    from ..spark.pipeline import run_pipeline, session
    if not Path(args.logs).is_dir():
        raise NoSuchFileError(f"{args.logs} is not a log directory (generate one with `kafkafmt gen`)")
    out = args.out or os.path.join("data", "derived", Path(args.logs).resolve().name)
    overrides = {k: v for k, v in (("retention.ms", args.retention_ms), ("retention.bytes", args.retention_bytes))
                 if v is not None}
    spark = session(args.master)
    try:
        result = run_pipeline(args.logs, out, spark=spark, targets=args.targets, window=args.window,
                              sample_segments=args.sample_segments, overrides=overrides,
                              progress=not args.quiet and sys.stderr.isatty())
    finally:
        spark.stop()
    if args.format == "json":
        import json
        print(json.dumps({"outputs": result["outputs"], "timings": result["timings"]}, indent=1, default=str))
    elif not args.quiet:
        for name, path in result["outputs"].items():
            print(f"{path}")
        print(f"timings (s): {result['timings']}")
    return 0
