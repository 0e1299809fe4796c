"""A page as a list of sections: the table of contents that ``render()`` reads like.

Each page's ``render()`` builds a list of :class:`Section` and hands it to :func:`run_sections`.
A section is a small function that draws one idea (its controls, its figures, its note). Today
every section is drawn in order; presentation mode (issue 10, ``ui.classroom``) shows one section
at a time through the same list, so a page written this way gets slides for free.

Page-wide values (data, controls of the sidebar) reach a section through ``functools.partial``
or a closure; a section whose controls drive only itself is an ``st.fragment``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass


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
    """Draw the sections of page ``page_id`` (its URL path, e.g. ``"kernel-regression"``) in order."""
    del page_id  # used by presentation mode
    for section in sections:
        section.render()
