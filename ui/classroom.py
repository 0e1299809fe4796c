"""Presentation mode: one section of a page at a time, large type, for a 16:9 projector.

``?present=1`` (or the sidebar toggle) turns it on; ``?slide=N`` names the section shown, so a
teacher's link opens on the slide they mean. A slide fits 1280x720 (issue 22):

- the page's header (title, introduction, page-level formula or task) is shown on the first slide
  only (:func:`on_title_slide`); every slide starts with one compact **slide bar**: the page title
  (from slide 2 on), Previous, the slide picker ("3 / 9 · section title"), Next, and the page-wide
  controls folded into a "Controls" popover, so they never push the slide's figure down (a
  section's own controls are part of the slide);
- the figures' type is at least 16 px (``figures.projector``, through ``ui.layout.show_figure``);
- a small script (:func:`keyboard_and_fit`) steps the slides with the arrow keys and PageUp /
  PageDown (a presentation clicker), unless the focus is in a control that uses those keys, and
  sizes the slide's first row of charts to the rest of the window.

Questions (``ui.questions``) can be hidden while presenting (``?questions=false``).

Like the language, the mode is carried over when the learner moves to another page (Streamlit
drops the query string on a page switch).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st

from ui import controls
from ui.i18n import t
from ui.link_keys import PRESENT_KEY, QUESTIONS_KEY, SLIDE_KEY

#: Session-state memory of the mode across page switches.
_MEMORY = "_present_memory"
_ASSETS = Path(__file__).resolve().parent.parent / "assets"
_CSS = _ASSETS / "present.css"
_JS = _ASSETS / "present.js"
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
        keyboard_and_fit()
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


def on_title_slide() -> bool:
    """Whether the page's own introduction is drawn: always on the scrolling page, on the first
    slide only while presenting (the later slides start with the slide bar)."""
    return not presenting() or requested_slide() == 1


@dataclass(frozen=True)
class _SlideBar:
    """The slide bar of one script run: where the navigation and the controls popover go."""

    navigation: Any
    controls: Any


#: The slide bar and controls popover of the script run on this thread (each session's script
#: runs on its own thread); reset by :func:`begin_page` at the start of every page.
_run = threading.local()


def begin_page(title: str) -> None:
    """Start a page's run (``ui.layout.page_header`` calls it before drawing anything).

    From slide 2 on, the slide bar, with the page ``title`` in it, is the slide's first line. On
    the first slide it is drawn below the page's own introduction, where the page-wide controls or
    the navigation first ask for it.
    """
    _run.title = title
    _run.bar = None
    _run.controls = None
    if presenting() and not on_title_slide():
        _slide_bar()


def _slide_bar() -> _SlideBar:
    """This run's slide bar, drawn here on first use."""
    bar = getattr(_run, "bar", None)
    if bar is None:
        row = st.container(key="slide_bar", horizontal=True, vertical_alignment="center", gap="small")
        with row:
            if not on_title_slide():
                st.title(getattr(_run, "title", ""), anchor=False, width="content")
            navigation = st.container(key="slide_nav", horizontal=True, vertical_alignment="center")
            controls = st.container(key="slide_controls", width="content")
        bar = _run.bar = _SlideBar(navigation=navigation, controls=controls)
    return bar


@contextmanager
def controls_area() -> Iterator[None]:
    """Where a page draws its page-wide controls: as is, or in the slide bar's "Controls" popover
    while presenting (drawn on every run: the controls' values drive the slide)."""
    if not presenting():
        yield
        return
    box = getattr(_run, "controls", None)
    if box is None:
        box = _run.controls = _slide_bar().controls.popover(
            t("common.present_controls"), icon=":material/tune:", key="present_controls"
        )
    with box:
        yield


def _step(delta: int, count: int) -> None:
    st.session_state[SLIDE_KEY] = min(count, max(1, requested_slide() + delta))


def slide_navigation(titles: Sequence[str]) -> int:
    """Previous / slide picker / Next in the slide bar; returns the 1-based slide to show.

    The picker is bound to ``?slide=N``; a number outside the page's slides falls back to 1.
    """
    count = len(titles)
    if st.session_state.get(SLIDE_KEY) not in range(1, count + 1):
        st.session_state.pop(SLIDE_KEY, None)
    current = requested_slide() if requested_slide() <= count else 1
    with _slide_bar().navigation:
        st.button(
            t("common.slide_previous"), key="slide_previous", icon=":material/arrow_back:",
            on_click=_step, args=(-1, count), disabled=current <= 1,
        )  # fmt: skip
        shown = controls.selectbox(
            "common.slide",
            key=SLIDE_KEY,
            options=list(range(1, count + 1)),
            index=0,  # slide 1 is the default: any other stays in the URL
            format_func=lambda i: t("common.slide_label", n=i, count=count, title=titles[i - 1]),
            label_visibility="collapsed",
        )
        st.button(
            t("common.slide_next"), key="slide_next", icon=":material/arrow_forward:", icon_position="right",
            on_click=_step, args=(1, count), disabled=current >= count,
        )  # fmt: skip
    return int(shown)


_component_lock = threading.Lock()
_component: list[Any] = []


def figures_first() -> tuple[Any, Any]:
    """Two containers, (text, figures), in page order: the text (metrics, tables) above the figures,
    or while presenting below them, so that a slide's first chart starts on a 1280x720 screen."""
    first, second = st.container(), st.container()
    return (second, first) if presenting() else (first, second)


def keyboard_and_fit() -> None:
    """Mount the presentation script (``assets/present.js``) while presenting, in the sidebar.

    It takes no space and sends nothing back: on the arrow keys and PageUp / PageDown it clicks
    Previous / Next (so the step, the URL and the picker stay one mechanism), except while the
    focus is in a control that uses those keys (a slider, a text field, a select, a table); and it
    sizes the charts that start on the first screen to the rest of the window. Registered on first
    use (a Streamlit ``components.v2`` element, no iframe).
    """
    with _component_lock:
        if not _component:
            _component.append(
                st.components.v2.component("attention_lesson_present", js=_JS.read_text(encoding="utf-8"))
            )
    with st.sidebar:
        _component[0](key="present_keys")
