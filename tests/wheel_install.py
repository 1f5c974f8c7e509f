"""kafkafmt's wheel, built from a copy of the checkout and installed at a fixed place (tests/test_wheel.py).

``python tests/wheel_install.py BUILD_DIR`` copies the checkout (without its caches, data and VCS files) into
``BUILD_DIR/src``, builds it with ``pip wheel --no-deps`` into ``BUILD_DIR/dist``, installs the wheel with
``pip install --no-deps --target`` at :func:`home`'s ``site/`` (the files' times as the wheel has them), runs
the installed copy's first ``kafkafmt clean`` of a small partition with an empty numba cache (a first use after an
install, no warmup: :func:`first_clean`, written to ``first-clean.json`` beside the copy) and prints the
wheel's path.  It does not run the installed copy's ``kafkafmt warmup``: every call tests/test_wheel.py makes of
the installed copy handles a small input, which the command line runs with interpreted kernels
(:mod:`kafkafmt.kernel_mode`), so a compile there (a minute or more of one core) would serve no test; the
checkout's own warmup from a cold cache is tests/test_warmup.py's.
tests/test_wheel.py runs it as a job started when the session begins
(tests/head_start.py): a fresh machine's first compile of the installed kernels (a minute or more) happens
beside the other tests.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: what the build copy leaves out of the checkout's root: VCS, environments, build outputs, generated data
NOT_COPIED_AT_ROOT = {".git", ".venv", "build", "dist", ".fuzz", ".pytest_cache", ".hypothesis", "node_modules",
                      "data", "notebooks"}
#: and anywhere: caches
NOT_COPIED = ("__pycache__", "*.egg-info", ".cache", ".ipynb_checkpoints")


def home() -> Path:
    """A fixed place per checkout, so that the numba cache beside the installed copy stays valid between runs."""
    return Path(tempfile.gettempdir()) / f"kafkafmt-wheel-test-{os.getuid()}-{hashlib.sha1(str(REPO).encode()).hexdigest()[:8]}"


def installed_env() -> tuple[Path, dict[str, str]]:
    """(the installed copy's directory, the environment that runs it: only that directory on ``PYTHONPATH``)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    env.update(PYTHONPATH=str(home() / "site"), NUMBA_CACHE_DIR=str(home() / "numba-cache"))
    return home() / "site", env


def build_and_install(build: Path) -> Path:
    """The wheel built from a copy of the checkout under ``build``, installed at :func:`installed_env`'s place."""
    src = build / "src"
    anywhere = shutil.ignore_patterns(*NOT_COPIED)

    def ignore(directory, names):
        return anywhere(directory, names) | (NOT_COPIED_AT_ROOT & set(names) if Path(directory) == REPO else set())
    shutil.copytree(REPO, src, symlinks=True, ignore=ignore)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input"]
    subprocess.run([*pip, "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(build / "dist"), str(src)],
                   check=True, capture_output=True, text=True, timeout=600)
    (wheel,) = (build / "dist").glob("kafkafmt-*.whl")
    site, env = installed_env()
    shutil.rmtree(site, ignore_errors=True)
    shutil.rmtree(env["NUMBA_CACHE_DIR"], ignore_errors=True)  # what an earlier run's copy compiled
    subprocess.run([*pip, "install", "-q", "--no-deps", "--target", str(site), str(wheel)],
                   check=True, capture_output=True, text=True, timeout=600)
    with zipfile.ZipFile(wheel) as z:  # the files' times as the wheel has them (numba's cache checks them)
        for info in z.infolist():
            path = site / info.filename
            if path.is_file():
                stamp = time.mktime((*info.date_time, 0, 0, -1))
                os.utime(path, (stamp, stamp))
    return wheel


#: the shipped workload the first clean is timed on (kafkafmt/gen/shipped/small-keyed.yaml: about 1,000 keyed
#: records with tombstones in one partition of small segments, written uncleaned), read from the installed wheel
FIRST_USE_WORKLOAD = "small-keyed"


def first_clean(build: Path) -> dict:
    """The installed copy's first ``kafkafmt clean`` of a ~1,000-record partition with an empty numba cache, as on
    a machine where ``kafkafmt warmup`` never ran: its wall time, output, and the cache files it left (none
    when it compiled nothing).  The partition is written by the installed ``gen`` from the workload the wheel
    ships (:data:`FIRST_USE_WORKLOAD`) with interpreted kernels (so that nothing is compiled before the clean)."""
    site, env = installed_env()
    work = build / "first-use"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    kafkafmt = str(site / "bin" / "kafkafmt")
    subprocess.run([kafkafmt, "gen", "--workload", FIRST_USE_WORKLOAD, "--out", "logs", "--jobs", "1", "--quiet"], cwd=work,
                   env={**env, "KAFKAFMT_KERNELS": "interpreted"}, check=True, capture_output=True, timeout=600)
    cache = work / "empty-numba-cache"
    cache.mkdir()
    fresh = {k: v for k, v in env.items() if k != "KAFKAFMT_KERNELS"}
    fresh["NUMBA_CACHE_DIR"] = str(cache)
    t = time.perf_counter()
    p = subprocess.run([kafkafmt, "clean", "logs/users-0", "--now", "1800000000000", "-c", "cleanup.policy=compact"],
                       cwd=work, env=fresh, capture_output=True, text=True, timeout=900)
    wall = time.perf_counter() - t
    return {"seconds": wall, "returncode": p.returncode, "stdout": p.stdout, "stderr": p.stderr[-4000:],
            "cache_files": sorted(str(f.relative_to(cache)) for f in cache.rglob("*") if f.is_file()),
            "load_1min": os.getloadavg()[0]}


def main(argv: list[str]) -> int:
    wheel = build_and_install(Path(argv[0]))
    site, env = installed_env()
    (home() / "first-clean.json").write_text(json.dumps(first_clean(Path(argv[0])), indent=1))
    print(wheel)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
