"""A real Spark standalone cluster on 127.0.0.1 from the pip package's ``bin/spark-class``: one master,
two workers, the data source run on it from a separate driver process.  Every process started here is
stopped by PID (the daemons, then any executor they left), even when the test fails."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from ci_mode import skip_or_fail
from conftest import SHORT_LIVED_JVM, spark_missing
from spark_logs import direct_decode, fingerprint

HERE = Path(__file__).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (from /proc)."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            parents.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie awaiting its parent's wait does not count)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def stop(pids: list[int], grace: float = 10.0) -> None:
    """SIGTERM to every PID we started at once, then SIGKILL to whatever still runs after ``grace`` s."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.time() + grace
    while time.time() < deadline and any(alive(p) for p in pids):
        time.sleep(0.2)
    for pid in pids:
        if alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def alive_workers(ui_port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=5) as r:
            state = json.load(r)
    except OSError:
        return -1
    return sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE")


@pytest.fixture
def cluster(tmp_path):
    """``spark://127.0.0.1:PORT`` of a master with two one-core workers; torn down by PID."""
    reason = spark_missing()
    if reason:
        skip_or_fail(reason)
    import pyspark

    home = Path(pyspark.__file__).parent
    spark_class = home / "bin" / "spark-class"
    if not spark_class.exists():
        skip_or_fail(f"{spark_class} is missing from the pyspark package")
    env = dict(os.environ, SPARK_HOME=str(home), SPARK_LOCAL_IP="127.0.0.1", SPARK_WORKER_DIR=str(tmp_path / "work"),
               SPARK_LOG_DIR=str(tmp_path / "logs"), PYSPARK_PYTHON=sys.executable,
               SPARK_DAEMON_JAVA_OPTS=SHORT_LIVED_JVM)  # the master's and workers' JVMs (cluster_job: the others)
    port, ui = free_port(), free_port()
    procs: list[subprocess.Popen] = []

    def start(name: str, *args: str) -> None:
        log = open(tmp_path / f"{name}.log", "wb")
        procs.append(subprocess.Popen([str(spark_class), *args], env=env, stdout=log, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL))
        log.close()

    try:
        start("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
              "--webui-port", str(ui))
        for i in (1, 2):
            start(f"worker{i}", "org.apache.spark.deploy.worker.Worker", f"spark://127.0.0.1:{port}", "--host",
                  "127.0.0.1", "--cores", "1", "--memory", "1g", "--webui-port", str(free_port()),
                  "--work-dir", str(tmp_path / "work"))
        deadline = time.time() + 120
        while alive_workers(ui) < 2:
            if time.time() > deadline or any(p.poll() is not None for p in procs):
                logs = "\n".join((tmp_path / f"{n}.log").read_text(errors="replace")[-2000:]
                                 for n in ("master", "worker1", "worker2"))
                pytest.fail(f"the standalone cluster did not come up with two workers:\n{logs}")
            time.sleep(1)
        yield f"spark://127.0.0.1:{port}"
    finally:
        # the daemons and every process below them (executors, their Python workers), all by PID
        started = [p.pid for p in procs] + [c for p in procs for c in descendants(p.pid)]
        stop(started)
        for p in procs:
            p.wait(timeout=30)
        assert not [pid for pid in started if alive(pid)]


def test_data_source_on_a_standalone_cluster(cluster, sample_logs, tmp_path):
    """The data source and one pipeline job (every table of ``run_pipeline``) on the cluster's executors."""
    from kafkafmt.gen.generator import generate_logs
    from kafkafmt.gen.workload_file import parse_workload
    from test_pipeline import SMALL
    small = tmp_path / "small"
    generate_logs(parse_workload(SMALL), small, jobs=1, progress=False)
    derived = tmp_path / "derived"
    out = tmp_path / "summary.json"
    chosen = [sample_logs / "upgrade-0", sample_logs / "txn-0", sample_logs / "magic1-gzip-0",
              sample_logs / "magic2-zstd-0"]
    job = subprocess.run([sys.executable, str(HERE / "cluster_job.py"), cluster, json.dumps([str(c) for c in chosen]),
                          str(out),
                          str(tmp_path / "driver-logs"), str(small), str(derived)], cwd=tmp_path, capture_output=True, text=True,
                         timeout=240, env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                             [str(HERE), str(HERE.parent), os.environ.get("PYTHONPATH", "")])))
    assert job.returncode == 0, job.stderr[-3000:]
    summary = json.loads(out.read_text())
    assert summary["master"] == cluster
    assert summary["executors"] == 2                   # one per worker
    assert summary["spark_partitions"] > 4             # maxBytesPerPartition split the segments
    parts = summary["partitions"]
    assert len(parts) == 4
    for d in chosen:
        expected = direct_decode(d)
        got = parts[d.name]
        assert got["offsets"] == [r[0] for r in expected]
        assert got["timestamps"] == [r[1] for r in expected]
        assert got["fingerprint"] == fingerprint(expected)
    # the pipeline job ran on the executors: its tables are the library's, computed here without Spark
    import pandas as pd
    import pyarrow.parquet as pq

    from kafkafmt.spark.pipeline import OUTPUTS, partition_tables, segment_files, topic_settings
    from test_pipeline import _direct_records
    assert sorted(p.stem for p in derived.glob("*.parquet")) == sorted(OUTPUTS)
    files, settings = segment_files(small), topic_settings(small)
    for name in ("segments", "conversion_costs", "offsets_for_times"):
        table = pq.read_table(derived / f"{name}.parquet").to_pandas()
        for (topic, part), f in files.groupby(["topic", "partition"]):
            direct = partition_tables(_direct_records(small, topic, part), f, settings[topic], targets=10, window=21)
            got = table[(table["topic"] == topic) & (table["partition"] == part)].reset_index(drop=True)
            pd.testing.assert_frame_equal(got, direct[name].reset_index(drop=True), check_dtype=False)
