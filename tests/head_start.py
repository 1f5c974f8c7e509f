"""Slow work a test will wait for, started when the session begins so that it runs beside the tests before it.

A test module registers its job at import (:func:`job`); once collection is done, ``tests/conftest.py`` calls
:func:`begin`, which starts every job some selected test needs: a test needs a job when it uses the job's
fixture, directly or as the value of a parameter (``request.getfixturevalue(run)``).  A job is one or more
commands run one after another in a subprocess (a session of its own), in its *lane*:

* ``live``: real brokers and clients (old releases' clusters, ``kafkafmt scenario run --live``), which mostly wait
  for JVMs and for each other: :data:`WIDTHS` ``["live"]`` at a time;
* ``cpu``: compiling or building (a cold numba cache, the documentation site): one at a time.

Jobs start in the order they were registered (the order of the tests that wait for them).  The fixture calls
:func:`result`, which waits for the job, or runs it there and then when it was not started (collection only,
or a module imported some other way), so a test means the same run alone or in the whole suite.  At the end
of the session (:func:`end`) a job still running is stopped: SIGINT to its process group (a Python runner's
``finally`` stops the brokers it started), then SIGKILL.

Nothing here decides a test's outcome: a job's exit status, output and files are the test's to assert.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

#: jobs each lane runs at once
WIDTHS = {"live": 2, "cpu": 1}


@dataclass(frozen=True)
class Finished:
    """What a job left: each command's completed process, in order (the first that failed is the last), and
    the job's own temporary directory (removed at the session's end)."""
    runs: list[subprocess.CompletedProcess]
    tmp: Path

    @property
    def last(self) -> subprocess.CompletedProcess:
        return self.runs[-1]


@dataclass
class Job:
    """``commands(tmp)`` gives the argv lists to run in ``tmp`` (a fresh directory) and ``env(tmp)`` their
    environment; ``before()`` runs first in the lane's thread (resolving jars: it may raise, and the error is
    the job's result, raised again by :func:`result`)."""
    name: str
    module: str
    fixture: str
    lane: str
    commands: Callable[[Path], list[list[str]]]
    env: Callable[[Path], dict[str, str]] = lambda tmp: dict(os.environ)
    cwd: Path | None = None
    timeout: float = 900
    before: Callable[[], object] | None = None
    future: Future | None = field(default=None, repr=False)


#: where jobs make their temporary directories, fixed at import: a test may point ``tempfile.tempdir`` at its
#: own ``tmp_path`` for a while (monkeypatch) and a job starting in a lane's thread meanwhile must not land there
_TMP_ROOT = tempfile.gettempdir()

_jobs: dict[str, Job] = {}
_lanes: dict[str, ThreadPoolExecutor] = {}
_running: dict[str, subprocess.Popen] = {}
_tmps: list[Path] = []
_lock = threading.Lock()
_stopping = threading.Event()


def job(name: str, *, module: str, fixture: str, lane: str, commands, env=None, cwd=None, timeout: float = 900,
        before=None) -> None:
    """Register a job (at a test module's import); registering the same name again keeps the first."""
    if lane not in WIDTHS:
        raise ValueError(f"unknown lane {lane!r} (lanes: {', '.join(WIDTHS)})")
    _jobs.setdefault(name, Job(name, module, fixture, lane, commands, env or (lambda tmp: dict(os.environ)), cwd,
                               timeout, before))


def needed(items) -> list[Job]:
    """The registered jobs some of ``items`` (pytest's selected items) wait for, in registration order."""
    wanted = set()
    for item in items:
        module = getattr(getattr(item, "module", None), "__name__", None)
        params = getattr(getattr(item, "callspec", None), "params", {})
        names = set(getattr(item, "fixturenames", ())) | {v for v in params.values() if isinstance(v, str)}
        wanted |= {j.name for j in _jobs.values() if j.module == module and j.fixture in names}
    return [j for j in _jobs.values() if j.name in wanted]


def begin(items) -> list[str]:
    """Start every job ``items`` need; returns their names."""
    started = []
    for j in needed(items):
        _submit(j)
        started.append(j.name)
    return started


def result(name: str) -> Finished:
    """Wait for job ``name`` (starting it now if it was not started) and return what it left."""
    j = _jobs[name]
    _submit(j)
    return j.future.result()


def end() -> None:
    """Stop every job still running (SIGINT to its process group, SIGKILL after 30 s), drop queued ones, remove
    the jobs' temporary directories."""
    _stopping.set()
    for lane in _lanes.values():
        lane.shutdown(wait=False, cancel_futures=True)
    with _lock:
        running = list(_running.values())
    for p in running:
        _signal(p, signal.SIGINT)
    for p in running:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            _signal(p, signal.SIGKILL)
            p.wait(timeout=10)
    for lane in _lanes.values():
        lane.shutdown(wait=True)
    for tmp in _tmps:
        shutil.rmtree(tmp, ignore_errors=True)


def _submit(j: Job) -> None:
    with _lock:
        if j.future is None:
            lane = _lanes.get(j.lane)
            if lane is None:
                lane = _lanes[j.lane] = ThreadPoolExecutor(WIDTHS[j.lane], thread_name_prefix=f"head-start-{j.lane}")
            j.future = lane.submit(_run, j)


def _run(j: Job) -> Finished:
    if j.before is not None:
        j.before()
    tmp = Path(tempfile.mkdtemp(prefix=f"kafkafmt-{j.name}-", dir=_TMP_ROOT))
    _tmps.append(tmp)
    runs = []
    for argv in j.commands(tmp):
        if _stopping.is_set():
            break
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                             text=True, env=j.env(tmp), cwd=j.cwd, start_new_session=True)
        with _lock:
            _running[j.name] = p
        try:
            out, err = p.communicate(timeout=j.timeout)
        except subprocess.TimeoutExpired:
            _signal(p, signal.SIGINT)
            try:
                out, err = p.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                _signal(p, signal.SIGKILL)
                out, err = p.communicate()
            err += f"\nhead_start: {j.name} stopped after {j.timeout:.0f} s"
        finally:
            with _lock:
                _running.pop(j.name, None)
        runs.append(subprocess.CompletedProcess(argv, p.returncode, out, err))
        if p.returncode != 0:
            break
    return Finished(runs, tmp)


def _signal(p: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(p.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
