"""Widget wiring: controls → one package function → a rendered view, with a one-line error line.

A notebook builds a :class:`Panel` from ipywidgets controls, a ``compute`` function of the package
(the data) and a ``render`` function (a figure, a table or HTML of that data).  Moving a control
recomputes; :attr:`Panel.data` always holds what the view shows, so a checked cell can set a
control's value and assert on the data.  Bad input (a :class:`~kafkafmt.errors.KafkaFmtError`, a
``ValueError``) is shown as one line above the view, never as a traceback, and kept in
:attr:`Panel.error`.

The view is drawn into ``HTML`` and ``Image`` widgets rather than an ``Output`` widget: updates then
travel as widget state, so a cell that moves a slider emits no output of its own and the notebook
can be checked by nbval in strict mode without ignored cells.
"""
from __future__ import annotations

import html
import io
from typing import Any, Callable, Mapping

from ..errors import KafkaFmtError
from .snapshot import with_snapshot

#: the errors a widget combination may legitimately raise: shown as one line
USER_ERRORS = (KafkaFmtError, ValueError)


def one_line(err: BaseException) -> str:
    """``ErrorName: reason`` on a single line (the message a widget shows)."""
    reason = getattr(err, "reason", None) or str(err) or err.__class__.__name__
    return f"{err.__class__.__name__}: {' '.join(str(reason).split())}"


def figure_png(fig) -> bytes:
    """A matplotlib figure as PNG bytes (no timestamp or version metadata, so equal figures give equal bytes)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, metadata={"Software": None})
    return buf.getvalue()


def to_html(item) -> str:
    """HTML for a rendered item: a string is HTML already; a DataFrame becomes a table."""
    if isinstance(item, str):
        return item
    if hasattr(item, "to_html"):
        return item.to_html(index=False, border=0, classes="kf-table")
    raise TypeError(f"cannot render {type(item).__name__}")


class Panel:
    """``controls`` (name → widget) drive ``compute(**values)``; ``render(data)`` returns what to show.

    ``render`` may return a matplotlib figure, a pandas DataFrame, an HTML string or a tuple of
    those; figures go to ``Image`` widgets, the rest to ``HTML`` widgets (:attr:`views`).
    """

    def __init__(self, controls: Mapping[str, Any], compute: Callable[..., Any],
                 render: Callable[[Any], Any] | None = None, *, title: str | None = None):
        import ipywidgets as w
        self._w = w
        self.controls = dict(controls)
        self.compute = compute
        self.render = render
        self.data: Any = None
        self.error: str | None = None
        self.message = w.HTML(layout=w.Layout(min_height="1.5em"))
        self.views = w.VBox()
        header = [w.HTML(f"<b>{html.escape(title)}</b>")] if title else []
        self.widget = w.VBox(header + [w.HBox(list(self.controls.values()), layout=w.Layout(flex_flow="row wrap")),
                                       self.message, self.views])
        for c in self.controls.values():
            c.observe(self._changed, names="value")
        self.update()

    @property
    def values(self) -> dict:
        return {k: c.value for k, c in self.controls.items()}

    def _changed(self, _change) -> None:
        self.update()

    def update(self) -> None:
        """Recompute from the controls' values and redraw (errors become one line)."""
        try:
            data = self.compute(**self.values)
        except USER_ERRORS as e:
            self.error = one_line(e)
            self.message.value = f"<span class='kf-error' style='color:#b00020'>⚠ {html.escape(self.error)}</span>"
            return
        self.data, self.error = data, None
        self.message.value = ""
        if self.render is not None:
            shown = self.render(data)
            self._draw(shown if isinstance(shown, tuple) else (shown,))

    def _draw(self, items) -> None:
        w = self._w
        old = list(self.views.children)
        new = []
        for i, item in enumerate(items):
            is_fig = hasattr(item, "savefig")
            kind = w.Image if is_fig else w.HTML
            view = old[i] if i < len(old) and type(old[i]) is kind else (
                kind(format="png") if is_fig else kind())
            if is_fig:
                view.value = figure_png(item)
            else:
                view.value = to_html(item)
            new.append(view)
        if new != old:
            self.views.children = tuple(new)

    def set(self, **values) -> None:
        """Set several controls (each change recomputes, as a user moving them would)."""
        for k, v in values.items():
            self.controls[k].value = v

    def _repr_mimebundle_(self, **kwargs):
        return with_snapshot(self.widget._repr_mimebundle_(**kwargs), self)


__all__ = ["Panel", "one_line", "figure_png", "to_html", "USER_ERRORS"]
