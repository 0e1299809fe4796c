"""Live sliders in a real browser: drag each one with the mouse (and one with a finger at 390x844).

While the button is down the chart must change under the hand (frames drawn on the overlay over
the chart, its title following the value) and no script run may start; on release, one run, the
value in the URL, the overlays gone, and the Python figure saying what the last frame said.
"""

from __future__ import annotations

import contextlib

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.e2e.conftest import (
    DOCK_SETTLED,
    RUN_LOG,
    RUN_TIMEOUT_MS,
    assert_no_exception,
    show_answers,
    wait_for_app,
)
from ui.i18n import load_catalogue

pytestmark = pytest.mark.e2e

#: Counts the script runs started from now on: ``window.__runs``, from the server's messages
#: (``RUN_LOG``, installed in every page by the ``page`` fixture; the app root's script state can
#: miss a quick run, or read two runs back to back as one).
_COUNT_RUNS = """() => {
  const from = performance.now();
  Object.defineProperty(window, '__runs', {
    configurable: true,
    get: () => window.__wsRuns.started.filter((t) => t >= from).length,
  });
}"""

#: The chart's overlay: its pixels' checksum (0: nothing drawn) and the title a reader sees.
_OVERLAY = """(key) => {
  const box = document.querySelector('.st-key-' + key);
  const canvas = box && box.querySelector('canvas.live-overlay');
  if (!canvas) return null;
  const px = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  let sum = 0;
  for (let i = 0; i < px.length; i += 7) sum = (sum * 31 + px[i]) % 1000000007;
  const titles = [...box.querySelectorAll('.gtitle')]
    .filter((t) => getComputedStyle(t).visibility !== 'hidden');
  return {sum, title: titles.length ? titles[titles.length - 1].textContent : null};
}"""

#: Mark the chart's element and return its drawing count (``data-rev``, ``static/chart/chart.js``).
_KEEP = """(key) => { const gd = document.querySelector('.st-key-' + key + ' .js-plotly-plot');
  gd.__keptMark = true; return gd.dataset.rev; }"""
#: Whether the chart's element is the one marked, and its drawing count now.
_KEPT = """(key) => { const gd = document.querySelector('.st-key-' + key + ' .js-plotly-plot');
  return [gd.__keptMark === true, gd.dataset.rev]; }"""

#: The live map layer over a heatmap chart: its canvas size and the chart's (Q, N) cells, as
#: [columns, rows]; null without a layer.
_MAP = """(key) => {
  const canvas = document.querySelector('.st-key-' + key + ' .live-map canvas');
  const gd = document.querySelector('.st-key-' + key + ' .js-plotly-plot');
  const z = gd._fullData.find((t) => t.type === 'heatmap').z;
  return canvas && {canvas: [canvas.width, canvas.height], cells: [z[0].length, z.length]};
}"""

#: While the button is down: keep the alpha of the chart's overlay canvas (what it drew over the
#: chart's map: the row peaks) and say whether it is stacked above the map layer.
_HOLD_PEAKS = """(key) => {
  const box = document.querySelector('.st-key-' + key);
  const c = box.querySelector('canvas.live-overlay:not(.live-map canvas)');
  const map = box.querySelector('.live-map');
  if (!c || !map) return null;
  window.__peaksHeld = {w: c.width, scale: c.width / c.getBoundingClientRect().width,
    alpha: c.getContext('2d').getImageData(0, 0, c.width, c.height).data};
  return {above: Number(getComputedStyle(c).zIndex) > Number(getComputedStyle(map).zIndex)};
}"""

#: After the release, Python's "peak" markers (one per row's largest weight) of the same value: how
#: many the held overlay drew, i.e. has a drawn pixel within 5 px of the marker's centre.
_PEAKS_DRAWN = """(key) => {
  const gd = document.querySelector('.st-key-' + key + ' .js-plotly-plot');
  const i = gd._fullData.findIndex((t) => t.meta === 'peak');
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, h = window.__peaksHeld;
  const points = gd.calcdata[i].filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y));
  let hit = 0;
  for (const p of points) {  // calcdata: category indices
    const X = xa._offset + xa.c2p(p.x), Y = ya._offset + ya.c2p(p.y);
    let found = false;
    for (let dy = -5; dy <= 5 && !found; dy++) {
      for (let dx = -5; dx <= 5 && !found; dx++) {
        const k = Math.round((Y + dy) * h.scale) * h.w + Math.round((X + dx) * h.scale);
        found = h.alpha[4 * k + 3] > 0;
      }
    }
    hit += found;
  }
  return {markers: points.length, hit};
}"""

#: The colour bar's tick labels a reader sees (the chart's own, or the live clones over them).
_BAR_LABELS = """(key) => [...document.querySelectorAll('.st-key-' + key + ' g.colorbar text')]
  .filter((t) => !t.closest('[class*="title"]') && getComputedStyle(t).visibility !== 'hidden')
  .map((t) => t.textContent.trim()).filter((s) => s !== '').sort()"""

_TITLE = """(key) => document.querySelector('.st-key-' + key + ' .gtitle')?.textContent ?? null"""

#: A chart holding its new figure back (``static/chart/chart.js``: far from the window, under a live
#: overlay): whether it waits to draw (``data-pending``), has its overlay, and its drawing count;
#: null once it is drawn and its overlay gone.
_HELD = """(key) => {
  const box = document.querySelector('.st-key-' + key);
  const gd = box.querySelector('.js-plotly-plot');
  const overlay = !!box.querySelector('canvas.live-overlay');
  if (!gd.dataset.pending && !overlay) return null;
  return {pending: !!gd.dataset.pending, overlay, rev: gd.dataset.rev};
}"""

#: The keys of the charts that still have a live overlay.
_OVERLAID = """() => [...new Set([...document.querySelectorAll('canvas.live-overlay')]
  .map((c) => c.parentElement.className.match(/st-key-(\\S+)/)?.[1]).filter(Boolean))]"""


def to_place(page, key: str) -> None:
    """Scroll the live slider ``key``'s place to the middle of the window and wait until the slider
    is in it (not kept at the window's bottom: the dock)."""
    page.evaluate(f"() => document.querySelector('.st-key-live_{key}').scrollIntoView({{block: 'center'}})")
    page.wait_for_function(
        f"() => !document.querySelector('.attn-live.st-key-{key}').classList.contains('docked')",
        timeout=10_000,
    )


def draw_held(page) -> None:
    """Bring every chart that still has a live overlay into view, one after the other, and wait until
    it has drawn its new figure and its overlay has gone."""
    for key in page.evaluate(_OVERLAID):
        page.evaluate(f"() => document.querySelector('.st-key-{key}').scrollIntoView({{block: 'center'}})")
        page.wait_for_function(f"() => ({_HELD})('{key}') === null", timeout=RUN_TIMEOUT_MS)


#: The English catalogue: a slider's accessible name is its label.
_EN = load_catalogue("en")

#: (page, slider's accessible name, link parameters, URL key, chart it redraws, from, to, value at `to`)
SLIDERS = [
    ("kernel-regression", _EN["kr.bandwidth"], {}, "kr_h", "kr_fig_fit", 0.53, 0.2),
    ("kernel-regression", _EN["kr.query"], {}, "kr_xq", "kr_fig_row", 0.58, 0.2),
    ("kernels-to-attention", _EN["k2a.h"], {}, "k2a_h", "k2a_fig1", 0.5, 0.05),
    ("kernels-to-attention", _EN["k2a.x0"], {}, "k2a_x0", "k2a_fig1", 0.58, 0.2),
    ("scaled-dot-product", _EN["sdp.dk"], {}, "sdp_dk", "sdp_fig_pipeline", 0.45, 1.0),
    (
        "scaled-dot-product",
        _EN["sdp.temperature"],
        {"sdp_scale": "custom"},
        "sdp_temp",
        "sdp_fig_pipeline",
        0.55,
        0.05,
    ),
]


def _slider(page, name: str):
    slider = page.get_by_role("slider", name=name, exact=True)
    slider.wait_for(timeout=RUN_TIMEOUT_MS)
    return slider


def _x(box: dict, fraction: float) -> float:
    """The page x of a fraction of a range input's track (the thumb is ~16 px wide)."""
    return box["x"] + 8 + (box["width"] - 16) * fraction


@pytest.mark.parametrize(
    ("path", "name", "params", "key", "chart", "start", "end"), SLIDERS, ids=[s[3] for s in SLIDERS]
)
def test_dragging_redraws_the_chart_before_release_and_commits_once(
    page, path, name, params, key, chart, start, end
):
    page.open(path, lang="en", folded=True, **params)
    slider = _slider(page, name)
    to_place(page, key)  # the slider in its place mid-window (the answers scrolled the page down)
    page.locator(f".st-key-{chart} .js-plotly-plot").wait_for(timeout=RUN_TIMEOUT_MS)
    wait_for_app(page)
    python_title = page.evaluate(_TITLE, chart)
    rev_before = page.evaluate(_KEEP, chart)  # the chart element (ui/house_chart.py), marked
    box = slider.bounding_box()
    y = box["y"] + box["height"] / 2
    page.evaluate(_COUNT_RUNS)
    page.mouse.move(_x(box, start), y)
    page.mouse.down()
    seen = []
    for i in range(1, 21):
        page.mouse.move(_x(box, start + (end - start) * i / 20), y)
        if i in (10, 20):
            page.wait_for_function(
                "(key) => (window.__liveStats?.frames || []).some((f) => f.key === key)",
                arg=key,
                timeout=10_000,
            )
            page.wait_for_timeout(100)  # the frame of the last move
            seen.append(page.evaluate(_OVERLAY, chart))
    assert page.evaluate("() => window.__runs") == 0  # nothing ran while the button was down
    if key == "kr_h":  # the weight map: one canvas pixel per cell, scaled by CSS (cheap frames)
        layer = page.evaluate(_MAP, "kr_fig_matrix")
        assert layer is not None, "no live map over the weight matrix"
        assert layer["canvas"] == layer["cells"], layer
        held = page.evaluate(_HOLD_PEAKS, "kr_fig_matrix")  # its row peaks are drawn over the map
        assert held is not None, "no overlay canvas or map layer over the weight matrix"
        assert held["above"], "the overlay's peaks are under the map layer"
    assert all(s is not None for s in seen), "no overlay over the chart during the drag"
    bar_charts = [chart, "kr_fig_matrix"] if key == "kr_h" else [chart]
    bars_held = {c: page.evaluate(_BAR_LABELS, c) for c in bar_charts}
    assert seen[0]["sum"] != seen[1]["sum"]  # the chart moved with the hand
    if python_title is not None and seen[1]["title"] is not None:
        assert seen[1]["title"] != python_title  # the title follows the value
    value = page.evaluate("(key) => window.__liveStats.frames.filter((f) => f.key === key).at(-1).value", key)
    page.mouse.up()
    wait_for_app(page)
    assert page.evaluate("() => window.__runs") == 1  # one run, on release
    expected = str(int(value)) if float(value).is_integer() else str(value)
    assert f"{key}={expected}" in page.url
    if key == "kr_h":  # the map, ~2,700 px below the window, holds its new figure under its overlay
        map_rev = page.evaluate(_KEEP, "kr_fig_matrix")
        page.wait_for_function(f"() => ({_HELD})('kr_fig_fit') === null", timeout=RUN_TIMEOUT_MS)
        page.wait_for_function(f"() => ({_HELD})('kr_fig_matrix')?.pending", timeout=RUN_TIMEOUT_MS)
        page.wait_for_timeout(500)  # and it stays so
        assert page.evaluate(_HELD, "kr_fig_matrix") == {"pending": True, "overlay": True, "rev": map_rev}
    draw_held(page)  # brought near the window, each chart draws its figure and its overlay goes
    page.wait_for_function(  # no overlay left anywhere on the page (the map layers included)
        "() => !document.querySelector('canvas.live-overlay, .live-map')", timeout=RUN_TIMEOUT_MS
    )
    kept, rev_after = page.evaluate(_KEPT, chart)
    assert kept, "the chart element was replaced: a kept chart draws the new figure into itself"
    assert int(rev_after) == int(rev_before) + 1, (rev_before, rev_after)  # drawn once, by Plotly.react
    if seen[1]["title"] is not None:
        assert (
            page.evaluate(_TITLE, chart) == seen[1]["title"]
        )  # the Python figure says what the last frame said
    if key == "kr_h":  # the peaks drawn while held are where Python puts them for the same h
        peaks = page.evaluate(_PEAKS_DRAWN, "kr_fig_matrix")
        assert peaks["markers"] > 0, peaks
        assert peaks["hit"] >= 0.9 * peaks["markers"], peaks
    # each colour bar said while held what Python's bar says for the same value (no jump on release)
    for c, held_labels in bars_held.items():
        with contextlib.suppress(PlaywrightTimeout):  # on a timeout the assertion says what differs
            page.wait_for_function(
                f"([key, want]) => JSON.stringify(({_BAR_LABELS})(key)) === JSON.stringify(want)",
                arg=[c, held_labels],
                timeout=10_000,
            )
        assert page.evaluate(_BAR_LABELS, c) == held_labels, c
    assert_no_exception(page)


#: Where the weight row lies under the window: (its top - the window's bottom, the window's height).
_BELOW = """() => [document.querySelector('.st-key-kr_fig_row').getBoundingClientRect().top - innerHeight,
  innerHeight]"""


def test_a_chart_just_under_the_window_draws_only_once_scrolled_into_it(page):
    """With the fit mid-window, the weight row starts a few hundred px under the window, less than half
    a window away. A release of h gives the row its new figure; under its overlay (which shows that
    figure) the row holds it back until it is in the window itself, then draws it once and its
    overlay goes (``static/chart/chart.js``): a release draws only the charts that are seen."""
    page.open("kernel-regression", lang="en", folded=True)
    slider = _slider(page, _EN["kr.bandwidth"])
    page.evaluate("() => document.querySelector('.st-key-kr_fig_fit').scrollIntoView({block: 'center'})")
    page.locator(".st-key-kr_fig_row .js-plotly-plot .main-svg").first.wait_for(timeout=RUN_TIMEOUT_MS)
    wait_for_app(page)
    page.wait_for_function(DOCK_SETTLED, arg="kr_h", timeout=10_000)  # the slider where it stays
    gap, height = page.evaluate(_BELOW)
    assert 0 < gap < height / 2, f"the row is not just under the window ({gap} px below it): no test"
    row_rev = page.evaluate(_KEEP, "kr_fig_row")
    box = slider.bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(_x(box, 0.53), y)
    page.mouse.down()
    for i in range(1, 21):
        page.mouse.move(_x(box, 0.53 - 0.33 * i / 20), y)
        page.wait_for_timeout(16)
    page.wait_for_function("() => (window.__liveStats?.frames || []).length > 0", timeout=10_000)
    page.mouse.up()
    wait_for_app(page)
    page.wait_for_function(f"() => ({_HELD})('kr_fig_fit') === null", timeout=RUN_TIMEOUT_MS)  # fit drawn
    page.wait_for_function(f"() => ({_HELD})('kr_fig_row')?.pending", timeout=RUN_TIMEOUT_MS)
    page.wait_for_timeout(500)  # and it stays so
    assert page.evaluate(_HELD, "kr_fig_row") == {"pending": True, "overlay": True, "rev": row_rev}
    page.evaluate("() => document.querySelector('.st-key-kr_fig_row').scrollIntoView({block: 'center'})")
    page.wait_for_function(f"() => ({_HELD})('kr_fig_row') === null", timeout=RUN_TIMEOUT_MS)
    assert int(page.evaluate(_KEEP, "kr_fig_row")) == int(row_rev) + 1  # drawn once, once seen
    assert "kr_h=" in page.url
    assert_no_exception(page)


def test_the_keyboard_moves_a_live_slider_one_step_and_commits(page):
    page.open("kernel-regression", lang="en", folded=True)
    slider = _slider(page, _EN["kr.bandwidth"])
    wait_for_app(page)
    to_place(page, "kr_h")  # the fit in view (a chart far from the window draws when it comes near)
    page.evaluate(_COUNT_RUNS)
    slider.focus()
    slider.press("ArrowRight")
    wait_for_app(page)
    assert "kr_h=0.33" in page.url
    assert page.evaluate("() => window.__runs") == 1
    page.wait_for_function(f"() => ({_TITLE})('kr_fig_fit').includes('h = 0.33)')", timeout=RUN_TIMEOUT_MS)


def test_the_accessibility_script_stays_still_while_a_slider_is_dragged(page):
    """assets/a11y.js looks at the page again after a change (a look reads the scroll widths of its
    tables and formulas: a layout of its own), but not after a live slider's frames, which change
    only the charts' SVG and the slider itself; after the release's re-render it looks again."""
    page.open("kernel-regression", lang="en", folded=True)
    slider = _slider(page, _EN["kr.bandwidth"])
    to_place(page, "kr_h")
    page.locator(".st-key-kr_fig_fit .js-plotly-plot").wait_for(timeout=RUN_TIMEOUT_MS)
    wait_for_app(page)
    page.wait_for_selector("#attn-skip-controls", state="attached", timeout=RUN_TIMEOUT_MS)
    looks = "() => window.__attnA11y.looks"
    frames = "() => (window.__liveStats?.frames || []).filter((f) => f.key === 'kr_h').length"
    box = slider.bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(_x(box, 0.5), y)
    page.mouse.down()
    page.mouse.move(_x(box, 0.48), y)  # the first frame adds the overlays (a change a11y.js looks at)
    page.wait_for_function(f"() => ({frames})() > 0", timeout=10_000)
    page.wait_for_timeout(200)
    looks_before, frames_before = page.evaluate(looks), page.evaluate(frames)
    for i in range(1, 21):
        page.mouse.move(_x(box, 0.48 - 0.3 * i / 20), y)
        page.wait_for_timeout(30)
    page.wait_for_timeout(200)  # the last frame
    drawn = page.evaluate(frames) - frames_before
    assert drawn >= 10, f"only {drawn} frames drawn over 20 moves"
    assert page.evaluate(looks) - looks_before <= 1, "a11y.js looked at the page on the drag's frames"
    page.mouse.up()
    wait_for_app(page)
    page.wait_for_function(f"(n) => ({looks})() > n", arg=looks_before + 1, timeout=10_000)
    fit = page.locator('.st-key-kr_fig_fit [data-testid="stPlotlyChart"]')
    assert fit.get_attribute("role") == "figure"  # still named after the release's re-render


def test_a_finger_drags_the_bandwidth_on_a_phone(browser, app_url):
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    context.add_init_script(RUN_LOG)  # window.__runs (_COUNT_RUNS)
    page = context.new_page()
    try:
        page.goto(f"{app_url}/kernel-regression?lang=zh")
        wait_for_app(page)
        slider = page.locator('.attn-live input[type="range"][data-key="kr_h"]')
        slider.wait_for(timeout=RUN_TIMEOUT_MS)
        slider.scroll_into_view_if_needed()
        box = slider.bounding_box()
        assert box["width"] <= 390
        y = box["y"] + box["height"] / 2
        cdp = context.new_cdp_session(page)
        page.evaluate(_COUNT_RUNS)

        def touch(kind: str, x: float) -> None:
            points = [] if kind == "touchEnd" else [{"x": x, "y": y}]
            cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})

        start, end = _x(box, 0.53), _x(box, 0.9)
        touch("touchStart", start)
        for i in range(1, 16):
            touch("touchMove", start + (end - start) * i / 15)
        page.wait_for_function(
            "() => (window.__liveStats?.frames || []).some((f) => f.key === 'kr_h')", timeout=10_000
        )
        assert page.evaluate(_OVERLAY, "kr_fig_fit") is not None  # the fit moved under the finger
        assert page.evaluate("() => window.__runs") == 0
        touch("touchEnd", end)
        wait_for_app(page)
        assert "kr_h=" in page.url
        assert page.evaluate("() => window.__runs") == 1
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390  # no sideways scroll
        assert_no_exception(page)
    finally:
        context.close()


#: The note under the live slider ``key`` (shown while none of its charts is on the page), or None.
_ABSENT = """(key) => {
  const note = document.querySelector('.attn-live.st-key-' + key + ' .absent');
  return note && !note.hidden ? note.textContent : null;
}"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_live_slider_says_when_nothing_on_the_page_moves_with_it(page, lang):
    """Kernels -> attention draws its figures once their question is answered: before that, its
    sliders say that nothing here moves with them yet; once answered the note goes. Kernel
    regression's h, whose charts are on the page, says nothing."""
    note = load_catalogue(lang)["common.live_absent"]
    page.open("kernels-to-attention", lang=lang, folded=True, answered=False)
    for key in ("k2a_h", "k2a_x0"):
        page.wait_for_function(f"() => ({_ABSENT})('{key}') !== null", timeout=RUN_TIMEOUT_MS)
        assert page.evaluate(_ABSENT, key) == note
    show_answers(page)
    page.locator(".st-key-k2a_fig1 .js-plotly-plot").wait_for(timeout=RUN_TIMEOUT_MS)
    for key in ("k2a_h", "k2a_x0"):
        page.wait_for_function(f"() => ({_ABSENT})('{key}') === null", timeout=RUN_TIMEOUT_MS)
    page.open("kernel-regression", lang=lang, folded=True)
    page.locator(".st-key-kr_fig_fit .js-plotly-plot").wait_for(timeout=RUN_TIMEOUT_MS)
    page.wait_for_timeout(1500)  # past the note's delay (ABSENT_SHOW_MS in live.js)
    assert page.evaluate(_ABSENT, "kr_h") is None
    assert_no_exception(page)


#: The live slider ``key``: whether it is pinned at the window's bottom (the dock) and its box.
_DOCKED = """(key) => {
  const box = document.querySelector('.attn-live.st-key-' + key);
  const bar = document.querySelector('.attn-live-dock');
  const r = box.getBoundingClientRect();
  return {docked: box.classList.contains('docked'), top: r.top, bottom: r.bottom, left: r.left,
    right: r.right, bar: !!bar && !bar.hidden, position: getComputedStyle(box).position};
}"""

#: The chart's box in the window (top and bottom, px).
_BOX = """(key) => { const r = document.querySelector('.st-key-' + key).getBoundingClientRect();
  return {top: r.top, bottom: r.bottom}; }"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_slider_whose_place_scrolled_away_is_kept_in_view_and_moves_the_map(page, lang):
    """Scrolled down to the weight map, h and x* are kept at the window's bottom over their columns
    (the dock): dragging h there redraws the map in view, the run and the URL follow on release,
    and scrolled back up the sliders are in their places again."""
    page.open("kernel-regression", lang=lang, folded=True)
    chart = page.locator(".st-key-kr_fig_matrix")
    chart.locator(".js-plotly-plot").wait_for(timeout=RUN_TIMEOUT_MS)
    page.evaluate("() => document.querySelector('.st-key-kr_fig_matrix').scrollIntoView({block: 'center'})")
    for key in ("kr_h", "kr_xq"):
        page.wait_for_function(f"() => ({_DOCKED})('{key}').docked", timeout=10_000)
    h, xq = page.evaluate(_DOCKED, "kr_h"), page.evaluate(_DOCKED, "kr_xq")
    assert h["position"] == "fixed", h
    assert h["bar"], h
    assert 0 < h["top"], h  # in the window, at its bottom
    assert h["bottom"] <= 1000, h
    assert abs(h["top"] - xq["top"]) < 2, (h, xq)  # side by side, each over its column
    assert h["right"] <= xq["left"], (h, xq)
    box_map = page.evaluate(_BOX, "kr_fig_matrix")
    assert box_map["top"] < h["top"], (box_map, h)  # the map shows above the dock
    wait_for_app(page)
    slider = page.locator('.attn-live input[type="range"][data-key="kr_h"]')
    box = slider.bounding_box()
    y = box["y"] + box["height"] / 2
    page.evaluate(_COUNT_RUNS)
    page.mouse.move(_x(box, 0.53), y)
    page.mouse.down()
    for i in range(1, 16):
        page.mouse.move(_x(box, 0.53 + (0.2 - 0.53) * i / 15), y)
    page.wait_for_function(
        "() => (window.__liveStats?.frames || []).some((f) => f.key === 'kr_h')", timeout=10_000
    )
    page.wait_for_timeout(100)
    assert page.evaluate(_MAP, "kr_fig_matrix") is not None, "no live map over the weight matrix"
    assert page.evaluate("() => window.__runs") == 0
    assert page.evaluate(_DOCKED, "kr_h")["docked"]  # not moved while held
    value = page.evaluate("() => window.__liveStats.frames.filter((f) => f.key === 'kr_h').at(-1).value")
    map_rev = page.evaluate(_KEEP, "kr_fig_matrix")
    page.mouse.up()
    wait_for_app(page)
    assert page.evaluate("() => window.__runs") == 1
    expected = str(int(value)) if float(value).is_integer() else str(value)
    assert f"kr_h={expected}" in page.url
    # the map in view draws its new figure; the fit, far above, holds its own under its overlay
    page.wait_for_function(
        "() => !document.querySelector('.st-key-kr_fig_matrix .live-map')", timeout=RUN_TIMEOUT_MS
    )
    page.wait_for_function(f"() => ({_HELD})('kr_fig_matrix') === null", timeout=RUN_TIMEOUT_MS)
    assert page.evaluate(_KEPT, "kr_fig_matrix") == [True, str(int(map_rev) + 1)]
    assert page.evaluate(_HELD, "kr_fig_fit")["overlay"]
    assert page.evaluate(_DOCKED, "kr_h")["docked"]  # still down here: still kept in view
    page.evaluate("() => document.querySelector('[data-testid=stMain] h1').scrollIntoView()")
    page.wait_for_function(
        f"() => !({_DOCKED})('kr_h').docked && !({_DOCKED})('kr_xq').docked", timeout=10_000
    )
    assert not page.evaluate(_DOCKED, "kr_h")["bar"]
    assert page.evaluate(_DOCKED, "kr_h")["position"] == "static"
    assert_no_exception(page)
