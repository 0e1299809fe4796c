"""The kernels-to-attention page in Chromium: both languages render their charts; controls work."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import RUN_TIMEOUT_MS, assert_no_exception

pytestmark = pytest.mark.e2e

CHART = '[data-testid="stPlotlyChart"]'


def wait_for_charts(page, n: int) -> int:
    """Wait until at least ``n`` Plotly charts are in the DOM (the page renders them as it runs)."""
    page.wait_for_function(f"document.querySelectorAll('{CHART}').length >= {n}", timeout=RUN_TIMEOUT_MS)
    return page.locator(CHART).count()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_renders_its_charts(page, lang):
    page.open("kernels-to-attention", lang=lang, k2a_steps="200", k2a_n="100")
    assert_no_exception(page)
    assert wait_for_charts(page, 8) >= 8
    heading = page.locator("h1").first.inner_text()
    assert ("From kernels to attention" in heading) if lang == "en" else ("从核函数到注意力" in heading)
    body = page.locator("body").inner_text()
    assert "e-1" in body  # the printed NW-vs-attention differences are rounding-sized (…e-16, …e-17)


def test_unequal_norms_break_the_identity(page):
    page.open("kernels-to-attention", lang="en", k2a_spread="1.0", k2a_steps="200", k2a_n="100")
    wait_for_charts(page, 9)
    assert_no_exception(page)
    assert "The norms differ" in page.locator("body").inner_text()
    assert page.locator(".st-key-k2a_fig_key_norms").count() == 1
