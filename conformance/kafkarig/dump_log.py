"""kafka-dump-log and ``kafkafmt dump`` run side by side on the same files, as few calls as possible.

:class:`DumpTools` runs the real kafka-dump-log (``kafka.tools.DumpLogSegments`` from the jars) in one
long-running JVM, ``conformance/oracle-log/DumpLogOracle.java`` over the rig's one JVM transport
(:mod:`kafkarig.jsonl_jvm`), compiled on first use (:mod:`kafkarig.javac`); without ``javac`` or when that
JVM dies, one JVM per call.  kafkafmt's side is ``python -m kafkafmt dump`` (a subprocess) or the same CLI
entry point in this process.  :func:`batched` runs one tool over many cases' files at once and splits
its output back per case.
"""
from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

from .broker import JVM_OPTS, LIB_DIR
from .javac import compiled
from .jsonl_jvm import JsonLinesJvm, JvmCrashed
from .paths import CONFORMANCE, REPO_ROOT

#: the driver's source (compiled on first use against Kafka 3.9.2's jars)
SOURCE = CONFORMANCE / "oracle-log" / "DumpLogOracle.java"
#: the line protocol every oracle serves
PROTOCOL = CONFORMANCE / "oracle-shared" / "JsonLines.java"
QUIET_LOG4J = "log4j.rootLogger=OFF\n"
#: kafkafmt's CLI swaps this process's stdout/stderr while it runs in-process
_STDIO_LOCK = threading.Lock()

#: (exit status, stdout lines, stderr lines) of one tool run
ToolResult = tuple[int, list[str], list[str]]


class DumpLogOracle(JsonLinesJvm):
    """One JVM running ``DumpLogSegments.main`` once per request."""

    def __init__(self, workdir: Path, java_props: list[str]) -> None:
        classes = compiled("dump-log-oracle", [SOURCE, PROTOCOL], LIB_DIR)
        java = os.environ.get("KAFKA_ORACLE_JAVA") or "java"
        super().__init__([java, *JVM_OPTS, *java_props, "-cp", f"{classes}{os.pathsep}{LIB_DIR}{os.sep}*",
                          "DumpLogOracle"], "kafka-dump-log oracle", cwd=workdir)

    def run(self, args: list[str]) -> ToolResult:
        r = self.request("dump", args=args)
        if not r.get("ok"):
            raise JvmCrashed(f"the {self.name} refused {args}: {r.get('error')}: {r.get('message')}")
        return r["exit"], r["stdout"].splitlines(), [ln for ln in r["stderr"].splitlines() if not ln.startswith("log4j:")]


class DumpTools:
    """kafka-dump-log and ``kafkafmt dump``, each returning (exit status, stdout lines, stderr lines)."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        quiet = workdir / "log4j-quiet.properties"
        quiet.write_text(QUIET_LOG4J)
        self._java_props = [f"-Dlog4j.configuration=file:{quiet}"]
        self._server: DumpLogOracle | None | bool = None

    def close(self) -> None:
        if self._server:
            self._server.close()

    def kafka_dump_log(self, files: list[Path], *flags: str, timeout: float = 120) -> ToolResult:
        """The real kafka-dump-log (``kafka.tools.DumpLogSegments``).

        Served by one long-running JVM when ``javac`` is there, else one JVM per call."""
        args = [*flags, "--files", ",".join(map(str, files))]
        if self._server is None and shutil.which("javac") is not None:
            try:
                self._server = DumpLogOracle(self.workdir, self._java_props)
            except (OSError, RuntimeError):
                self._server = False
        if self._server:
            try:
                return self._server.run(args)
            except (OSError, JvmCrashed):
                self._server.close()
                self._server = False
        cmd = [os.environ.get("KAFKA_ORACLE_JAVA") or "java", *JVM_OPTS, *self._java_props, "-cp",
               f"{LIB_DIR}{os.sep}*", "kafka.tools.DumpLogSegments", *args]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=self.workdir)
        return p.returncode, p.stdout.splitlines(), [ln for ln in p.stderr.splitlines() if not ln.startswith("log4j:")]

    def kafkafmt_dump(self, files: list[Path], *flags: str, timeout: float = 120) -> ToolResult:
        """``python -m kafkafmt dump FILES FLAGS`` in a subprocess (from the checkout: the kafkafmt under test)."""
        cmd = [sys.executable, "-m", "kafkafmt", "dump", *map(str, files), *flags]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=REPO_ROOT)
        return p.returncode, p.stdout.splitlines(), p.stderr.splitlines()

    def kafkafmt_dump_inprocess(self, files: list[Path], *flags: str) -> ToolResult:
        """The same CLI entry point (``kafkafmt.cli.main``) in this process: no interpreter start per call.
        (Only the dump tools' threads run during a dump phase; stdout/stderr are swapped under a lock.)"""
        from kafkafmt import cli
        out, err = io.StringIO(), io.StringIO()
        with _STDIO_LOCK, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = cli.main(["dump", *map(str, files), *flags])
            except SystemExit as e:  # argparse
                rc = e.code if isinstance(e.code, int) else 1
        return rc, out.getvalue().splitlines(), err.getvalue().splitlines()


def batched(tool, groups: dict, *flags: str) -> dict:
    """Run ``tool`` (``kafka_dump_log`` / ``kafkafmt_dump``) over every group's files in as few calls as
    possible and split the results per group: stdout by the ``Dumping <file>`` headers, stderr by
    the file paths its reports name.  A JVM that dies on one file (an exception ends
    DumpLogSegments, and loses the reports it prints at the end) is re-run on the groups before
    and after that file; unattributable stderr makes the batch split in halves.
    Returns ``{key: (rc, stdout_lines, stderr_lines)}``."""
    keys = [k for k, v in groups.items() if v]
    if not keys:
        return {}
    if len(keys) == 1:
        return {keys[0]: tool(groups[keys[0]], *flags)}
    files = [f for k in keys for f in groups[k]]
    owner = {str(f): k for k in keys for f in groups[k]}
    rc, out, err = tool(files, *flags)
    split = split_dump(out, files)

    def sub(ks):
        return batched(tool, {k: groups[k] for k in ks}, *flags)

    if any(ln.startswith("Exception in thread") for ln in err):
        dumped = [ln[8:] for ln in out if ln.startswith("Dumping ") and ln[8:] in owner]
        i = keys.index(owner[dumped[-1]]) if dumped else 0
        res = sub(keys[:i])
        res.update(sub([keys[i]]))
        res.update(sub(keys[i + 1:]))
        return res
    per: dict = {k: [] for k in keys}
    blocks: list[list[str]] = []
    for line in err:
        if line.startswith(" ") and blocks:
            blocks[-1].append(line)
        else:
            blocks.append([line])
    paths = sorted(owner, key=len, reverse=True)
    for b in blocks:
        hit = next((p for p in paths if p in b[0]), None)
        if hit is None:
            half = len(keys) // 2
            res = sub(keys[:half])
            res.update(sub(keys[half:]))
            return res
        per[owner[hit]].extend(b)
    return {k: (1 if any(ln.startswith("kafkafmt: error") for ln in per[k]) else (0 if not per[k] else rc),
                [ln for f in groups[k] for ln in split.get(str(f), [])], per[k]) for k in keys}


def split_dump(lines: list[str], files: list[Path]) -> dict[str, list[str]]:
    """Split one multi-file dump into per-file lines by its ``Dumping <file>`` headers."""
    names = {str(f) for f in files}
    out: dict[str, list[str]] = {}
    cur = None
    for line in lines:
        if line.startswith("Dumping ") and line[8:] in names:
            cur = line[8:]
            out[cur] = [line]
            continue
        if cur is not None:
            out[cur].append(line)
    return out
