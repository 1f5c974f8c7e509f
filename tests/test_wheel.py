"""The wheel holds the product only, and ``kafkafmt`` works installed from it, outside a source checkout.

The checkout (without its caches, data and VCS files) is copied and built with ``pip wheel --no-deps``
(tests/wheel_install.py, a job started when the session begins: tests/head_start.py);
the wheel must hold exactly the package's files (every module and every package-data file: scenario
YAMLs, shipped workloads) and nothing of the test rig.  It is installed with ``pip install --no-deps
--target`` and run from another directory with ``PYTHONPATH`` naming only that target: the dependencies
come from this environment, ``kafkafmt`` from the wheel (asserted), and the checkout is nowhere on the path.

Every call of the installed copy here handles a small input, which the command line runs with interpreted
kernels (:mod:`kafkafmt.kernel_mode`): the job compiles nothing (no ``kafkafmt warmup`` of the installed copy),
and :func:`test_kafkafmt_runs_from_the_wheel_outside_the_checkout` asserts its numba cache stays empty.
"""
from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import head_start
import kafkafmt
from wheel_install import FIRST_USE_WORKLOAD, home, installed_env

REPO = Path(kafkafmt.__file__).resolve().parent.parent
PACKAGE = REPO / "kafkafmt"


def _package_files() -> set[str]:
    """The package's files as a wheel names them (``kafkafmt/...``), caches aside."""
    return {p.relative_to(REPO).as_posix() for p in PACKAGE.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".nbi", ".nbc")}


#: the wheel built and installed, its first clean timed (tests/wheel_install.py), when the session begins
head_start.job("wheel", module=__name__, fixture="installed", lane="cpu", cwd=REPO, timeout=1200,
               commands=lambda tmp: [[sys.executable, str(Path(__file__).with_name("wheel_install.py")), str(tmp)]])


@pytest.fixture(scope="module")
def installed():
    """(the wheel, the installed copy's directory, the environment that runs it)."""
    p = head_start.result("wheel").last
    assert p.returncode == 0, f"the wheel's build, install or warmup failed:\n{p.stdout[-2000:]}\n{p.stderr[-4000:]}"
    wheel = Path(p.stdout.strip().splitlines()[-1])
    site, env = installed_env()
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
    assert {f"kafkafmt/gen/shipped/{n}.yaml" for n in ("default", "compacted", FIRST_USE_WORKLOAD)} <= ours


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

    # a keyed topic in several segments, written uncleaned, from the workload the wheel ships (by its name)
    _kafkafmt(installed, tmp_path, "gen", "--workload", FIRST_USE_WORKLOAD, "--out", "logs", "--jobs", "1", "--quiet")
    before = sorted(p.name for p in (tmp_path / "logs" / "users-0").glob("*.log"))
    assert len(before) > 2, before
    out = _kafkafmt(installed, tmp_path, "clean", "logs/users-0", "--now", "1800000000000",
                    "-c", "cleanup.policy=compact")
    assert out.startswith("Kafka line 3.9 (the default): the cleaner of Kafka 3.9;"), out  # the line it applies
    assert "\ncleaned offsets [0, " in out, out
    assert "cleaner-offset-checkpoint: " in out
    assert (tmp_path / "logs" / "cleaner-offset-checkpoint").read_text().splitlines()[2].startswith("users 0 ")
    # small inputs: the command line ran every kernel interpreted, nothing was compiled into the copy's cache
    cache = Path(env["NUMBA_CACHE_DIR"])
    assert not [f for f in cache.rglob("*") if f.suffix in (".nbi", ".nbc")], sorted(cache.rglob("*"))[:5]


def test_the_first_clean_after_an_install_compiles_nothing(installed):
    """A wheel installed on a machine that never ran ``kafkafmt warmup``: its first ``clean`` of a ~1,000-record
    partition (tests/wheel_install.py's ``first_clean``, an empty numba cache) runs the kernels interpreted
    (kafkafmt.kernel_mode): the pass is Kafka's and nothing was compiled into the cache.  Its wall time is
    reported (the target is 5 s on a quiet machine), not asserted."""
    import json
    first = json.loads((home() / "first-clean.json").read_text())
    assert first["returncode"] == 0, first["stderr"]
    out = first["stdout"]
    assert out.startswith("Kafka line 3.9 (the default): the cleaner of Kafka 3.9;"), out
    assert "\ncleaned offsets [0, " in out and "cleaner-offset-checkpoint: " in out, out
    assert not [f for f in first["cache_files"] if f.endswith((".nbi", ".nbc"))], first["cache_files"]
    print(f"first clean after install, empty numba cache: {first['seconds']:.2f} s (load {first['load_1min']:.2f})")
