"""The in-context regression page in Chromium: the learned-bandwidth chart gains points while the
unit trains, Pause stops it, and the page works in both languages."""

from __future__ import annotations

import re
import time

import pytest

from tests.e2e.conftest import assert_no_exception, wait_for_app
from ui.i18n import load_catalogue

pytestmark = pytest.mark.e2e

#: Long enough to act in the middle of training (several seconds with the live charts).
PARAMS = {"ic_steps": "2000", "ic_n": "128"}

POINTS = """(name) => {
  const plot = document.querySelector('[data-testid="stPlotlyChart"] .js-plotly-plot');
  if (!plot || !plot._fullData) return -1;
  const trace = plot._fullData.find(t => t.name === name);
  return trace && trace.x ? trace.x.length : -1;
}"""


def _button(page, name: str):
    return page.locator(f".st-key-ic_btn_{name} button")


def _running(page) -> bool:
    pause = _button(page, "pause")
    return pause.count() == 1 and pause.is_enabled()


def _wait_for(predicate, timeout_s: float, page) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        page.wait_for_timeout(100)
    raise AssertionError("condition not met in time")


def _steps_done(page) -> int:
    text = page.locator('[data-testid="stProgress"]').first.inner_text()
    match = re.search(r"(\d+)\s*/\s*2000", text)
    return int(match.group(1)) if match else -1


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_train_the_bandwidth_chart_gains_points_then_pause(page, lang):
    cat = load_catalogue(lang)
    page.open("in-context", lang=lang, **PARAMS)
    assert_no_exception(page)
    assert page.locator("h1").first.inner_text() == cat["ic.title"]
    name = cat["ic.legend_attention"]
    # the axes and reference lines are there, no curve yet (Plotly may draw a moment after the run)
    _wait_for(lambda: page.evaluate(POINTS, name) == 0, 30, page)
    _button(page, "train").click()
    _wait_for(lambda: page.evaluate(POINTS, name) >= 5, 90, page)
    first = page.evaluate(POINTS, name)
    _wait_for(lambda: page.evaluate(POINTS, name) > first + 5, 60, page)  # ... and keeps gaining
    assert _running(page)

    _button(page, "pause").click()
    _wait_for(lambda: not _running(page) and _button(page, "train").is_enabled(), 60, page)
    wait_for_app(page)
    paused_at = _steps_done(page)
    assert 0 < paused_at < 2000
    page.wait_for_timeout(1500)
    assert _steps_done(page) == paused_at  # nothing trains while paused
    assert page.evaluate(POINTS, name) == paused_at + 1  # the curve starts at step 0
    assert_no_exception(page)
