"""End-to-end fixtures: a real ``streamlit run app.py`` and headless Chromium driven by Playwright.

The browser is Debian's Chromium (Playwright's own download does not work offline). It is found
at ``$CHROMIUM_PATH`` or ``/usr/bin/chromium``. Locally a missing browser skips these tests with a
loud reason; under ``CI=true`` it is a failure, so CI can never pass without running them.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Start ``streamlit run app.py`` on a free loopback port; yield its base URL."""
    port = _free_port()
    log = tmp_path_factory.mktemp("streamlit") / "server.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [
                sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
                "--server.port", str(port), "--server.address", "127.0.0.1",
                "--server.headless", "true", "--browser.gatherUsageStats", "false",
            ],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"streamlit did not start; its log:\n{log.read_text()}")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture
def page(browser, app_url):
    """A fresh browser page (1400x1000) whose ``open(path, **params)`` loads an app URL and waits."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()

    def open_(path: str = "", **params: str) -> None:
        query = "&".join(f"{k}={v}" for k, v in params.items())
        pg.goto(f"{app_url}/{path}" + (f"?{query}" if query else ""))
        wait_for_app(pg)

    pg.open = open_  # type: ignore[attr-defined]
    yield pg
    context.close()


def wait_for_app(pg, timeout_ms: int = RUN_TIMEOUT_MS) -> None:
    """Wait until Streamlit has rendered the page and finished the current script run.

    The app root carries ``data-test-script-state`` (``running`` while a script run is in
    progress, ``notRunning`` once it finished); the state must stay finished for a moment, since
    a run can trigger another (a callback, ``st.rerun``).
    """
    pg.wait_for_selector('[data-testid="stApp"]', timeout=timeout_ms)
    pg.wait_for_selector('[data-testid="stMain"] h1', timeout=timeout_ms)
    deadline = time.monotonic() + timeout_ms / 1000
    quiet_since = None
    while time.monotonic() < deadline:
        state = pg.get_attribute('[data-testid="stApp"]', "data-test-script-state")
        if state != "notRunning":
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since > 0.8:
            return
        pg.wait_for_timeout(150)
    raise AssertionError("the app was still running after the timeout")


def assert_no_exception(pg) -> None:
    """No Streamlit exception box anywhere on the page."""
    boxes = pg.locator('[data-testid="stException"]')
    assert boxes.count() == 0, boxes.first.inner_text()
