"""The wheel holds the product only, and ``kafkafmt`` works installed from it, outside a source checkout.

The checkout (without its caches, data and VCS files) is copied and built with ``pip wheel --no-deps``;
the wheel must hold exactly the package's files (every module and every package-data file: scenario
YAMLs, shipped workloads) and nothing of the test rig.  It is installed with ``pip install --no-deps
--target`` and run from another directory with ``PYTHONPATH`` naming only that target: the dependencies
come from this environment, ``kafkafmt`` from the wheel (asserted), and the checkout is nowhere on the path.

The compiled kernels of an installed copy are compiled on its first ``clean`` (tens of seconds); the
copy is installed at a fixed place with the files' times of the wheel and a numba cache of its own
beside it, so only the first run of this test after a kernel changed pays for that.
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

import pytest

import kafkafmt

REPO = Path(kafkafmt.__file__).resolve().parent.parent
PACKAGE = REPO / "kafkafmt"
#: what the build copy leaves out of the checkout's root: VCS, environments, build outputs, generated data
NOT_COPIED_AT_ROOT = {".git", ".venv", "build", "dist", ".fuzz", ".pytest_cache", ".hypothesis", "node_modules",
                      "data", "notebooks"}
#: and anywhere: caches
NOT_COPIED = ("__pycache__", "*.egg-info", ".cache", ".ipynb_checkpoints")
#: a keyed topic small enough to clean in a second, in several segments (written uncleaned: cleaned by the test)
WORKLOAD = """\
name: wheel-check
seed: 3
start_ms: 1700000000000
duration_ms: 20000
topics:
  - name: users
    partitions: 1
    config:
      segment.bytes: 4096
    producers:
      - name: profile
        rate: 20
        keys: 30
        batch_records: [1, 3]
        value_bytes: [20, 60]
        tombstones: 0.1
"""


def _package_files() -> set[str]:
    """The package's files as a wheel names them (``kafkafmt/...``), caches aside."""
    return {p.relative_to(REPO).as_posix() for p in PACKAGE.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".nbi", ".nbc")}


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(the wheel, the installed copy's directory, the environment that runs it)."""
    build = tmp_path_factory.mktemp("wheel-build")
    src = build / "src"
    anywhere = shutil.ignore_patterns(*NOT_COPIED)

    def ignore(directory, names):
        return anywhere(directory, names) | (NOT_COPIED_AT_ROOT & set(names) if Path(directory) == REPO else set())
    shutil.copytree(REPO, src, symlinks=True, ignore=ignore)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input"]
    subprocess.run([*pip, "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(build / "dist"), str(src)],
                   check=True, capture_output=True, text=True, timeout=600)
    (wheel,) = (build / "dist").glob("kafkafmt-*.whl")
    # a fixed place per checkout, so that the numba cache beside it stays valid between runs
    home = Path(tempfile.gettempdir()) / f"kafkafmt-wheel-test-{os.getuid()}-{hashlib.sha1(str(REPO).encode()).hexdigest()[:8]}"
    site = home / "site"
    shutil.rmtree(site, ignore_errors=True)
    subprocess.run([*pip, "install", "-q", "--no-deps", "--target", str(site), str(wheel)],
                   check=True, capture_output=True, text=True, timeout=600)
    with zipfile.ZipFile(wheel) as z:  # the files' times as the wheel has them (numba's cache checks them)
        for info in z.infolist():
            path = site / info.filename
            if path.is_file():
                stamp = time.mktime((*info.date_time, 0, 0, -1))
                os.utime(path, (stamp, stamp))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    env.update(PYTHONPATH=str(site), NUMBA_CACHE_DIR=str(home / "numba-cache"))
    return wheel, site, env


def _kafkafmt(installed, cwd: Path, *args: str, timeout: float = 600) -> str:
    _, site, env = installed
    p = subprocess.run([str(site / "bin" / "kafkafmt"), *args], cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=timeout)
    assert p.returncode == 0, f"kafkafmt {' '.join(args)}: exit {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}"
    return p.stdout


def test_the_wheel_holds_the_package_and_nothing_else(installed):
    wheel, _, _ = installed
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
    ours = {n for n in names if not n.startswith("kafkafmt-")}
    assert ours == _package_files()
    assert {n.split("/")[0] for n in names - ours} == {wheel.name.split("-")[0] + "-" + wheel.name.split("-")[1]
                                                       + ".dist-info"}
    assert any(n.startswith("kafkafmt/scenarios/data/") and n.endswith(".yaml") for n in ours)
    assert {"kafkafmt/gen/shipped/default.yaml", "kafkafmt/gen/shipped/compacted.yaml"} <= ours


def test_kafkafmt_runs_from_the_wheel_outside_the_checkout(installed, tmp_path):
    _, site, env = installed
    where = subprocess.run([sys.executable, "-c", "import kafkafmt; print(kafkafmt.__file__)"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, check=True).stdout.strip()
    assert Path(where).resolve().is_relative_to(site.resolve())
    assert not (tmp_path / "kafkafmt").exists() and REPO not in tmp_path.parents

    assert "usage: kafkafmt" in _kafkafmt(installed, tmp_path, "--help")

    _kafkafmt(installed, tmp_path, "samples", "--out", "samples")
    dump = _kafkafmt(installed, tmp_path, "dump", "samples/mixed-magics.bin")
    assert dump.splitlines()[0] == "Dumping samples/mixed-magics.bin"
    assert [ln.split(" magic: ")[1][0] for ln in dump.splitlines() if " magic: " in ln] == ["0", "1", "2"]

    (tmp_path / "wheel-check.yaml").write_text(WORKLOAD)
    _kafkafmt(installed, tmp_path, "gen", "--workload", "wheel-check.yaml", "--out", "logs", "--jobs", "1", "--quiet")
    before = sorted(p.name for p in (tmp_path / "logs" / "users-0").glob("*.log"))
    assert len(before) > 2, before
    out = _kafkafmt(installed, tmp_path, "clean", "logs/users-0", "--now", "1800000000000",
                    "-c", "cleanup.policy=compact")
    assert out.startswith("Kafka line 3.9 (the default): the cleaner of Kafka 3.9;"), out  # the line it applies
    assert "\ncleaned offsets [0, " in out, out
    assert "cleaner-offset-checkpoint: " in out
    assert (tmp_path / "logs" / "cleaner-offset-checkpoint").read_text().splitlines()[2].startswith("users 0 ")
