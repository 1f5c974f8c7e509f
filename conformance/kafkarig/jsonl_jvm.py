"""A long-running JVM answering one JSON object per line: the transport every oracle shares (the record
oracle of each Kafka line, the log oracle, the cleaner oracles).

``JsonLinesJvm(cmd, name)`` starts ``cmd`` with pipes, its stderr kept in a temporary file;
``request(op, **fields)`` writes one request line and reads one response line (under a lock, so threads
may share the JVM), raising :class:`JvmCrashed` with the end of the JVM's stderr when it has exited, its
pipe broke or it answered something that is not JSON; ``close()`` ends it (EOF on stdin, then a kill
after 10 s); ``call(op, **fields)`` returns a response with ``ok`` and raises :class:`OracleError` for one
without.  Each oracle subclasses it with its operations.  :func:`session_jvm_or_skip` keeps one JVM of each
oracle for the whole test session (started on first use, again if it died, closed at exit), or skips the
test when the oracle cannot run here (a failure when ``CI=true``).
"""
from __future__ import annotations

import atexit
import json
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Callable, TypeVar


class JvmCrashed(RuntimeError):
    """The oracle's JVM is gone (or answered garbage); the message ends with its stderr."""


class OracleError(Exception):
    """Kafka raised while serving a request; ``response`` is the oracle's ``ok: false`` answer, ``error`` the
    exception's class and ``message`` its message."""

    def __init__(self, response: dict):
        self.response = response
        self.error: str = response.get("error", "")
        self.message: str | None = response.get("message")
        super().__init__(f"{self.error}: {self.message}")


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

    def call(self, op: str, **fields) -> dict:
        """One request; its response when ``ok``, else :class:`OracleError` carrying the response."""
        resp = self.request(op, **fields)
        if not resp.get("ok"):
            raise OracleError(resp)
        return resp

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


J = TypeVar("J", bound=JsonLinesJvm)
_SESSION: dict[str, JsonLinesJvm] = {}
_SESSION_LOCK = threading.Lock()


def session_jvm(name: str, start: Callable[[], J]) -> J:
    """The session's one JVM called ``name``: ``start()`` on first use and again when the last one died."""
    with _SESSION_LOCK:
        jvm = _SESSION.get(name)
        if jvm is None or not jvm.alive:
            if jvm is not None:
                jvm.close()
            jvm = _SESSION[name] = start()
        return jvm


def session_jvm_or_skip(name: str, missing_reason: Callable[[], str | None], start: Callable[[], J]) -> J:
    """:func:`session_jvm`, or the test skipped (failed when ``CI=true``) naming what ``missing_reason()`` says
    is missing (Java, the jars, the compiled oracle)."""
    from ci_mode import skip_or_fail  # tests/ci_mode.py, on the path under pytest

    reason = missing_reason()
    if reason is not None:
        skip_or_fail(f"{name} unavailable: {reason}")
    return session_jvm(name, start)


def close_session_jvm(name: str) -> None:
    with _SESSION_LOCK:
        jvm = _SESSION.pop(name, None)
    if jvm is not None:
        jvm.close()


@atexit.register
def _close_all() -> None:
    for name in list(_SESSION):
        close_session_jvm(name)
