"""The browser checks (tests/browser_checks.py) can fail: each is run in Chromium on tiny crafted pages
showing the defect and its fix, and on the real :class:`kafkafmt.viz.Panel` views."""
from __future__ import annotations

import base64
import struct
import zlib

from browser_checks import PANEL_STATE, problems
from ci_mode import import_or_skip


def _png(w: int, h: int) -> str:
    """A data URI of a grey ``w``×``h`` PNG (built by hand: no image library needed)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    raw = b"".join(b"\0" + b"\x80" * w for _ in range(h))
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
    return "data:image/png;base64," + base64.b64encode(png).decode()


def _state(chromium, body: str, dpr: float = 1) -> dict:
    page = chromium.new_page(viewport={"width": 800, "height": 600}, device_scale_factor=dpr)
    try:
        page.set_content(f"<html><body><div id='panel'>{body}</div></body></html>")
        page.wait_for_load_state("load")
        return page.locator("#panel").evaluate(PANEL_STATE)
    finally:
        page.close()


ERROR = "<div class='kf-error'>⚠ Nothing to show for this combination: ValueError: bad</div>"
TABLE = "<table><tr><td>a result</td></tr></table>"


def test_an_error_line_beside_a_stale_result_is_found(chromium):
    assert any("stale" in p for p in problems(_state(chromium, ERROR + TABLE)))
    # the original defect: a bare error text above the previous figure
    bare = f"<div class='widget-html-content'><div>IllegalArgumentError: Invalid</div></div><img src='{_png(20, 10)}'>"
    assert any("stale" in p for p in problems(_state(chromium, bare)))
    assert problems(_state(chromium, ERROR)) == []
    # as ipywidgets 8 draws a Panel: the view is an HTML widget, which has the class of a control row too
    widget = f"<div class='widget-inline-hbox widget-html'><div class='widget-html-content'>{ERROR}{TABLE}</div></div>"
    assert any("stale" in p for p in problems(_state(chromium, widget)))
    slider = "<div class='widget-inline-hbox widget-slider'><label>x</label><svg width='9' height='9'></svg></div>"
    assert problems(_state(chromium, ERROR + slider)) == []  # a control is no result
    assert problems(_state(chromium, TABLE)) == []
    hidden = f"<div style='display:none'>{TABLE}</div>"  # a result not shown is not stale
    assert problems(_state(chromium, ERROR + hidden)) == []


def test_a_cut_table_cell_is_found(chromium):
    long = "topic.segment.path.that.differs.only.at.its.end.0001"  # no break opportunity
    cut = f"<table><tr><td style='max-width:60px;white-space:nowrap;overflow:hidden'>{long}</td></tr></table>"
    assert any("cut" in p for p in problems(_state(chromium, cut)))
    unbroken = f"<table style='table-layout:fixed;width:80px'><tr><td>{long}</td></tr></table>"
    assert any("cut" in p for p in problems(_state(chromium, unbroken)))
    tooltip = cut.replace("<td ", f"<td title='{long}' ")
    wrapped = f"<table style='width:80px'><tr><td style='overflow-wrap:anywhere'>{long}</td></tr></table>"
    fits = f"<table><tr><td>{long}</td></tr></table>"
    for ok in (tooltip, wrapped, fits):
        assert problems(_state(chromium, ok)) == [], ok


def test_an_upscaled_image_is_found(chromium):
    src = _png(200, 100)
    assert any("upscaled" in p for p in problems(_state(chromium, f"<img src='{src}' style='width:400px'>")))
    assert problems(_state(chromium, f"<img src='{src}' style='width:200px'>")) == []
    assert problems(_state(chromium, f"<img src='{src}' style='width:100px'>")) == []
    # on a HiDPI screen the same image at its own CSS size is upscaled; at half its size it is sharp
    assert any("upscaled" in p for p in problems(_state(chromium, f"<img src='{src}' style='width:200px'>", dpr=2)))
    assert problems(_state(chromium, f"<img src='{src}' style='width:100px'>", dpr=2)) == []


def test_the_real_panel_views_pass_and_fail_as_they_should(chromium):
    """The 08 panel in an invalid combination shows only its error line; the checks see no stale result."""
    import_or_skip("ipywidgets")
    from kafkafmt.viz import negative
    p = negative.bits_panel()
    ok = _state(chromium, p.view_html())
    assert ok["results"] and not ok["errors"] and problems(ok) == []
    p.set(extended=False)  # a timestamp before 1970 without isTimestampExtended: Kafka's builder refuses it
    bad = _state(chromium, p.view_html())
    assert bad["errors"] and not bad["results"] and problems(bad) == []
    p.set(extended=True)
    assert problems(_state(chromium, p.view_html())) == []
