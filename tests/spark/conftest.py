"""Spark tests: ONE session-scoped local SparkSession (skipped locally without Java or pyspark,
a failure under CI=true), and sample logs built with kafkafmt.log in temporary directories."""
from __future__ import annotations

import os
import shutil
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))
sys.path.insert(0, os.path.dirname(__file__))

from ci_mode import skip_or_fail  # noqa: E402
from spark_logs import build_sample_logs  # noqa: E402


def spark_missing() -> str | None:
    """Why Spark cannot run here, or None."""
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "Java is not installed (Spark needs a JVM)"
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "pyspark is not installed (pip install -e '.[spark]')"
    return None


#: JIT options for the tests' short-lived Spark JVMs: C1 only (no C2 compiling on the two cores the tasks need)
#: and the serial collector; added to the Java options :func:`kafkafmt.spark.session.spark_conf` sets
SHORT_LIVED_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def short_lived_jvm(conf: dict[str, str]) -> dict[str, str]:
    """The driver's and executors' Java options of ``conf`` with :data:`SHORT_LIVED_JVM` added."""
    return {k: f"{conf[k]} {SHORT_LIVED_JVM}" for k in ("spark.driver.extraJavaOptions",
                                                        "spark.executor.extraJavaOptions")}


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    """A quiet local[2] session from kafkafmt.spark.session() (Java options + SHORT_LIVED_JVM), stopped at the end
    of the run."""
    reason = spark_missing()
    if reason:
        skip_or_fail(reason)
    import kafkafmt.spark
    from kafkafmt.spark.session import spark_conf
    logs = tmp_path_factory.mktemp("spark-logs")
    s = kafkafmt.spark.session("local[2]", log_dir=logs, conf=short_lived_jvm(spark_conf(logs)))
    yield s
    s.stop()


@pytest.fixture(scope="session")
def sample_logs(tmp_path_factory):
    """A log.dirs directory with one partition per magic/codec, a format upgrade and transactions."""
    return build_sample_logs(tmp_path_factory.mktemp("logdirs") / "kafka-logs")
