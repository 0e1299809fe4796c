"""Folded sections in Chromium (``ui.sections``): closed on the default view, opened by a click
or a link, and a fragment inside an open fold reruns without repeating the section's title."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import assert_no_exception, show_answers, wait_for_app
from ui.i18n import load_catalogue

pytestmark = pytest.mark.e2e

CHART = '[data-testid="stPlotlyChart"]'


def _headings(page, text: str) -> int:
    """How many h2/h3 headings of the main area read ``text``."""
    return page.locator('[data-testid="stMain"] :is(h2, h3)', has_text=text).count()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_click_opens_a_fold_and_draws_its_section(page, lang):
    cat = load_catalogue(lang)
    page.open("scaled-dot-product", lang=lang, folded=True)
    assert_no_exception(page)
    before = page.locator(CHART).count()
    assert cat["common.folded_hint"] in page.locator("body").inner_text()
    fold = page.locator('[data-testid="stExpander"]', has_text=cat["sdp.sparse_title"]).first
    fold.locator("summary").click()
    wait_for_app(page)
    assert_no_exception(page)
    show_answers(page)  # the section opens on its question: what answers it comes after
    assert page.locator(CHART).count() > before
    assert page.locator(".st-key-sdp_nw_h").count() == 1  # the section's own slider
    assert "open_sdp_sparse=true" in page.url  # the link keeps it open


def test_a_fragment_inside_a_fold_keeps_the_title_out(page):
    """The dot-product section is an ``st.fragment`` inside its fold: moving its slider reruns it
    alone, and its title stays in the fold's label, not drawn again as a heading."""
    title = load_catalogue("en")["k2a.dot_title"]
    page.open("kernels-to-attention", lang="en", k2a_steps="200", k2a_n="100")
    assert_no_exception(page)
    assert _headings(page, title) == 0
    slider = page.locator(".st-key-k2a_tau input[type=range]").first
    slider.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_timeout(300)
    wait_for_app(page)
    assert_no_exception(page)
    assert _headings(page, title) == 0
