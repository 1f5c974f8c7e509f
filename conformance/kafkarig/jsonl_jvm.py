"""A long-running JVM answering one JSON object per line: the transport every oracle shares (the record
oracle of each Kafka line, the log oracle, the cleaner oracles).

``JsonLinesJvm(cmd, name)`` starts ``cmd`` with pipes, its stderr kept in a temporary file;
``request(op, **fields)`` writes one request line and reads one response line (under a lock, so threads
may share the JVM), raising :class:`JvmCrashed` with the end of the JVM's stderr when it has exited, its
pipe broke or it answered something that is not JSON; ``close()`` ends it (EOF on stdin, then a kill
after 10 s).  Each oracle subclasses it with its operations and its own error for a response without
``ok``.
"""
from __future__ import annotations

import json
import subprocess
import tempfile
import threading
from pathlib import Path


class JvmCrashed(RuntimeError):
    """The oracle's JVM is gone (or answered garbage); the message ends with its stderr."""


class JsonLinesJvm:
    crash_error: type[JvmCrashed] = JvmCrashed

    def __init__(self, cmd: list[str], name: str, *, cwd: Path | None = None):
        self.name = name
        self._stderr = tempfile.TemporaryFile(prefix="kafkafmt-oracle-", suffix=".stderr")
        self._proc = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=self._stderr, text=True, encoding="utf-8", bufsize=1)
        self._lock = threading.Lock()
        self.requests_served = 0

    @property
    def alive(self) -> bool:
        return self._proc.poll() is None

    def stderr_tail(self, limit: int = 4000) -> str:
        try:
            self._stderr.flush()
            self._stderr.seek(0)
            return self._stderr.read().decode("utf-8", "replace")[-limit:]
        except (OSError, ValueError):
            return ""

    def request(self, op: str, **fields) -> dict:
        """One request and its response, whatever the response says."""
        line = json.dumps({"op": op, **fields}, separators=(",", ":"))
        with self._lock:
            if self._proc.poll() is not None:
                raise self.crash_error(f"the {self.name} exited with {self._proc.returncode}:\n{self.stderr_tail()}")
            try:
                self._proc.stdin.write(line + "\n")
                self._proc.stdin.flush()
                answer = self._proc.stdout.readline()
            except (BrokenPipeError, OSError) as e:
                raise self.crash_error(f"the {self.name}'s pipe broke ({e}):\n{self.stderr_tail()}") from e
            if not answer:
                self._proc.wait(timeout=5)
                raise self.crash_error(f"the {self.name} exited with {self._proc.returncode}:\n{self.stderr_tail()}")
            self.requests_served += 1
        try:
            return json.loads(answer)
        except json.JSONDecodeError as e:
            raise self.crash_error(f"the {self.name} answered a non-JSON line: {answer[:200]!r}") from e

    def close(self) -> None:
        proc = self._proc
        if proc.poll() is None:
            try:
                proc.stdin.close()  # EOF: the oracle's read loop ends and the JVM exits
                proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()
                proc.wait(timeout=10)
        for stream in (proc.stdout, proc.stdin):
            try:
                stream.close()
            except (OSError, ValueError):
                pass
        self._stderr.close()
