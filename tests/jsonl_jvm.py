"""A long-running JVM answering one JSON object per line: the transport the log and cleaner oracles share.

``JsonLinesJvm(cmd, name)`` starts ``cmd`` with pipes; ``request(op, **fields)`` writes one request line and
reads one response line (under a lock, so threads may share the JVM); ``close()`` ends it.  Each oracle
subclasses it with its operations and its own error for a response without ``ok``.
"""
from __future__ import annotations

import json
import subprocess
import threading


class JsonLinesJvm:
    def __init__(self, cmd: list[str], name: str):
        self.name = name
        self._proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self._lock = threading.Lock()

    def request(self, op: str, **fields) -> dict:
        """One request and its response, whatever the response says."""
        with self._lock:
            self._proc.stdin.write(json.dumps({"op": op, **fields}) + "\n")
            self._proc.stdin.flush()
            line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the {self.name} died")
        return json.loads(line)

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
