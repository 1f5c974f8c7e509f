"""What a person would call a broken view, as checks a browser test runs on every panel it shows.

Each check is a JavaScript function of a panel element evaluated in the page (Playwright's
``locator.evaluate``); :func:`problems` turns its answer into readable complaints.  The checks are
proven able to fail on crafted pages in tests/test_browser_checks.py.

- **error beside a stale result**: an error line (``.kf-error``, a stderr/traceback output or a
  line starting ``SomethingError:``) shown together with a figure, table, byte view or caption;
- **a cut table cell**: a ``th``/``td`` whose text is wider than the cell (``scrollWidth >
  clientWidth``, or its text's box wider than the cell: it neither wraps nor fits) and that carries no tooltip with its full text;
- **an upscaled image**: an ``img`` with fewer pixels than it covers on screen
  (``naturalWidth < displayed CSS width × devicePixelRatio``).
"""
from __future__ import annotations

#: the checks, as one JS function of a panel element
PANEL_STATE = r"""(el) => {
    const vis = (n) => { const r = n.getBoundingClientRect(); const s = getComputedStyle(n);
        return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none'; };
    // a control (ipywidgets 8 gives HTML views the class widget-inline-hbox too: they are no control)
    const control = (n) => n.closest('.widget-inline-hbox:not(.widget-html), .widget-slider, .widget-dropdown, '
                                     + '.widget-checkbox, .widget-text');
    const errorLike = /^\s*(⚠|[A-Z][A-Za-z]*(Error|Exception):|Traceback)/;
    const errors = Array.from(el.querySelectorAll(
            '.kf-error, [data-mime-type="application/vnd.jupyter.stderr"], [data-mime-type="application/vnd.jupyter.error"], '
            + '.widget-html-content > *, pre')).filter((n) => vis(n) && !control(n) && (n.matches(
            '.kf-error, [data-mime-type="application/vnd.jupyter.stderr"], [data-mime-type="application/vnd.jupyter.error"]')
            || (errorLike.test(n.textContent) && !n.querySelector('.kf-error') && !n.closest('.kf-error'))))
        .map((n) => n.textContent.trim().slice(0, 120));
    const results = Array.from(el.querySelectorAll('img, table, svg, .kf-bytes, .kf-caption, .kf-item'))
        .filter((n) => vis(n) && !control(n) && !n.closest('.kf-error'))
        .map((n) => n.tagName.toLowerCase() + (typeof n.className === 'string' && n.className
                                               ? '.' + n.className.split(' ')[0] : ''));
    const needs = (c) => { const r = document.createRange(); r.selectNodeContents(c); const s = getComputedStyle(c);
        return Math.max(c.scrollWidth, Math.ceil(r.getBoundingClientRect().width + parseFloat(s.paddingLeft)
                                                 + parseFloat(s.paddingRight))); };
    const cut = Array.from(el.querySelectorAll('th, td')).filter((c) => vis(c)
            && needs(c) > c.clientWidth + 1 && !c.title && !c.querySelector('[title]'))
        .map((c) => c.textContent.trim().slice(0, 80) + ' (' + needs(c) + ' px in ' + c.clientWidth + ')');
    const dpr = window.devicePixelRatio || 1;
    const upscaled = Array.from(el.querySelectorAll('img')).filter((i) => vis(i) && i.complete && i.naturalWidth > 0
            && i.naturalWidth + 1 < i.getBoundingClientRect().width * dpr)
        .map((i) => i.naturalWidth + ' px shown over ' + i.getBoundingClientRect().width + ' CSS px × ' + dpr);
    const broken = Array.from(el.querySelectorAll('img')).filter((i) => vis(i) && i.complete && i.naturalWidth === 0)
        .length;
    return {errors, results, cut, upscaled, broken};
}"""


def problems(state: dict) -> list[str]:
    """The complaints a person would make about a panel in ``state`` (the answer of :data:`PANEL_STATE`)."""
    out = []
    if state["errors"] and state["results"]:
        out.append(f"an error line beside a stale result: {state['errors'][0]!r} with {sorted(set(state['results']))}")
    out += [f"a cut table cell: {c!r}" for c in state["cut"]]
    out += [f"an upscaled image: {u}" for u in state["upscaled"]]
    if state["broken"]:
        out.append(f"{state['broken']} image(s) that did not load")
    return out


def check(panel, where: str) -> dict:
    """Evaluate the checks on a Playwright locator of a panel; fail with every complaint at once."""
    state = panel.evaluate(PANEL_STATE)
    found = problems(state)
    assert not found, f"{where}: " + "; ".join(found)
    return state
