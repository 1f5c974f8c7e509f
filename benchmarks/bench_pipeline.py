"""How long the sample-log generator and the pipeline take on the default sample (issue 9: < 2 min).

    .venv/bin/python benchmarks/bench_pipeline.py [--size 50MB] [--keep DIR]

Prints wall-clock seconds for: `kafkafmt gen` of the default scenario (process pool), a fresh
Spark session, the pipeline's first run (Python workers start) and a second run on the warm session,
and the generator's throughput in MB/s.  A measurement, not a test: nothing here asserts a time.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenario", default="default")
    ap.add_argument("--size", default=None, help="also time the generator at this size (e.g. 50MB)")
    ap.add_argument("--keep", default=None, help="keep the generated logs and derived tables here")
    args = ap.parse_args()
    from kafkafmt.gen.generator import generate_logs
    from kafkafmt.gen.workload_file import load_workload
    from kafkafmt.spark.pipeline import run_pipeline, session

    work = Path(args.keep or tempfile.mkdtemp(prefix="kafkafmt-bench-pipeline-"))
    figures: dict[str, float] = {"cpu_count": os.cpu_count() or 0, "load_average_1m": os.getloadavg()[0]}
    try:
        sc = load_workload(args.scenario)
        t = time.perf_counter()
        m = generate_logs(sc, work / "logs", progress=False, force=True)
        figures["gen_s"] = time.perf_counter() - t
        size = sum(p["appended_bytes"] for p in m["partitions"])
        figures["gen_mb"] = size / 1e6
        figures["gen_mb_per_s"] = size / 1e6 / figures["gen_s"]
        if args.size:
            t = time.perf_counter()
            big = generate_logs(sc, work / "logs-size", size=args.size, progress=False, force=True)
            figures["gen_size_s"] = time.perf_counter() - t
            figures["gen_size_mb_per_s"] = sum(p["appended_bytes"] for p in big["partitions"]) / 1e6 / figures["gen_size_s"]
        t = time.perf_counter()
        spark = session()
        figures["spark_session_s"] = time.perf_counter() - t
        try:
            for run in ("pipeline_first_run_s", "pipeline_warm_run_s"):
                t = time.perf_counter()
                run_pipeline(work / "logs", work / "derived", spark=spark, progress=False)
                figures[run] = time.perf_counter() - t
        finally:
            spark.stop()
        figures["pipeline_total_cold_s"] = figures["spark_session_s"] + figures["pipeline_first_run_s"]
        figures["pipeline_cold_over_2min_budget"] = figures["pipeline_total_cold_s"] / 120.0
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print(json.dumps({k: round(v, 3) for k, v in figures.items()}, indent=1))


if __name__ == "__main__":
    main()
