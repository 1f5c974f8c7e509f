"""The notebooks as stored: normalised by nbstripout, outputs from one clean run, and the house shape of
a reader's view (question + seed sections, a panel built by kafkafmt.viz, no checks or helpers in the
story: the checks drive the same panels in tests/viz/test_viz_panels.py; nbval-ignore-output only where
an Output widget is).

nbval itself runs them in ``make test`` (``pytest --nbval --nbval-current-env notebooks/``)."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
NBSTRIPOUT = Path(sys.executable).with_name("nbstripout")


def _nb(path):
    return json.loads(path.read_text(encoding="utf-8"))


def _code(nb):
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def test_there_are_notebooks():
    names = [p.stem for p in NOTEBOOKS]
    assert names == ["01-format-anatomy", "02-timestamps", "03-time-index", "04-retention", "05-conversion-costs",
                     "06-rolling-upgrade", "07-idempotence-modes", "08-negative-timestamps", "09-compaction",
                     "10-kafka-4", "11-kafka-arc"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_normalised_with_nbstripout(path):
    res = subprocess.run([str(NBSTRIPOUT), "--keep-output", "--keep-count", "--verify", str(path)],
                         capture_output=True, text=True)
    assert res.returncode == 0, f"run `make notebooks` (nbstripout would change {path.name}): {res.stdout}{res.stderr}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_outputs_come_from_one_clean_run(path):
    counts = [c["execution_count"] for c in _code(_nb(path))]
    assert counts == list(range(1, len(counts) + 1)), "stored outputs must come from `make notebooks` (a fresh kernel)"
    errors = [o for c in _code(_nb(path)) for o in c["outputs"] if o["output_type"] == "error"]
    assert not errors
    stderr = [o for c in _code(_nb(path)) for o in c["outputs"] if o.get("name") == "stderr"]
    assert not stderr


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_house_shape(path):
    nb = _nb(path)
    md = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    code = ["".join(c["source"]) for c in _code(nb)]
    assert "**Question.**" in md and "**Seed sections.**" in md
    panels = sum(len(re.findall(r"\w+_panel\(", s)) for s in code)
    assert panels >= 1, "at least one panel of kafkafmt.viz: controls driving a plot or table"
    assert not any(re.search(r"^\s*assert\b", s, re.M) or ".set(" in s for s in code), \
        "checks live in tests/viz, driving the same panels; the notebook ends in the state its prose describes"
    assert "Checked:" not in md
    assert not any(s.strip().splitlines()[-1].startswith("pd.DataFrame(") for s in code if s.strip()), \
        "tables are shown through kafkafmt.viz.tables (for people), not as a raw DataFrame"
    ignored = [c for c in _code(nb) if "nbval-ignore-output" in c.get("metadata", {}).get("tags", [])]
    outputs = sum(s.count("Output(") for s in code)
    assert len(ignored) <= outputs, "nbval-ignore-output only on cells whose output goes through an Output widget"
    assert not any(re.search(r"^\s*(def|class)\s", s, re.M) for s in code), \
        "notebooks compute nothing: helpers and panels live in kafkafmt.viz"
