"""A page as a list of sections: the table of contents that ``render()`` reads like.

Each page's ``render()`` builds a list of :class:`Section` and hands it to :func:`run_sections`.
A section is a small function that draws one idea (its controls, its figures, its note). Sections
are drawn in order; presentation mode (``ui.classroom``, ``?present=1``) shows one section at a
time through the same list, so a page written this way gets slides for free.

Page-wide values (data, controls of the sidebar) reach a section through ``functools.partial``
or a closure; a section whose controls drive only itself is an ``st.fragment``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from ui import classroom
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
    """

    title_key: str
    render: Callable[[], None]


def run_sections(page_id: str, sections: Sequence[Section]) -> None:
    """Draw the sections of page ``page_id`` (its URL path, e.g. ``"kernel-regression"``).

    In order; while presenting, only the slide chosen in the navigation above it.
    """
    del page_id  # the slide number is per page view: Streamlit drops it on a page switch
    if not classroom.presenting():
        for section in sections:
            section.render()
        return
    shown = classroom.slide_navigation([t(s.title_key) for s in sections])
    sections[shown - 1].render()
