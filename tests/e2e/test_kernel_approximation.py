"""The kernel-approximation page in Chromium: it loads in both languages, moving m redraws the
random-feature fit (and the URL), and the Run button measures and draws the cost curves."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import RUN_TIMEOUT_MS, assert_no_exception, wait_for_app

pytestmark = pytest.mark.e2e

PATH = "kernel-approximation"
CHARTS = '[data-testid="stPlotlyChart"]'
FIT = ".st-key-ka_fig_rff_fit"


def wait_for_charts(page, n: int) -> int:
    page.wait_for_function(f"document.querySelectorAll('{CHARTS}').length >= {n}", timeout=RUN_TIMEOUT_MS)
    return page.locator(CHARTS).count()


def fit_title(page) -> str:
    return page.locator(f"{FIT} .gtitle").first.text_content()


def fit_path(page) -> str:
    """The SVG path of the random-feature fit (third trace of the fit chart)."""
    return page.locator(f"{FIT} .scatterlayer .trace").nth(2).locator("path.js-line").first.get_attribute("d")


@pytest.mark.parametrize(
    ("lang", "heading"), [("en", "Attention as a kernel"), ("zh", "注意力是可以近似的核")]
)
def test_page_loads_in_both_languages(page, lang, heading):
    page.open(PATH, lang=lang)
    assert heading in page.locator("h1").first.inner_text()
    assert wait_for_charts(page, 7) >= 7
    assert page.locator(f"{CHARTS} .main-svg").count() >= 7  # Plotly really drew them
    assert_no_exception(page)


def test_moving_m_changes_the_fit(page):
    page.open(PATH, lang="en")
    wait_for_charts(page, 7)
    assert "m = 16 " in fit_title(page)
    before = fit_path(page)
    thumb = page.locator(".st-key-ka_m").get_by_role("slider")
    thumb.focus()
    thumb.press("End")  # the largest m: 2048
    wait_for_app(page)
    page.wait_for_function(
        f"document.querySelector('{FIT} .gtitle')?.textContent.includes('m = 2048 ')", timeout=RUN_TIMEOUT_MS
    )
    assert fit_path(page) != before
    assert "ka_m=2048" in page.url
    assert_no_exception(page)


def test_run_draws_the_cost_curves_in_chinese(page):
    page.open(PATH, lang="zh", ka_cost_len="256")
    wait_for_charts(page, 7)
    assert page.locator(".st-key-ka_fig_cost_seconds").count() == 0
    page.locator(".st-key-ka_btn_cost button").click()
    page.wait_for_selector(".st-key-ka_fig_cost_seconds .main-svg", timeout=RUN_TIMEOUT_MS)
    wait_for_app(page)
    assert "精确 softmax" in page.locator(".st-key-ka_fig_cost_seconds").inner_text()
    assert page.locator(".st-key-ka_fig_cost_peak_bytes .main-svg").count() >= 1
    assert_no_exception(page)
