"""The compression libraries old Kafka releases shipped, run on the JVM: lz4-java's, snappy-java's and zstd-jni's jars
and the JDK's ``GZIPOutputStream``, driven by ``conformance/codecs/CodecDriver.java``.

The jars come from Maven (``mvn dependency:get`` into ``~/.m2``, or ``$MAVEN_REPOSITORY``, under the rig's Maven
lock); :func:`prefetch` gets many in one Maven run (each run costs seconds of JVM and plugin start, more than a
jar or a pom takes to download), and a missing one is then fetched alone, with its own error; the driver is
compiled on first use against lz4-java 1.3.0 and snappy-java 1.1.2.6 (the calls it makes exist in every
version) and run with the jar under test on its class path.  :func:`kafka_clients_pom` is a release's
kafka-clients pom, whose dependencies name the versions it shipped.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from .javac import compiled
from .paths import CONFORMANCE
from .releases import ReleaseError, _maven_lock

__all__ = ["M2", "DRIVER_JARS", "artifact", "prefetch", "lz4_java_coordinates", "snappy_java_coordinates",
           "zstd_jni_coordinates", "kafka_clients_pom_coordinates", "lz4_java_jar", "snappy_java_jar", "zstd_jni_jar",
           "kafka_clients_pom", "run_driver"]

M2 = Path(os.environ.get("MAVEN_REPOSITORY", Path.home() / ".m2" / "repository"))
DRIVER = CONFORMANCE / "codecs" / "CodecDriver.java"


#: the one maven-dependency-plugin the rig runs (kafkarig.releases' too: a fresh machine downloads it once)
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"


def _path(group: str, name: str, version: str, ext: str = "jar") -> Path:
    return M2 / Path(*group.split(".")) / name / version / f"{name}-{version}.{ext}"


def artifact(group: str, name: str, version: str, ext: str = "jar") -> Path:
    """``group:name:version`` (``ext``) in the local Maven repository, fetched by Maven when absent."""
    path = _path(group, name, version, ext)
    if not path.exists():
        if shutil.which("mvn") is None:
            raise ReleaseError(f"{group}:{name}:{version} is not in {M2} and Maven (mvn) is not installed")
        with _maven_lock():
            proc = subprocess.run(["mvn", "-q", "-B", "-Dstyle.color=never", f"-Dmaven.repo.local={M2}",
                                   f"{DEPENDENCY_PLUGIN}:get",
                                   f"-Dartifact={group}:{name}:{version}:{ext}", "-Dtransitive=false"],
                                  capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if proc.returncode != 0 or not path.exists():
            said = (proc.stdout + proc.stderr).strip().splitlines()
            raise ReleaseError(f"Maven could not get {group}:{name}:{version}:{ext}: "
                               f"{([x for x in said if '[ERROR]' in x] or said)[:1]}")
    return path


def prefetch(coordinates: list[tuple[str, str, str, str]]) -> list[tuple[str, str, str, str]]:
    """Bring every ``(group, name, version, ext)`` absent from the local repository into it with one Maven run
    (``dependency:copy`` of them all, into a scratch folder); gives those still absent after it (none, unless
    Maven failed: :func:`artifact` then fetches each alone and says which one Maven cannot give).  Nothing
    here is required: a test still asks :func:`artifact` for what it uses."""
    missing = [c for c in dict.fromkeys(coordinates) if not _path(*c).exists()]
    if not missing or shutil.which("mvn") is None:
        return missing
    items = "".join(f"<artifactItem><groupId>{g}</groupId><artifactId>{a}</artifactId><version>{v}</version>"
                    f"<type>{e}</type></artifactItem>\n" for g, a, v, e in missing)
    with _maven_lock(), tempfile.TemporaryDirectory(prefix="kafkafmt-codec-fetch-") as tmp:
        pom = Path(tmp) / "pom.xml"
        pom.write_text(f"""<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>kafkafmt.kafkarig</groupId><artifactId>codec-jars</artifactId><version>0</version><packaging>pom</packaging>
  <build><plugins><plugin>
    <groupId>org.apache.maven.plugins</groupId><artifactId>maven-dependency-plugin</artifactId><version>3.8.1</version>
    <configuration><outputDirectory>{tmp}/out</outputDirectory><artifactItems>
{items}    </artifactItems></configuration>
  </plugin></plugins></build>
</project>
""")
        subprocess.run(["mvn", "-q", "-B", "-Dstyle.color=never", f"-Dmaven.repo.local={M2}", "-f", str(pom),
                        f"{DEPENDENCY_PLUGIN}:copy"], capture_output=True, stdin=subprocess.DEVNULL)
    return [c for c in missing if not _path(*c).exists()]


def lz4_java_coordinates(version: str) -> tuple[str, str, str, str]:
    """The lz4-java jar of ``version`` (a ``codec.lz4_java`` value): net.jpountz.lz4:lz4 up to 1.3.0,
    org.lz4:lz4-java up to 1.8.0, the at.yawk.lz4 fork from 1.10."""
    major, minor = (int(x) for x in version.split(".")[:2])
    if (major, minor) <= (1, 3):
        return "net.jpountz.lz4", "lz4", version, "jar"
    if (major, minor) < (1, 10):
        return "org.lz4", "lz4-java", version, "jar"
    return "at.yawk.lz4", "lz4-java", version, "jar"


def snappy_java_coordinates(version: str) -> tuple[str, str, str, str]:
    return "org.xerial.snappy", "snappy-java", version, "jar"


def zstd_jni_coordinates(version: str) -> tuple[str, str, str, str]:
    return "com.github.luben", "zstd-jni", version, "jar"


def kafka_clients_pom_coordinates(release: str) -> tuple[str, str, str, str]:
    return "org.apache.kafka", "kafka-clients", release, "pom"


#: the jars the driver is compiled against
DRIVER_JARS = (lz4_java_coordinates("1.3.0"), snappy_java_coordinates("1.1.2.6"))


def lz4_java_jar(version: str) -> Path:
    return artifact(*lz4_java_coordinates(version))


def snappy_java_jar(version: str) -> Path:
    return artifact(*snappy_java_coordinates(version))


def zstd_jni_jar(version: str) -> Path:
    return artifact(*zstd_jni_coordinates(version))


def kafka_clients_pom(release: str) -> str:
    """The text of ``org.apache.kafka:kafka-clients:<release>``'s pom."""
    return artifact(*kafka_clients_pom_coordinates(release)).read_text()


def _driver_classes() -> Path:
    lib = Path(tempfile.mkdtemp(prefix="kafkafmt-codec-lib-"))
    try:
        for jar in (artifact(*c) for c in DRIVER_JARS):
            (lib / jar.name).symlink_to(jar)
        return compiled("codec-driver", [DRIVER], lib)
    finally:
        shutil.rmtree(lib, ignore_errors=True)


def run_driver(mode: str, jars: list[Path], inputs: list[bytes], timeout: float = 120.0) -> list[bytes]:
    """Each of ``inputs`` compressed by ``CodecDriver MODE`` with ``jars`` on the class path."""
    classes = _driver_classes()
    with tempfile.TemporaryDirectory(prefix="kafkafmt-codec-") as tmp:
        tmp = Path(tmp)
        (tmp / "in").mkdir()
        names = []
        for i, data in enumerate(inputs):
            names.append(f"{i:05d}")
            (tmp / "in" / names[-1]).write_bytes(data)
        cp = os.pathsep.join([str(classes), *map(str, jars)])
        proc = subprocess.run(["java", "-cp", cp, "CodecDriver", mode, str(tmp / "out"),
                               *(str(tmp / "in" / n) for n in names)], capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0:
            raise RuntimeError(f"CodecDriver {mode} failed:\n{proc.stderr[-3000:]}")
        if mode == "lz4" and "JNI" not in proc.stderr:  # the fast compressor of x86_64 Linux is the native one
            raise RuntimeError(f"lz4-java did not load its JNI library: {proc.stderr.strip()}")
        return [(tmp / "out" / n).read_bytes() for n in names]
