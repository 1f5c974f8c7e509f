"""kafkafmt.viz.saved_state: the widget models saved with a notebook get ids that depend only on the notebook's
name and the order the kernel created them, everywhere the notebook names them."""
import copy
import json
import uuid

from kafkafmt.viz import saved_state
from kafkafmt.viz.saved_state import WIDGET_STATE, WIDGET_VIEW, stable_ids


def _model(name, module, **state):
    return {"model_name": name, "model_module": module, "model_module_version": "2.0.0",
            "state": dict(state, _model_name=name, _model_module=module)}


def _executed(ids):
    """A notebook as nbclient saves it (ipywidgets 8's schema): a layout, an HTML and a slider that use it, and
    a VBox of both, shown by one output, under the comm ids ``ids``; plus an output of a model never saved."""
    layout, html, slider, box = ids
    ref = "IPY_MODEL_{}".format
    state = {layout: _model("LayoutModel", "@jupyter-widgets/base", width="90%"),
             html: _model("HTMLModel", "@jupyter-widgets/controls", value="<b>t</b>", layout=ref(layout)),
             slider: _model("IntSliderModel", "@jupyter-widgets/controls", value=3, layout=ref(layout)),
             box: _model("VBoxModel", "@jupyter-widgets/controls", children=[ref(html), ref(slider)])}
    view = {"version_major": 2, "version_minor": 0, "model_id": box}
    return {"cells": [{"cell_type": "code", "outputs": [
                {"output_type": "display_data", "data": {WIDGET_VIEW: view, "text/plain": "VBox(...)"}},
                {"output_type": "display_data", "data": {WIDGET_VIEW: dict(view, model_id="f" * 32)}}]}],
            "metadata": {"widgets": {WIDGET_STATE: {"state": state, "version_major": 2, "version_minor": 0}}}}


def _shuffled(nb):
    """``nb`` with its saved models in another order (nbformat writes them sorted by their random ids)."""
    state = nb["metadata"]["widgets"][WIDGET_STATE]["state"]
    nb["metadata"]["widgets"][WIDGET_STATE]["state"] = dict(reversed(list(state.items())))
    return nb


def test_ids_follow_the_name_and_the_notebook_not_the_kernel():
    a = stable_ids(_executed([uuid.uuid4().hex for _ in range(4)]), "01-x")
    b = stable_ids(_shuffled(_executed([uuid.uuid4().hex for _ in range(4)])), "01-x")
    assert json.dumps(a) == json.dumps(b)  # the same file, key order included
    assert stable_ids(_executed([uuid.uuid4().hex for _ in range(4)]), "02-y") != a
    assert len(set(a["metadata"]["widgets"][WIDGET_STATE]["state"])) == 4


def test_every_reference_follows_the_rename():
    nb = stable_ids(_executed(["a" * 32, "b" * 32, "c" * 32, "d" * 32]), "01-x")
    state = nb["metadata"]["widgets"][WIDGET_STATE]["state"]
    by_name = {m["model_name"]: i for i, m in state.items()}
    layout_id, html_id, slider_id, box_id = (by_name[n] for n in ("LayoutModel", "HTMLModel", "IntSliderModel",
                                                                   "VBoxModel"))
    assert list(state) == [box_id, html_id, layout_id, slider_id]  # depth first from the output
    assert state[box_id]["state"]["children"] == [f"IPY_MODEL_{html_id}", f"IPY_MODEL_{slider_id}"]
    assert state[html_id]["state"]["layout"] == state[slider_id]["state"]["layout"] == f"IPY_MODEL_{layout_id}"
    assert state[slider_id]["model_name"] == "IntSliderModel" and state[slider_id]["state"]["value"] == 3
    outs = nb["cells"][0]["outputs"]
    assert outs[0]["data"][WIDGET_VIEW]["model_id"] == box_id
    assert outs[1]["data"][WIDGET_VIEW]["model_id"] == "f" * 32  # not saved: left as it was
    assert not any(c * 32 in json.dumps(nb) for c in "abcd")


def test_a_model_no_output_shows_is_kept_and_renamed():
    nb = _executed(["a" * 32, "b" * 32, "c" * 32, "d" * 32])
    link = _model("LinkModel", "@jupyter-widgets/controls", source=["IPY_MODEL_" + "b" * 32, "value"],
                  target=["IPY_MODEL_" + "c" * 32, "value"])
    nb["metadata"]["widgets"][WIDGET_STATE]["state"]["e" * 32] = link
    state = stable_ids(nb, "01-x")["metadata"]["widgets"][WIDGET_STATE]["state"]
    by_name = {m["model_name"]: i for i, m in state.items()}
    assert list(state)[-1] == by_name["LinkModel"]
    assert state[by_name["LinkModel"]]["state"]["source"] == ["IPY_MODEL_" + by_name["HTMLModel"], "value"]


def test_a_notebook_without_saved_widgets_is_unchanged():
    nb = {"cells": [{"cell_type": "code", "outputs": [{"output_type": "stream", "text": "x"}]}], "metadata": {}}
    assert stable_ids(copy.deepcopy(nb), "x") == nb


def test_the_command_rewrites_files_and_refuses_a_missing_one(tmp_path, capsys):
    import nbformat

    nb = nbformat.v4.new_notebook()
    raw = _executed(["a" * 32, "b" * 32, "c" * 32, "d" * 32])
    nb.metadata["widgets"] = raw["metadata"]["widgets"]
    nb.cells = [nbformat.v4.new_code_cell("box", outputs=[nbformat.v4.new_output(
        "display_data", data={WIDGET_VIEW: {"version_major": 2, "version_minor": 0, "model_id": "d" * 32}})])]
    path = tmp_path / "03-z.ipynb"
    nbformat.write(nb, str(path))
    assert saved_state.main([str(path)]) == 0
    again = nbformat.read(str(path), as_version=4)
    assert again == nbformat.from_dict(stable_ids(json.loads(json.dumps(nb)), "03-z"))
    assert saved_state.main([str(tmp_path / "missing.ipynb")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("saved_state: cannot read") and "Traceback" not in err


def _tqdm_notebook(seconds: float, name: str = "derived tables (default)") -> dict:
    """A notebook whose one output is a real ``tqdm.notebook`` bar of 3 steps that took ``seconds``, with the
    state ipywidgets serialises for it (``ipywidgets.embed.dependency_state``) under its random ids."""
    import time

    from ipywidgets.embed import dependency_state
    from tqdm.notebook import tqdm

    bar = tqdm(total=3, desc=name)
    for _ in range(3):
        time.sleep(seconds / 3)
        bar.update(1)
    bar.close()
    state = json.loads(json.dumps(dependency_state([bar.container])))
    view = {"version_major": 2, "version_minor": 0, "model_id": bar.container.model_id}
    return {"cells": [{"cell_type": "code", "outputs": [{"output_type": "display_data", "data": {WIDGET_VIEW: view}}]}],
            "metadata": {"widgets": {WIDGET_STATE: {"state": state, "version_major": 2, "version_minor": 0}}}}


def test_a_tqdm_bar_saves_the_same_state_however_long_it_took():
    from kafkafmt.viz.saved_state import without_timings

    fast, slow = _tqdm_notebook(0.0), _tqdm_notebook(1.2)
    texts = [m["state"]["value"] for m in fast["metadata"]["widgets"][WIDGET_STATE]["state"].values()
             if m["model_name"] == "HTMLModel"]
    assert any("it/s]" in t for t in texts)          # tqdm's own text carries the rate and the times
    a, b = (stable_ids(without_timings(nb), "05-x") for nb in (fast, slow))
    assert json.dumps(a) == json.dumps(b)
    state = a["metadata"]["widgets"][WIDGET_STATE]["state"]
    values = sorted(str(m["state"]["value"]).replace("\u2007", " ").strip() for m in state.values()
                    if m["model_name"] in ("HTMLModel", "FloatProgressModel"))
    assert values == ["3.0", "3/3", "derived tables (default): 100%"]   # the count and the full bar stay


def test_html_outside_a_progress_bar_keeps_its_brackets():
    from kafkafmt.viz.saved_state import without_timings

    nb = _executed(["a" * 32, "b" * 32, "c" * 32, "d" * 32])
    html = nb["metadata"]["widgets"][WIDGET_STATE]["state"]["b" * 32]
    html["state"]["value"] = "fetch v3 [00:01&lt;00:02, 5 it/s]"
    assert without_timings(copy.deepcopy(nb)) == nb
