"""Java drivers compiled on first use: ``javac`` into a temporary directory named by the sources' hash.

The drivers of ``conformance/oracle-log/`` (Kafka 3.9.2's log layer and kafka-dump-log) are compiled here
against the jars of ``make oracle`` rather than by the Makefile: a changed source gets a directory of its
own, so processes still running the previous classes are never disturbed.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path


def compiled(name: str, sources: list[Path], lib: Path) -> Path:
    """The directory of ``sources``' classes compiled against ``lib/*`` (compiled now if it is not there yet).

    Raises :class:`RuntimeError` with javac's output when the compilation fails."""
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in sources)).hexdigest()[:16]
    out = Path(tempfile.gettempdir()) / f"kafkafmt-{name}-{digest}"
    if not (out / ".complete").exists():
        tmp = Path(tempfile.mkdtemp(prefix=f"kafkafmt-{name}-build-"))
        proc = subprocess.run(["javac", "--release", "17", "-encoding", "UTF-8", "-nowarn", "-cp", f"{lib}/*",
                               "-d", str(tmp), *map(str, sources)], capture_output=True, text=True)
        if proc.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            raise RuntimeError(f"javac failed:\n{proc.stderr}")
        (tmp / ".complete").touch()
        try:
            os.replace(tmp, out)
        except OSError:  # another process won the race
            shutil.rmtree(tmp, ignore_errors=True)
    return out
