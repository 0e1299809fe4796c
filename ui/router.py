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
