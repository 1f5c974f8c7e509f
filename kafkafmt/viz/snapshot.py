"""Static HTML of what a widget shows now: for readers without a widget renderer (``make docs``: the site's tutorials).

A live ipywidgets view needs a kernel and a widget manager in the page; an HTML file read offline
has neither.  :func:`panel_html` takes a :class:`~kafkafmt.viz.widgets.Panel`'s own static rendering
(``render_static()``) when it offers one; otherwise :func:`widget_html` walks its live widget tree
(``widget``) and writes its current view as plain HTML: boxes as ``div``, ``HTML`` widgets as their
value, ``Image`` widgets as ``data:`` URIs (no file, no network), each control as a line
``description: value``, a progress bar as a ``<progress>`` and its text.  :func:`state_html` does the
same from the widget state a notebook stores in its metadata (what nbconvert saves after executing
it), for widgets that are not a Panel (tqdm's progress bars: their *final* state).

The snapshot is offered beside the widget view as a ``text/html`` mimebundle entry only when
:data:`SNAPSHOT_ENV` is set (the report's kernels): nbval compares ``text/html``, and a figure's
bytes (measured timings in a plot) must not enter a stored output.
"""
from __future__ import annotations

import base64
import html
import os
from typing import Any, Callable, Mapping

#: set (to anything but "" or "0") in a kernel's environment: displayed panels carry a static ``text/html`` view
SNAPSHOT_ENV = "KAFKAFMT_SNAPSHOT"
#: the class of a panel's snapshot root (the report's tests look for it)
PANEL_CLASS = "kf-panel-snapshot"
#: the class of any other widget's snapshot root (a progress bar's final state)
WIDGET_CLASS = "kf-widget-snapshot"

_CSS = (f"<style>.{PANEL_CLASS},.{WIDGET_CLASS}{{font-family:var(--jp-ui-font-family,sans-serif);margin:.3em 0}}"
        f".{PANEL_CLASS} img{{max-width:100%;height:auto}}"
        ".kf-snap-controls{display:flex;flex-wrap:wrap;gap:.3em 1.2em;font-size:.9em;color:#444;margin:.2em 0}"
        ".kf-snap-control b{color:#000}.kf-snap-row{display:flex;flex-wrap:wrap;gap:.5em;align-items:flex-start}"
        ".kf-snap-col{display:flex;flex-direction:column;align-items:flex-start;gap:.3em;max-width:100%;"
        "overflow-x:auto}</style>")


def snapshot_enabled() -> bool:
    """True when this process (a kernel) should add static snapshots to displayed panels."""
    return os.environ.get(SNAPSHOT_ENV, "") not in ("", "0")


def _hidden(layout: Mapping[str, Any] | None) -> bool:
    layout = layout or {}
    return layout.get("display") == "none" or layout.get("visibility") == "hidden"


def _value_text(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, (tuple, list)):
        return " – ".join(_value_text(v) for v in value)
    return str(value)


def _image(value: bytes | str, fmt: str, width: str, height: str) -> str:
    if isinstance(value, str):  # stored state keeps bytes as base64 text
        data = value
    else:
        data = base64.b64encode(bytes(value)).decode("ascii")
    mime = "image/svg+xml" if fmt.startswith("svg") else f"image/{fmt or 'png'}"
    size = "".join(f" {k}='{html.escape(str(v))}'" for k, v in (("width", width), ("height", height)) if v)
    return f"<img src='data:{mime};base64,{data}'{size} alt=''>"


def _outputs_html(outputs) -> str:
    """An ``Output`` widget's captured outputs (nbformat dicts): HTML, SVG or PNG figures, text."""
    parts = []
    for out in outputs or ():
        data = out.get("data", {})
        if "text/html" in data:
            parts.append("".join(data["text/html"]))
        elif "image/svg+xml" in data:
            parts.append("".join(data["image/svg+xml"]))
        elif "image/png" in data:
            parts.append(_image(data["image/png"], "png", "", ""))
        elif "text/plain" in data or "text" in out:
            parts.append(f"<pre>{html.escape(''.join(data.get('text/plain', out.get('text', ''))))}</pre>")
    return "".join(parts)


def _render(model: str, st: Mapping[str, Any], children: Callable[[], list[str]]) -> str:
    """One widget, from its model name (``HTMLModel``…) and its state; ``children()`` renders its children."""
    if model in ("HTMLModel", "HTMLMathModel"):
        return f"<div>{st.get('value', '')}</div>" if st.get("value") else ""
    if model == "LabelModel":
        return f"<div>{html.escape(str(st.get('value', '')))}</div>" if st.get("value") else ""
    if model == "ImageModel":
        return _image(st.get("value", b""), st.get("format", "png"), st.get("width", ""), st.get("height", ""))
    if model.endswith("BoxModel"):
        kids = [c for c in children() if c]
        cls = "kf-snap-row" if model in ("HBoxModel", "GridBoxModel") else "kf-snap-col"
        if kids and all(c.startswith("<span class='kf-snap-control'>") for c in kids):
            cls = "kf-snap-controls"
        return f"<div class='{cls}'>{''.join(kids)}</div>" if kids else ""
    if model.endswith("ProgressModel"):
        desc = html.escape(str(st.get("description", "")))
        return (f"<span class='kf-snap-progress'>{desc} <progress value='{st.get('value', 0)}' "
                f"max='{st.get('max', 100)}'></progress></span>")
    if model == "OutputModel":
        return _outputs_html(st.get("outputs"))
    if model == "ButtonModel" or "value" not in st:
        return ""  # a button does nothing in a static view
    desc = str(st.get("description", "")) or ""
    label = st.get("label") if st.get("label") is not None else _value_text(st.get("value"))
    label_html = html.escape(str(label))
    return (f"<span class='kf-snap-control'>{html.escape(desc)}{': ' if desc else ''}<b>{label_html}</b></span>")


def widget_html(widget) -> str:
    """The current view of a live widget tree as static HTML (``""`` for what shows nothing)."""
    layout = getattr(widget, "layout", None)
    if layout is not None and _hidden({"display": layout.display, "visibility": layout.visibility}):
        return ""
    state = {k: getattr(widget, k) for k in ("value", "format", "width", "height", "description", "max", "outputs")
             if hasattr(widget, k)}
    if hasattr(widget, "options") and hasattr(widget, "label"):
        state["label"] = widget.label
    model = getattr(widget, "_model_name", "")
    return _render(model, state, lambda: [widget_html(c) for c in getattr(widget, "children", ())])


def state_html(model_id: str, states: Mapping[str, Any]) -> str:
    """A widget's view from a notebook's stored widget state (``metadata.widgets``'s ``state``) as static HTML."""
    entry = states.get(model_id)
    if not entry:
        return ""
    st = dict(entry.get("state", {}))
    for buf in entry.get("buffers", []):  # binary traits (an Image's value) are kept apart, base64-encoded
        if buf.get("path") and buf.get("encoding") == "base64":
            st[buf["path"][0]] = buf["data"]
    layout = states.get(str(st.get("layout", "")).removeprefix("IPY_MODEL_"), {}).get("state")
    if _hidden(layout):
        return ""

    def children() -> list[str]:
        return [state_html(str(c).removeprefix("IPY_MODEL_"), states) for c in st.get("children", [])]

    return _render(str(st.get("_model_name", "")), st, children)


def wrap(body: str, *, panel: bool) -> str:
    """A snapshot's root element (with its small stylesheet)."""
    return f"{_CSS}<div class='{PANEL_CLASS if panel else WIDGET_CLASS}'>{body}</div>"


def panel_html(panel) -> str:
    """What a panel shows now, as static HTML: its own ``render_static()`` when it has one, else its ``widget``
    tree walked by :func:`widget_html`."""
    render = getattr(panel, "render_static", None)
    return render() if callable(render) else widget_html(panel.widget)


def with_snapshot(bundle, panel):
    """``bundle`` (the panel widget's mimebundle) plus a ``text/html`` snapshot of ``panel`` (:func:`panel_html`)
    when :func:`snapshot_enabled`."""
    if not snapshot_enabled() or not isinstance(bundle, dict):
        return bundle
    return {**bundle, "text/html": wrap(panel_html(panel), panel=True)}


__all__ = ["SNAPSHOT_ENV", "PANEL_CLASS", "WIDGET_CLASS", "snapshot_enabled", "widget_html", "panel_html",
           "state_html", "wrap", "with_snapshot"]
