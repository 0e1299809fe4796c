"""End-to-end fixtures: a real ``streamlit run app.py`` and headless Chromium driven by Playwright.

The browser is Debian's Chromium (Playwright's own download does not work offline). It is found
at ``$CHROMIUM_PATH`` or ``/usr/bin/chromium``. Locally a missing browser skips these tests with a
loud reason; under ``CI=true`` it is a failure, so CI can never pass without running them.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from benchmarks.load.server import serve_streamlit
from tests.app.conftest import fold_keys
from tests.conftest import ROOT

CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
#: How long one Streamlit rerun may take in the browser before a test gives up (ms).
RUN_TIMEOUT_MS = 90_000


def chromium_path() -> str | None:
    """The Chromium executable to drive, or None when there is none on this machine."""
    candidate = os.environ.get("CHROMIUM_PATH") or "/usr/bin/chromium"
    if Path(candidate).exists():
        return candidate
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="session")
def app_url() -> Iterator[str]:
    """``streamlit run app.py`` on a free loopback port (``benchmarks.load.server``); its base URL."""
    try:
        with serve_streamlit() as server:
            yield server.url
    except RuntimeError as err:  # it did not start: the message holds its log
        pytest.fail(str(err))


@pytest.fixture
def page(browser, app_url):
    """A fresh browser page (1400x1000) whose ``open(path, **params)`` loads an app URL and waits.

    The link opens every folded section of the page (``?open_...=true``, see ``ui.sections``), so a
    test sees the whole page, unless ``folded=True`` (the view a learner first gets). Likewise
    "Show me" is pressed on every question (:func:`show_answers`) unless ``answered=False``.
    """
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.add_init_script(RUN_LOG)  # the runs the server reports (test_live_drag counts them)
    pg = context.new_page()

    def open_(path: str = "", *, folded: bool = False, answered: bool = True, **params: str) -> None:
        if not folded and path and (ROOT / "pages" / f"{path}.py").exists():
            params = {**dict.fromkeys(fold_keys(path), "true"), **params}
        query = "&".join(f"{k}={v}" for k, v in params.items())
        pg.goto(f"{app_url}/{path}" + (f"?{query}" if query else ""))
        wait_for_app(pg)
        if answered:
            show_answers(pg)

    pg.open = open_  # type: ignore[attr-defined]
    yield pg
    context.close()


#: Installed in every page before Streamlit connects (``BrowserContext.add_init_script``): the script
#: runs the server reports, from its own messages. Each ForwardMsg arrives as one binary WebSocket
#: message; one with ``new_session`` (field 4) starts a run, one with ``script_finished`` (field 6)
#: ends it. Their arrival times (``performance.now()``, before Streamlit handles them) go to
#: ``window.__wsRuns.started`` / ``.finished``. The app root's ``data-test-script-state`` is not a
#: count of runs: when a run's messages are all handled before React renders (a run of ~20 ms, a busy
#: page), its "running" is never committed to the DOM, and two runs back to back can read as one.
RUN_LOG = """(() => {
  if (window.__wsRuns) return;
  const log = (window.__wsRuns = { started: [], finished: [] });
  const varint = (b, i) => {
    let x = 0, s = 0, c;
    do { c = b[i++]; x += (c & 0x7f) * 2 ** s; s += 7; } while (c & 0x80 && i < b.length);
    return [x, i];
  };
  const kind = (buf) => {  // the top-level fields of a ForwardMsg, in field order
    const b = new Uint8Array(buf);
    let i = 0, tag, n;
    while (i < b.length) {
      [tag, i] = varint(b, i);
      const field = Math.floor(tag / 8), wire = tag & 7;
      if (field === 4 && wire === 2) return "started";
      if (field === 6 && wire === 0) return "finished";
      if (field > 6) return null;
      if (wire === 0) [, i] = varint(b, i);
      else if (wire === 2) { [n, i] = varint(b, i); i += n; }
      else if (wire === 1) i += 8;
      else if (wire === 5) i += 4;
      else return null;
    }
    return null;
  };
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (e) => {
        if (!(e.data instanceof ArrayBuffer)) return;
        const k = kind(e.data);
        if (k) log[k].push(performance.now());
      });
    }
  };
})()"""


#: Every live slider drawn (``ui.live_slider``: a v2 component whose element is ``live_<key>``)
#: has its input: its JavaScript loads from the static URL a moment after the element is drawn.
LIVE_SLIDERS_MOUNTED = """() => [...document.querySelectorAll('[class*="st-key-live_"]')]
  .every(box => box.querySelector('.attn-live input[type=range]'))"""

#: The live slider ``key`` is docked exactly when its place is above the window (the dock follows a
#: scroll a moment later, through an IntersectionObserver): wait for it before dragging a slider
#: whose place may have scrolled away (the e2e tests and ``benchmarks/bench_drag.py``).
DOCK_SETTLED = """(key) => {
  const place = document.querySelector('.st-key-live_' + key);
  const box = document.querySelector('.attn-live.st-key-' + key);
  return box.classList.contains('docked') === (place.getBoundingClientRect().bottom <= 1);
}"""


def wait_for_app(pg, timeout_ms: int = RUN_TIMEOUT_MS) -> None:
    """Wait until Streamlit has rendered the page and finished the current script run.

    The app root carries ``data-test-script-state`` (``running`` while a script run is in
    progress, ``notRunning`` once it finished); the state must stay finished for a moment, since
    a run can trigger another (a callback, ``st.rerun``). Every live slider must have mounted.
    """
    pg.wait_for_selector('[data-testid="stApp"]', timeout=timeout_ms)
    pg.wait_for_selector('[data-testid="stMain"] h1', timeout=timeout_ms)
    deadline = time.monotonic() + timeout_ms / 1000
    quiet_since = None
    while time.monotonic() < deadline:
        state = pg.get_attribute('[data-testid="stApp"]', "data-test-script-state")
        if state != "notRunning" or not pg.evaluate(LIVE_SLIDERS_MOUNTED):
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since > 0.8:
            return
        pg.wait_for_timeout(150)
    raise AssertionError("the app was still running after the timeout")


#: The "Show me" buttons of the questions (``ui.questions``: keys ``q_<qid>_show``).
SHOW_ME = '[class*="st-key-q_"][class*="_show"] button'


def show_answers(pg) -> None:
    """Press "Show me" on every question of the page, one after the other (each reruns the page):
    a page draws what answers a question only once it is answered (``ui.questions.reveal``).

    First waits until the run has drawn the page to its end (the handout button, ``app.main``'s
    last element), so every question is on it; then each press waits for its button to go.
    """
    pg.locator(".st-key-handout_html").wait_for(state="attached", timeout=RUN_TIMEOUT_MS)
    wait_for_app(pg)
    buttons = pg.locator(SHOW_ME)
    while (left := buttons.count()) > 0:
        buttons.first.click()
        pg.wait_for_function(
            f"document.querySelectorAll('{SHOW_ME}').length < {left}", timeout=RUN_TIMEOUT_MS
        )
        wait_for_app(pg)


#: What Streamlit shows for a Python exception, and for an element that failed in the browser (a
#: v2 component whose module did not load or threw: its error box with the JavaScript stack).
EXCEPTION_BOXES = (
    '[data-testid="stException"], [data-testid="stAlertContainer"]:has([data-testid="stErrorElementStack"])'
)


def assert_no_exception(pg) -> None:
    """No Streamlit exception box anywhere on the page, nor an element's error box."""
    boxes = pg.locator(EXCEPTION_BOXES)
    assert boxes.count() == 0, boxes.first.inner_text()


def wait_for_chart(pg, timeout_ms: int = 60_000) -> None:
    """Wait until a chart is visible; if none comes, fail with the error box shown instead, if any."""
    try:
        pg.wait_for_selector('[data-testid="stPlotlyChart"]', timeout=timeout_ms)
    except PlaywrightTimeoutError:
        assert_no_exception(pg)
        raise
