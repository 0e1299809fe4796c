"""The scaled-dot-product page in Chromium: charts render, the mask editor edits the heatmap and the URL."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import RUN_TIMEOUT_MS, assert_no_exception, wait_for_app

pytestmark = pytest.mark.e2e

CHART = '[data-testid="stPlotlyChart"]'


def wait_for_charts(page, n: int) -> int:
    """Wait until at least ``n`` Plotly charts are in the DOM (the page renders them as it runs)."""
    page.wait_for_function(f"document.querySelectorAll('{CHART}').length >= {n}", timeout=RUN_TIMEOUT_MS)
    return page.locator(CHART).count()


CUSTOM = "custom%20(editor)"  # a bound radio writes its displayed label into the URL


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_renders_its_charts(page, lang):
    page.open("scaled-dot-product", lang=lang)
    assert_no_exception(page)
    assert wait_for_charts(page, 9) >= 9
    heading = page.locator("h1").first.inner_text()
    assert ("Scaled dot-product" in heading) if lang == "en" else ("缩放点积注意力" in heading)


def test_a_mask_toggle_changes_the_heatmap_and_the_url(page):
    page.open("scaled-dot-product", lang="en", sdp_mask=CUSTOM, sdp_len="4")
    wait_for_charts(page, 9)
    editor = page.locator('[data-testid="stDataFrame"]').first
    editor.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    masked = page.locator(".st-key-sdp_fig_pipeline")  # its third panel: the masked scores
    before = masked.inner_html()
    assert "Current mask text: 1-3-7-f" in page.locator("body").inner_text()
    # tick query 0 -> key 3 (the last column of the first row): causal row "1" becomes "9"
    box = editor.bounding_box()
    col_w = (box["width"] - 50) / 4
    page.mouse.click(box["x"] + box["width"] - col_w / 2, box["y"] + 35 + 17)
    page.wait_for_timeout(500)
    wait_for_app(page)
    page.wait_for_function("document.body.innerText.includes('Current mask text: 9-3-7-f')", timeout=30_000)
    assert masked.inner_html() != before, "the masked-scores heatmap must change"
    assert "sdp_cmask=9-3-7-f" in page.url
    assert_no_exception(page)
    # the URL alone reproduces the edited mask
    page.goto(page.url)
    wait_for_app(page)
    assert "Current mask text: 9-3-7-f" in page.locator("body").inner_text()


def test_a_tampered_mask_warns_in_the_browser(page):
    page.open("scaled-dot-product", lang="en", sdp_mask=CUSTOM, sdp_cmask="not-a-mask")
    wait_for_charts(page, 9)
    assert page.locator('[data-testid="stAlertContentWarning"]').count() >= 1
    assert "Falling back to the causal mask" in page.locator("body").inner_text()
    assert_no_exception(page)
