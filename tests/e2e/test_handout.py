"""The handout in a real browser: downloaded from the page, opened offline, every figure drawn."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import RUN_TIMEOUT_MS, assert_no_exception, wait_for_app

pytestmark = pytest.mark.e2e

PATH = "kernel-regression"
CHARTS = '[data-testid="stPlotlyChart"]'
FIGURES = 6


def _download_handout(page, tmp_path) -> Path:
    """Click "Download a handout (HTML)" at the end of the page; the saved file."""
    button = page.locator(".st-key-handout_html").get_by_role("button", name="Download a handout (HTML)")
    button.scroll_into_view_if_needed()
    with page.expect_download(timeout=RUN_TIMEOUT_MS) as info:
        button.click()
    saved = tmp_path / info.value.suggested_filename
    info.value.save_as(saved)
    return saved


def test_handout_opens_offline_with_every_figure(page, browser, app_url, tmp_path):
    page.open(PATH, lang="en")
    assert_no_exception(page)
    page.wait_for_function(
        f"document.querySelectorAll('{CHARTS}').length === {FIGURES}", timeout=RUN_TIMEOUT_MS
    )
    saved = _download_handout(page, tmp_path)
    assert saved.name == f"{PATH}-en-handout.html"
    assert f'href="{app_url}/{PATH}' in saved.read_text(encoding="utf-8")  # the view's URL

    offline = browser.new_context(viewport={"width": 1200, "height": 900})
    requested: list[str] = []

    def only_files(route) -> None:
        url = route.request.url
        if url.startswith(("file:", "data:", "blob:")):
            route.continue_()
        else:
            requested.append(url)
            route.abort()

    offline.route("**/*", only_files)
    try:
        pg = offline.new_page()
        errors: list[str] = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.goto(saved.as_uri())
        pg.wait_for_function(
            f"document.querySelectorAll('.js-plotly-plot .main-svg').length >= {FIGURES}",
            timeout=30_000,
        )
        assert pg.locator(".js-plotly-plot").count() == FIGURES
        assert pg.title() == "Kernel regression"
        assert errors == []
        assert requested == []  # nothing left the file
    finally:
        offline.close()


def test_handout_follows_a_fragment_rerun(page, tmp_path):
    """Moving m reruns only the random-feature section (an ``st.fragment``): the handout still holds
    every figure of the page, the redrawn one as it is now, and the URL with the new m."""
    page.open("kernel-approximation", lang="en")
    page.wait_for_function(f"document.querySelectorAll('{CHARTS}').length >= 7", timeout=RUN_TIMEOUT_MS)
    shown = page.locator(CHARTS).count()
    thumb = page.locator(".st-key-ka_m").get_by_role("slider")
    thumb.focus()
    thumb.press("End")  # the largest m: 2048
    page.wait_for_function(
        "document.querySelector('.st-key-ka_fig_rff_fit .gtitle')?.textContent.includes('m = 2048 ')",
        timeout=RUN_TIMEOUT_MS,
    )
    wait_for_app(page)
    html = _download_handout(page, tmp_path).read_text(encoding="utf-8")
    assert html.count('class="plotly-graph-div"') == shown
    assert "m = 2048 random features" in html
    assert "m = 16 random features" not in html
    assert "ka_m=2048" in html
