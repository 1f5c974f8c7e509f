"""``python -m kafkafmt.viz.saved_state NOTEBOOK...``: the widget state saved with executed notebooks, under
ids that do not change from one execution to the next.

nbclient (``ExecutePreprocessor.store_widget_state``) saves every ipywidgets model's state in the notebook's
``metadata.widgets`` (``application/vnd.jupyter.widget-state+json``, ipywidgets' notebook state schema,
version 2), keyed by the comm id the kernel drew at random (``ipywidgets.Widget``: ``uuid4().hex``); each
widget output names the model it shows by that id (``application/vnd.jupyter.widget-view+json``'s
``model_id``) and containers name their children, layouts and styles as ``"IPY_MODEL_<id>"``.  This is what
JupyterLab's widget manager restores when a notebook opens, so a panel is drawn as saved before the kernel
has run.  Re-executing a notebook would rewrite every id even when nothing else changed (and reorder the
models: nbformat writes keys sorted), so :func:`stable_ids` renames them to ids derived from the notebook's
name and each model's place in the notebook (:func:`model_order`), so that ``make notebooks`` writes the same
file twice.

A tqdm progress bar (``tqdm.notebook``: an HBox of an HTML description, a progress bar and an HTML text) saves its
last text, ``3/3 [00:16<00:00, 9.27s/it]``: the elapsed time, the time left and the rate of that run.
:func:`without_timings` drops that bracket (the count and the full bar stay), so a re-execution that computed
the same thing saves the same state.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import uuid
from pathlib import Path

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
#: how ipywidgets serialises a reference to another model inside a model's state (``widget_serialization``)
MODEL_REF = "IPY_MODEL_"
_NAMESPACE = uuid.UUID("6b61666b-6166-6d74-7769-646765747321")


def saved_models(nb: dict) -> dict:
    """The saved state of every model (id -> ``{"model_name", "model_module", "state", ...}``); empty if none."""
    return nb.get("metadata", {}).get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})


def _refs(model: dict) -> list[str]:
    """The ids ``model``'s state refers to, in the order of its JSON with sorted keys."""
    return re.findall(re.escape(MODEL_REF) + r"(\w+)", json.dumps(model.get("state", {}), sort_keys=True))


def model_order(nb: dict) -> list[str]:
    """The saved models' ids in an order that does not depend on the ids: depth first from each widget output,
    in cell and output order, through each model's references (in the order of its state's sorted keys); then
    the models no output reaches (a link between two widgets, a closed one), by their state with every
    reference masked."""
    state = saved_models(nb)
    order: list[str] = []
    seen: set[str] = set()
    shown = [out["data"][WIDGET_VIEW].get("model_id") for cell in nb.get("cells", [])
             for out in cell.get("outputs", []) if isinstance(out.get("data", {}).get(WIDGET_VIEW), dict)]
    todo = list(reversed(shown))
    while todo:
        mid = todo.pop()
        if mid in seen or mid not in state:
            continue
        seen.add(mid)
        order.append(mid)
        todo.extend(reversed(_refs(state[mid])))
    masked = re.compile(re.escape(MODEL_REF) + r"\w+")
    rest = sorted((m for m in state if m not in seen),
                  key=lambda m: masked.sub(MODEL_REF, json.dumps(state[m], sort_keys=True)))
    return order + rest


#: the timing tqdm appends to a bar's text (``tqdm.format_meter``'s ``[{elapsed}<{remaining}, {rate}{postfix}]``;
#: the notebook bar writes its spaces as U+2007 and escapes ``<``)
TQDM_TIMING = re.compile(r"[\s\u2007]*\[\d[\d:]*(?:&lt;|<)[^\]]*\]")
PROGRESS_MODELS = ("FloatProgressModel", "IntProgressModel")


def without_timings(nb: dict) -> dict:
    """``nb`` with the timing text of every saved tqdm bar removed (see the module doc): in each HBox that holds a
    progress bar, the HTML children's ``value`` loses tqdm's ``[elapsed<remaining, rate]``.  Modifies and
    returns ``nb``."""
    state = saved_models(nb)
    for model in state.values():
        if model.get("model_name") != "HBoxModel":
            continue
        children = [state.get(str(c)[len(MODEL_REF):]) for c in model.get("state", {}).get("children", [])
                    if str(c).startswith(MODEL_REF)]
        if not any(c and c.get("model_name") in PROGRESS_MODELS for c in children):
            continue
        for c in children:
            value = c and c.get("model_name") == "HTMLModel" and c.get("state", {}).get("value")
            if isinstance(value, str):
                c["state"]["value"] = TQDM_TIMING.sub("", value)
    return nb


def _renamed(value, ids: dict):
    if isinstance(value, str):
        if value.startswith(MODEL_REF) and value[len(MODEL_REF):] in ids:
            return MODEL_REF + ids[value[len(MODEL_REF):]]
        return value
    if isinstance(value, list):
        return [_renamed(v, ids) for v in value]
    if isinstance(value, dict):
        return {k: _renamed(v, ids) for k, v in value.items()}
    return value


def stable_ids(nb: dict, name: str) -> dict:
    """``nb`` with every saved model renamed to ``uuid5(name, position).hex`` (``position`` in
    :func:`model_order`), in the saved state, in the references between models and in the widget outputs.
    Outputs naming a model that is not saved keep their id.  Modifies and returns ``nb``."""
    state = saved_models(nb)
    if not state:
        return nb
    ids = {old: uuid.uuid5(_NAMESPACE, f"{name}/{i}").hex for i, old in enumerate(model_order(nb))}
    nb["metadata"]["widgets"][WIDGET_STATE]["state"] = {ids[old]: _renamed(state[old], ids) for old in ids}
    for cell in nb.get("cells", []):
        for out in cell.get("outputs", []):
            view = out.get("data", {}).get(WIDGET_VIEW)
            if isinstance(view, dict) and view.get("model_id") in ids:
                view["model_id"] = ids[view["model_id"]]
    return nb


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m kafkafmt.viz.saved_state",
                                 description="Give the widget models saved in executed notebooks stable ids "
                                             "and drop tqdm bars' timings.")
    ap.add_argument("notebooks", nargs="+", type=Path)
    args = ap.parse_args(argv)
    import nbformat

    for path in args.notebooks:
        try:
            nb = nbformat.read(str(path), as_version=4)
        except (OSError, ValueError) as e:
            print(f"saved_state: cannot read {path}: {e}", file=sys.stderr)
            return 1
        nbformat.write(stable_ids(without_timings(nb), path.stem), str(path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
