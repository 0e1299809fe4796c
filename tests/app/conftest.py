"""Helpers for Streamlit ``AppTest`` tests: run the real router and switch to one page."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT

#: AppTest's per-run timeout (s). Generous: the CI machine has 2 cores shared with other tests.
TIMEOUT = 120


def open_page(page: str, *, lang: str = "en", params: dict[str, str] | None = None) -> AppTest:
    """Run ``app.py`` with ``?lang=...&params`` and switch to ``pages/<page>.py``.

    Language and URL parameters are set the way a shared link sets them (query parameters),
    so this also exercises the ``bind="query-params"`` seeding of every bound control.
    """
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.query_params["lang"] = lang
    for k, v in (params or {}).items():
        at.query_params[k] = v
    at.run()
    if page != "home":
        at.switch_page(f"pages/{page}.py")
        at.run()
    return at


def assert_clean(at: AppTest) -> None:
    """No uncaught exception on the page (an ``st.exception`` box means a traceback reached users)."""
    assert not at.exception, [e.value for e in at.exception]


@pytest.fixture
def page_runner() -> Callable[..., AppTest]:
    return open_page
