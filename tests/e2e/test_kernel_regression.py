"""The Kernel Regression page in a real browser: charts render, controls redraw, uploads are checked."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import RUN_TIMEOUT_MS, assert_no_exception, wait_for_app

pytestmark = pytest.mark.e2e

PATH = "kernel-regression"
CHARTS = '[data-testid="stPlotlyChart"]'


def six_charts(page) -> None:
    """Wait until exactly the page's six charts are shown (stale ones of the last run are gone)."""
    page.wait_for_function(f"document.querySelectorAll('{CHARTS}').length === 6", timeout=RUN_TIMEOUT_MS)


def fit_title(page) -> str:
    return page.locator(CHARTS).first.locator(".gtitle").first.text_content()


def fit_path(page) -> str:
    """The SVG path of the fitted curve (third trace of the first chart)."""
    return (
        page.locator(CHARTS)
        .first.locator(".scatterlayer .trace")
        .nth(2)
        .locator("path.js-line")
        .first.get_attribute("d")
    )


def upload(page, name: str, content: bytes) -> None:
    page.locator('[data-testid="stSidebar"] input[type="file"]').set_input_files(
        files=[{"name": name, "mimeType": "text/csv", "buffer": content}]
    )


def test_page_loads_and_the_bandwidth_changes_the_fit(page):
    page.open(PATH, lang="en")
    assert "Kernel regression" in page.locator("h1").first.inner_text()
    six_charts(page)
    assert page.locator(f"{CHARTS} .main-svg").count() >= 6  # Plotly really drew them
    assert "h = 0.3)" in fit_title(page)
    before = fit_path(page)
    thumb = page.get_by_role("slider", name="Bandwidth h (log scale)")  # a live slider (ui.live_slider)
    # the fit in view: a live slider's chart far from the window draws its figure when it comes near
    page.locator(CHARTS).first.scroll_into_view_if_needed()
    thumb.focus()
    thumb.press("End")  # the largest bandwidth: 3
    wait_for_app(page)
    page.wait_for_function(
        f"document.querySelector('{CHARTS} .gtitle')?.textContent.includes('h = 3)')", timeout=RUN_TIMEOUT_MS
    )
    assert fit_path(page) != before
    assert "kr_h=3" in page.url
    assert_no_exception(page)


def test_odd_url_values_and_the_h_star_button(page):
    page.open(PATH, lang="en", kr_h="abc", kr_n="-4", kr_kernel="nope", kr_xq="1e99")
    six_charts(page)
    assert "h = 0.3)" in fit_title(page)
    page.get_by_role("button", name="Set h to h*").click()
    wait_for_app(page)
    page.wait_for_function(
        f"document.querySelector('{CHARTS} .gtitle')?.textContent.includes('h = 0.16)')",
        timeout=RUN_TIMEOUT_MS,
    )
    assert_no_exception(page)


def test_bad_then_good_upload(page):
    page.open(PATH, lang="en")
    upload(page, "bad.csv", b"x\n1\n2\n3\n")
    page.locator('[data-testid="stAlertContentError"]').filter(has_text="only one column").wait_for(
        timeout=RUN_TIMEOUT_MS
    )
    wait_for_app(page)
    six_charts(page)  # still fitting the built-in data
    assert_no_exception(page)
    rows = "\n".join(f"{i / 10},{(i % 7) / 7}" for i in range(120))
    upload(page, "mine.csv", ("x,y\n" + rows).encode())
    page.get_by_text('Fitting your data: "mine.csv", 120 points').wait_for(timeout=RUN_TIMEOUT_MS)
    wait_for_app(page)
    six_charts(page)
    assert page.locator('[data-testid="stAlertContentError"]').count() == 0
    assert_no_exception(page)


def test_chinese_page_and_a_bad_upload(page):
    page.open(PATH, lang="zh")
    assert "核回归" in page.locator("h1").first.inner_text()
    six_charts(page)
    assert "拟合" in fit_title(page)
    upload(page, "picture.png", b"\x89PNG\r\n\x1a\n\x00\x00")
    page.locator('[data-testid="stAlertContentError"]').filter(has_text="不是文本").wait_for(
        timeout=RUN_TIMEOUT_MS
    )
    wait_for_app(page)
    six_charts(page)
    assert_no_exception(page)


def test_show_code_draws_the_source_only_once_opened(page):
    page.open(PATH, lang="en")
    six_charts(page)
    assert page.locator('[data-testid="stCode"]').count() == 0  # closed expanders send no code
    page.get_by_text("Show the code that computed this").first.click()
    code = page.locator('[data-testid="stExpander"] [data-testid="stCode"]').first
    code.wait_for(timeout=RUN_TIMEOUT_MS)
    assert "def nw_predict" in code.inner_text()
    wait_for_app(page)
    assert page.locator('[data-testid="stCode"]').count() == 1  # only the opened one
    assert_no_exception(page)
