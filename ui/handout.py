"""The handout: what the current page showed, kept per session, downloadable as one HTML file.

``ui.layout.show_figure`` (and ``look_for``) record each item here, by its
position on the page, so an item redrawn by an ``st.fragment`` rerun, or drawn again into the same
placeholder during a live run, replaces its earlier version instead of adding a copy. ``app.main``
starts each full run of a page with :func:`begin_page` (a full run redraws every item, fragments
included, so the registry starts empty) and ends it with :func:`handout_button`.

Nothing is built on a rerun: the button hands Streamlit a callable, run on click, that turns the
registry into HTML with ``figures.export.build_html`` (issue 10.4).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

import streamlit as st

from figures.common import FIGURE_CONFIG
from figures.export import HandoutItem, HandoutMeta, build_html
from ui.i18n import LANGUAGES, current_language, t

#: Session-state key of this session's :class:`Registry`.
STATE_KEY = "_handout"


@functools.lru_cache(maxsize=256)
def source(fn: Callable[..., Any]) -> str:
    """The source code of ``fn``, read from its module (``inspect.getsource``), once per process."""
    return inspect.getsource(fn)


def qualified_name(fn: Callable[..., Any]) -> str:
    """``module.function`` of ``fn``, as a reader would import it."""
    return f"{fn.__module__}.{fn.__qualname__}"


@dataclass
class Registry:
    """What one session's current page showed, by position on the page.

    Attributes:
        page: URL path of the page (``""`` before the first page ran).
        title: the page's title, in the language of the last full run.
        items: ``position -> (kind, key, object, caption, functions)``; a position is the element's
            delta path (a tuple of ints, page order), or ``(key,)`` when Streamlit gives none.
        query: the query string of the view when an item was last recorded (fragments that change
            a bound control change it without a full run).
    """

    page: str = ""
    title: str = ""
    items: dict[tuple, tuple] = field(default_factory=dict)
    query: dict[str, str] = field(default_factory=dict)

    def snapshot(self) -> list[HandoutItem]:
        """The items in page order, as ``figures.export.HandoutItem`` (sources read here)."""
        # a copy first: the click runs on another thread while a rerun may be filling the dict
        shown = sorted(self.items.copy().items(), key=lambda kv: _page_order(kv[0]))
        out = []
        for _, (kind, key, obj, caption, fns) in shown:
            code = tuple((qualified_name(fn), source(fn)) for fn in fns)
            if kind == "figure":
                if isinstance(obj, tuple):  # (figure, marks drawn over it): materialised only here
                    fig, marks = obj
                    obj = marks.figure(fig)
                out.append(HandoutItem(kind, key, figure=obj, caption=caption, code=code))
            elif kind == "table":
                out.append(HandoutItem(kind, key, table=obj, caption=caption, code=code))
            else:
                out.append(HandoutItem(kind, key, caption=caption))
        return out


def _page_order(position: tuple) -> tuple:
    """Sort key of a position: delta paths in page order, key-only positions after them."""
    return tuple((0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in position)


def registry() -> Registry:
    """This session's registry (created on first use)."""
    reg = st.session_state.get(STATE_KEY)
    if reg is None:
        reg = st.session_state[STATE_KEY] = Registry()
    return reg


def begin_page(url_path: str, title: str) -> None:
    """Start a full run of the page ``url_path``: forget what the previous run showed."""
    reg = registry()
    reg.page, reg.title = url_path, title
    reg.items.clear()
    reg.query = st.query_params.to_dict()


def _position(element: Any, key: str) -> tuple:
    cursor = getattr(element, "_cursor", None)
    path = getattr(cursor, "delta_path", None)
    return tuple(path) if path else (key,)


def record(
    kind: str,
    element: Any,
    *,
    key: str,
    obj: Any = None,
    caption: str = "",
    code: Sequence[Callable[..., Any]] = (),
) -> None:
    """Remember an element the page just drew (``element``: what the ``st`` call returned).

    Costs a few microseconds: the object is kept by reference, nothing is copied or serialised.
    """
    reg = registry()
    reg.items[_position(element, key)] = (kind, key, obj, caption, tuple(code))
    reg.query = st.query_params.to_dict()


def _now(timezone: str | None) -> str:
    try:
        zone = ZoneInfo(timezone) if timezone else None
    except (KeyError, ValueError):  # an unknown zone name from the browser
        zone = None
    now = datetime.now(zone) if zone else datetime.now().astimezone()
    return now.strftime("%Y-%m-%d %H:%M %Z").strip()


def view_url(base: str | None, query: dict[str, str]) -> str:
    """The URL of the view: ``base`` (scheme, host, page path) and the query string."""
    qs = urlencode(query)
    if not base:
        return f"?{qs}" if qs else ""
    return f"{base}?{qs}" if qs else base


def handout_html(
    reg: Registry, *, lang: str, words: dict[str, str], base_url: str | None, timezone: str | None
) -> str:
    """Build the handout of ``reg`` now (runs on click, outside the script run: no ``st`` calls)."""
    items = reg.snapshot()
    meta = HandoutMeta(
        title=reg.title,
        lang=lang,
        date=_now(timezone),
        url=view_url(base_url, dict(reg.query)),
        words=words,
    )
    return build_html(items, meta, config=FIGURE_CONFIG)


def handout_button(url_path: str) -> None:
    """The "Download a handout (HTML)" button at the end of the page (the file is built on click)."""
    lang = current_language()
    words = {
        "heading": t("common.handout_heading"),
        "made": t("common.handout_made"),
        "view": t("common.handout_view"),
        "language": t("common.handout_language"),
        "language_name": LANGUAGES[lang],
        "figure": t("common.handout_figure"),
        "code": t("common.show_code"),
        "empty": t("common.handout_empty"),
    }
    build = functools.partial(
        handout_html,
        registry(),
        lang=lang,
        words=words,
        base_url=st.context.url,
        timezone=st.context.timezone,
    )
    st.download_button(
        t("common.handout_download"),
        data=build,
        file_name=f"{url_path or 'home'}-{lang}-handout.html",
        mime="text/html",
        key="handout_html",
        on_click="ignore",
        icon=":material/description:",
        help=t("common.handout_help"),
    )
