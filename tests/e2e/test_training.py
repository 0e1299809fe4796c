"""The training page in Chromium: charts before Train, live loss points, Pause and leaving stop it."""

from __future__ import annotations

import re
import time

import pytest

from tests.e2e.conftest import assert_no_exception, wait_for_app

pytestmark = pytest.mark.e2e

#: Long enough to act in the middle of training (about 10 s), short enough for a test.
PARAMS = {"lang": "en", "tr_epochs": "30", "tr_n_train": "512"}
#: About three times slower per epoch, so that a few seconds away would show as many epochs.
SLOW = {"lang": "en", "tr_epochs": "40", "tr_n_train": "1024", "tr_d_model": "128"}

#: Points of the loss chart's validation curve (the trace named by the argument), -1 before it is drawn.
VAL_POINTS = """(name) => {
  for (const plot of document.querySelectorAll('[data-testid="stPlotlyChart"] .js-plotly-plot')) {
    const trace = (plot._fullData || []).find(t => t.name === name);
    if (trace) return trace.x ? trace.x.length : -1;
  }
  return -1;
}"""
#: [{title, names, types}] of every Plotly chart drawn in the page (rendered by plotly.js; Streamlit's
#: theme wraps titles in <b>).
DRAWN_CHARTS = """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"] .js-plotly-plot')]
  .filter(p => p._fullData && p._fullLayout && p.querySelector('.main-svg'))
  .map(p => ({
    title: ((p._fullLayout.title || {}).text || '').replace(/<[^>]+>/g, ''),
    names: p._fullData.map(t => String(t.name)),
    types: p._fullData.map(t => t.type),
    height: p.querySelector('.main-svg').getBoundingClientRect().height,
  }))"""


def _points(page, name: str = "validation") -> int:
    return page.evaluate(VAL_POINTS, name)


def _epoch(page) -> int:
    text = page.locator('[data-testid="stProgress"]').first.inner_text()
    match = re.search(r"Epoch (\d+) of", text)
    return int(match.group(1)) if match else -1


def _steps(page) -> int:
    """Optimiser steps taken so far, from the status line (read from the shared run object)."""
    text = page.locator('[data-testid="stMain"]').inner_text()
    match = re.search(r"step (\d+) ·", text)
    return int(match.group(1)) if match else -1


def _redraw(page) -> None:
    """Make the page run again without training (move the replay slider one epoch back)."""
    page.locator('.st-key-tr_replay input[type="range"]').focus()
    page.keyboard.press("ArrowLeft")
    page.wait_for_timeout(500)
    _settled(page)


def _button(page, name: str):
    return page.locator(f".st-key-tr_btn_{name} button")


def _running(page) -> bool:
    # While a model trains the page is drawn with Pause enabled and Train disabled (this app shows
    # no Streamlit status widget, so that is the observable sign of a run in flight).
    pause = _button(page, "pause")
    return pause.count() == 1 and pause.is_enabled()


def _settled(page) -> None:
    """Wait until the page is drawn in a resting state (not training), then for the app to finish."""
    _wait_for(lambda: not _running(page) and _button(page, "train").is_enabled(), 120, page)
    wait_for_app(page)


def _wait_for(predicate, timeout_s: float, page) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        page.wait_for_timeout(100)
    raise AssertionError("condition not met in time")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_charts_are_drawn_before_train_is_pressed(page, lang):
    """Issue 10.1: the data, the untrained model's maps and the loss axes with baselines, drawn."""
    from ui.i18n import load_catalogue

    cat = load_catalogue(lang)
    page.open("training", lang=lang)
    assert_no_exception(page)
    titles = {
        "walks": cat["tr.walks_title"].format(k=5, seed=0),
        "loss": cat["tr.loss_title"],
        "attention": cat["tr.attention_title"].format(epoch=0, layer=1),
    }

    def drawn() -> dict[str, dict]:
        return {c["title"]: c for c in page.evaluate(DRAWN_CHARTS)}

    _wait_for(lambda: set(titles.values()) <= set(drawn()), 30, page)
    charts = {name: drawn()[title] for name, title in titles.items()}
    assert cat["tr.legend_walks"] in charts["walks"]["names"]
    assert cat["tr.legend_next"] in charts["walks"]["names"]
    baselines = {cat["tr.legend_mean"], cat["tr.legend_last_value"], cat["tr.legend_optimum"]}
    assert baselines <= set(charts["loss"]["names"])
    assert charts["attention"]["types"].count("heatmap") == 4
    assert _points(page, cat["tr.legend_val"]) == 0  # empty loss axes: no run yet
    assert _button(page, "train").is_enabled()
    assert not _button(page, "pause").is_enabled()
    # every chart is really drawn at a readable size, not an empty placeholder
    assert min(c["height"] for c in charts.values()) > 300, charts


def test_training_live_pause_resume(page):
    page.open("training", **PARAMS)
    assert_no_exception(page)
    _button(page, "train").click()
    _wait_for(lambda: _points(page) >= 3, 90, page)  # epoch 0, 1, 2 drawn while it trains
    first = _points(page)
    _wait_for(lambda: _points(page) > first + 1, 60, page)  # ... and the chart keeps gaining points
    assert _running(page)

    _button(page, "pause").click()
    clicked = time.monotonic()
    _settled(page)
    stop_s = time.monotonic() - clicked
    paused_at, steps_at = _epoch(page), _steps(page)
    assert 0 < paused_at < 30
    assert stop_s < 10, stop_s  # a rerun of the page, not the rest of the run
    page.wait_for_timeout(2000)
    _redraw(page)
    # The interrupted loop ended within the batch it was in, before the paused page was drawn,
    # and nothing trains while paused.
    assert _steps(page) == steps_at
    assert _epoch(page) == paused_at
    assert _button(page, "train").is_enabled()
    assert page.get_by_role("heading", name="The post's findings, measured on this model").count() == 1

    _button(page, "train").click()  # resume
    page.wait_for_selector("text=Epoch 30 of 30", timeout=120_000)
    _settled(page)
    assert _points(page) == 31
    assert page.get_by_role("heading", name="The post's findings, measured on this model").count() == 1
    assert_no_exception(page)


def test_leaving_the_page_ends_the_loop(page):
    page.open("training", **SLOW)
    _button(page, "train").click()
    _wait_for(lambda: _epoch(page) >= 2, 90, page)
    t0, e0 = time.monotonic(), _epoch(page)
    _wait_for(lambda: _epoch(page) >= e0 + 2, 90, page)
    left_at = _epoch(page)  # read before leaving: the progress bar goes with the page
    rate = (left_at - e0) / (time.monotonic() - t0)  # epochs per second, as the browser draws them
    page.locator('[data-testid="stSidebarNav"]').get_by_text("Start here").click()
    left = time.monotonic()
    page.wait_for_selector("h1:has-text('Attention is kernel regression')", timeout=60_000)
    page.wait_for_timeout(8000)  # a loop left running would train on, many epochs in 8 s
    page.locator('[data-testid="stSidebarNav"]').get_by_text("Train a toy Transformer").click()
    page.wait_for_selector("h1:has-text('Train a toy Transformer')", timeout=60_000)
    away = time.monotonic() - left
    _settled(page)  # shown paused, not running on
    back_at, steps_back = _epoch(page), _steps(page)
    # The browser may draw a little behind the server (a couple of epochs on a busy machine); a loop
    # that kept running while we were away would have gone on for rate * away epochs.
    assert left_at <= back_at, (left_at, back_at)
    assert back_at - left_at < max(3.0, 0.5 * rate * away), (left_at, back_at, rate, away)
    page.wait_for_timeout(2000)
    _redraw(page)
    assert _steps(page) == steps_back  # and nothing trains the model in the background
    assert_no_exception(page)
