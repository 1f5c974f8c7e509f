"""The environments agree: ``environment.yml`` installs the package with pyproject's extras and lists no Python
package a second time, and every extra the Makefile installs exists in ``pyproject.toml``."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

from ci_mode import import_or_skip

tomllib = import_or_skip("tomllib", reason="tomllib is Python 3.11's")

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
EXTRAS = PYPROJECT["project"]["optional-dependencies"]


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _pip_entries() -> list[str]:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    return [e for dep in env["dependencies"] if isinstance(dep, dict) for e in dep.get("pip", [])]


def test_environment_yml_installs_the_package_with_every_extra_and_nothing_twice():
    entries = _pip_entries()
    editable = [e for e in entries if e.startswith("-e .")]
    assert len(editable) == 1, entries
    named = set(re.search(r"\[(.*)\]", editable[0]).group(1).split(","))
    assert named == set(EXTRAS), f"environment.yml installs {sorted(named)}, pyproject has {sorted(EXTRAS)}"
    declared = {_name(r) for reqs in [PYPROJECT["project"]["dependencies"], *EXTRAS.values()] for r in reqs}
    others = [e for e in entries if not e.startswith("-e")]
    assert not [e for e in others if _name(e) in declared], f"listed again beside pyproject: {others}"


def test_every_extra_the_makefile_installs_is_declared():
    makefile = (ROOT / "Makefile").read_text()
    sets = re.findall(r"^\w*EXTRAS \?= (\S+)", makefile, re.MULTILINE)
    assert sets, "no EXTRAS in the Makefile"
    for extras in sets:
        assert set(extras.split(",")) <= set(EXTRAS), f"Makefile installs {extras}; pyproject has {sorted(EXTRAS)}"


def test_the_extras_keep_readers_apart_from_test_tools():
    readers = {_name(r) for r in EXTRAS["readers"]}
    assert not readers & {"pytest", "nbval", "playwright", "nbstripout", "hypothesis", "ruff"}, readers
    assert {"jupyterlab", "ipywidgets", "matplotlib", "voila", "pandas"} <= readers
