"""Make sure every page runs inside ``app.py``'s router, never as a legacy ``pages/`` script.

Streamlit still auto-discovers a ``pages/`` folder next to the main script until the first call
to ``st.navigation`` in the server process. If the very first request of a fresh server is a deep
link (``/kernel-regression?h=0.3``), Streamlit would run that page script alone: no language
switch, no page config. ``app.main`` marks the run as routed; a page that finds no mark switches
the legacy mode off and reruns, so the router handles the same URL.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

import streamlit as st

_state = threading.local()


@contextmanager
def routed():
    """Context in which ``app.main`` runs the selected page."""
    _state.active = True
    try:
        yield
    finally:
        _state.active = False


def ensure_routed() -> None:
    """Called at the top of every page (by ``ui.layout.page_header``)."""
    if getattr(_state, "active", False):
        return
    from streamlit.runtime.pages_manager import PagesManager

    PagesManager.uses_pages_directory = False
    st.rerun()


#: URL paths that name the start page. Streamlit serves the default page at ``/`` only, so
#: ``/home`` (the path the README's table and the page's own ``url_path`` suggest) would show
#: a "Page not found" pop-up.
HOME_ALIASES = frozenset({"home", "index"})


def resolve_home_alias() -> None:
    """Make ``/home`` open the start page: called by ``app.main`` before ``st.navigation``.

    Streamlit resolves the page from the URL path (``intended_page_name``); a path naming the
    start page is cleared, so the default page is chosen without a not-found message.
    """
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None:
        return
    manager = ctx.pages_manager
    if not manager.intended_page_script_hash and manager.intended_page_name in HOME_ALIASES:
        manager.set_script_intent("", "")
