"""A quiet, loopback-only Spark session for a small machine, with the ``kafkafmt`` source registered.

:func:`session` starts (or returns) a ``SparkSession``:

* workers run this interpreter (``PYSPARK_PYTHON``), so they import the same kafkafmt and pyarrow;
* everything binds to 127.0.0.1 (``SPARK_LOCAL_IP``, driver host and bind address), the UI is off;
* the JVM's log4j output and its stdout/stderr go to ``<log_dir>/spark-jvm.log`` (default
  ``build/spark/`` under the current directory, else a temporary directory), never to the
  terminal or a notebook cell;
* memory and shuffle settings fit a 2-core laptop (driver 1 GiB, 2 shuffle partitions);
* the session time zone is UTC, so ``timestamp`` columns print the same everywhere.

:func:`register` adds the data source to any existing session (``spark.read.format("kafkafmt")``).
"""
from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterator, Mapping

#: log4j2 configuration handed to the JVM: errors only, to a file; silences PySpark's
#: "Setting default log level" banner (logged by PythonGatewayServer at WARN).
LOG4J2 = """\
status = error
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{{yyyy-MM-dd HH:mm:ss}} %p %c{{1}}: %m%n
rootLogger.level = error
rootLogger.appenderRef.file.ref = file
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = error
logger.repl.name = org.apache.spark.repl.Main
logger.repl.level = error
"""

LOOPBACK = "127.0.0.1"


def default_log_dir() -> Path:
    """``build/spark`` under the working directory when it can be created, else a temporary directory."""
    candidate = Path.cwd() / "build" / "spark"
    try:
        candidate.mkdir(parents=True, exist_ok=True)
        if os.access(candidate, os.W_OK):
            return candidate
    except OSError:
        pass
    return Path(tempfile.mkdtemp(prefix="kafkafmt-spark-"))


def spark_conf(log_dir: Path, *, driver_memory: str = "1g", executor_memory: str = "512m",
               shuffle_partitions: int = 2) -> dict[str, str]:
    """The Spark settings :func:`session` applies (also usable with ``spark-submit --conf``)."""
    log4j = log_dir / "log4j2.properties"
    java_opts = f"-Dlog4j2.configurationFile=file:{log4j}"
    return {
        "spark.driver.host": LOOPBACK,
        "spark.driver.bindAddress": LOOPBACK,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.memory": driver_memory,
        "spark.executor.memory": executor_memory,
        "spark.sql.shuffle.partitions": str(shuffle_partitions),
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.driver.extraJavaOptions": java_opts,
        "spark.executor.extraJavaOptions": java_opts,
        "spark.executorEnv.PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON", sys.executable),
    }


def prepare_environment() -> None:
    """Point Spark's Python workers at this interpreter and Spark itself at the loopback interface."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", LOOPBACK)


@contextlib.contextmanager
def jvm_output_to(path: Path) -> Iterator[None]:
    """Send file descriptors 1 and 2 to ``path`` while the block runs (the JVM inherits them for good)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    saved = []
    with open(path, "ab") as log:
        for fd in (1, 2):
            try:
                saved.append((fd, os.dup(fd)))
                os.dup2(log.fileno(), fd)
            except OSError:  # no such descriptor (an embedded interpreter): nothing to redirect
                pass
    try:
        yield
    finally:
        for fd, copy in saved:
            os.dup2(copy, fd)
            os.close(copy)


def register(spark) -> Any:
    """Register the ``kafkafmt`` data source on ``spark`` (any ``SparkSession``); returns ``spark``."""
    from .source import KafkaFmtDataSource

    spark.dataSource.register(KafkaFmtDataSource)
    return spark


def session(master: str = "local[2]", *, app_name: str = "kafkafmt", log_dir: str | os.PathLike | None = None,
            driver_memory: str = "1g", executor_memory: str = "512m", shuffle_partitions: int = 2,
            conf: Mapping[str, str] | None = None):
    """A configured ``SparkSession`` on ``master`` with the ``kafkafmt`` source registered.

    ``conf`` adds or overrides Spark settings.  If a session is already running, Spark returns it
    (settings that only apply at JVM start, like memory, are then ignored, as ``getOrCreate`` does).
    The JVM's output goes to ``<log_dir>/spark-jvm.log``.
    """
    prepare_environment()
    from pyspark.sql import SparkSession

    logs = Path(log_dir) if log_dir is not None else default_log_dir()
    logs.mkdir(parents=True, exist_ok=True)
    jvm_log = logs / "spark-jvm.log"
    (logs / "log4j2.properties").write_text(LOG4J2.format(log=jvm_log))
    settings = spark_conf(logs, driver_memory=driver_memory, executor_memory=executor_memory,
                          shuffle_partitions=shuffle_partitions)
    settings.update(conf or {})
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, value)
    with jvm_output_to(jvm_log):
        spark = builder.getOrCreate()
    return register(spark)
