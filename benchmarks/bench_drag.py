"""Drag and see (issue 25): every live slider dragged in Chromium, next to the release-only slider.

``python -m benchmarks drag [--drags N] [--moves M] [--json PATH]`` (``make bench-drag``; part of
``make bench``). Starts ``streamlit run app.py`` on a free 127.0.0.1 port and headless Chromium
(``$CHROMIUM_PATH`` or ``/usr/bin/chromium``) on the same machine. For each live slider
(``ui.live_slider``) the page is opened on its default view with its questions answered ("Show
me": kernels -> attention draws its three figures only then) and the slider is dragged ``--drags``
times (default 3, back and forth) with ``--moves`` mouse moves (default 60, one every 16 ms: a
hand), then released. A live slider is dragged where a learner watches it: its first chart (the
fit, the attention pipeline, ...) mid-window, the slider in its place or, where that place has
scrolled above the window, at the window's bottom (the dock); a release-only slider in its place,
mid-window. Measured in the page:

- frames drawn during the drag (``window.__liveStats``, static/live/live.js) and the time from a
  move to its frame: from the range input's ``input`` event to the end of the drawing in the
  animation frame that paints it (p50 / p95 over every frame of every drag);
- script runs started while the button is down (must be 0) and after the release (1), counted from
  the server's own messages (``tests.e2e.conftest.RUN_LOG``: a ``new_session`` message starts a run,
  ``script_finished`` ends it), not from the app root's ``data-test-script-state``, which misses a
  run whose messages the page handled before React rendered (the reference page's ~20 ms runs);
- release -> settled: from the ``pointerup`` to the latest of: the script's run finishing (the app
  root's state back to ``notRunning``, or for a run that never showed ``running`` there, its
  ``script_finished`` message), every
  chart of the slider that Python redrew showing its new figure (Streamlit draws a changed figure
  into a new chart element; an unchanged one keeps its element and is not waited for), and for a
  live slider its last overlay over the window gone; each stamped on the animation frame that
  paints it. A live slider's chart out of the window holds its new figure back under its overlay,
  which shows that figure, until it comes into the window (``static/chart/chart.js``): such charts
  are counted ("held back out of view"), not waited for;
- Plotly drawings per redrawn chart (its ``plotly_afterplot`` events): Streamlit 1.67 draws a
  changed figure into a new chart element, then draws it again once the element's theme effect has
  run (a new copy of the figure), so each redrawn chart costs two full Plotly drawings.

Next to each, in the same run, today's release-only step: the same page with ``?live=0``
(``st.select_slider`` / ``st.slider`` of ``ui.controls``, the path before live sliders), the same drag:
chart changes during the drag (DOM mutations in the chart; none), runs during the drag, and release
-> settled (the same criterion). Each path has its own fresh server (the same cold
caches) and their drags alternate, so a drift of the machine's load falls on both.

Also in the same run, the floor: ``benchmarks/reference_page.py`` (one ``st.slider``, one 200-point
``st.plotly_chart``, nothing else; on a third server) dragged and released the same way, ``--drags``
times before the sliders and as many after them. It is what a release costs Streamlit and Plotly
alone on this machine: a page of the app cannot settle faster than that. And the same page with
``FLOOR_ELEMENTS`` elements more under the chart that the slider does not change (``?elements=N``:
folded expanders, captions, download buttons, paragraphs, the kinds a page has under its charts),
the same way: what a release costs for a page's elements alone, per element.

Targets (issue 25): frame p95 <= 33 ms on every live slider (aim 16), 0 runs while the button is
down and 1 on release, release -> settled p50 <= 250 ms. "ratio": the live release -> settled p50
over the release-only one of the same run; the 250 ms were 1.25 times the release-only step where
the issue was filed (printed, not the pass/fail). The browser, the server and this script
share the machine: the load average is printed with the results.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from benchmarks.bench_browser import (
    CHROMIUM_FLAGS,
    QUIET_MS,
    REFERENCE,
    ROOT,
    VIEWPORT,
    _percentile,
    streamlit_server,
)
from tests.e2e.conftest import DOCK_SETTLED, RUN_LOG, chromium_path, show_answers

#: (page, link parameters, URL key, from, to: fractions of the track, the charts of the page (its
#: questions answered) that the slider redraws: each must be drawn before the drag)
SLIDERS = [
    ("kernel-regression", {}, "kr_h", 0.53, 0.15, ("kr_fig_fit", "kr_fig_row", "kr_fig_matrix")),
    ("kernel-regression", {}, "kr_xq", 0.58, 0.2, ("kr_fig_fit", "kr_fig_row")),
    ("kernels-to-attention", {}, "k2a_h", 0.5, 0.05, ("k2a_fig1", "k2a_fig2", "k2a_fig_fit", "k2a_fig3")),
    ("kernels-to-attention", {}, "k2a_x0", 0.58, 0.2, ("k2a_fig1",)),
    ("scaled-dot-product", {}, "sdp_dk", 0.45, 1.0, ("sdp_fig_pipeline", "sdp_fig_dk")),
    ("scaled-dot-product", {"sdp_scale": "custom"}, "sdp_temp", 0.55, 0.05, ("sdp_fig_pipeline",)),
]  # fmt: skip
#: The floor: the one-chart reference page's slider and chart (``benchmarks/reference_page.py``),
#: dragged release-only like the others (path "": the page is the server's only script).
FLOOR = ("", {}, "ref_f", 0.25, 0.75, ("ref_chart",))
#: Elements added under the floor's chart for its second measure (``reference_page.filler``): about
#: as many as kernel regression's run sends (~90 blocks and elements on its default view).
FLOOR_ELEMENTS = 80
TARGET_FRAME_P95_MS = 33
TARGET_SETTLED_P50_MS = 250
#: The release-only step's release -> settled p50 on the machine issue 25 was filed on (its "Why"):
#: the 250 ms target is 1.25 times that step. Printed as a same-run ratio next to the absolute
#: target, which stays the pass/fail: on a slower machine both paths are slower.
FILED_RELEASE_ONLY_P50_MS = 200
MOVE_GAP_MS = 16
TIMEOUT_MS = 120_000
#: The reference page's run takes ~20 ms: a drag of its slider with no run 10 s after the release is
#: left out of its p50 and printed as a 0 in its "runs after the release". Until 2026-12-08 some were:
#: runs counted from the app root's ``data-test-script-state`` missed the run whose messages all came
#: before React rendered (the server had sent them; the state never showed "running"). Runs are now
#: counted from the server's messages (``RUN_LOG``).
FLOOR_RUN_TIMEOUT_MS = 10_000

#: Installed before each drag: script-state changes, the pointerup time, chart DOM changes, and
#: after the release, per chart, the first frame that shows a new chart element drawn (Streamlit
#: draws a changed figure into a new element; an unchanged one keeps its element and is not waited
#: for) and the first frame without a live overlay. Watched through DOM mutations, each stamped on
#: the next animation frame (the frame that paints it); no animation-frame loop, which would make
#: the browser paint while it is busiest.
_OBSERVE = """(charts) => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (window.__drag) { window.__drag.state.disconnect(); window.__drag.dom.disconnect(); }
  const rec = {states: [], up: null, down: null, charts: 0, drawn: {}, draws: {}, overlaysGone: null};
  // every state the attribute took, from the records' old values: a quick run (the reference page's,
  // ~20 ms) can go running -> notRunning before the observer is called, and reading the attribute
  // then saw only notRunning (the drag waited for a run that had been and gone)
  const STATE = 'data-test-script-state';
  rec.state = new MutationObserver((ms) => {
    const now = performance.now();
    const next = (i) => (i + 1 < ms.length ? ms[i + 1].oldValue : app.getAttribute(STATE));
    ms.forEach((m, i) => rec.states.push([now, next(i)]));
  });
  rec.state.observe(app, {attributes: true, attributeFilter: [STATE], attributeOldValue: true});
  const gd = (k) => document.querySelector('.st-key-' + k + ' .js-plotly-plot');
  const inView = (el) => {
    const r = el.getBoundingClientRect();
    return r.bottom > 0 && r.top < innerHeight;
  };
  rec.inView = inView;
  rec.before = charts.map(gd);
  // a kept chart (ui/house_chart.py) draws into the same element and counts its drawings (data-rev)
  const rev = (g) => g?.dataset.rev;
  rec.revs = rec.before.map(rev);
  const redrawn = (g, i) => g && (g !== rec.before[i] || rev(g) !== rec.revs[i]);
  const hooked = new WeakSet();
  // Looked at once per animation frame, in the frame (where the browser lays the page out anyway):
  // a check on every DOM mutation forced a layout each time (inView's getBoundingClientRect), some
  // 70 ms per release of the live path on the test machine, counted against it.
  let looking = false;
  const look = () => {
    looking = false;
    const now = performance.now();
    charts.forEach((k, i) => {
      const g = gd(k);
      if (rec.drawn[k] === undefined && redrawn(g, i) && g._fullLayout && g.querySelector('.main-svg'))
        rec.drawn[k] = now;
    });
    // a chart far from the window keeps its overlay (the right picture) until it comes near it
    // (static/chart/chart.js): settled once no overlay is left over the window
    if (rec.overlaysGone === null && ![...document.querySelectorAll('canvas.live-overlay')].some(inView))
      rec.overlaysGone = now;
  };
  const after = () => {
    charts.forEach((k, i) => {
      const g = gd(k);
      // each full Plotly drawing of the new chart element ('plotly_afterplot'), counted from the
      // first DOM change that shows the element (Plotly adds `on` when it first plots into it)
      if (g && g.on && !hooked.has(g) && (g !== rec.before[i] || g.dataset.pending)) {
        hooked.add(g);
        rec.draws[k] = rec.draws[k] ?? 0;
        g.on('plotly_afterplot', () => { rec.draws[k] += 1; });
      }
    });
    if (!looking) {
      looking = true;
      requestAnimationFrame(look);
    }
  };
  const inChart = (ms) => ms.some((m) => m.target.closest?.('.js-plotly-plot'));
  const held = () => rec.down !== null && rec.up === null;
  rec.dom = new MutationObserver((ms) => {
    if (held() && inChart(ms)) rec.charts += 1;
    if (rec.up !== null) after();
  });
  const main = document.querySelector('[data-testid="stMain"]');
  rec.dom.observe(main, {subtree: true, childList: true, attributes: true});
  const once = {capture: true, once: true};
  document.addEventListener('pointerdown', () => { rec.down = performance.now(); }, once);
  document.addEventListener('pointerup', () => { rec.up = performance.now(); after(); }, once);
  window.__drag = rec;
}"""

#: The charts whose element was replaced or redrawn since the drag began (their figure changed), or
#: that are drawing one in the window now (a chart far from it holds its new figure back).
_REPLACED = """(charts) => charts.filter((k, i) => {
  const g = document.querySelector('.st-key-' + k + ' .js-plotly-plot');
  return g !== window.__drag.before[i] || g?.dataset.rev !== window.__drag.revs[i]
    || (g?.dataset.pending && window.__drag.inView(g));
})"""

#: The charts holding a new figure back (far from the window, under their overlay).
_HELD = """(charts) => charts.filter((k) => {
  const g = document.querySelector('.st-key-' + k + ' .js-plotly-plot');
  return g?.dataset.pending && !window.__drag.inView(g);
}).length"""

_STATE = "() => document.querySelector('[data-testid=stApp]')?.getAttribute('data-test-script-state')"
#: True once a run started after the release has finished (the server's messages, ``RUN_LOG``) and the
#: app root's state stayed notRunning for QUIET_MS since the later of that and its last change.
_SETTLED = """(quiet) => {
  const r = window.__drag, ws = window.__wsRuns, app = document.querySelector('[data-testid=stApp]');
  if (r.up === null || !ws.started.some(t => t >= r.up)) return false;
  const done = ws.finished.filter(t => t >= r.up);
  if (!done.length || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  const last = Math.max(done.at(-1), ...r.states.map(s => s[0]));
  return performance.now() - last >= quiet;
}"""
#: The release's run: how many started while the button was down and after the release (the
#: server's messages), and when the app root showed it running and finished. A run whose messages
#: were all handled before React rendered (a quick one, ~20 ms: the reference page's) never shows
#: "running" there: its start and end are then the arrival of its first and last message.
_RUN = """() => {
  const r = window.__drag, ws = window.__wsRuns;
  const running = r.states.find(s => s[1] === 'running' && s[0] >= r.up);
  const ends = r.states.filter(s => s[1] === 'notRunning' && s[0] >= r.up);
  const finished = ws.finished.filter(t => t >= r.up);
  return {up: r.up, charts: r.charts,
    during: ws.started.filter(t => t >= r.down && t < r.up).length,
    runs: ws.started.filter(t => t >= r.up).length,
    start: running ? running[0] : ws.started.find(t => t >= r.up),
    end: running && ends.length ? ends.at(-1)[0] : finished.at(-1)};
}"""


@dataclass
class Drag:
    frames: int = 0  # frames drawn (live) or chart DOM changes (release-only) while the button was down
    frame_ms: list[float] = field(default_factory=list)  # move -> its frame, each frame
    runs_during: int = 0  # script runs started while the button was down
    runs_after: int = 0  # script runs started after the release
    settled_ms: float | None = None  # release -> settled
    start_ms: float | None = None  # release -> the script run starting ("running")
    run_ms: float | None = None  # the script run itself: "running" to "notRunning"
    drawn_ms: float | None = None  # release -> every redrawn chart showing its new figure
    overlays_ms: float | None = None  # release -> the live slider's last overlay gone
    redrawn: int = 0  # charts of the slider that Python redrew (a new chart element)
    held: int = 0  # charts holding their new figure back, far from the window (drawn when near)
    draws: list[int] = field(default_factory=list)  # full Plotly drawings of each redrawn chart
    views: int = 0  # chart overlays drawn over every frame (0: the drag drew nothing over a chart)


def _track(page, key: str, live: bool):
    """The slider's element to drag on and the box of its track, found by the control's key (not by
    its label, which need not be unique: a label's first match once dragged another element).
    The live slider is a native range input under ``.st-key-<key>``; Streamlit's keeps a hidden one
    inside its thumb, whose parent is the track."""
    handle = page.locator(f'.st-key-{key} input[type="range"]')
    if handle.count() != 1:
        raise RuntimeError(f"{handle.count()} range inputs under .st-key-{key}: expected one")
    if live:
        return handle, handle.bounding_box()
    thumb = handle.locator("xpath=../..")
    return thumb, thumb.locator("xpath=..").bounding_box()


def drag_once(
    page,
    key: str,
    start: float,
    end: float,
    moves: int,
    live: bool,
    charts: tuple[str, ...],
    run_timeout_ms: int = TIMEOUT_MS,
) -> Drag:
    """One drag of ``moves`` moves from ``start`` to ``end`` (fractions of the track), then release;
    settled when the run has finished, every chart of ``charts`` that Python redrew (a new element)
    shows its new figure and, live, the overlays are gone (each: the animation frame that paints it)."""
    # The tab dragged must be the browser's foreground tab. Both pages (live and ?live=0) are open in
    # one browser; Chromium produces a background tab's frames only while input arrives, then about
    # once a second: after the release, the live page (opened first, so behind) painted its new chart
    # and took its animation-frame stamps ~0.9 s late, which read as a slow live path (issue 25).
    page.bring_to_front()
    if live:
        # where a learner watches a live slider: its first chart mid-window (the fit, the attention
        # pipeline, ...). The slider is then in its place or, where that place has scrolled above
        # the window, at the window's bottom (the dock, static/live/live.js), and is dragged there.
        watched = f".st-key-{charts[0]}"
        page.evaluate(f"() => document.querySelector('{watched}').scrollIntoView({{block: 'center'}})")
        page.wait_for_function(DOCK_SETTLED, arg=key, timeout=TIMEOUT_MS)
    else:
        # a release-only slider is dragged in its place, mid-window (its charts all redraw anyway)
        page.evaluate(f"() => document.querySelector('.st-key-{key}').scrollIntoView({{block: 'center'}})")
    handle, box = _track(page, key, live)
    inset = 8 if live else 0  # the native thumb's centre stays half a thumb inside the track
    x = lambda f: box["x"] + inset + (box["width"] - 2 * inset) * f  # noqa: E731
    if live:
        x0, y = x(start), box["y"] + box["height"] / 2
    else:  # Streamlit's thumb: start the drag on it
        thumb = handle.bounding_box()
        x0, y = thumb["x"] + thumb["width"] / 2, thumb["y"] + thumb["height"] / 2
    frames_before = page.evaluate("() => (window.__liveStats?.frames || []).length")
    page.evaluate(_OBSERVE, list(charts))
    page.mouse.move(x0, y)
    page.mouse.down()
    for i in range(1, moves + 1):
        page.mouse.move(x0 + (x(end) - x0) * i / moves, y)
        page.wait_for_timeout(MOVE_GAP_MS)
    page.wait_for_timeout(100)  # the last frame
    page.mouse.up()
    result = Drag()
    try:
        page.wait_for_function(_SETTLED, arg=QUIET_MS, polling=20, timeout=run_timeout_ms)
    except PlaywrightTimeout:  # a run that never came: recorded as not settled
        result.runs_during = page.evaluate(
            "() => { const r = window.__drag;"
            " return window.__wsRuns.started.filter(t => t >= r.down && t < r.up).length; }"
        )
        return result
    rec = page.evaluate(_RUN)
    result.runs_during = rec["during"]
    result.runs_after = rec["runs"]
    result.start_ms = rec["start"] - rec["up"]
    result.run_ms = rec["end"] - rec["start"]
    # every chart Python redrew shows its new figure, and for a live slider the overlays are gone
    replaced = page.evaluate(_REPLACED, list(charts))
    page.wait_for_function(
        "([keys, live]) => keys.every((k) => window.__drag.drawn[k] !== undefined)"
        " && (!live || window.__drag.overlaysGone !== null)",
        arg=[replaced, live],
        polling=20,
        timeout=TIMEOUT_MS,
    )
    page.wait_for_timeout(QUIET_MS)  # a drawing that follows the first one is counted too
    marks = page.evaluate(
        "() => ({drawn: window.__drag.drawn, draws: window.__drag.draws, gone: window.__drag.overlaysGone})"
    )
    drawn = [marks["drawn"][k] for k in replaced]
    result.redrawn = len(replaced)
    result.held = page.evaluate(_HELD, list(charts))
    result.draws = [marks["draws"].get(k, 0) for k in replaced]
    result.drawn_ms = max(drawn) - rec["up"] if drawn else None
    end_ms = max([rec["end"], *drawn])
    if live:
        result.overlays_ms = marks["gone"] - rec["up"]
        end_ms = max(end_ms, marks["gone"])
        stats = page.evaluate(
            "([from, key]) => window.__liveStats.frames.slice(from).filter(f => f.key === key)"
            ".map(f => [f.t1 - f.t0, Object.keys(f.views).length])",
            [frames_before, key],
        )
        result.frames = len(stats)
        result.frame_ms = [ms for ms, _ in stats]
        result.views = sum(n for _, n in stats)
    else:
        result.frames = rec["charts"]
    result.settled_ms = end_ms - rec["up"]
    return result


def _open(
    context,
    app: str,
    path: str,
    params: dict[str, str],
    live: bool,
    key: str,
    charts: tuple[str, ...],
    app_page: bool = True,
):
    """A new tab on the slider's page, its questions answered ("Show me": a page draws what answers
    a question only then, kernels -> attention's three figures included), once the slider is there
    (a live one is a component, mounted after the run) and every chart it redraws is drawn.
    ``app_page=False``: the reference page (no questions, no language)."""
    query = "&".join(
        f"{k}={v}" for k, v in {"lang": "en", **params, **({} if live else {"live": "0"})}.items()
    )
    page = context.new_page()
    page.goto(f"{app}/{path}?{query}", timeout=TIMEOUT_MS)
    page.wait_for_selector('[data-testid="stMain"] h1', timeout=TIMEOUT_MS)
    page.wait_for_function(f"() => ({_STATE})() === 'notRunning'", timeout=TIMEOUT_MS)
    if app_page:
        show_answers(page)
    page.wait_for_selector(f'.st-key-{key} input[type="range"]', state="attached", timeout=TIMEOUT_MS)
    page.wait_for_function(
        "(keys) => keys.every((k) => document.querySelector('.st-key-' + k + ' .js-plotly-plot .main-svg'))",
        arg=list(charts),
        timeout=TIMEOUT_MS,
    )
    page.wait_for_timeout(1500)  # idle-time warm-up done
    return page


def measure(
    apps: dict[bool, str], context, drags: int, moves: int, keys: list[str] | None = None
) -> dict[bool, list[tuple[str, list[Drag]]]]:
    """Every slider of ``SLIDERS`` (or those of ``keys``): live on ``apps[True]``, release-only
    (``?live=0``) on ``apps[False]``, their drags interleaved (the machine's load drifts)."""
    out: dict[bool, list[tuple[str, list[Drag]]]] = {True: [], False: []}
    for path, params, key, start, end, charts in SLIDERS:
        if keys and key not in keys:
            continue
        pages = {live: _open(context, apps[live], path, params, live, key, charts) for live in (True, False)}
        runs: dict[bool, list[Drag]] = {True: [], False: []}
        try:
            for i in range(drags):
                a, b = (start, end) if i % 2 == 0 else (end, start)
                for live in (True, False) if i % 2 == 0 else (False, True):
                    runs[live].append(drag_once(pages[live], key, a, b, moves, live, charts))
        finally:
            for page in pages.values():
                page.close()
        for live in (True, False):
            print(f"  {key} ({'live' if live else 'release-only'}): {_line(runs[live], live)}", flush=True)
            out[live].append((key, runs[live]))
    return out


def measure_floor(app: str, context, drags: int, moves: int, elements: int = 0) -> list[Drag]:
    """``drags`` release-only drags of the reference page's slider (``FLOOR``), back and forth;
    ``elements``: that many elements more under its chart (``?elements=N``)."""
    path, params, key, start, end, charts = FLOOR
    params = {**params, "elements": str(elements)} if elements else params
    page = _open(context, app, path, params, False, key, charts, app_page=False)
    try:
        return [
            drag_once(
                page,
                key,
                *((start, end) if i % 2 == 0 else (end, start)),
                moves,
                False,
                charts,
                run_timeout_ms=FLOOR_RUN_TIMEOUT_MS,
            )
            for i in range(drags)
        ]
    finally:
        page.close()


def _stat(values: list[float], q: float) -> float:
    return _percentile(values, q) if values else float("nan")


def _summary(drags: list[Drag]) -> dict[str, Any]:
    frame_ms = [ms for d in drags for ms in d.frame_ms]
    settled = [d.settled_ms for d in drags if d.settled_ms is not None]
    return {
        "frames": [d.frames for d in drags],
        "frame_p50_ms": _stat(frame_ms, 50),
        "frame_p95_ms": _stat(frame_ms, 95),
        "runs_during": max((d.runs_during for d in drags), default=0),
        "runs_after": [d.runs_after for d in drags],
        "settled_p50_ms": _stat(settled, 50),
        "start_p50_ms": _stat([d.start_ms for d in drags if d.start_ms is not None], 50),
        "run_p50_ms": _stat([d.run_ms for d in drags if d.run_ms is not None], 50),
        "drawn_p50_ms": _stat([d.drawn_ms for d in drags if d.drawn_ms is not None], 50),
        "overlays_p50_ms": _stat([d.overlays_ms for d in drags if d.overlays_ms is not None], 50),
        "settled_all_ms": settled,
        "redrawn": [d.redrawn for d in drags],
        "held": [d.held for d in drags],
        "draws_per_chart": [d.draws for d in drags],
        "views": [d.views for d in drags],
    }


def _line(drags: list[Drag], live: bool) -> str:
    m = _summary(drags)
    if live:
        moving = (
            f"frames {m['frames']}, move->frame p50 {m['frame_p50_ms']:.1f} / p95 {m['frame_p95_ms']:.1f} ms"
        )
    else:
        moving = f"chart changes while held {m['frames']}"
    return (
        f"{moving}, runs while held {m['runs_during']}, after {m['runs_after']}, release->settled"
        f" p50 {m['settled_p50_ms']:.0f} ms (run starts {m['start_p50_ms']:.0f} ms,"
        f" runs {m['run_p50_ms']:.0f} ms, charts redrawn {m['redrawn']} p50 {m['drawn_p50_ms']:.0f} ms,"
        f" held back out of view {m['held']},"
        f" Plotly drawings per redrawn chart {m['draws_per_chart']}"
        + (
            f", overlays gone p50 {m['overlays_p50_ms']:.0f} ms, chart overlays drawn {m['views']})"
            if live
            else ")"
        )
    )


def report(
    live: list[tuple[str, list[Drag]]],
    old: list[tuple[str, list[Drag]]],
    load: float,
    moves: int,
    floor: tuple[list[Drag], list[Drag]] | None = None,
    floor_elements: tuple[list[Drag], list[Drag]] | None = None,
) -> dict[str, Any]:
    print(f"\nload average before/after: {load:.2f} / {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"{moves}-move drags; ms. Live: frames drawn per drag, move -> frame; release-only (?live=0): the")
    print("chart changes while the button is down. settled: release -> the run finished, every chart Python")
    print("redrew showing its new figure and the overlays gone (each: the frame that paints it).")
    head = (
        f"{'slider':<9} {'frames':>12} {'p50':>6} {'p95':>6} {'held':>5} {'after':>6} {'settled':>8} |"
        f" {'changes':>8} {'held':>5} {'settled':>8} | {'ratio':>5}"
    )
    print(head)
    print("-" * len(head))
    rows, passed = [], True
    for (key, drags), (_, before) in zip(live, old, strict=True):
        m, o = _summary(drags), _summary(before)
        ratio = m["settled_p50_ms"] / o["settled_p50_ms"]
        frames = "/".join(str(f) for f in m["frames"])
        after = "/".join(str(n) for n in m["runs_after"])
        print(
            f"{key:<9} {frames:>12} {m['frame_p50_ms']:6.1f} {m['frame_p95_ms']:6.1f} {m['runs_during']:5d}"
            f" {after:>6} {m['settled_p50_ms']:8.0f} | {'/'.join(map(str, o['frames'])):>8}"
            f" {o['runs_during']:5d} {o['settled_p50_ms']:8.0f} | {ratio:5.2f}"
        )
        ok = {
            "frames_drawn": all(f > 0 for f in m["frames"]) and all(v > 0 for v in m["views"]),
            "frame_p95": m["frame_p95_ms"] <= TARGET_FRAME_P95_MS,
            "no_run_while_held": m["runs_during"] == 0,
            "one_run_after": all(n == 1 for n in m["runs_after"]),
            "settled_p50": m["settled_p50_ms"] <= TARGET_SETTLED_P50_MS,
        }
        passed &= all(ok.values())
        rows.append({"slider": key, "live": m, "release_only": o, "settled_ratio": ratio, "targets": ok})
    frames = [ms for _, drags in live for d in drags for ms in d.frame_ms]
    print(
        f"\nevery live frame: p50 {_stat(frames, 50):.1f} ms, p95 {_stat(frames, 95):.1f} ms"
        f" (target p95 <= {TARGET_FRAME_P95_MS}, aim 16);"
        f" release -> settled p50 <= {TARGET_SETTLED_P50_MS} ms;"
        f" 0 runs while held, 1 after: {'pass' if passed else 'FAIL'}"
    )
    filed = TARGET_SETTLED_P50_MS / FILED_RELEASE_ONLY_P50_MS
    print(
        f"ratio: live release -> settled p50 / the release-only one, same run (the target was"
        f" {TARGET_SETTLED_P50_MS} ms where the release-only step took ~{FILED_RELEASE_ONLY_P50_MS} ms:"
        f" {filed:.2f}); <= {filed:.2f} on every slider:"
        f" {'yes' if all(r['settled_ratio'] <= filed for r in rows) else 'no'} (not the pass/fail)"
    )
    floor_out = None
    if floor is not None:
        first, last = (_summary(f) for f in floor)
        both = _summary([*floor[0], *floor[1]])
        print(
            f"floor: the one-chart reference page (st.slider + st.plotly_chart), release -> settled p50"
            f" {both['settled_p50_ms']:.0f} ms (before the sliders {first['settled_p50_ms']:.0f}, after"
            f" {last['settled_p50_ms']:.0f}; runs after the release {both['runs_after']}): Streamlit and"
            f" Plotly alone on this machine, {both['settled_p50_ms'] / TARGET_SETTLED_P50_MS:.2f} of the"
            f" {TARGET_SETTLED_P50_MS} ms target"
        )
        floor_out = {"before": first, "after": last, "settled_p50_ms": both["settled_p50_ms"]}
        if floor_elements is not None:
            more = _summary([*floor_elements[0], *floor_elements[1]])
            each = (more["settled_p50_ms"] - both["settled_p50_ms"]) / FLOOR_ELEMENTS
            print(
                f"floor with {FLOOR_ELEMENTS} elements more under the chart (folds, notes, download buttons,"
                f" paragraphs; the slider changes none of them): release -> settled p50"
                f" {more['settled_p50_ms']:.0f} ms (before the sliders"
                f" {_summary(floor_elements[0])['settled_p50_ms']:.0f}, after"
                f" {_summary(floor_elements[1])['settled_p50_ms']:.0f}): {each:.1f} ms more per element"
                f" a release (a page's run resends every element; kernel regression's sends ~90)"
            )
            floor_out["elements"] = {
                "count": FLOOR_ELEMENTS,
                "before": _summary(floor_elements[0]),
                "after": _summary(floor_elements[1]),
                "settled_p50_ms": more["settled_p50_ms"],
                "per_element_ms": each,
            }
    return {
        "load_average": [load, os.getloadavg()[0]],
        "cpus": os.cpu_count(),
        "moves": moves,
        "floor": floor_out,
        "sliders": rows,
        "frame_p50_ms": _stat(frames, 50),
        "frame_p95_ms": _stat(frames, 95),
        "raw": {
            "live": [[k, [asdict(d) for d in ds]] for k, ds in live],
            "release_only": [[k, [asdict(d) for d in ds]] for k, ds in old],
        },
        "targets": {
            "frame_p95_ms": TARGET_FRAME_P95_MS,
            "settled_p50_ms": TARGET_SETTLED_P50_MS,
            "settled_ratio_at_filing": TARGET_SETTLED_P50_MS / FILED_RELEASE_ONLY_P50_MS,
            "met": passed,
        },
    }


def main(argv: Sequence[str] = ()) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks drag", description=__doc__.split("\n")[0])
    parser.add_argument("--drags", type=int, default=3, help="drags per slider and path (default 3)")
    parser.add_argument("--moves", type=int, default=60, help="mouse moves per drag (default 60)")
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    parser.add_argument("--sliders", nargs="*", help="only these URL keys (default: every live slider)")
    args = parser.parse_args(list(argv))
    exe = chromium_path()
    if exe is None:
        raise SystemExit("no Chromium: install it (`apt-get install -y chromium`) or set CHROMIUM_PATH")
    from playwright.sync_api import sync_playwright

    load = os.getloadavg()[0]
    start = time.monotonic()
    with (
        sync_playwright() as pw,
        # one fresh server per path: each finds the same cold caches (one server would have the
        # figures of the first path's release values cached for the second)
        streamlit_server(ROOT / "app.py") as live_app,
        streamlit_server(ROOT / "app.py") as old_app,
        streamlit_server(REFERENCE) as reference,
    ):
        browser = pw.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_FLAGS)
        try:
            context = browser.new_context(viewport=VIEWPORT)
            context.add_init_script(RUN_LOG)  # the runs, from the server's messages
            first = measure_floor(reference, context, args.drags, args.moves)
            print(f"  floor, before the sliders: {_line(first, False)}", flush=True)
            first_more = measure_floor(reference, context, args.drags, args.moves, FLOOR_ELEMENTS)
            more = f"floor + {FLOOR_ELEMENTS} elements"
            print(f"  {more}, before the sliders: {_line(first_more, False)}", flush=True)
            results = measure({True: live_app, False: old_app}, context, args.drags, args.moves, args.sliders)
            last_more = measure_floor(reference, context, args.drags, args.moves, FLOOR_ELEMENTS)
            print(f"  {more}, after the sliders: {_line(last_more, False)}", flush=True)
            last = measure_floor(reference, context, args.drags, args.moves)
            print(f"  floor, after the sliders: {_line(last, False)}", flush=True)
        finally:
            browser.close()
    out = report(results[True], results[False], load, args.moves, (first, last), (first_more, last_more))
    print(f"({time.monotonic() - start:.0f} s)")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main(sys.argv[1:])
