"""Each old release's own ``kafka.tools.DumpLogSegments`` beside ``kafkafmt dump --kafka-line``, without
``--deep-iteration`` too.

The segments are kafkafmt-built (:func:`segments`) with the holes a cleaner leaves: plain messages whose offsets
jump, a compressed wrapper (v0/v1) or batch (v2) with a hole inside, in every message format the release reads
(v0 everywhere, v1 from 0.10.0, v2 from 0.11).  Each release's tool runs from its jars (:mod:`kafkarig.releases`),
one JVM per set of flags (:data:`FLAGS`) over all the segments, its output read as UTF-8 (the JVM told to write
UTF-8 whatever the locale: a shallow wrapper's payload is its compressed bytes read as text); kafkafmt's CLI
(``kafkafmt dump FILES FLAGS --kafka-line <the release's line>``) runs in this process on the same files.
Each segment also gets offset indexes (:func:`indexes`), one entry per shallow entry keyed by its first offset
(as brokers before 2.0 wrote them) or by its last (2.0 on, KAFKA-6264), and an empty one, dumped as ``"index"``:
the mismatches each release's tool reports.
Both stdout and stderr (the non-consecutive offsets report) are kept whole, the temporary directory's path
replaced by ``<root>``; :func:`reports` splits stderr into one report per file (the release prints them in its
Scala ``HashMap``'s order, by the hash of the paths, kafkafmt in the files' order).

    run_all()   # {release: {"segments": {name: hex}, "flags": {flags: {"real": [stdout, stderr],
                #                                                    "kafkafmt": [stdout, stderr]}}}}
"""
from __future__ import annotations

import contextlib
import io
import os
import shutil
import struct
import subprocess
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from kafkafmt.constants import CompressionType
from kafkafmt.records import MemoryRecords
from kafkafmt.records.builder import build_records

from .broker import JVM_OPTS
from .releases import RELEASES, Release, release, resolve

__all__ = ["FLAGS", "indexes", "reports", "run_all", "run_release", "segments"]

#: the flag sets compared (``--deep-iteration --print-data-log`` is the live plan's ``dump/raw`` check)
FLAGS = {"shallow": [], "print-data-log": ["--print-data-log"], "deep-iteration": ["--deep-iteration"]}
TS = 1700000000000
_STDIO = threading.Lock()


def _messages(magic: int) -> bytes:
    """Plain messages 0, 1, 3; a gzip wrapper holding 4 and 6; plain 7 and 9 (v0 or v1)."""
    def plain(offset: int) -> bytes:
        return build_records([{"offset": offset, "timestamp": TS + offset if magic else -1,
                               "key": f"k{offset}".encode(), "value": f"value-{offset}".encode()}], magic=magic)
    wrapper = build_records([{"offset": o, "timestamp": TS + o if magic else -1, "key": f"k{o}".encode(),
                              "value": f"value-{o}".encode()} for o in (4, 6)], magic=magic,
                            compression=CompressionType.GZIP)
    return b"".join([plain(0), plain(1), plain(3), wrapper, plain(7), plain(9)])


def _batches() -> bytes:
    """v2: a batch of 0, 1; one of 3; one holding 4 and 6 (a hole inside); a gzip batch of 8, 9."""
    def batch(offsets, compression=CompressionType.NONE) -> bytes:
        return build_records([{"offset": o, "timestamp": TS + o, "key": f"k{o}".encode(),
                               "value": f"value-{o}".encode()} for o in offsets], magic=2, compression=compression,
                             base_offset=offsets[0])
    return b"".join([batch([0, 1]), batch([3]), batch([4, 6]), batch([8, 9], CompressionType.GZIP)])


def segments(rel: Release) -> dict[str, bytes]:
    """The segments ``rel``'s tool reads: name → bytes (v0 always, v1 from 0.10.0, v2 from 0.11)."""
    out = {"v0": _messages(0)}
    if rel.max_magic >= 1:
        out["v1"] = _messages(1)
    if rel.max_magic >= 2:
        out["v2"] = _batches()
    return out


def indexes(data: bytes) -> dict[str, bytes]:
    """Two offset indexes of segment ``data`` (base offset 0): an entry for every shallow entry but the first,
    keyed by its first offset (``"first"``) or by its last (``"last"``); and one without entries (``"empty"``)."""
    out = {"first": b"", "last": b"", "empty": b""}
    position = 0
    for i, batch in enumerate(MemoryRecords(data).batches()):
        if i > 0:
            first = next(iter(batch.records())).offset
            out["first"] += struct.pack(">ii", first, position)
            out["last"] += struct.pack(">ii", batch.last_offset, position)
        position += batch.size_in_bytes
    return out


def _real(rel: Release, files: list[Path], flags: list[str], root: Path) -> tuple[list[str], list[str]]:
    log4j = root / "log4j.properties"
    if not log4j.exists():
        log4j.write_text("log4j.rootLogger=OFF\n")
    cmd = [os.environ.get("KAFKA_ORACLE_JAVA") or "java", *JVM_OPTS, f"-Dlog4j.configuration=file:{log4j}",
           "-Dfile.encoding=UTF-8", "-Dsun.stdout.encoding=UTF-8", "-Dsun.stderr.encoding=UTF-8",
           "-cp", f"{rel.lib_dir}/*", "kafka.tools.DumpLogSegments", "--files", ",".join(map(str, files)), *flags]
    p = subprocess.run(cmd, capture_output=True, timeout=120, stdin=subprocess.DEVNULL, check=False)
    err = [ln for ln in p.stderr.decode("utf-8").split("\n") if ln and not ln.startswith(("log4j:", "SLF4J:"))]
    return _rooted(p.stdout.decode("utf-8"), root), [ln.replace(str(root), "<root>") for ln in err]


def _kafkafmt(rel: Release, files: list[Path], flags: list[str], root: Path) -> tuple[list[str], list[str]]:
    from kafkafmt import cli
    out, err = io.StringIO(), io.StringIO()
    with _STDIO, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        cli.main(["dump", *map(str, files), *flags, "--kafka-line", rel.line])
    return _rooted(out.getvalue(), root), [ln.replace(str(root), "<root>") for ln in err.getvalue().split("\n") if ln]


def _rooted(text: str, root: Path) -> list[str]:
    return text.replace(str(root), "<root>").split("\n")


def run_release(version: str) -> dict:
    """Every flag set of :data:`FLAGS` on ``version``'s segments: the segments, the release's output and kafkafmt's
    (each ``[stdout lines, stderr lines]``)."""
    rel = release(version)
    resolve(rel)
    root = Path(tempfile.mkdtemp(prefix=f"kafkafmt-dump-{rel.version}-"))
    try:
        files, index_files = [], []
        segs = segments(rel)
        for name, data in segs.items():
            (root / name).mkdir()
            f = root / name / f"{0:020d}.log"
            f.write_bytes(data)
            files.append(f)
            for key, index in indexes(data).items():
                (root / f"{name}-{key}").mkdir()
                (root / f"{name}-{key}" / f.name).write_bytes(data)
                index_files.append(root / f"{name}-{key}" / f"{0:020d}.index")
                index_files[-1].write_bytes(index)
        runs = {k: {"real": list(_real(rel, files, flags, root)), "kafkafmt": list(_kafkafmt(rel, files, flags, root))}
                for k, flags in FLAGS.items()}
        runs["index"] = {"real": list(_real(rel, index_files, [], root)),
                         "kafkafmt": list(_kafkafmt(rel, index_files, [], root))}
        return {"segments": {name: data.hex() for name, data in segs.items()}, "flags": runs}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run_all(at_once: int = 3) -> dict:
    """:func:`run_release` of every release of :data:`~kafkarig.releases.RELEASES`, ``at_once`` at a time."""
    with ThreadPoolExecutor(at_once) as pool:
        return dict(zip(RELEASES, pool.map(run_release, RELEASES)))


def reports(stderr: list[str]) -> list[list[str]]:
    """stderr as one report per file (a header line, then its indented lines), sorted."""
    out: list[list[str]] = []
    for line in stderr:
        if line.startswith(" ") and out:
            out[-1].append(line)
        else:
            out.append([line])
    return sorted(out)
