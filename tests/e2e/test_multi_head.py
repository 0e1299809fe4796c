"""The multi-head page in a real browser: charts render, both languages, odd URLs, a live control."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import RUN_TIMEOUT_MS, assert_no_exception, wait_for_app
from ui.i18n import load_catalogue

pytestmark = pytest.mark.e2e

EN = load_catalogue("en")
ZH = load_catalogue("zh")
#: Charts on load (the redundancy experiment shows its default run, computed ahead and shipped).
CHARTS = 10
#: The cheapest redundancy experiment, for tests that do not look at it.
CHEAP = {"mh_red_d": "16", "mh_red_steps": "0"}


def _wait_for_charts(page, n: int = CHARTS) -> None:
    """Wait until n Plotly charts have drawn their SVG (not just their placeholders)."""
    drawn = (
        "[...document.querySelectorAll('[data-testid=\"stPlotlyChart\"]')]"
        ".filter(c => c.querySelector('.main-svg')).length"
    )
    page.wait_for_function(f"{drawn} >= {n}", timeout=RUN_TIMEOUT_MS * 2)


@pytest.mark.parametrize(("lang", "cat"), [("en", EN), ("zh", ZH)])
def test_page_renders_every_chart(page, lang, cat):
    page.open("multi-head", lang=lang)
    _wait_for_charts(page)
    assert page.locator("h1").first.inner_text().strip() == cat["mh.title"]
    assert page.locator('[data-testid="stPlotlyChart"]').count() == CHARTS
    # torch's own error message from the contiguous() pitfall is on the page
    page.get_by_text("view size is not compatible", exact=False).first.wait_for(timeout=RUN_TIMEOUT_MS)
    assert_no_exception(page)


def test_the_redundancy_experiment_runs_on_its_button_and_stays(page):
    page.open("multi-head", lang="en", **CHEAP)
    _wait_for_charts(page)
    # the sliders differ from the shipped default run: it is shown, and says so
    stale = page.get_by_text("Shown: the last run (d_model = 64, 100 steps, seed 42)", exact=False)
    stale.wait_for(timeout=RUN_TIMEOUT_MS)
    page.locator(".st-key-mh_red_run button").click()
    stale.wait_for(state="detached", timeout=RUN_TIMEOUT_MS)
    wait_for_app(page)
    _wait_for_charts(page)
    assert page.get_by_text(EN["mh.red_col_trained"], exact=False).count() >= 1
    assert_no_exception(page)


def test_heads_not_dividing_d_model_warn_and_fall_back(page):
    page.open("multi-head", lang="en", answered=False, mh_d="64", mh_heads="7", **CHEAP)  # the link's run
    _wait_for_charts(page, CHARTS - 2)  # the head bars and the shuffled maps wait for their questions
    warning = EN["mh.heads_fallback"].format(requested="7", d_model=64, used=8)
    page.get_by_text(warning, exact=True).wait_for(timeout=RUN_TIMEOUT_MS)
    page.get_by_text("H = 8 heads", exact=False).wait_for(timeout=RUN_TIMEOUT_MS)
    assert_no_exception(page)


@pytest.mark.parametrize("params", [{"mh_heads": "0"}, {"mh_d": "abc", "mh_len": "999", "mh_seed": "-1"}])
def test_odd_url_values_keep_the_page_working(page, params):
    page.open("multi-head", lang="en", **CHEAP, **params)
    _wait_for_charts(page)
    assert_no_exception(page)


def test_a_control_reruns_the_page(page):
    page.open("multi-head", lang="en", **CHEAP)
    _wait_for_charts(page)
    page.get_by_text(EN["mh.mask_causal"], exact=True).first.click()
    page.wait_for_function("window.location.search.includes('mh_mask=causal')", timeout=RUN_TIMEOUT_MS)
    # the rerun is done when the permutation figure is titled with the new mask
    title = EN["mh.fig_perm_title"].format(head=1, mask=EN["mh.mask_causal"])
    page.get_by_text(title, exact=True).wait_for(timeout=RUN_TIMEOUT_MS)
    wait_for_app(page)
    _wait_for_charts(page)
    assert_no_exception(page)
