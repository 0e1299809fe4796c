"""Classroom views in Chromium: presentation mode on a 1280x720 projector, pages on a phone."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import assert_no_exception, wait_for_app

pytestmark = pytest.mark.e2e

#: Width of the page's content vs the window, and the body text size in px.
MEASURE = """() => ({
  scroll: document.scrollingElement.scrollWidth, window: window.innerWidth,
  main: document.querySelector('[data-testid="stMain"]').scrollWidth,
  mainClient: document.querySelector('[data-testid="stMain"]').clientWidth,
  body: parseFloat(getComputedStyle(
    document.querySelector('[data-testid="stMain"] [data-testid="stMarkdownContainer"] p')).fontSize),
  charts: [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
    .map(c => c.getBoundingClientRect().right),
})"""


def _open(browser, app_url, path: str, width: int, height: int):
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.goto(f"{app_url}/{path}")
    wait_for_app(page)
    return context, page


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_presentation_mode_on_a_projector(browser, app_url, lang):
    context, page = _open(browser, app_url, f"scaled-dot-product?lang={lang}&present=1&slide=2", 1280, 720)
    try:
        assert_no_exception(page)
        page.wait_for_selector('[data-testid="stPlotlyChart"]', timeout=60_000)
        m = page.evaluate(MEASURE)
        assert m["scroll"] <= m["window"]  # no horizontal scroll
        assert m["main"] <= m["mainClient"] + 1
        assert m["body"] >= 20  # readable from the back row
        assert all(right <= m["window"] for right in m["charts"])
        assert "slide=2" in page.url  # the link keeps naming its slide
        box = page.locator('[data-testid="stSidebar"]').bounding_box()
        assert box is None or box["x"] + box["width"] <= 1  # collapsed: the slide gets the screen
        # one section: the pipeline's header, not the others'
        assert page.locator('[data-testid="stMain"] h2').count() == 1
        page.locator(".st-key-slide_next button").click()
        wait_for_app(page)
        assert "slide=3" in page.url
        assert page.locator('[data-testid="stMain"] h2').count() == 1
        assert_no_exception(page)
    finally:
        context.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("path", ["kernel-regression", "scaled-dot-product", "training"])
def test_pages_fit_a_phone(browser, app_url, path, lang):
    context, page = _open(browser, app_url, f"{path}?lang={lang}", 390, 844)
    try:
        assert_no_exception(page)
        page.wait_for_selector('[data-testid="stPlotlyChart"]', timeout=60_000)
        m = page.evaluate(MEASURE)
        assert m["scroll"] <= m["window"]  # the page never scrolls sideways
        assert m["main"] <= m["mainClient"] + 1
        assert all(right <= m["window"] + 1 for right in m["charts"])  # figures fit the width
    finally:
        context.close()
