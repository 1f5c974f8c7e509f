"""Driving every panel of a notebook page as a person would (JupyterLab or the presentation mode).

:func:`panels` finds the :class:`kafkafmt.viz.Panel` widgets shown on a page (a title, a row of
controls, a view) and marks them; :func:`exercise` moves each one into an invalid combination and
back where one can still be reached, or checks that its adaptive control refuses the invalid value
(zstd not offered for v0/v1, headers off for v0/v1, bounds off under LogAppendTime, a scenario's
steps); a panel not listed in :data:`SCENARIOS` (a new notebook's) has its first control moved and
moved back.  After every move the checks of tests/browser_checks.py run on the panel.

Waits: a move is followed by :func:`wait_changed` (the view changed, then stayed the same for 0.6 s: a panel's
view may update in steps as its adaptive controls follow), and the page's panels are first checked only once
their number and everything they show have been quiet together for 1 s (:func:`wait_for_panels`).  The panels
are independent (no control is linked to another panel), so a panel quiet before the others are driven stays
so until it is itself driven: no further quiet period is waited for before driving it or after its last
``wait_changed``.
"""
from __future__ import annotations

import time

from browser_checks import check

#: marks each panel (``data-kf-panel=i``) and returns their titles, in page order
FIND_PANELS = """() => {
    const kids = (el, cls) => Array.from(el.children).filter((c) => c.classList.contains(cls));
    const ps = Array.from(document.querySelectorAll('.widget-vbox')).filter((el) =>
        kids(el, 'widget-html').some((c) => c.querySelector('b')) && kids(el, 'widget-hbox').length);
    ps.forEach((el, i) => el.setAttribute('data-kf-panel', String(i)));
    return ps.map((el) => kids(el, 'widget-html')[0].querySelector('b').textContent.trim());
}"""
#: what a panel shows (figures, HTML views, the message line), not its controls
SHOWN = """(el) => Array.from(el.querySelectorAll('img, .widget-html-content')).map(
    (n) => n.tagName === 'IMG' ? n.src.length + ':' + n.src.slice(-64) : n.innerHTML).join('|')"""


def panels(page) -> list[tuple[str, object]]:
    """``(title, locator)`` of every panel on the page."""
    titles = page.evaluate(FIND_PANELS)
    return [(t, page.locator(f"[data-kf-panel='{i}']")) for i, t in enumerate(titles)]


#: every marked panel's title and what it shows, once each has its view (else null)
_ALL_SHOWN = f"""() => {{ const titles = ({FIND_PANELS})();
    const ps = Array.from(document.querySelectorAll('[data-kf-panel]'));
    if (!ps.length || !ps.every((el) => el.querySelector('.kf-view'))) return null;
    return titles.map((t, i) => t + '=' + ({SHOWN})(document.querySelector(`[data-kf-panel='${{i}}']`)));
}}"""


def wait_for_panels(page, where: str, quiet_s: float = 1.0) -> list[tuple[str, object]]:
    """The panels once the widgets are drawn (they appear one by one after the page has run): at least one, each
    with its view, and their number and what each shows unchanged for ``quiet_s``."""
    try:
        page.wait_for_function(f"() => ({FIND_PANELS})().length > 0", timeout=60_000)
    except Exception:
        raise AssertionError(f"{where}: no panel on the page") from None
    last, since = None, time.monotonic()
    while time.monotonic() - since < quiet_s:
        now = page.wait_for_function(_ALL_SHOWN, timeout=60_000).json_value()
        if now != last:
            last, since = now, time.monotonic()
        time.sleep(0.2)
    return panels(page)


def control(panel, description: str):
    """The control of ``panel`` labelled ``description``."""
    return panel.locator(".widget-inline-hbox:not(.widget-html)").filter(
        has=panel.page.locator(f"label:text-is('{description}'), label > span:text-is('{description}')")).first


def wait_changed(panel, before: str, timeout_s: float = 90.0, quiet_s: float = 0.6) -> str:
    """Wait until the panel shows something else than ``before``, then until it has been quiet for ``quiet_s``."""
    panel.page.wait_for_function(f"([el, before]) => ({SHOWN})(el) !== before",
                                 arg=[panel.element_handle(), before], timeout=timeout_s * 1000)
    return settle(panel, quiet_s)


def settle(panel, quiet_s: float = 0.6, timeout_s: float = 30.0) -> str:
    """Wait until what the panel shows has not changed for ``quiet_s`` (its views update one by one)."""
    last, since, deadline = panel.evaluate(SHOWN), time.monotonic(), time.monotonic() + timeout_s
    while time.monotonic() - since < quiet_s and time.monotonic() < deadline:
        time.sleep(0.15)
        now = panel.evaluate(SHOWN)
        if now != last:
            last, since = now, time.monotonic()
    return last


def options(panel, description: str) -> list[str]:
    return control(panel, description).locator("option").all_inner_texts()


def select(panel, description: str, contains: str, where: str) -> dict:
    """Choose the first option of a dropdown whose label contains ``contains``; returns the checked state."""
    before = panel.evaluate(SHOWN)
    box = control(panel, description).locator("select")
    label = next((o for o in options(panel, description) if contains in o), None)
    assert label is not None, f"{where}: {description!r} offers no {contains!r} ({options(panel, description)})"
    if box.evaluate("(s) => s.options[s.selectedIndex].text") == label:
        return check(panel, where)
    box.select_option(label=label)
    wait_changed(panel, before)
    return check(panel, f"{where}, {description} = {label}")


def slider_state(panel, description: str) -> dict:
    c = control(panel, description)
    return c.evaluate("""(el) => { const h = el.querySelector('.noUi-handle');
        const r = el.querySelector('.widget-readout');
        return {min: Number(h.getAttribute('aria-valuemin')), max: Number(h.getAttribute('aria-valuemax')),
                now: Number(h.getAttribute('aria-valuenow')), readout: r ? r.textContent.trim() : '',
                disabled: !!el.querySelector('[disabled]') || (r && r.contentEditable === 'false')}; }""")


def keys(panel, description: str, *presses: str) -> None:
    handle = control(panel, description).locator(".noUi-handle").first
    handle.scroll_into_view_if_needed()
    handle.focus()
    for k in presses:
        handle.press(k)


def move_first_control_and_back(panel, where: str) -> None:
    """A panel without a scripted scenario: its first visible control moved one step and moved back."""
    c = panel.locator(".widget-inline-hbox:not(.widget-html):visible").first
    c.scroll_into_view_if_needed()
    classes = c.get_attribute("class") or ""
    label = c.locator("label").first.inner_text() if c.locator("label").count() else "?"
    before = panel.evaluate(SHOWN)
    if "widget-dropdown" in classes:
        box = c.locator("select")
        i = box.evaluate("(s) => s.selectedIndex")
        n = box.locator("option").count()
        if n < 2:
            return
        box.select_option(index=(i + 1) % n)
        moved = wait_changed(panel, before)
        check(panel, f"{where}, {label} moved")
        box.select_option(index=i)
    elif "widget-slider" in classes:
        st = slider_state(panel, label)
        go, back = ("ArrowLeft", "ArrowRight") if st["now"] >= st["max"] else ("ArrowRight", "ArrowLeft")
        keys(panel, label, go, go)
        moved = wait_changed(panel, before)
        st = slider_state(panel, label)
        assert st["min"] <= st["now"] <= st["max"], f"{where}: {label} out of its range: {st}"
        check(panel, f"{where}, {label} moved")
        keys(panel, label, back, back)
    elif "widget-checkbox" in classes:
        c.locator("input").click()
        moved = wait_changed(panel, before)
        check(panel, f"{where}, {label} toggled")
        c.locator("input").click()
    else:
        box = c.locator("input")
        old = box.input_value()
        box.fill(old + "1")
        box.press("Enter")
        moved = wait_changed(panel, before)
        check(panel, f"{where}, {label} typed")
        box.fill(old)
        box.press("Enter")
    wait_changed(panel, moved)
    state = check(panel, f"{where}, {label} moved back")
    assert state["results"] and not state["errors"], f"{where}: nothing shown after moving {label} back"


# ---- scripted scenarios: an invalid combination, or the adaptive control refusing it ---------------------------
def _format_offers_codecs(panel, where, fmt="format"):
    """zstd (KIP-110) is offered for v2 only; headers (KIP-82) are off for v0/v1."""
    has_headers = control(panel, "headers").count() > 0
    select(panel, fmt, "v1", where)
    assert "zstd" not in options(panel, "codec"), f"{where}: zstd offered for v1"
    if has_headers:
        assert slider_state(panel, "headers")["disabled"], f"{where}: headers slider live for v1"
    state = select(panel, fmt, "v2", where)
    assert "zstd" in options(panel, "codec"), f"{where}: zstd not offered for v2"
    if has_headers:
        st = slider_state(panel, "headers")
        assert not st["disabled"], f"{where}: headers slider off for v2"
        if st["now"] == 0:  # v1 set it to 0 (no headers there): a person moves it up again
            before = panel.evaluate(SHOWN)
            keys(panel, "headers", "ArrowRight")
            wait_changed(panel, before)
            state = check(panel, f"{where}, headers back to 1 on v2")
    assert state["results"] and not state["errors"], f"{where}: back on v2 shows {state} "


def _bounds_off_under_log_append_time(panel, where):
    """message.timestamp.before/after.max.ms (KIP-937) do not apply under LogAppendTime: their sliders are off."""
    select(panel, "type", "LogAppendTime", where)
    for b in ("before h", "after h"):
        assert slider_state(panel, b)["disabled"], f"{where}: {b} live under LogAppendTime"
    select(panel, "type", "CreateTime", where)
    for b in ("before h", "after h"):
        st = slider_state(panel, b)
        assert not st["disabled"] and st["min"] >= 0, f"{where}: {b} {st}"


def _steps_of_each_scenario(panel, where):
    """The step slider spans exactly the chosen scenario's steps (seed 000's trial rollback has 6, not 17)."""
    from kafkafmt.viz.upgrade import SCENARIOS as NAMES
    from kafkafmt.viz.upgrade import scenario_steps
    first = options(panel, "scenario")[0]
    for name in reversed(NAMES):
        select(panel, "scenario", name, where)
        keys(panel, "step", "End")
        panel.page.wait_for_timeout(300)
        st = slider_state(panel, "step")
        assert (st["min"], st["max"], st["now"]) == (1, scenario_steps(name), scenario_steps(name)), \
            f"{where}: {name} has {scenario_steps(name)} steps, the slider {st}"
        settle(panel)
        check(panel, f"{where}, {name} at its last step")
    select(panel, "scenario", first, where)


def _negative_timestamp_without_its_bit(panel, where):
    """Before 1970 a v2 record needs isTimestampExtended: without it Kafka's builder refuses it (the one line)."""
    box = control(panel, "isTimestampExtended").locator("input")
    before = panel.evaluate(SHOWN)
    box.click()
    wait_changed(panel, before)
    state = check(panel, f"{where}, isTimestampExtended off")
    assert state["errors"] and "Nothing to show for this combination" in state["errors"][0] \
        and not state["results"], f"{where}: the invalid combination shows {state}"
    invalid = panel.evaluate(SHOWN)
    box.click()
    wait_changed(panel, invalid)
    state = check(panel, f"{where}, isTimestampExtended back on")
    assert state["results"] and not state["errors"], f"{where}: the view did not come back: {state}"
    assert panel.evaluate(SHOWN) == before, f"{where}: back to the same values, not the same view"


#: panel title → its scenario (a panel not listed gets :func:`move_first_control_and_back`)
SCENARIOS = {
    "Record set bytes": _format_offers_codecs,
    "Fetch costs": lambda p, w: _format_offers_codecs(p, w, fmt="log format"),
    "Which producers get through": _bounds_off_under_log_append_time,
    "Scenario stepper": _steps_of_each_scenario,
    "one v2 record": _negative_timestamp_without_its_bit,
}


def exercise(page, where: str, drive: int | None = None) -> list[str]:
    """Every panel of the page checked as first shown (each with its view, no error line), then the first
    ``drive`` panels (all by default) driven through their scenario and checked again; returns the titles."""
    found = wait_for_panels(page, where)  # every panel quiet: what each shows is what it first shows
    for title, panel in found:
        panel.scroll_into_view_if_needed()
        state = check(panel, f"{where} / {title} as first shown")
        assert state["results"] and not state["errors"], f"{where} / {title}: first shown without its view: {state}"
    for title, panel in found[:drive]:
        panel.scroll_into_view_if_needed()
        SCENARIOS.get(title, move_first_control_and_back)(panel, f"{where} / {title}")
        # every scenario ends with the panel quiet (wait_changed or settle), or with nothing moved
        state = check(panel, f"{where} / {title} at the end")
        assert state["results"] and not state["errors"], f"{where} / {title}: ends without its view: {state}"
    return [t for t, _ in found]
