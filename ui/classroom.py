"""Presentation mode: one section of a page at a time, large type, for a projector.

``?present=1`` (or the sidebar toggle) turns it on; ``?slide=N`` names the section shown, so a
teacher's link opens on the slide they mean. The page's own controls stay usable: page-wide
controls sit in a collapsed "Controls" box above the slide, a section's own controls are part of
the slide. Questions (``ui.questions``) can be hidden while presenting (``?questions=false``).

Like the language, the mode is carried over when the learner moves to another page (Streamlit
drops the query string on a page switch).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import streamlit as st

from ui import controls
from ui.i18n import t

PRESENT_KEY = "present"
SLIDE_KEY = "slide"
QUESTIONS_KEY = "questions"
#: Session-state memory of the mode across page switches.
_MEMORY = "_present_memory"
_CSS = Path(__file__).resolve().parent.parent / "assets" / "present.css"
_TRUE = {"1", "true", "yes", "on"}


def requested() -> bool:
    """Whether this run presents (before any widget is drawn: ``app.main`` sizes the page by it)."""
    if PRESENT_KEY in st.session_state:
        return bool(st.session_state[PRESENT_KEY])
    raw = st.query_params.get(PRESENT_KEY)
    if raw is not None:
        return raw.lower() in _TRUE
    return bool(st.session_state.get(_MEMORY, False))


def present_switch() -> bool:
    """The sidebar toggle (kept in the URL as ``?present=1``); returns whether this run presents."""
    if PRESENT_KEY not in st.query_params and st.session_state.get(_MEMORY):
        st.query_params[PRESENT_KEY] = "1"  # carried over from the previous page (see the module doc)
    on = controls.flag("common.present", key=PRESENT_KEY, help_key="common.present_help", where=st.sidebar)
    st.session_state[_MEMORY] = on
    if on:
        controls.flag(
            "common.questions_on", key=QUESTIONS_KEY, value=True, help_key="common.questions_on_help",
            where=st.sidebar,
        )  # fmt: skip
        st.html(_CSS)  # style only: no space taken
    return on


def presenting() -> bool:
    """Whether the page is shown as slides (after :func:`present_switch` ran)."""
    return bool(st.session_state.get(PRESENT_KEY, False))


def questions_on() -> bool:
    """Questions are shown unless a presenting teacher turned them off."""
    return not presenting() or bool(st.session_state.get(QUESTIONS_KEY, True))


def requested_slide() -> int:
    """The slide number asked for (1-based) before the navigation is drawn; 1 when none."""
    raw = st.session_state.get(SLIDE_KEY, st.query_params.get(SLIDE_KEY, 1))
    try:
        return max(1, int(raw))
    except (TypeError, ValueError):
        return 1


@contextmanager
def controls_area() -> Iterator[None]:
    """Where a page draws its page-wide controls: as is, or folded into a box while presenting."""
    if presenting():
        with st.expander(t("common.present_controls"), icon=":material/tune:"):
            yield
    else:
        yield


def _step(delta: int, count: int) -> None:
    st.session_state[SLIDE_KEY] = min(count, max(1, requested_slide() + delta))


def slide_navigation(titles: Sequence[str]) -> int:
    """Previous / slide picker / Next above the slide; returns the 1-based slide to show.

    The picker is bound to ``?slide=N``; a number outside the page's slides falls back to 1.
    """
    count = len(titles)
    if st.session_state.get(SLIDE_KEY) not in range(1, count + 1):
        st.session_state.pop(SLIDE_KEY, None)
    left, middle, right = st.columns([1, 4, 1], vertical_alignment="bottom")
    current = requested_slide() if requested_slide() <= count else 1
    left.button(
        t("common.slide_previous"), key="slide_previous", icon=":material/arrow_back:",
        on_click=_step, args=(-1, count), disabled=current <= 1, width="stretch",
    )  # fmt: skip
    right.button(
        t("common.slide_next"), key="slide_next", icon=":material/arrow_forward:",
        on_click=_step, args=(1, count), disabled=current >= count, width="stretch",
    )  # fmt: skip
    with middle:
        shown = controls.selectbox(
            "common.slide",
            key=SLIDE_KEY,
            options=list(range(1, count + 1)),
            index=0,  # slide 1 is the default: any other stays in the URL
            format_func=lambda i: t("common.slide_label", n=i, count=count, title=titles[i - 1]),
            label_visibility="collapsed",
        )
    return int(shown)
