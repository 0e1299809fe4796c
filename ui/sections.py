"""A page as a list of sections: the table of contents that ``render()`` reads like.

Each page's ``render()`` builds a list of :class:`Section` and hands it to :func:`run_sections`.
A section is a small function that draws one idea (its controls, its figures, its note). Sections
are drawn in order; presentation mode (``ui.classroom``, ``?present=1``) shows one section at a
time through the same list, so a page written this way gets slides for free.

Page-wide values (data, the sidebar's controls, the run on screen) reach a section one way: the
page builds one frozen ``View`` in ``render()`` and lists each section as
``Section("x.title", partial(section, view))`` (no lambda, no module global: ``tests/test_layers.py``);
a control drawn lazily where a section first needs it is a :func:`once` getter in a ``View`` field.
A section whose controls drive only itself is an ``st.fragment``.

A ``folded`` section (the deeper experiments and pitfalls further down a page) sits in a closed
expander titled with its section title and runs only once the learner opens it: nothing of it is
computed, sent or drawn before (issue 8: a page-wide step then redraws the few charts the learner
looks at, not twenty). Its open state is a control like any other, bound to the URL
(``?open_sdp_nan=true``), so a teacher's link opens the same sections. While presenting, every
section is a slide and none is folded. :func:`run_sections` draws each section's title (an h2, or
an h3 with ``level=3``; none inside the fold, whose label already says it); the section's own
function draws only what comes under it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import streamlit as st

from ui import classroom, controls
from ui.controls import BIND
from ui.handout import record
from ui.i18n import t

T = TypeVar("T")


def once(build: Callable[[], T]) -> Callable[[], T]:
    """A value several sections need (e.g. controls drawn in one of them), built on first use.

    The first section that asks draws it (in its place on the page, or at the top of the slide
    while presenting); the others reuse the value within the same run.
    """
    cell: list[T] = []

    def get() -> T:
        if not cell:
            cell.append(build())
        return cell[0]

    return get


def controls_first(*controls: Callable[[], object]) -> None:
    """While presenting, draw these page-wide controls now, folded in the box above the slide.

    Otherwise nothing happens here: each is drawn where a section first asks for it (see
    :func:`once`), as on the scrolling page.
    """
    if classroom.presenting():
        with classroom.controls_area():
            for draw in controls:
                draw()


@dataclass(frozen=True)
class Section:
    """One section of a page.

    Attributes:
        title_key: i18n key of the section's title (used for slide navigation and handouts).
        render: draws the section; takes no arguments.
        folded: on the scrolling page, drawn only once the learner opens its expander.
        level: its title's heading level: 2 (``st.header``), 3 (``st.subheader``, under the
            previous section's h2; an h2 while it is the slide), None: no title drawn (a section
            whose first element says what it is, e.g. the live run's buttons).
        above: drawn above the title (a group's own h2 and introduction, e.g. training's
            findings above their first h3); None: nothing.
    """

    title_key: str
    render: Callable[[], None]
    folded: bool = False
    level: int | None = 2
    above: Callable[[], None] | None = None

    @property
    def open_key(self) -> str:
        """Widget key (and URL parameter) of the fold: ``sdp.nan_title`` -> ``open_sdp_nan``."""
        slug = self.title_key.replace(".", "_").removesuffix("_title").removesuffix("_header")
        return f"open_{slug}"


def _draw(section: Section, *, slide: bool = False, in_fold: bool = False) -> None:
    """``section``: what goes above its title, its title (not inside its fold), then the section.

    While presenting, the slide's title sits right under the page's h1: an h2 even at ``level=3``
    (headings never skip a level, WCAG 1.3.1). The title is drawn here, outside any fragment in the
    section, so a fragment's rerun keeps it.
    """
    if section.above is not None:
        section.above()
    if section.level is not None and not in_fold:
        (st.subheader if section.level == 3 and not slide else st.header)(t(section.title_key))
    section.render()


def run_sections(page_id: str, sections: Sequence[Section]) -> None:
    """Draw the sections of page ``page_id`` (its URL path, e.g. ``"kernel-regression"``).

    In order; while presenting, only the slide chosen in the navigation above it. A folded section
    is a closed expander until opened (see the module docstring); a caption above the first one
    says so.
    """
    del page_id  # the slide number is per page view: Streamlit drops it on a page switch
    if not classroom.presenting():
        hinted = False
        for section in sections:
            if not section.folded:
                _draw(section)
                continue
            if not hinted:
                hint = st.caption(":material/unfold_more: " + t("common.folded_hint"))
                record("skip", hint, key="folded_hint")  # a printed handout has nothing to click
                hinted = True
            _folded(section)
        return
    shown = classroom.slide_navigation([t(s.title_key) for s in sections])
    _draw(sections[shown - 1], slide=True)


def _read_link(section: Section) -> None:
    """Make the link's ``?open_...=`` value one the expander's binding reads.

    A teacher types ``1``, ``yes`` or ``on`` (as for ``?present=1``, ``ui.controls.link_flag``):
    written back as ``true`` (``0/no/off``: ``false``). Any other word leaves the section closed,
    is said above the fold in the page's language, as for every control, and leaves the link.
    """
    raw = st.query_params.get(section.open_key)
    word = controls.link_flag(raw)
    if raw is None or raw == ("true" if word else "false"):
        return
    if word is None:
        controls.warn_refused_link(section.title_key, raw, t("common.fold_closed"))
        del st.query_params[section.open_key]
    else:
        st.query_params[section.open_key] = "true" if word else "false"
        st.session_state[section.open_key] = word  # this run too: the binding read the link already


def _folded(section: Section) -> None:
    """``section`` in a lazy, URL-bound expander: rendered only while it is open."""
    _read_link(section)
    box = st.expander(
        t(section.title_key), key=section.open_key, on_change="rerun", bind=BIND, icon=":material/menu_book:"
    )
    if box.open:
        with box:
            _draw(section, in_fold=True)
