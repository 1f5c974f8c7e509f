"""The notebooks as stored: normalised by nbstripout, outputs from one clean run, the widgets' state saved with
them (what JupyterLab shows before the kernel runs), and the house shape of
a reader's view (question + seed sections, a panel built by kafkafmt.viz, no checks or helpers in the
story: the checks drive the same panels in tests/viz/test_viz_panels.py; nbval-ignore-output only where
an Output widget is).

nbval itself runs them in ``make test`` (``pytest --nbval --nbval-current-env notebooks/``)."""
import io
import json
import re
import sys
from pathlib import Path

import pytest

from kafkafmt.viz.saved_state import MODEL_REF, WIDGET_STATE, WIDGET_VIEW, saved_models

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
#: ``make notebooks``' nbstripout options (one definition: the Makefile's NBSTRIPOUT_ARGS)
NBSTRIPOUT_ARGS = re.search(r"^NBSTRIPOUT_ARGS := (.+)$", (ROOT / "Makefile").read_text(), re.M).group(1).split()


def _nb(path):
    return json.loads(path.read_text(encoding="utf-8"))


def _code(nb):
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def test_there_are_notebooks():
    names = [p.stem for p in NOTEBOOKS]
    assert names == ["01-format-anatomy", "02-timestamps", "03-time-index", "04-retention", "05-conversion-costs",
                     "06-rolling-upgrade", "07-idempotence-modes", "08-negative-timestamps", "09-compaction",
                     "10-kafka-4", "11-kafka-arc"]


class _Kept(io.BytesIO):
    """What nbstripout printed: it writes through a ``TextIOWrapper`` of its own, which closes this when it
    goes; the bytes are kept for the failure message."""

    def close(self):
        self.flush()


def nbstripout_verify(path: Path, monkeypatch) -> tuple[int, str]:
    """``nbstripout NBSTRIPOUT_ARGS --verify path``'s exit status and output, run in this process: nbstripout's
    own ``main()`` (its argument parsing, default keys and git config), so the same check as the command,
    without a Python start and an nbformat import (several seconds) per notebook."""
    import nbstripout

    out = _Kept()
    monkeypatch.setattr(sys, "argv", ["nbstripout", *NBSTRIPOUT_ARGS, "--verify", str(path)])
    monkeypatch.setattr(sys, "stdin", None)
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(out, encoding="utf-8"))
    try:
        nbstripout.main()
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    finally:
        sys.stdout.flush()
    return code, out.getvalue().decode("utf-8")


def test_nbstripout_verify_finds_an_unstripped_notebook(tmp_path, monkeypatch):
    """The check below can fail: a notebook with what nbstripout removes (a cell's ``ExecuteTime``) is reported,
    and its stored form, widget state (``metadata.widgets``, kept by NBSTRIPOUT_ARGS) and all, is not."""
    nb = _nb(NOTEBOOKS[0])
    good = tmp_path / "good.ipynb"
    good.write_text(json.dumps(nb), encoding="utf-8")
    assert nbstripout_verify(good, monkeypatch) == (0, "")
    bad = tmp_path / "bad.ipynb"
    cells = [dict(c, metadata=dict(c["metadata"], ExecuteTime={"end_time": "x"})) for c in nb["cells"]]
    bad.write_text(json.dumps(dict(nb, cells=cells)), encoding="utf-8")
    code, said = nbstripout_verify(bad, monkeypatch)
    assert code == 1 and f"would have stripped {bad}" in said
    assert nbstripout_verify(bad, monkeypatch)[0] == 1, "--verify leaves the file as it was"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_normalised_with_nbstripout(path, monkeypatch):
    code, said = nbstripout_verify(path, monkeypatch)
    assert code == 0, f"run `make notebooks` (nbstripout would change {path.name}): {said}"


def _unsaved_models(nb) -> tuple[list[str], set[str]]:
    """The model ids the notebook's widget outputs show, and those of them (or of the models they contain,
    ``"IPY_MODEL_<id>"`` references in a saved state, as ipywidgets serialises children and layouts) whose
    state is not saved in ``metadata.widgets`` -- what JupyterLab's widget manager restores when the notebook
    opens (jupyterlab_widgets ``WidgetManager._loadFromNotebook``)."""
    shown = [o["data"][WIDGET_VIEW]["model_id"] for c in _code(nb) for o in c.get("outputs", [])
             if WIDGET_VIEW in o.get("data", {})]
    saved = saved_models(nb)
    missing, todo, seen = set(), list(shown), set()
    while todo:
        mid = todo.pop()
        if mid in seen:
            continue
        seen.add(mid)
        if mid not in saved:
            missing.add(mid)
            continue
        todo.extend(re.findall(MODEL_REF + r"([0-9a-f]+)", json.dumps(saved[mid].get("state", {}))))
    return shown, missing


def test_unsaved_models_finds_a_stripped_notebook():
    """The check below can fail: a notebook whose widget state was stripped (plain ``nbstripout``), or whose
    saved panel lost a child model, is reported."""
    nb = _nb(NOTEBOOKS[0])
    shown, missing = _unsaved_models(nb)
    assert shown and not missing
    stripped = dict(nb, metadata={k: v for k, v in nb["metadata"].items() if k != "widgets"})
    assert _unsaved_models(stripped)[1] == set(shown)
    state = json.loads(json.dumps(nb["metadata"]["widgets"][WIDGET_STATE]["state"]))
    child = re.findall(r"IPY_MODEL_([0-9a-f]+)", json.dumps(state[shown[0]]["state"]))[0]
    del state[child]
    cut = dict(nb, metadata=dict(nb["metadata"], widgets={WIDGET_STATE: {"state": state}}))
    assert _unsaved_models(cut)[1] == {child}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_widget_state_saved(path):
    """Every panel shown is saved with its widgets' state (ipywidgets 8's schema, version 2), so that JupyterLab
    draws it when the notebook opens, before its kernel has run, instead of the ``VBox(children=...`` repr."""
    nb = _nb(path)
    shown, missing = _unsaved_models(nb)
    assert shown, "every notebook shows at least one panel (a widget)"
    assert not missing, f"run `make notebooks`: {len(missing)} widget model(s) shown but not saved in {path.name}"
    saved = nb["metadata"]["widgets"][WIDGET_STATE]
    assert saved["version_major"] == 2
    assert all({"model_name", "model_module", "model_module_version", "state"} <= set(m)
               for m in saved["state"].values())


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
