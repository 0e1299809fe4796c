"""Test-wide set-up: the repository root on sys.path, and the one headless Chromium of the run.

The browser fixture lives here (not in tests/e2e) because tests/e2e and tests/serve both drive it:
two fixture definitions would start a second Playwright in the same thread, which Playwright's
sync API refuses ("using Playwright Sync API inside the asyncio loop").
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


import os  # noqa: E402

import pytest  # noqa: E402

# Importing Streamlit makes its own Plotly template the default (``streamlit.elements.plotly_chart``);
# the app imports Streamlit first and ``figures`` after it, which sets the house template. Tests
# do the same here, so a test module that imports Streamlit after one that imported ``figures``
# cannot swap the template under the next one.
import streamlit  # noqa: E402, F401

import figures.common  # noqa: E402, F401


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


@pytest.fixture(scope="session")
def redis_exe() -> str:
    """The redis-server executable (Debian's package). Skips loudly locally, fails under CI, when absent."""
    from deploy.serve import find_redis_server

    path = find_redis_server()
    if path is None:
        reason = (
            "NO REDIS-SERVER FOUND: the tests of the shared class store did not run. Install it with "
            "`apt-get install -y redis-server` or set REDIS_SERVER_PATH."
        )
        if _in_ci():
            pytest.fail(reason)
        pytest.skip(reason)
    return path


@pytest.fixture(scope="session")
def browser():
    """A headless Chromium (session-wide). Skips loudly locally, fails under CI, when absent."""
    from tests.e2e.conftest import CHROMIUM_FLAGS, chromium_path

    exe = chromium_path()
    if exe is None:
        reason = (
            "NO CHROMIUM FOUND: end-to-end tests did not run. Install it with "
            "`apt-get install -y chromium` or set CHROMIUM_PATH."
        )
        if _in_ci():
            pytest.fail(reason)
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_FLAGS)
        yield b
        b.close()
