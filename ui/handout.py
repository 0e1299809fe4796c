"""The handout: what the current page showed, kept per session, downloadable as one HTML worksheet.

Three things are kept, by position on the page (an element's delta path), so that an item redrawn
by an ``st.fragment`` rerun, or drawn again into the same placeholder during a live run, replaces
its earlier version instead of adding a copy:

- figures, tables, "what to look for" notes and questions, recorded by the helpers that draw them
  (``ui.layout.show_figure``, ``look_for``, ``table``; ``ui.questions.ask``) with :func:`record`;
- the page's text: headings, paragraphs, captions, notes, formulas (``st.latex``), metrics and code,
  seen as they are sent to the browser (:func:`watch`: a tap on this run's outgoing messages, so the
  pages need no change to be in the handout; main area only, never the sidebar);
- the controls' labels and values, in drawing order (``ui.controls`` calls :func:`record_control`).

Items drawn while :func:`answers_to` names a question (``ui.questions.reveal``) belong to that
question's answer: the handout prints them in its answers section, after the worksheet. Whatever a
question box holds (its verdict, its explanation) is left out: the question is recorded as such.

``app.main`` starts each full run of a page with :func:`begin_page` (a full run redraws every item,
fragments included, so the registry starts empty) and ends it with :func:`handout_button`.
Recording costs a few microseconds per element: objects are kept by reference. Nothing is built
on a rerun: the button hands Streamlit a callable, run on click, that turns the registry into HTML
with ``figures.export.build_html`` (issue 10.4).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

import streamlit as st
from streamlit.cursor import RunningCursor
from streamlit.proto.Markdown_pb2 import Markdown
from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext, get_script_run_ctx

from figures.common import FIGURE_CONFIG
from figures.export import HandoutItem, HandoutMeta, build_html
from ui.i18n import LANGUAGES, current_language, t
from ui.link_keys import SLIDE_KEY, TEACHER_KEYS, is_answer_param

#: Session-state key of this session's :class:`Registry`.
STATE_KEY = "_handout"
#: Kinds of record whose descendants (a question's box, the code under a figure) stay out.
_MASKING = frozenset({"question", "skip"})
#: The root container of the page's main area in a delta path (1 is the sidebar).
_MAIN = 0


@functools.lru_cache(maxsize=256)
def source(fn: Callable[..., Any]) -> str:
    """The source code of ``fn``, read from its module (``inspect.getsource``), once per process."""
    return inspect.getsource(fn)


def qualified_name(fn: Callable[..., Any]) -> str:
    """``module.function`` of ``fn``, as a reader would import it."""
    return f"{fn.__module__}.{fn.__qualname__}"


class Entry(NamedTuple):
    """One recorded element: what it is, and the question it answers ("" for none)."""

    kind: str
    key: str
    obj: Any = None
    caption: str = ""
    code: tuple[Callable[..., Any], ...] = ()
    answer_of: str = ""


@dataclass
class Registry:
    """What one session's current page showed, by position on the page.

    Attributes:
        page: URL path of the page (``""`` before the first page ran).
        title: the page's title, in the language of the last full run.
        items: ``position -> Entry``; a position is the element's delta path (a tuple of ints,
            page order), or ``(key,)`` when Streamlit gives none.
        query: the query string of the view when an item was last recorded (fragments that change
            a bound control change it without a full run).
        controls: ``key -> (label, value)`` of every control drawn, in drawing order.
        answer_of: the question whose answer is being drawn now (see :func:`answers_to`).
    """

    page: str = ""
    title: str = ""
    items: dict[tuple, Entry] = field(default_factory=dict)
    query: dict[str, str] = field(default_factory=dict)
    controls: dict[str, tuple[str, str]] = field(default_factory=dict)
    answer_of: str = ""

    def snapshot(self) -> list[HandoutItem]:
        """The items in page order, as ``figures.export.HandoutItem`` (sources read here).

        A question's record is turned into its text here (``ui.questions`` records a callable, so
        an answer that costs a computation is computed on click only).
        """
        # a copy first: the click runs on another thread while a rerun may be filling the dict
        shown = sorted(self.items.copy().items(), key=lambda kv: _page_order(kv[0]))
        masks = [pos for pos, e in shown if e.kind in _MASKING]
        kept = [(pos, e) for pos, e in shown if e.kind not in _MASKING or e.kind == "question"]
        kept = [(pos, e) for pos, e in kept if not any(_inside(pos, m) for m in masks)]
        out, level = [], 2
        for i, (pos, e) in enumerate(kept):
            if e.kind == "heading" and len(pos) == 2:  # a section's title, at the page's top level
                level = e.obj
            if e.kind == "expander":
                if not any(_inside(p, pos) for p, _ in kept[i + 1 :]):
                    continue  # a closed fold (or a box of controls only): its title alone says nothing
                e = e._replace(obj=level)  # a fold's title stands for its section's heading
            out.append(_item(e))
        return out

    def settings(self) -> tuple[tuple[str, str], ...]:
        """``(label, value)`` of the view's controls (not the slide picker of presentation mode)."""
        return tuple(v for k, v in self.controls.copy().items() if k != SLIDE_KEY)


def _inside(position: tuple, block: tuple) -> bool:
    return len(position) > len(block) and position[: len(block)] == block


def _item(e: Entry) -> HandoutItem:
    """A recorded entry as the handout's item."""
    code = tuple((qualified_name(fn), source(fn)) for fn in e.code)
    common = {"caption": e.caption, "answer_of": e.answer_of}
    if e.kind == "figure":
        obj = e.obj
        if isinstance(obj, tuple):  # (figure, marks drawn over it): materialised only here
            fig, marks = obj
            obj = marks.figure(fig)
        return HandoutItem("figure", e.key, figure=obj, code=code, **common)
    if e.kind == "table":
        return HandoutItem("table", e.key, table=e.obj, code=code, **common)
    if e.kind == "question":  # a callable (``ui.questions``): an answer may cost a computation
        return HandoutItem("question", e.key, question=e.obj(), answer_of=e.answer_of)
    if e.kind == "heading":
        return HandoutItem("heading", e.key, level=e.obj, **common)
    if e.kind == "expander":
        return HandoutItem("heading", e.key, level=e.obj or 2, **common)
    if e.kind == "metric":
        return HandoutItem("metric", e.key, value=e.obj, **common)
    return HandoutItem(e.kind, e.key, **common)


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
    reg.controls.clear()
    reg.answer_of = ""
    reg.query = st.query_params.to_dict()
    watch()


def _position(element: Any, key: str) -> tuple:
    """Where ``element`` sits: its delta path; a container's own path (not its next child's)."""
    cursor = getattr(element, "_cursor", None)
    if isinstance(cursor, RunningCursor):
        return (cursor.root_container, *cursor.parent_path)
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

    ``kind`` ``"skip"`` leaves the element, and everything inside it, out of the handout (a
    figure's note, already kept with the figure; the code under it). Costs a few microseconds: the
    object is kept by reference, nothing is copied or serialised.
    """
    reg = registry()
    watch()  # a fragment's rerun records too
    reg.items[_position(element, key)] = Entry(kind, key, obj, caption, tuple(code), reg.answer_of)
    reg.query = st.query_params.to_dict()


def record_control(key: str, label: str, value: str) -> None:
    """Remember a control's label and the value it shows (``ui.controls`` calls this)."""
    reg = registry()
    watch()
    reg.controls[key] = (label, value)
    reg.query = st.query_params.to_dict()


@contextmanager
def answers_to(qid: str) -> Iterator[None]:
    """What is drawn inside belongs to question ``qid``'s answer (the handout's answers section)."""
    reg = registry()
    before, reg.answer_of = reg.answer_of, qid
    try:
        yield
    finally:
        reg.answer_of = before


# --- the page's text, seen on its way to the browser -------------------------------------------


def watch() -> None:
    """Record the text elements this script run sends (installed once per run; cheap, idempotent).

    Streamlit sends every element as a message through the run's context; the tap reads headings,
    paragraphs, captions, formulas, alerts, metrics and code of the main area on their way, and
    forgets what an element replaced at the same position (a placeholder drawn again).
    """
    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is None:
        return
    reg = registry()
    current = ctx.__dict__.get("enqueue")
    if getattr(current, "handout_registry", None) is reg:
        return
    # what sent before: another wrapper of this context, or the class's method; never a stale tap
    send = getattr(current, "handout_send", current) or ScriptRunContext.enqueue.__get__(ctx)

    def enqueue(msg: Any) -> None:
        _capture(reg, msg)
        send(msg)

    enqueue.handout_registry, enqueue.handout_send = reg, send  # type: ignore[attr-defined]
    ctx.enqueue = enqueue  # type: ignore[method-assign]  # this context only: this session's run


_HEADING_LEVELS = {"h2": 2, "h3": 3}


def _capture(reg: Registry, msg: Any) -> None:
    """Keep one outgoing element of the main area, if it is text; else forget what it replaced."""
    if msg.WhichOneof("type") != "delta":
        return
    path = tuple(msg.metadata.delta_path)
    if not path or path[0] != _MAIN:
        return
    delta = msg.delta
    which = delta.WhichOneof("type")
    entry = None
    if which == "new_element":
        entry = _text_entry(delta.new_element, reg.answer_of)
    elif which == "add_block" and delta.add_block.WhichOneof("type") == "expandable":
        entry = Entry("expander", "", caption=delta.add_block.expandable.label, answer_of=reg.answer_of)
    elif which != "add_block":
        return
    if entry is None:
        reg.items.pop(path, None)
    else:
        reg.items[path] = entry


def _text_entry(element: Any, answer_of: str) -> Entry | None:
    """The handout's entry of a text element (None: not text, e.g. a chart or a widget)."""
    kind = element.WhichOneof("type")
    if kind == "heading":
        level = _HEADING_LEVELS.get(element.heading.tag)
        return (
            None if level is None else Entry("heading", "", level, element.heading.body, answer_of=answer_of)
        )
    if kind == "markdown":
        md = element.markdown
        if md.element_type == Markdown.Type.LATEX:
            return Entry("formula", "", caption=md.body.strip().strip("$").strip(), answer_of=answer_of)
        if md.element_type in (Markdown.Type.NATIVE, Markdown.Type.UNSPECIFIED, Markdown.Type.CAPTION):
            text_kind = "caption" if md.element_type == Markdown.Type.CAPTION else "text"
            return Entry(text_kind, "", caption=md.body, answer_of=answer_of)
        return None
    if kind == "alert":
        return Entry("alert", "", caption=element.alert.body, answer_of=answer_of)
    if kind == "metric":
        return Entry("metric", "", element.metric.body, element.metric.label, answer_of=answer_of)
    if kind == "code":
        return Entry("code", "", caption=element.code.code_text, answer_of=answer_of)
    return None


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


def student_query(query: dict[str, str]) -> dict[str, str]:
    """The view's query string for students: no answers, no presentation mode.

    Answers never enter the URL (``ui.questions``); an old link's ``q_...`` values are dropped
    here too. ``present``, ``slide`` and ``questions`` are the teacher's projector settings.
    """
    return {k: v for k, v in query.items() if k not in TEACHER_KEYS and not is_answer_param(k)}


def handout_html(
    reg: Registry, *, lang: str, words: dict[str, str], base_url: str | None, timezone: str | None
) -> str:
    """Build the handout of ``reg`` now (runs on click, outside the script run: no ``st`` calls)."""
    items = reg.snapshot()
    meta = HandoutMeta(
        title=reg.title,
        lang=lang,
        date=_now(timezone),
        url=view_url(base_url, student_query(dict(reg.query))),
        words=words,
        settings=reg.settings(),
    )
    return build_html(items, meta, config=FIGURE_CONFIG)


#: The handout's own words: ``figures.export.HandoutMeta.words`` key -> i18n key.
WORDS = {
    "heading": "common.handout_heading",
    "made": "common.handout_made",
    "view": "common.handout_view",
    "language": "common.handout_language",
    "figure": "common.handout_figure",
    "code": "common.show_code",
    "empty": "common.handout_empty",
    "settings": "common.handout_settings",
    "control": "common.handout_control",
    "value": "common.handout_value",
    "question": "common.handout_question",
    "your_answer": "q.your_answer",
    "answers": "common.handout_answers",
    "answers_note": "common.handout_answers_note",
    "answer": "common.handout_answer",
}


def handout_button(url_path: str) -> None:
    """The "Download a handout (HTML)" button at the end of the page (the file is built on click)."""
    lang = current_language()
    words = {name: t(key) for name, key in WORDS.items()} | {"language_name": LANGUAGES[lang]}
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


#: Key of the "Copy link for students" popover (its open state).
STUDENT_LINK_KEY = "student_link"


def student_link() -> None:
    """ "Copy link for students": the view's URL without answers or presentation mode.

    A popover that reruns the page when opened, so the link holds every control as it is now
    (a fragment may have moved one since the last full run); ``st.code`` gives it a copy button.
    """
    box = st.popover(
        t("common.student_link"),
        icon=":material/link:",
        key=STUDENT_LINK_KEY,
        on_change="rerun",
        help=t("common.student_link_help"),
    )
    record("skip", box, key=STUDENT_LINK_KEY)
    if box.open:
        with box:
            st.caption(t("common.student_link_body"))
            st.code(
                view_url(st.context.url, student_query(st.query_params.to_dict())),
                language=None,
                wrap_lines=True,
            )
