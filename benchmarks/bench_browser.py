"""Slider steps and page loads in Chromium against a real ``streamlit run`` (issue 8).

``python -m benchmarks browser [--loads N] [--pages NAME ...] [--json PATH]`` (part of ``make bench``;
``make bench-browser`` alone). Starts ``streamlit run app.py`` and ``streamlit run
benchmarks/reference_page.py`` (one slider, one chart) on free 127.0.0.1 ports, and headless Chromium
(``$CHROMIUM_PATH`` or ``/usr/bin/chromium``, driven by Playwright) on the same machine.

- Slider steps: on every page but /training and /in-context, every ``input[type=range]`` (Streamlit's
  sliders and select-sliders, main area and sidebar) is focused and gets one ArrowRight (ArrowLeft at
  the end of its range). Timed in the page, from the ``keydown`` event to the moment the app root's
  ``data-test-script-state`` last turns back to ``notRunning`` (a ``MutationObserver`` installed before
  the key press records every change with ``performance.now()``, so polling adds nothing to the time),
  once the state stayed ``notRunning`` for ``QUIET_MS``. A rerun so fast that the state never shows
  ``running`` is caught by a second observer on the page's DOM: it is timed to the last DOM change and
  counted as "quick". Fragment reruns are real reruns here (only the fragment runs).
- Warm page load: every page (and the reference page) is loaded once to warm the servers, then
  ``--loads`` times (default 3) in a new tab, interleaved with the reference; the median time from
  ``goto`` to the first chart drawn (``[data-testid=stPlotlyChart] .js-plotly-plot``). A page without
  any chart (home) is timed to its title with the script finished, and has no ratio.

Pages open on their default view (folded sections closed, as a learner first sees them); with
``--open-all`` the link opens every folded section (``ui.sections``), so every slider of the whole
page is stepped and a page-wide step redraws every chart.

Targets: step p50 <= 250 ms, p95 <= 600 ms; load <= 1.5x the reference page. The browser, both
servers and this script share the machine: the load average is printed with the results.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from benchmarks.load.server import serve_streamlit
from lessons import LESSONS, PAGES
from tests.app.conftest import fold_keys
from tests.e2e.conftest import chromium_path

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "benchmarks" / "reference_page.py"
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
VIEWPORT = {"width": 1400, "height": 1000}
#: Pages whose sliders are not stepped (their experiments train; sliders there are not the point).
NO_STEPS = frozenset(lesson.url_path for lesson in LESSONS if lesson.trains)
CHART = "[data-testid=stPlotlyChart] .js-plotly-plot"
APP = '[data-testid="stApp"]'
POLL_MS = 20  # polling of wait_for_function; the times themselves come from the observers
QUIET_MS = 400  # the script state must stay notRunning this long: a run can start another
QUICK_WAIT_MS = 3000  # no "running" seen by then: the rerun was quick (or did not happen)
STEP_TIMEOUT_MS = 120_000
LOAD_TIMEOUT_MS = 120_000
NO_CHART_MS = 20_000
TARGET_P50_MS = 250
TARGET_P95_MS = 600
TARGET_LOAD_RATIO = 1.5

#: Installed in the page before a key press: records script-state changes and DOM changes.
_OBSERVE = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (window.__bench) { window.__bench.state.disconnect(); window.__bench.dom.disconnect(); }
  const rec = {t0: null, states: [], lastDom: null};
  rec.state = new MutationObserver(() =>
    rec.states.push([performance.now(), app.getAttribute('data-test-script-state')]));
  rec.state.observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
  rec.dom = new MutationObserver(() => { if (rec.t0 !== null) rec.lastDom = performance.now(); });
  rec.dom.observe(app, {subtree: true, childList: true, characterData: true});
  document.addEventListener('keydown', () => { if (rec.t0 === null) rec.t0 = performance.now(); },
                            {capture: true, once: true});
  window.__bench = rec;
}"""
#: True once the script ran and has been notRunning for QUIET_MS (argument: QUIET_MS).
_SETTLED = """(quiet) => {
  const r = window.__bench, last = r.states[r.states.length - 1];
  return r.states.some(s => s[1] === 'running') && last[1] === 'notRunning'
    && performance.now() - last[0] >= quiet;
}"""
_STATE = f"() => document.querySelector('{APP}')?.getAttribute('data-test-script-state')"
#: Every range input: (st-key-... of its widget or null, aria-label, index among its widget's inputs).
_SLIDERS = """() => [...document.querySelectorAll('input[type=range]')].map(el => {
  const box = el.closest('[class*="st-key-"]');
  const key = box ? [...box.classList].find(c => c.startsWith('st-key-')) : null;
  const peers = box ? [...box.querySelectorAll('input[type=range]')] : [el];
  return [key, el.getAttribute('aria-label'), peers.indexOf(el)];
})"""


@dataclass
class SliderStep:
    slider: str
    ms: float | None  # None: no rerun finished (timed out, or the value could not move)
    quick: bool = False  # no "running" state was seen: timed to the last DOM change


@dataclass
class PageResult:
    page: str
    load_ms: float | None = None
    load_to: str = "chart"  # or "title" for a page without any chart
    steps: list[SliderStep] = field(default_factory=list)

    @property
    def step_ms(self) -> list[float]:
        return [s.ms for s in self.steps if s.ms is not None]


@contextmanager
def streamlit_server(script: Path) -> Iterator[str]:
    """``streamlit run <script>`` on a free loopback port (``benchmarks.load.server``), file watcher off
    so that edits elsewhere in the tree do not disturb a measurement; yields its URL."""
    with serve_streamlit(script, extra_args=("--server.fileWatcherType", "none")) as server:
        yield server.url


def wait_quiet(pg, timeout_ms: int = STEP_TIMEOUT_MS) -> None:
    """Wait until the title is there and the script state stayed notRunning for QUIET_MS."""
    pg.wait_for_selector(f"{APP} [data-testid=stMain] h1", timeout=timeout_ms)
    deadline = time.monotonic() + timeout_ms / 1000
    quiet_since = None
    while time.monotonic() < deadline:
        if pg.evaluate(_STATE) != "notRunning":
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since >= QUIET_MS / 1000:
            return
        pg.wait_for_timeout(50)
    raise TimeoutError("the app was still running after the timeout")


def timed_load(context, url: str, has_chart: bool) -> float:
    """ms from ``goto`` in a new tab to the first chart drawn (or the finished title)."""
    pg = context.new_page()
    try:
        start = time.perf_counter()
        pg.goto(url, wait_until="commit", timeout=LOAD_TIMEOUT_MS)
        if has_chart:
            pg.wait_for_selector(CHART, state="attached", timeout=LOAD_TIMEOUT_MS)
        else:
            wait_quiet(pg, LOAD_TIMEOUT_MS)
        elapsed = 1e3 * (time.perf_counter() - start)
        if not has_chart:
            elapsed -= QUIET_MS  # wait_quiet waited this long after the run had finished
        return elapsed
    finally:
        pg.close()


def _slider_locator(pg, key: str | None, label: str, index: int):
    if key is not None:
        return pg.locator(f".{key} input[type=range]").nth(index)
    return pg.locator(f'input[type=range][aria-label="{label}"]').first


def step_slider(pg, key: str | None, label: str, index: int) -> SliderStep:
    """One key press on a slider, timed in the page from keydown to the script finished."""
    name = (key.removeprefix("st-key-") if key else label) + (f"[{index}]" if index else "")
    wait_quiet(pg)
    slider = _slider_locator(pg, key, label, index)
    if slider.count() == 0:
        return SliderStep(name, None)
    value, high = slider.evaluate("el => [el.value, el.max]")
    arrow = "ArrowLeft" if float(value) >= float(high) else "ArrowRight"
    slider.focus()
    pg.evaluate(_OBSERVE)
    pg.keyboard.press(arrow)
    try:  # a "running" state within QUICK_WAIT_MS, then notRunning for QUIET_MS
        pg.wait_for_function(
            "() => window.__bench.states.some(s => s[1] === 'running')",
            polling=POLL_MS,
            timeout=QUICK_WAIT_MS,
        )
    except PlaywrightTimeout:  # no running state seen
        record = pg.evaluate("() => ({t0: window.__bench.t0, lastDom: window.__bench.lastDom})")
        moved = slider.evaluate("el => el.value") != value
        if not moved or record["lastDom"] is None or record["t0"] is None:
            return SliderStep(name, None)
        return SliderStep(name, record["lastDom"] - record["t0"], quick=True)
    try:
        pg.wait_for_function(_SETTLED, arg=QUIET_MS, polling=POLL_MS, timeout=STEP_TIMEOUT_MS)
    except PlaywrightTimeout:  # still running after STEP_TIMEOUT_MS
        return SliderStep(name, None)
    t0, end = pg.evaluate("() => [window.__bench.t0, window.__bench.states.at(-1)[0]]")
    return SliderStep(name, end - t0)


def _percentile(values: list[float], q: float) -> float:
    """Linear-interpolated percentile (as numpy's default) of a non-empty list."""
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def _mark(ok: bool) -> str:
    return "pass" if ok else "FAIL"


def _stats(values: list[float]) -> tuple[float, float, float]:
    """p50, p95, max of ``values`` (NaN when empty)."""
    if not values:
        return (float("nan"),) * 3
    return _percentile(values, 50), _percentile(values, 95), max(values)


def _row(r: PageResult, reference: PageResult) -> str:
    ms = r.step_ms
    p50, p95, top = _stats(ms)
    charted = r.load_ms is not None and r.load_to == "chart" and reference.load_ms
    ratio = f"{r.load_ms / reference.load_ms:6.2f}" if charted else f"{'-':>6}"
    done = sorted((s for s in r.steps if s.ms is not None), key=lambda s: -s.ms)
    slowest = ", ".join(f"{s.slider} {s.ms:.0f}" for s in done[:3])
    notes = [f"{len(r.steps) - len(ms)} without a finished rerun"] if len(ms) < len(r.steps) else []
    notes += ["load to title: no chart"] if r.load_to == "title" else []
    load = f"{r.load_ms:8.0f}" if r.load_ms is not None else f"{'-':>8}"
    stats = " ".join(f"{v:6.0f}" if ms else f"{'-':>6}" for v in (p50, p95, top))
    stats += f" {sum(s.quick for s in r.steps):5d}"
    sliders = f"{'-':>7}" if r.page in NO_STEPS else f"{len(r.steps):7d}"
    return f"{r.page:<22} {sliders} {stats} {load} {ratio}  {slowest}" + (
        f"  ({'; '.join(notes)})" if notes else ""
    )


def report(pages: list[PageResult], reference: PageResult, load: float) -> dict[str, Any]:
    print(f"load average before/after: {load:.2f} / {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(
        "ms from keydown to script notRunning; load: warm page load to first chart, median; x ref: its ratio"
    )
    head = f"{'page':<22} {'sliders':>7} " + " ".join(f"{c:>6}" for c in ("p50", "p95", "max"))
    head += f" {'quick':>5} {'load ms':>8} {'x ref':>6}"
    print(head + "  slowest 3 (ms)")
    print("-" * (len(head) + 40))
    for r in [reference, *pages]:
        print(_row(r, reference))
    steps = [s for r in pages for s in r.steps]
    ms = [s.ms for s in steps if s.ms is not None]
    p50, p95, top = _stats(ms)
    ratios = {r.page: r.load_ms / reference.load_ms for r in pages if r.load_ms and r.load_to == "chart"}
    passed = {
        "step_p50_ms": p50 <= TARGET_P50_MS,
        "step_p95_ms": p95 <= TARGET_P95_MS and len(ms) == len(steps),
        "load_ratio": bool(ratios) and max(ratios.values()) <= TARGET_LOAD_RATIO,
    }
    print()
    print(
        f"all {len(steps)} slider steps ({len(steps) - len(ms)} without a finished rerun, "
        f"{sum(s.quick for s in steps)} quick; reference p50 {_stats(reference.step_ms)[0]:.0f} ms):"
    )
    print(f"  p50 {p50:.0f} ms <= {TARGET_P50_MS}: {_mark(passed['step_p50_ms'])}")
    print(f"  p95 {p95:.0f} ms <= {TARGET_P95_MS}: {_mark(passed['step_p95_ms'])} (max {top:.0f} ms)")
    if ratios:
        worst = max(ratios, key=ratios.__getitem__)
        over = sum(v > TARGET_LOAD_RATIO for v in ratios.values())
        print(
            f"warm load to first chart <= {TARGET_LOAD_RATIO}x the reference ({reference.load_ms:.0f} ms):"
            f" {_mark(passed['load_ratio'])} (worst {worst} {ratios[worst]:.2f}x;"
            f" {over} of {len(ratios)} over)"
        )
    return {
        "load_average": [load, os.getloadavg()[0]],
        "cpus": os.cpu_count(),
        "reference": asdict(reference),
        "pages": [asdict(r) for r in pages],
        "step_p50_ms": p50,
        "step_p95_ms": p95,
        "load_ratios": ratios,
        "targets": {
            "step_p50_ms": [TARGET_P50_MS, passed["step_p50_ms"]],
            "step_p95_ms": [TARGET_P95_MS, passed["step_p95_ms"]],
            "load_ratio": [TARGET_LOAD_RATIO, passed["load_ratio"]],
        },
    }


REFERENCE_NAME = "reference (one chart)"


def first_visit(context, url: str, result: PageResult) -> bool:
    """Load a page once (warms the server), step its sliders; True when it shows a chart."""
    pg = context.new_page()
    try:
        pg.goto(url, timeout=LOAD_TIMEOUT_MS)
        wait_quiet(pg, LOAD_TIMEOUT_MS)
        try:  # a page without charts (home) shows none within NO_CHART_MS of settling
            pg.wait_for_selector(CHART, state="attached", timeout=NO_CHART_MS)
            has_chart = True
        except PlaywrightTimeout:
            has_chart = False
        wait_quiet(pg)
        result.load_to = "chart" if has_chart else "title"
        if result.page not in NO_STEPS:
            print(f"  {result.page}: slider steps ...", flush=True)
            for key, label, index in pg.evaluate(_SLIDERS):
                result.steps.append(step_slider(pg, key, label, index))
        return has_chart
    finally:
        pg.close()


def page_url(app: str, name: str, open_all: bool) -> str:
    """The page's link (``?lang=en``); with ``open_all``, it opens every folded section too."""
    if name == "home":
        return f"{app}/?lang=en"
    params = "".join(f"&{key}=true" for key in fold_keys(name)) if open_all else ""
    return f"{app}/{name}?lang=en{params}"


def run(names: list[str], loads: int, open_all: bool = False) -> tuple[list[PageResult], PageResult]:
    from playwright.sync_api import sync_playwright

    exe = chromium_path()
    if exe is None:
        raise SystemExit("no Chromium: install it (`apt-get install -y chromium`) or set CHROMIUM_PATH")
    with (
        sync_playwright() as pw,
        streamlit_server(ROOT / "app.py") as app,
        streamlit_server(REFERENCE) as ref,
    ):
        browser = pw.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_FLAGS)
        context = browser.new_context(viewport=VIEWPORT)
        urls = {REFERENCE_NAME: f"{ref}/"} | {n: page_url(app, n, open_all) for n in names}
        results = {name: PageResult(name) for name in urls}
        has_chart = {name: first_visit(context, url, results[name]) for name, url in urls.items()}
        times: dict[str, list[float]] = {name: [] for name in urls}
        print(f"  warm loads x {loads} ...", flush=True)
        for _ in range(loads):  # interleaved: a change of the machine's load hits all pages alike
            for name, url in urls.items():
                times[name].append(timed_load(context, url, has_chart[name]))
        for name in urls:
            results[name].load_ms = statistics.median(times[name])
        browser.close()
    reference = results.pop(REFERENCE_NAME)
    return list(results.values()), reference


def main(argv: Sequence[str] = ()) -> None:
    names = [p.url_path for p in PAGES]
    parser = argparse.ArgumentParser(prog="python -m benchmarks browser", description=__doc__.split("\n")[0])
    parser.add_argument("--loads", type=int, default=3, help="warm loads timed per page (median)")
    parser.add_argument("--pages", nargs="+", choices=names, default=names, help="only these pages")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    parser.add_argument(
        "--open-all", action="store_true", help="open every folded section (the whole page), not the default"
    )
    args = parser.parse_args(list(argv))
    load = os.getloadavg()[0]
    started = time.perf_counter()
    pages, reference = run(args.pages, args.loads, args.open_all)
    print(f"({time.perf_counter() - started:.0f} s)\n")
    view = "every folded section open (--open-all)" if args.open_all else "the default view (folds closed)"
    print(f"view: {view}")
    result = report(pages, reference, load)
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main(sys.argv[1:])
