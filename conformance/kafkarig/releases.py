"""The jars of old Apache Kafka releases, resolved and cached by Maven, one class path per release.

Each release is one row of :data:`RELEASES` (versions as data): the broker artifact
(``org.apache.kafka:kafka_<scala>:<version>``, which brings its ``kafka-clients`` and the ZooKeeper
it was built against) and the extras Java 17 needs to run it:

* 0.10.x and 0.11 call ``javax.xml.bind.DatatypeConverter`` (``kafka.utils.CoreUtils``), gone from the
  JDK since Java 11: ``jaxb-api`` 2.3.1 and ``javax.activation-api`` 1.2.0;
* 1.0.2 … 2.8.2 ship only ``slf4j-api``: a log4j binding, so the broker writes its ``kafka.log``;
* 2.0.1 and 2.1.1 bring ZooKeeper 3.4.13, whose client cannot connect on Java 14 and later (its
  ``StaticHostProvider`` parses ``InetSocketAddress.toString()``, which reads ``127.0.0.1/<unresolved>:PORT``
  since Java 14: ``UnresolvedAddressException``, fixed in ZooKeeper 3.5.8 only): ZooKeeper 3.4.12 instead,
  the release before that parsing came (ZOOKEEPER-2184), the same client API.

:func:`resolve` writes one pom per release generated from its row (:func:`pom_xml`) and runs
``mvn dependency:copy-dependencies`` into ``conformance/.cache/releases/<version>/lib/``; a stamp file
holding the row's coordinates marks a complete copy (a changed row re-resolves).  Maven runs under one lock
(``flock`` on ``releases/.maven.lock``): processes and threads resolving at once (the test session's runs
started side by side) wait for each other instead of copying into, or removing, the same folder.  A version that is not
a row raises :class:`ReleaseError` ("unknown Kafka release"); a row Maven cannot give raises it with
one line naming the artifact and Maven's log.

    lib = resolve("0.10.2.2")          # Path to .../releases/0.10.2.2/lib (jars)
"""
from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .paths import CACHE

__all__ = [
    "CACHE_DIR",
    "RELEASES",
    "RELEASE_OF_LINE",
    "Release",
    "ReleaseError",
    "maven_missing_reason",
    "pom_xml",
    "release",
    "resolve",
]

CACHE_DIR = Path(os.environ.get("KAFKAFMT_RELEASES_CACHE", CACHE / "releases"))

_JAXB = (("javax.xml.bind", "jaxb-api", "2.3.1"), ("javax.activation", "javax.activation-api", "1.2.0"))


#: ZooKeeper 3.4.12 in place of 3.4.13 (module docstring): the nearest dependency wins in Maven
_ZK_3_4_12 = (("org.apache.zookeeper", "zookeeper", "3.4.12"),)


def _slf4j(version: str) -> tuple[tuple[str, str, str], ...]:
    return (("org.slf4j", "slf4j-log4j12", version), ("log4j", "log4j", "1.2.17"))


class ReleaseError(RuntimeError):
    """An unknown release, or one whose jars Maven cannot give; the message is one line."""


@dataclass(frozen=True)
class Release:
    """One Kafka release the rig can run: its broker artifact and the extras Java 17 needs.

    ``message_format`` is the broker's default ``log.message.format.version`` (the newest format it
    writes); ``fetch_versions`` / ``produce_versions`` the request versions it answers (``ApiKeys`` at
    that tag), which decide the client generations it serves.
    """

    version: str
    scala: str
    line: str
    message_format: str
    max_magic: int
    produce_versions: tuple[int, int]
    fetch_versions: tuple[int, int]
    extras: tuple[tuple[str, str, str], ...] = ()

    @property
    def artifact(self) -> str:
        return f"org.apache.kafka:kafka_{self.scala}:{self.version}"

    @property
    def dir(self) -> Path:
        return CACHE_DIR / self.version

    @property
    def lib_dir(self) -> Path:
        return self.dir / "lib"

    @property
    def stamp(self) -> Path:
        return self.lib_dir / ".complete"

    def coordinates(self) -> list[str]:
        return [self.artifact, *(":".join(e) for e in self.extras)]

    def jar(self, prefix: str) -> Path:
        """The one jar of this release's class path whose name starts with ``prefix-<digit>``."""
        found = sorted(p for p in self.lib_dir.glob(f"{prefix}-*.jar") if p.name[len(prefix) + 1].isdigit())
        if not found:
            raise ReleaseError(f"no {prefix} jar in {self.lib_dir} (resolve({self.version!r}) first)")
        return found[0]


#: every release the rig runs; ApiKeys version ranges read at each tag (clients/.../protocol/Protocol.java
#: before 0.11, ApiKeys.java after)
RELEASES: dict[str, Release] = {r.version: r for r in (
    Release("0.9.0.1", "2.11", "0.9", "0.9.0", 0, (0, 1), (0, 1)),
    Release("0.10.0.1", "2.11", "0.10.0", "0.10.0", 1, (0, 2), (0, 2), _JAXB),
    Release("0.10.1.1", "2.11", "0.10.1", "0.10.1", 1, (0, 2), (0, 3), _JAXB),
    Release("0.10.2.2", "2.11", "0.10.2", "0.10.2", 1, (0, 2), (0, 3), _JAXB),
    Release("0.11.0.3", "2.11", "0.11", "0.11.0", 2, (0, 3), (0, 5), _JAXB),
    Release("1.0.2", "2.12", "1.0", "1.0", 2, (0, 5), (0, 6), _slf4j("1.7.25")),
    Release("1.1.1", "2.12", "1.1", "1.1", 2, (0, 5), (0, 7), _slf4j("1.7.25")),
    Release("2.0.1", "2.12", "2.0", "2.0", 2, (0, 6), (0, 8), _slf4j("1.7.25") + _ZK_3_4_12),
    Release("2.1.1", "2.12", "2.1", "2.1", 2, (0, 7), (0, 10), _slf4j("1.7.25") + _ZK_3_4_12),
    Release("2.8.2", "2.12", "2.8", "2.8", 2, (0, 9), (0, 12), _slf4j("1.7.30")),
)}

#: the release the live rig runs for a release line (its last patch release)
RELEASE_OF_LINE = {r.line: r.version for r in RELEASES.values()}



def release(version: str) -> Release:
    """The row of ``version`` (a release ``0.10.2.2`` or a line ``0.10.2``); ReleaseError if none."""
    r = RELEASES.get(version) or RELEASES.get(RELEASE_OF_LINE.get(version, ""))
    if r is None:
        raise ReleaseError(f"unknown Kafka release {version!r}: the rig runs {', '.join(RELEASES)}")
    return r


def pom_xml(r: Release) -> str:
    """The pom that copies ``r``'s runtime class path (the broker artifact + extras) into its lib dir."""
    deps = "".join(
        f"    <dependency><groupId>{g}</groupId><artifactId>{a}</artifactId><version>{v}</version></dependency>\n"
        for g, a, v in (c.split(":") for c in r.coordinates()))
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<!-- generated by conformance/kafkarig/releases.py from its RELEASES row; do not edit -->
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>kafkafmt.kafkarig</groupId>
  <artifactId>kafka-release-{r.version}</artifactId>
  <version>0</version>
  <packaging>pom</packaging>
  <dependencies>
{deps}  </dependencies>
</project>
"""


def maven_missing_reason() -> str | None:
    """Why old releases cannot run here (no Java, no Maven), else None."""
    if shutil.which(os.environ.get("KAFKA_ORACLE_JAVA") or "java") is None:
        return "Java 17+ is not on PATH (needed to run old Kafka releases)"
    if shutil.which(os.environ.get("MVN") or "mvn") is None:
        return "Maven (mvn) is not on PATH (needed to fetch old Kafka releases' jars)"
    return None


def resolve(version: str | Release, *, mvn: str | None = None) -> Path:
    """``version``'s lib dir, resolved by Maven on first use (a stamp marks a complete copy)."""
    r = version if isinstance(version, Release) else release(version)
    want = "\n".join(r.coordinates()) + "\n"
    if _complete(r, want):
        return r.lib_dir
    reason = maven_missing_reason()
    if reason:
        raise ReleaseError(reason)
    with _maven_lock():
        if _complete(r, want):  # resolved by another process or thread while this one waited
            return r.lib_dir
        r.dir.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(r.lib_dir, ignore_errors=True)
        pom = r.dir / "pom.xml"
        tmp = pom.with_suffix(".xml.tmp")
        tmp.write_text(pom_xml(r))
        tmp.replace(pom)
        log = r.dir / "mvn.log"
        cmd = [mvn or os.environ.get("MVN") or "mvn", "-q", "-B", "--no-transfer-progress", "-Dstyle.color=never",
               "-f", str(pom), "org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies",
               "-DincludeScope=runtime", f"-DoutputDirectory={r.lib_dir}"]
        with open(log, "wb") as out:
            rc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL).returncode
        if rc != 0 or not any(r.lib_dir.glob("kafka_*.jar")):
            missing = _first_error(log)
            raise ReleaseError(f"Maven cannot give Kafka {r.version} ({r.artifact}): {missing} (log: {log})")
        tmp = r.stamp.with_name(r.stamp.name + ".tmp")
        tmp.write_text(want)
        tmp.replace(r.stamp)
    return r.lib_dir


def _complete(r: Release, want: str) -> bool:
    return r.stamp.is_file() and r.stamp.read_text() == want


@contextmanager
def _maven_lock():
    """Held while Maven resolves: one resolution at a time across processes and threads (each holder opens the
    lock file itself, and ``flock`` locks belong to an open file, so two threads exclude each other too)."""
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    with open(CACHE_DIR / ".maven.lock", "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _first_error(log: Path) -> str:
    for line in log.read_text(errors="replace").splitlines():
        if "[ERROR]" in line:
            return line.replace("[ERROR]", "").strip()[:300]
    return "no jars copied"


if __name__ == "__main__":  # PYTHONPATH=conformance python -m kafkarig.releases [VERSION ...]: resolve, print lib dirs
    import sys
    for v in sys.argv[1:] or list(RELEASES):
        try:
            print(v, resolve(v), flush=True)
        except ReleaseError as e:
            print(f"kafkarig: {e}", file=sys.stderr)
            sys.exit(1)
