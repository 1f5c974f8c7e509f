"""Widget wiring: controls → one package function → a rendered view that never contradicts itself.

A notebook builds a :class:`Panel` from ipywidgets controls, a ``compute`` function of the package
(the data), a ``render`` function (figures, tables or HTML of that data) and a ``caption`` (the
panel's headline number, recomputed whenever a control moves).  :attr:`Panel.data` always holds what
the view shows, so a test can set a control's value and assert on the data.

Views that never lie:

- ``adapt`` (control name → function of all values → widget attributes) runs before every compute:
  a control offers only the values valid with the others (a scenario's steps, the codecs of a
  format, headers for v2 only, bounds ≥ 0), and a value made invalid is replaced, not kept.
- Bad input that can still be typed (a :class:`~kafkafmt.errors.KafkaFmtError`, a ``ValueError``)
  clears the view and shows one line saying why: never an error line beside a stale result.
  :attr:`Panel.data` is then ``None`` and :attr:`Panel.error` holds the line.

The whole view (caption or error line, then the rendered items) is one HTML string,
:meth:`Panel.view_html`, shown in one ``HTML`` widget; :meth:`Panel.render_static` adds the title
and the control settings, for a page without a kernel.  Figures are embedded as PNG rendered at
twice their display size (sharp on HiDPI screens and projectors, never upscaled).  Updates travel
as widget state, so a cell that moves a control emits no output of its own (nbval strict).
"""
from __future__ import annotations

import html
from typing import Any, Callable, Mapping

from ..errors import KafkaFmtError
from .plots import figure_html, figure_png
from .snapshot import with_snapshot

#: the errors a widget combination may legitimately raise: shown as one line
USER_ERRORS = (KafkaFmtError, ValueError)
#: attributes ``adapt`` may set on a control (``visible`` maps to ``layout.display``)
ADAPTABLE = ("options", "min", "max", "step", "disabled", "value", "visible", "tooltip")


def one_line(err: BaseException) -> str:
    """``ErrorName: reason`` on a single line (the message a widget shows)."""
    reason = getattr(err, "reason", None) or str(err) or err.__class__.__name__
    return f"{err.__class__.__name__}: {' '.join(str(reason).split())}"


def to_html(item) -> str:
    """HTML for a rendered item: a string is HTML already, a figure an ``<img>``, a DataFrame a styled table."""
    if isinstance(item, str):
        return item
    if hasattr(item, "savefig"):
        return figure_html(item)
    if hasattr(item, "to_dict") and hasattr(item, "columns"):
        from .tables import table_html
        return table_html(item)
    raise TypeError(f"cannot render {type(item).__name__}")


def _option_values(options) -> list:
    return [o[1] if isinstance(o, tuple) else o for o in options]


def _label_of(control) -> str:
    """The label a control shows for its value (a dropdown's option label, else the value)."""
    value = control.value
    for o in getattr(control, "options", ()) or ():
        if isinstance(o, tuple) and o[1] == value:
            return str(o[0])
    return str(value)


class Panel:
    """``controls`` (name → widget) drive ``compute(**values)``; ``render(data)`` returns what to show.

    ``render`` may return a matplotlib figure, a pandas DataFrame, an HTML string or a tuple of
    those.  ``caption(data, values)`` returns one HTML line: the headline number of the current view
    and where the finding turns over.  ``adapt`` maps a control name to ``f(values) -> attributes``
    (any of :data:`ADAPTABLE`).
    """

    def __init__(self, controls: Mapping[str, Any], compute: Callable[..., Any],
                 render: Callable[[Any], Any] | None = None, *, title: str | None = None,
                 caption: Callable[[Any, dict], str] | None = None,
                 adapt: Mapping[str, Callable[[dict], dict]] | None = None):
        import ipywidgets as w
        self.controls = dict(controls)
        self.compute, self.render, self.caption = compute, render, caption
        self.adapt = dict(adapt or {})
        unknown = set(self.adapt) - set(self.controls)
        if unknown:
            raise ValueError(f"adapt names no control: {sorted(unknown)}")
        self.title = title
        self.data: Any = None
        self.error: str | None = None
        self.caption_html: str = ""
        self.items: tuple = ()
        self._busy = False
        self.view = w.HTML(layout=w.Layout(min_height="1.5em", overflow="auto"))
        header = [w.HTML(f"<b style='font-size:110%'>{html.escape(title)}</b>")] if title else []
        self.widget = w.VBox(header + [w.HBox(list(self.controls.values()), layout=w.Layout(flex_flow="row wrap")),
                                       self.view])
        for c in self.controls.values():
            c.observe(self._changed, names="value")
            if len(getattr(c, "description", "") or "") > 8 and hasattr(c, "style"):
                c.style.description_width = "initial"  # never cut a control's name ("retention …")
        self.update()

    @property
    def values(self) -> dict:
        return {k: c.value for k, c in self.controls.items()}

    def _changed(self, _change) -> None:
        if not self._busy:
            self.update()

    def _adapt(self) -> None:
        """Apply ``adapt`` until the controls are consistent (each rule sees the values so far)."""
        for name, rule in self.adapt.items():
            c = self.controls[name]
            attrs = dict(rule(self.values))
            bad = set(attrs) - set(ADAPTABLE)
            if bad:
                raise ValueError(f"adapt for {name} sets {sorted(bad)}; allowed: {ADAPTABLE}")
            visible = attrs.pop("visible", None)
            if visible is not None:
                c.layout.display = None if visible else "none"
            keep = attrs.pop("value", c.value)
            if "options" in attrs:
                valid = _option_values(attrs["options"])
                if list(attrs["options"]) != list(c.options):
                    c.options = attrs.pop("options")
                else:
                    attrs.pop("options")
                keep = keep if keep in valid else valid[0]
            for k in ("min", "max"):  # widen before narrowing so min <= max always holds
                if k in attrs and ((k == "min" and attrs[k] > c.max) or (k == "max" and attrs[k] < c.min)):
                    other = "max" if k == "min" else "min"
                    if other in attrs:
                        setattr(c, other, attrs.pop(other))
            for k, v in attrs.items():
                if getattr(c, k) != v:
                    setattr(c, k, v)
            if hasattr(c, "min") and not isinstance(keep, str):
                keep = min(max(keep, c.min), c.max)
            if c.value != keep:
                c.value = keep

    def update(self) -> None:
        """Adapt the controls, recompute from their values and redraw (errors replace the view with one line)."""
        self._busy = True
        try:
            self._adapt()
        finally:
            self._busy = False
        values = self.values
        try:
            data = self.compute(**values)
            shown = self.render(data) if self.render is not None else ()
            caption = self.caption(data, values) if self.caption is not None else ""
        except USER_ERRORS as e:
            self.data, self.items, self.caption_html, self.error = None, (), "", one_line(e)
        else:
            self.data, self.error, self.caption_html = data, None, caption or ""
            self.items = shown if isinstance(shown, tuple) else (shown,)
        self.view.value = self.view_html()

    def view_html(self) -> str:
        """The view of the current state as HTML: the caption and the rendered items, or the one error line.

        Wrapped in a one-column grid whose column may shrink to the page (``minmax(0, 1fr)``): a wide
        table then scrolls in its own box instead of widening the view and cutting the caption."""
        return (f"<div class='kf-view' style='display:grid;grid-template-columns:minmax(0,1fr)'>"
                f"{self._view_body()}</div>")

    def _view_body(self) -> str:
        if self.error is not None:
            return (f"<div class='kf-error' style='color:#b00020;padding:6px 8px;line-height:1.45;"
                    f"border-left:4px solid #b00020;"
                    f"background:#fdecee'>⚠ Nothing to show for this combination: {html.escape(self.error)}</div>")
        caption = (f"<div class='kf-caption' style='margin:4px 0 8px;font-size:105%;line-height:1.45'>"
                   f"{self.caption_html}</div>"
                   if self.caption_html else "")
        return caption + "".join(f"<div class='kf-item' style='margin:4px 0'>{to_html(i)}</div>" for i in self.items)

    def settings_text(self) -> str:
        """The controls' current settings in words (``format = v2 · codec = none``)."""
        return " · ".join(f"{c.description or k} = {_label_of(c)}" for k, c in self.controls.items()
                          if c.layout.display != "none")

    def render_static(self) -> str:
        """The panel as a static HTML block for a page without a kernel: title, settings and :meth:`view_html`."""
        title = (f"<div style='font-weight:bold;font-size:110%;line-height:1.45'>{html.escape(self.title)}</div>"
                 if self.title else "")
        settings = (f"<div class='kf-settings' style='color:#555;font-size:90%'>{html.escape(self.settings_text())}"
                    "</div>")
        return f"<div class='kf-panel'>{title}{settings}{self.view_html()}</div>"

    def set(self, **values) -> None:
        """Set several controls in order (each change adapts and recomputes, as a user moving them would)."""
        for k, v in values.items():
            self.controls[k].value = v

    def _repr_mimebundle_(self, **kwargs):
        return with_snapshot(self.widget._repr_mimebundle_(**kwargs), self)


__all__ = ["Panel", "one_line", "figure_png", "to_html", "USER_ERRORS"]
