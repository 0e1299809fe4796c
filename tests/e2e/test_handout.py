"""The handout in a real browser: downloaded from the page, opened offline, every figure drawn."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import RUN_TIMEOUT_MS, assert_no_exception

pytestmark = pytest.mark.e2e

PATH = "kernel-regression"
CHARTS = '[data-testid="stPlotlyChart"]'
FIGURES = 6


def test_handout_opens_offline_with_every_figure(page, browser, tmp_path):
    page.open(PATH, lang="en")
    assert_no_exception(page)
    page.wait_for_function(
        f"document.querySelectorAll('{CHARTS}').length === {FIGURES}", timeout=RUN_TIMEOUT_MS
    )
    button = page.locator(".st-key-handout_html").get_by_role("button", name="Download a handout (HTML)")
    button.scroll_into_view_if_needed()
    with page.expect_download(timeout=RUN_TIMEOUT_MS) as info:
        button.click()
    download = info.value
    assert download.suggested_filename == f"{PATH}-en-handout.html"
    saved = tmp_path / download.suggested_filename
    download.save_as(saved)

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
