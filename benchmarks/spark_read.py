"""Spark read throughput of the kafkafmt data source, as ratios against peers measured in the same run.

    python benchmarks/spark_read.py [--mb 96] [--partitions 4] [--repeat 3]

1. ``python``: one Python process decoding the whole log through the same path the data source
   uses (:func:`kafkafmt.spark.read_all` over :func:`kafkafmt.spark.plan`), into Arrow.
2. ``spark``: ``spark.read.format("kafkafmt")`` on ``local[2]``, every column materialised
   (``write.format("noop")``).  Target: ``python / spark`` >= 1.6.
3. ``parquet``: Spark reading the same records (same columns) from Parquet, materialised the same
   way.  Target: ``spark / parquet`` <= 3.
4. ``arrow floor``: Spark reading the same rows, already decoded, from a minimal Python data source
   that yields them from a memory-mapped Arrow IPC file (no decoding at all), materialised the same
   way: what the Python Data Source API itself costs.  ``python / floor`` is the best ratio any
   Python data source could reach on this machine, however fast its decoder.

The log (v2, lz4 and uncompressed batches alternating, ~100-byte values, keys from 10k, headers on
some records) is built once with kafkafmt.log under ``build/bench-spark/`` (seeded) and reused.
Times are medians of ``--repeat`` rounds after one warm-up, the engines alternating within each
round; the session start is not timed.  Results
go to stdout and ``build/bench-spark/results.json``; the figures vary with the machine's load.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import sys
import time
from pathlib import Path

from tqdm import tqdm

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "build" / "bench-spark"


def build_log(root: Path, mb: int, partitions: int, seed: int = 1) -> Path:
    """``root/bench-{p}`` partitions holding about ``mb`` MiB of batches in total (cached)."""
    from kafkafmt.constants import CompressionType, TimestampType
    from kafkafmt.log import Log, LogConfig, SimulatedClock
    from kafkafmt.records import MemoryRecordsBuilder

    stamp = root / f".built-{mb}-{partitions}-{seed}"
    if stamp.exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    rng = random.Random(seed)
    per_partition = mb * 1024 * 1024 // partitions
    config = LogConfig(segment_bytes=32 * 1024 * 1024)
    with tqdm(total=mb * 1024 * 1024, unit="B", unit_scale=True, desc="building the bench log") as bar:
        for p in range(partitions):
            clock = SimulatedClock(1_700_000_000_000)
            log = Log(root / f"bench-{p}", config, clock)
            offset, size = 0, 0
            while size < per_partition:
                codec = CompressionType.LZ4 if (offset // 200) % 2 else CompressionType.NONE
                b = MemoryRecordsBuilder(2, codec, TimestampType.CREATE_TIME, offset, partition_leader_epoch=0)
                for _ in range(200):
                    clock.advance(rng.randint(0, 3))
                    headers = [("trace", rng.randbytes(8))] if rng.random() < 0.3 else []
                    b.append(clock.now() + rng.randint(-50, 50), f"user-{rng.randrange(10000)}".encode(),
                             rng.randbytes(40) + b"x" * 60, headers)
                data = b.build()
                log.append_as_follower(data)
                offset = b.last_offset + 1
                size += len(data)
                bar.update(len(data))
            log.close()
    stamp.touch()
    return root


def arrow_floor_source(ipc_path: str, partitions: int):
    """A Python data source with the kafkafmt record schema that yields the rows of ``ipc_path``
    (an Arrow IPC file, memory-mapped) round-robin over ``partitions`` Spark partitions."""
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    from kafkafmt.spark import columns

    class Reader(DataSourceReader):
        def partitions(self):
            return [InputPartition(i) for i in range(partitions)]

        def read(self, partition):
            import pyarrow as pa
            r = pa.ipc.open_file(pa.memory_map(ipc_path))
            for i in range(partition.value, r.num_record_batches, partitions):
                yield r.get_batch(i)

    class ArrowFloor(DataSource):
        @classmethod
        def name(cls):
            return "kafkafmt_bench_arrow_floor"

        def schema(self):
            return columns.ddl(columns.schema_for("record"))

        def reader(self, schema):
            return Reader()

    return ArrowFloor


def write_ipc(table, path: Path, rows_per_batch: int) -> None:
    import pyarrow as pa
    with pa.OSFile(str(path), "wb") as f, pa.ipc.new_file(f, table.schema) as w:
        for b in table.to_batches(max_chunksize=rows_per_batch):
            w.write_batch(b)


def timed(engines: dict, repeat: int) -> dict[str, list[float]]:
    """Run every engine once to warm up, then ``repeat`` rounds, the engines alternating within each
    round so that a change in the machine's load falls on all of them alike."""
    for fn in engines.values():
        fn()  # warm-up (Python workers started, files in the page cache)
    times: dict[str, list[float]] = {name: [] for name in engines}
    for _ in range(repeat):
        for name, fn in engines.items():
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    return times


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=int, default=96, help="size of the log in MiB (default 96)")
    ap.add_argument("--partitions", type=int, default=4, help="topic partitions (default 4)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per engine (default 3)")
    args = ap.parse_args(argv)

    import kafkafmt.spark as ks

    logs = build_log(OUT / "logs", args.mb, args.partitions)
    options = {"path": str(logs)}
    plan = ks.plan(options)
    table = ks.read_all(plan)
    rows = table.num_rows
    size = sum(s.size for s in plan.splits)
    OUT.mkdir(parents=True, exist_ok=True)
    ipc = OUT / f"records-{args.mb}-{args.partitions}.arrow"
    write_ipc(table, ipc, rows_per_batch=max(1, rows // (4 * args.partitions)))
    del table

    spark = ks.session("local[2]", log_dir=OUT / "spark-logs")
    spark.dataSource.register(arrow_floor_source(str(ipc), args.partitions))
    try:
        parquet = OUT / f"records-{args.mb}-{args.partitions}.parquet"   # same records as the log
        if not (parquet / "_SUCCESS").exists():
            spark.read.format("kafkafmt").load(str(logs)).write.mode("overwrite").parquet(str(parquet))
        times = timed({
            "python": lambda: ks.read_all(ks.plan(options)),
            "spark_local2": lambda: spark.read.format("kafkafmt").load(str(logs)).write.format("noop")
            .mode("overwrite").save(),
            "spark_parquet": lambda: spark.read.parquet(str(parquet)).write.format("noop").mode("overwrite").save(),
            "spark_arrow_floor": lambda: spark.read.format("kafkafmt_bench_arrow_floor").load().write
            .format("noop").mode("overwrite").save(),
        }, args.repeat)
        spark_rows = spark.read.format("kafkafmt").load(str(logs)).count()
        parquet_rows = spark.read.parquet(str(parquet)).count()
        floor_rows = spark.read.format("kafkafmt_bench_arrow_floor").load().count()
    finally:
        spark.stop()
    assert rows == spark_rows == parquet_rows == floor_rows, (rows, spark_rows, parquet_rows, floor_rows)

    computed = {"records": rows, "bytes": size, "partitions": args.partitions}
    median = {name: statistics.median(ts) for name, ts in times.items()}
    measured = {
        "seconds": times,
        "median_s": median,
        "records_per_s": {name: rows / s for name, s in median.items()},
        "ratios": {"spark_vs_python": median["python"] / median["spark_local2"],
                   "spark_vs_parquet": median["spark_local2"] / median["spark_parquet"],
                   "floor_vs_python": median["python"] / median["spark_arrow_floor"],
                   "decode_share_of_spark": 1 - median["spark_arrow_floor"] / median["spark_local2"]},
        "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0], "platform": platform.platform(),
                    "load_average": os.getloadavg()},
    }
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "results.json").write_text(json.dumps({"computed": computed, "measured": measured}, indent=2))
    print(f"log: {rows} records, {size / 2**20:.1f} MiB in {args.partitions} partitions "
          f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
    for name, s in measured["median_s"].items():
        print(f"  {name:14s} {s:7.2f} s  {rows / s / 1e3:8.1f} k records/s  {size / s / 2**20:7.1f} MiB/s")
    r = measured["ratios"]
    print(f"spark local[2] vs one Python process: {r['spark_vs_python']:.2f}x  (target >= 1.6)")
    print(f"spark kafkafmt vs spark parquet:      {r['spark_vs_parquet']:.2f}x slower  (target <= 3)")
    print(f"ceiling: Spark local[2] over already-decoded Arrow rows vs one Python process: "
          f"{r['floor_vs_python']:.2f}x (the most a Python data source can reach here); "
          f"decoding is {r['decode_share_of_spark']:.0%} of the kafkafmt read in Spark")
    return 0


if __name__ == "__main__":
    sys.exit(main())
