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


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    """A quiet local[2] session from kafkafmt.spark.session(), stopped at the end of the run."""
    reason = spark_missing()
    if reason:
        skip_or_fail(reason)
    import kafkafmt.spark

    s = kafkafmt.spark.session("local[2]", log_dir=tmp_path_factory.mktemp("spark-logs"))
    yield s
    s.stop()


@pytest.fixture(scope="session")
def sample_logs(tmp_path_factory):
    """A log.dirs directory with one partition per magic/codec, a format upgrade and transactions."""
    return build_sample_logs(tmp_path_factory.mktemp("logdirs") / "kafka-logs")
