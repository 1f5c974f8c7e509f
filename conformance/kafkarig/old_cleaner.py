"""Python client for ``conformance/old-cleaner/OldCleaner.java``: an old release's own ``kafka.log.Log`` writes a
partition, its own ``LogCleaner`` thread cleans it, at a mock clock.

One JVM per release, on that release's jars (:mod:`kafkarig.releases`), serves any number of requests::

    with OldCleaner("0.10.0.1") as k:
        end = k.write(root / "t-0", props, [(ms, batch_bytes), ...])   # the release's Log writes them
        k.clean(root / "t-0", now=..., props=props, recovery_point=end, dedupe_buffer_size=...)

``write`` leaves the log directory as a clean shutdown does (``.kafka_cleanshutdown``, the recovery-point and
replication checkpoints at the log end) and gives each ``.log`` the time of its last append as modification time.
A failure of the release (an exception its cleaner threw) comes back as :class:`OldCleanerError` with the
exception's class and message.  The driver reaches Kafka only by reflection, so one source serves every release.
"""
from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from .javac import compiled
from .releases import maven_missing_reason, resolve

__all__ = ["OldCleaner", "OldCleanerError", "missing_reason", "SOURCE"]

SOURCE = Path(__file__).resolve().parents[1] / "old-cleaner" / "OldCleaner.java"


class OldCleanerError(RuntimeError):
    """What the release threw: ``kind`` its exception class, the message its message."""

    def __init__(self, kind: str, message: str):
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message


def missing_reason() -> str | None:
    """Why old releases' cleaners cannot run here (no Java, no Maven), else None."""
    return maven_missing_reason()


class OldCleaner:
    """One JVM on ``version``'s class path running the driver."""

    def __init__(self, version: str):
        lib = resolve(version)
        classes = compiled("old-cleaner", [SOURCE], lib)
        self.version = version
        self._tmp = tempfile.TemporaryDirectory(prefix="kafkafmt-oldcleaner-")
        self._proc = subprocess.Popen(["java", "-XX:+UseSerialGC", "-Xmx256m", "-cp", f"{classes}:{lib}/*",
                                       "OldCleaner"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, bufsize=1)
        self._call("ping")

    def _call(self, *fields) -> list[str]:
        self._proc.stdin.write("\t".join(str(f) for f in fields) + "\n")
        self._proc.stdin.flush()
        line = self._proc.stdout.readline()
        if not line:
            err = self._proc.stderr.read()[-3000:] if self._proc.poll() is not None else ""
            raise RuntimeError(f"Kafka {self.version} cleaner driver died: {err}")
        parts = line.rstrip("\n").split("\t")
        if parts[0] == "error":
            raise OldCleanerError(parts[1], parts[2] if len(parts) > 2 else "")
        return parts[1:]

    def _props(self, props: dict) -> Path:
        f = tempfile.NamedTemporaryFile("w", suffix=".properties", dir=self._tmp.name, delete=False)
        with f:
            for k, v in props.items():
                f.write(f"{k}={v}\n")
        return Path(f.name)

    def write(self, partition_dir, props: dict, batches: list[tuple[int, bytes]]) -> int:
        """Append ``(ms, bytes)`` as a follower does, each at its clock time; returns the log end offset."""
        f = Path(self._tmp.name) / "batches.txt"
        f.write_text("".join(f"{ms} {data.hex()}\n" for ms, data in batches))
        return int(self._call("write", partition_dir, self._props(props), f)[0])

    def clean(self, partition_dir, *, now: int, props: dict, recovery_point: int, dedupe_buffer_size: int,
              io_buffer_size: int = 512 * 1024, max_message_size: int = 1000012, load_factor: float = 0.9) -> str:
        """One iteration of the release's cleaner thread at ``now``: ``"true"``/``"false"`` (cleaned or not, 2.x),
        ``"?"`` where the release's step returns nothing."""
        return self._call("clean", partition_dir, now, self._props(props), recovery_point, dedupe_buffer_size,
                          io_buffer_size, max_message_size, load_factor)[0]

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._tmp.cleanup()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
