"""Run by test_cluster.py in its own process: read sample logs on a standalone cluster, print a JSON summary.

Usage: python cluster_job.py MASTER_URL '["partition dir or glob", ...]' OUT_JSON SPARK_LOG_DIR [PIPELINE_LOGS PIPELINE_OUT]

With PIPELINE_LOGS and PIPELINE_OUT it also runs the pipeline jobs (``kafkafmt.spark.pipeline.run_pipeline``)
over the generated log directory PIPELINE_LOGS on the same cluster session.
"""
import json
import sys
from pathlib import Path

import kafkafmt.spark
from conftest import short_lived_jvm
from kafkafmt.spark.session import spark_conf
from spark_logs import fingerprint


def main(master: str, logs: str, out: str, log_dir: str, pipeline_logs: str | None = None,
         pipeline_out: str | None = None) -> None:
    logs = json.loads(logs)
    spark = kafkafmt.spark.session(master, app_name="kafkafmt-cluster-test", log_dir=log_dir,
                                   executor_memory="512m",
                                   conf={"spark.cores.max": "2", **short_lived_jvm(spark_conf(Path(log_dir)))})
    try:
        from pyspark.sql import functions as F

        df = spark.read.format("kafkafmt").option("maxBytesPerPartition", 4096).load(logs)
        t = df.select("topic", "partition", "offset", F.unix_millis("timestamp").alias("ms"), "timestampType",
                      "key", "value", "headers", "isControl").toArrow()
        parts: dict = {}
        for r in t.to_pylist():
            parts.setdefault(f"{r['topic']}-{r['partition']}", []).append(
                (r["offset"], r["ms"], r["timestampType"], r["key"], r["value"],
                 tuple((h["key"], h["value"]) for h in r["headers"] or ()), r["isControl"]))
        summary = {name: {"offsets": [row[0] for row in sorted(rows)], "timestamps": [row[1] for row in sorted(rows)],
                          "fingerprint": fingerprint(sorted(rows))} for name, rows in parts.items()}
        if pipeline_logs:
            from kafkafmt.spark.pipeline import run_pipeline
            run_pipeline(pipeline_logs, pipeline_out, spark=spark, targets=10, window=21, sample_segments=1,
                         progress=False)
        executors = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1  # minus the driver
        with open(out, "w") as f:
            json.dump({"partitions": summary, "executors": executors, "spark_partitions": df.rdd.getNumPartitions(),
                       "master": spark.sparkContext.master}, f)
    finally:
        spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:7])
