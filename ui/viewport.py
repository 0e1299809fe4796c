"""Whether the browser's viewport is narrow (a phone), so that figures can be laid out for it.

The server does not know the viewport. A tiny ``st.components.v2`` element (inline JavaScript, no
build step), mounted once per run by ``app.main``, watches ``matchMedia("(max-width: 640px)")``
(the width below which Streamlit stacks ``st.columns``) and reports the answer as its state. It
sends it only when it differs from what the server already holds (passed to it as ``data``): one
extra rerun on a phone's first load, and one when a window crosses the breakpoint; none on a
desktop. The answer lives in the session state under :data:`KEY`, and ``ui.layout.cached``
hands it to every figure builder as ``narrow`` (so it is part of each figure's cache key).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping

import streamlit as st

from figures.common import NARROW_MAX_WIDTH

#: Session-state key of the component (its state: ``{"narrow": bool}``).
KEY = "viewport"

#: The probe. It also writes what the server laid the page out for on the page's root element
#: (``<html data-layout="narrow">`` or ``"wide"``), for style sheets and tests to read.
_JS = f"""
export default function ({{ data, setStateValue }}) {{
  const query = window.matchMedia("(max-width: {NARROW_MAX_WIDTH}px)");
  document.documentElement.dataset.layout = data && data.narrow ? "narrow" : "wide";
  const report = () => {{
    if (query.matches !== Boolean(data && data.narrow)) setStateValue("narrow", query.matches);
  }};
  report();
  query.addEventListener("change", report);
  return () => query.removeEventListener("change", report);
}}
"""


@functools.cache
def _renderer() -> Callable[..., object]:
    """The component's mount command, registered once per process (mounting registers it on the
    runtime that runs the script, AppTest's included)."""
    return st.components.v2.component("attention_lesson_viewport", js=_JS)


def narrow() -> bool:
    """Whether the last report said the viewport is narrow (False before any, and outside a run)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    if get_script_run_ctx(suppress_warning=True) is None:
        return False
    state = st.session_state.get(KEY)
    return bool(state.get("narrow", False)) if isinstance(state, Mapping) else False


def _changed() -> None:
    """The report changed: the rerun it starts is all that is needed."""


def watch() -> bool:
    """Mount the viewport probe (an element of no height, hidden by ``assets/app.css``); return
    :func:`narrow`. Called by ``app.main`` on every run, before the page."""
    current = narrow()
    _renderer()(key=KEY, data={"narrow": current}, default={"narrow": current}, on_narrow_change=_changed)
    return current
