"""The induction-heads page in Chromium, in both languages: it loads with the shipped default run
drawn (the heads' maps, and the curves once the first question is shown), a control changes the
maps, Step trains a tiny run, and no exception reaches the page."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import assert_no_exception, wait_for_app
from ui.i18n import load_catalogue

pytestmark = pytest.mark.e2e

#: A run that trains in a second or two.
TINY = {"ih_len": "16", "ih_period": "4", "ih_vocab": "8", "ih_steps": "100"}

DRAWN = """(key) => {
  const box = document.querySelector(`.st-key-${key} .js-plotly-plot`)
    || [...document.querySelectorAll('[class*="st-key-' + key + '"] .js-plotly-plot')][0];
  return !!(box && box._fullData && box._fullData.length > 0 && box.querySelector('.main-svg'));
}"""


def _wait_drawn(page, *keys: str) -> None:
    for key in keys:
        page.wait_for_function(DRAWN, arg=key, timeout=60_000)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_loads_draws_and_trains(page, lang):
    cat = load_catalogue(lang)
    page.open("induction-heads", lang=lang, **TINY)
    assert_no_exception(page)
    assert page.locator("h1").first.inner_text() == cat["ih.title"]
    # page.open pressed "Show me" on every question: the curves and the ablation are drawn too
    _wait_drawn(page, "ih_sequence_fig", "ih_heads_fig", "ih_curves_fig_1", "ih_ablate_fig", "ih_kernel_fig")
    # a control: another held-out sequence redraws the maps, without an exception
    slider = page.locator(".st-key-ih_seq input[type=range]").first
    slider.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => new URL(location.href).searchParams.get('ih_seq') === '1'")
    wait_for_app(page)
    _wait_drawn(page, "ih_heads_fig")
    assert_no_exception(page)
    page.locator(".st-key-ih_btn_step button").click()
    wait_for_app(page)
    progress = page.locator('[data-testid="stProgress"]').first
    assert "20 / 100" in progress.inner_text()
    assert_no_exception(page)
