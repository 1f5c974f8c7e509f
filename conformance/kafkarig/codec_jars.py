"""The compression libraries old Kafka releases shipped, run on the JVM: lz4-java's, snappy-java's and zstd-jni's jars
and the JDK's ``GZIPOutputStream``, driven by ``conformance/codecs/CodecDriver.java``.

The jars come from Maven (``mvn dependency:get`` into ``~/.m2``, under the rig's Maven lock); the driver is
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

__all__ = ["M2", "artifact", "lz4_java_jar", "snappy_java_jar", "zstd_jni_jar", "kafka_clients_pom", "run_driver"]

M2 = Path(os.environ.get("MAVEN_REPOSITORY", Path.home() / ".m2" / "repository"))
DRIVER = CONFORMANCE / "codecs" / "CodecDriver.java"


def artifact(group: str, name: str, version: str, ext: str = "jar") -> Path:
    """``group:name:version`` (``ext``) in the local Maven repository, fetched by Maven when absent."""
    path = M2 / Path(*group.split(".")) / name / version / f"{name}-{version}.{ext}"
    if not path.exists():
        if shutil.which("mvn") is None:
            raise ReleaseError(f"{group}:{name}:{version} is not in {M2} and Maven (mvn) is not installed")
        with _maven_lock():
            proc = subprocess.run(["mvn", "-q", "-B", "dependency:get", f"-Dartifact={group}:{name}:{version}:{ext}",
                                   "-Dtransitive=false"], capture_output=True, text=True)
        if proc.returncode != 0 or not path.exists():
            raise ReleaseError(f"Maven could not get {group}:{name}:{version}:{ext}: "
                               f"{(proc.stdout + proc.stderr).strip().splitlines()[-1:]}")
    return path


def lz4_java_jar(version: str) -> Path:
    """The lz4-java jar of ``version`` (a ``codec.lz4_java`` value): net.jpountz.lz4:lz4 up to 1.3.0,
    org.lz4:lz4-java up to 1.8.0, the at.yawk.lz4 fork from 1.10."""
    major, minor = (int(x) for x in version.split(".")[:2])
    if (major, minor) <= (1, 3):
        return artifact("net.jpountz.lz4", "lz4", version)
    if (major, minor) < (1, 10):
        return artifact("org.lz4", "lz4-java", version)
    return artifact("at.yawk.lz4", "lz4-java", version)


def snappy_java_jar(version: str) -> Path:
    return artifact("org.xerial.snappy", "snappy-java", version)


def zstd_jni_jar(version: str) -> Path:
    return artifact("com.github.luben", "zstd-jni", version)


def kafka_clients_pom(release: str) -> str:
    """The text of ``org.apache.kafka:kafka-clients:<release>``'s pom."""
    return artifact("org.apache.kafka", "kafka-clients", release, "pom").read_text()


def _driver_classes() -> Path:
    lib = Path(tempfile.mkdtemp(prefix="kafkafmt-codec-lib-"))
    try:
        for jar in (lz4_java_jar("1.3.0"), snappy_java_jar("1.1.2.6")):
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
