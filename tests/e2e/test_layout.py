"""Layout at a projector's 1280x720, in both languages: nothing cut off, nothing covered."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import assert_no_exception, show_answers, wait_for_app

pytestmark = pytest.mark.e2e

#: Elements whose content would be hidden if it were wider than the element.
OVERFLOW = """() => [...document.querySelectorAll('[data-testid="stTable"], [data-testid="stMain"]')]
  .filter(e => e.scrollWidth > e.clientWidth + 1)
  .map(e => e.getAttribute('data-testid') + ' ' + e.scrollWidth + '>' + e.clientWidth)"""

#: A table cell whose number was broken over two lines ("0." / "21").
BROKEN_NUMBERS = """() => [...document.querySelectorAll('[data-testid="stTable"] td')]
  .filter(td => /^[-−]?[0-9.,%e+×]+$/.test(td.innerText.trim()) && td.innerText.trim().length > 1)
  .filter(td => { const r = document.createRange(); r.selectNodeContents(td);
                  const tops = [...r.getClientRects()].map(x => x.top);
                  return Math.max(...tops) - Math.min(...tops) > 8; })
  .map(td => td.innerText)"""


#: The bounding boxes of chart i's title and of its toolbar (None when it has no title).
BOXES = """(i) => { const c = document.querySelectorAll('[data-testid="stPlotlyChart"]')[i];
  const t = c.querySelector('.gtitle'), m = c.querySelector('.modebar');
  return t && m ? [t.getBoundingClientRect().toJSON(), m.getBoundingClientRect().toJSON()] : null; }"""


def _projector(browser, app_url):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    return context, context.new_page()


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("path", ["scaled-dot-product", "kernel-regression"])
def test_tables_fit_and_numbers_stay_whole(browser, app_url, path, lang):
    context, page = _projector(browser, app_url)
    try:
        page.goto(f"{app_url}/{path}?lang={lang}")
        wait_for_app(page)
        show_answers(page)  # the d_k table waits for its question
        page.wait_for_selector('[data-testid="stTable"] td', timeout=60_000)
        assert_no_exception(page)
        assert page.evaluate(OVERFLOW) == []
        assert page.evaluate(BROKEN_NUMBERS) == []
    finally:
        context.close()


def test_plotly_toolbar_never_covers_a_title(browser, app_url):
    context, page = _projector(browser, app_url)
    try:
        page.goto(f"{app_url}/kernel-regression?lang=zh")
        wait_for_app(page)
        page.wait_for_selector('[data-testid="stPlotlyChart"] .gtitle', timeout=60_000)
        charts = page.locator('[data-testid="stPlotlyChart"]')
        checked = 0
        for i in range(min(charts.count(), 4)):
            charts.nth(i).scroll_into_view_if_needed()
            charts.nth(i).hover()  # the toolbar shows on hover
            page.wait_for_timeout(300)
            boxes = page.evaluate(BOXES, i)
            if boxes is None:  # a chart without a title
                continue
            a, b = boxes
            overlap = not (
                a["right"] <= b["left"]
                or b["right"] <= a["left"]
                or a["bottom"] <= b["top"]
                or b["bottom"] <= a["top"]
            )
            assert not overlap, (i, a, b)
            checked += 1
        assert checked >= 2
    finally:
        context.close()


def test_mask_editor_shows_every_row(browser, app_url):
    context, page = _projector(browser, app_url)
    try:
        page.goto(f"{app_url}/scaled-dot-product?lang=en&sdp_mask=custom&sdp_len=8")
        wait_for_app(page)
        editor = page.locator('[data-testid="stDataFrame"]').first
        editor.scroll_into_view_if_needed()
        box = editor.bounding_box()
        header_and_rows = 9  # header + L = 8 rows
        assert box["height"] >= 35 * header_and_rows, box
        # the grid itself needs no vertical scroll bar: its content fits its height
        assert page.evaluate(
            """() => { const s = document.querySelector('[data-testid="stDataFrame"] .dvn-scroller');
                       return !s || s.scrollHeight <= s.clientHeight + 1; }"""
        )
    finally:
        context.close()
