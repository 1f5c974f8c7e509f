"""kafkafmt's wheel, built from a copy of the checkout and installed at a fixed place (tests/test_wheel.py).

``python tests/wheel_install.py BUILD_DIR`` copies the checkout (without its caches, data and VCS files) into
``BUILD_DIR/src``, builds it with ``pip wheel --no-deps`` into ``BUILD_DIR/dist``, installs the wheel with
``pip install --no-deps --target`` at :func:`home`'s ``site/`` (the files' times as the wheel has them), runs
the installed copy's ``kafkafmt warmup`` (its kernels compiled into a numba cache of its own beside it) and
prints the wheel's path.  tests/test_wheel.py runs it as a job started when the session begins
(tests/head_start.py): a fresh machine's first compile of the installed kernels (a minute or more) happens
beside the other tests.
"""
from __future__ import annotations

import hashlib
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
    site, _ = installed_env()
    shutil.rmtree(site, ignore_errors=True)
    subprocess.run([*pip, "install", "-q", "--no-deps", "--target", str(site), str(wheel)],
                   check=True, capture_output=True, text=True, timeout=600)
    with zipfile.ZipFile(wheel) as z:  # the files' times as the wheel has them (numba's cache checks them)
        for info in z.infolist():
            path = site / info.filename
            if path.is_file():
                stamp = time.mktime((*info.date_time, 0, 0, -1))
                os.utime(path, (stamp, stamp))
    return wheel


def main(argv: list[str]) -> int:
    wheel = build_and_install(Path(argv[0]))
    site, env = installed_env()
    subprocess.run([str(site / "bin" / "kafkafmt"), "warmup"], env=env, cwd=str(Path(argv[0])), check=True,
                   stdout=subprocess.DEVNULL, timeout=900)
    print(wheel)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
