"""The class answers together (issue 26): a teacher's class, its students' predictions, the reveal.

A teacher presses **Start a class** (sidebar, "Class answers"): the store (``store.open_store``:
memory for ``make run``, Redis for ``make serve``) makes a random code and a secret teacher key,
which stays in the teacher's session (and a private teacher link that gives the view back after a
reload or on another device). The code is shown large with the student link and its QR code.

Students open the link (``?class=CODE``) or type the code. Each question of ``ui.questions`` then
calls :func:`on_question` after its answer widget: a student's answer goes to the class under an
anonymous browser id (:func:`browser_id`), one per question, replaced when it changes, until the
reveal; the teacher's box shows, live (a fragment polling every second), "17 of 28 answered", the
distribution, **Reveal** (the computed answer, judged on the teacher's controls, and the share of
the class that was right) and **Reset**. A student sees the class result only after the reveal;
until then their own Check waits too (:func:`on_question` returns True).

The store may be down (Redis stopped): every page still works, the class parts say that class
results are unavailable, and they recover by themselves. A student's answer that could not be
sent waits in the session and is sent by the next check-in (every 2 s); a store that came back
empty is refilled: the teacher's page restores the class and its reveals, students' pages send
their answers again (the class's *generation* tells them).

Rules the store does not know (per session): at most a few answers a second
(``store.limits.TokenBucket``), at most :data:`MAX_UNKNOWN_CODES` wrong codes tried.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit

import segno
import streamlit as st
from streamlit.errors import StreamlitAPIException

import figures.class_answers as figs
from figures.common import BLACK, Labels
from store import open_store
from store.limits import TokenBucket
from store.model import (
    ClassStore,
    InvalidAnswer,
    Question,
    QuestionClosed,
    QuestionView,
    Reveal,
    StoreError,
    StoreUnavailable,
    TooManyLookups,
    UnknownClass,
    decode_answer,
    encode_answer,
    new_voter_id,
    normalise_code,
    show_code,
    valid_voter_id,
)
from store.tally import choice_counts, number_bins, right_count
from ui import classroom, live_slider
from ui.controls import OPTIONS_SEEN
from ui.house_chart import house_chart
from ui.i18n import t
from ui.link_keys import is_right, widget_key

#: URL parameters: the class a student link opens, the teacher key of a teacher link.
CLASS_PARAM, TEACHER_PARAM = "class", "teacher"
#: The sidebar's code box (its value follows ``?class=`` for students; kept by this module).
INPUT_KEY = "class_code"
#: The browser-id cookie (set by a tiny component, read back by ``st.context.cookies``).
COOKIE = "attn_class_browser"
#: Seconds between a teacher's question panel refreshes, and between a page's check-ins.
TEACHER_POLL_S, PULSE_S = 1.0, 2.0
#: The distribution's type size while presenting (``ui.layout``'s projector size).
PROJECTOR_FONT_SIZE = 20
#: Wrong class codes one session may try (guessing codes from one page is pointless).
MAX_UNKNOWN_CODES = 5

# Session state (nothing here is a widget).
_CODE, _KEY, _BROWSER = "_class_code", "_class_teacher_key", "_class_browser"
_MINE, _SEEN, _BUCKET = "_class_mine", "_class_seen", "_class_bucket"
_TRIED, _NOTICE, _SHOW = "_class_tried", "_class_notice", "_class_show_code"
_REVEALS, _DOWN, _FRESH, _QNOTICE = "_class_reveals", "_class_down", "_class_fresh", "_class_qnotice"
_PROPOSED = "_class_browser_proposed"
_ALL = (_CODE, _KEY, _MINE, _SEEN, _BUCKET, _SHOW, _REVEALS, _DOWN, _FRESH, _QNOTICE)

_BROWSER_JS = """
export default function (component) {
  const { data, setStateValue } = component;
  const name = data.cookie + "=";
  const found = document.cookie.split("; ").find((c) => c.startsWith(name));
  let id = found ? found.slice(name.length) : "";
  if (!/^[0-9a-f]{32}$/.test(id)) {
    id = data.proposal;
    document.cookie = `${name}${id}; Max-Age=${data.max_age}; Path=/; SameSite=Lax`;
  }
  setStateValue("id", id);
}
"""
_browser_component = None


@dataclass
class Mine:
    """A student's answer to one question: what they picked, and whether the store has it."""

    question: Question
    value: str | float
    encoded: str
    round: int | None  # the round it answers (None: whatever the question's round is now)
    sent: bool = False
    closed: bool = False  # revealed before it arrived: never sent


def store() -> ClassStore:
    """The process's class store (Redis when ``REDIS_URL`` is set, else memory)."""
    return open_store()


def class_code() -> str | None:
    """The class this session belongs to (as teacher or student), None outside a class."""
    return st.session_state.get(_CODE)


def is_teacher() -> bool:
    """Whether this session holds its class's teacher key."""
    return bool(st.session_state.get(_KEY)) and class_code() is not None


# ---------------------------------------------------------------------------------------- identity


def browser_id() -> str:
    """This browser's anonymous id: 128 random bits, kept in a cookie for 12 hours.

    Read from the cookie the browser sent with this session; a browser without one gets a new id,
    which :func:`_identify` has a tiny component (JavaScript, no network) store in the cookie, or
    replace with the one another tab stored meanwhile. Every tab of one browser answers as one
    student. Nothing else identifies a student: no address, no name.
    """
    known = st.session_state.get(_BROWSER)
    if known is None:
        cookie = st.context.cookies.get(COOKIE) if st.context.cookies else None
        known = cookie if valid_voter_id(cookie) else new_voter_id()
        st.session_state[_BROWSER] = known
        if not valid_voter_id(cookie):
            st.session_state[_PROPOSED] = known
    return known


def _identify() -> None:
    """A student's full run, until the browser confirmed its id: the cookie component, mounted once.

    If the browser reports another id (another tab set the cookie first), answers this session
    already sent under the old one are sent again under the browser's.
    """
    browser_id()
    proposed = st.session_state.get(_PROPOSED)
    if proposed is None:
        return
    global _browser_component
    if _browser_component is None:
        _browser_component = st.components.v2.component("attn_class_browser", js=_BROWSER_JS)
    payload = {"cookie": COOKIE, "proposal": proposed, "max_age": int(store().ttl_s)}
    result = _browser_component(key="class_browser_id", data=payload, default={"id": None},
                                height=0, on_id_change=lambda: None)  # fmt: skip
    reported = getattr(result, "id", None)
    if not valid_voter_id(reported):
        return
    del st.session_state[_PROPOSED]
    if reported != st.session_state[_BROWSER]:
        st.session_state[_BROWSER] = reported
        for m in st.session_state.get(_MINE, {}).values():
            m.sent = False


# ---------------------------------------------------------------------------------------- joining


def _notice(kind: str, key: str, **kwargs: object) -> None:
    """A message shown once, at the top of the next run (callbacks cannot draw)."""
    st.session_state[_NOTICE] = (kind, key, kwargs)


def _forget_class() -> None:
    for name in _ALL:
        st.session_state.pop(name, None)


def _start() -> None:
    """Start a class button: a new class, this session its teacher."""
    try:
        room = store().create_class()
    except StoreError:
        _notice("warning", "class.unavailable")
        return
    _forget_class()
    st.session_state.update({_CODE: room.code, _KEY: room.teacher_key, _SHOW: True, INPUT_KEY: ""})
    if CLASS_PARAM in st.query_params:
        del st.query_params[CLASS_PARAM]


def _leave() -> None:
    """Leave the class (a student) or the teacher's view: this session forgets the class."""
    _forget_class()
    st.session_state[INPUT_KEY] = ""
    if CLASS_PARAM in st.query_params:
        del st.query_params[CLASS_PARAM]


def _toggle_code() -> None:
    st.session_state[_SHOW] = not st.session_state.get(_SHOW, False)


def _read_teacher_link() -> None:
    """``?class=CODE&teacher=KEY`` (the private teacher link): the teacher's view back, then the
    key leaves the URL at once (a copied address bar must never carry it)."""
    key = st.query_params.get(TEACHER_PARAM)
    if key is None:
        return
    raw = st.query_params.get(CLASS_PARAM)
    del st.query_params[TEACHER_PARAM]
    code = normalise_code(raw)
    try:
        ok = code is not None and store().is_teacher(code, key)
    except StoreUnavailable:
        _notice("warning", "class.unavailable")
        return
    if not ok:
        _notice("error", "class.teacher_link_bad")
        return
    _forget_class()
    st.session_state.update({_CODE: code, _KEY: key, INPUT_KEY: ""})
    if CLASS_PARAM in st.query_params:
        del st.query_params[CLASS_PARAM]
    _notice("success", "class.teacher_back", code=show_code(code))


def _join(typed: str) -> None:
    """Join the class whose code is in the sidebar's box (typed, or from the link)."""
    if not typed.strip():
        return  # leaving is the Leave button's (Streamlit empties the box on a page switch)
    code = normalise_code(typed)
    if code is None:
        st.warning(t("class.code_invalid"), icon=":material/error:")
        return
    if code == class_code():
        return
    tried: set[str] = st.session_state.setdefault(_TRIED, set())
    if code in tried:
        st.warning(t("class.code_unknown", code=show_code(code)), icon=":material/error:")
        return
    if len(tried) >= MAX_UNKNOWN_CODES:
        st.warning(t("class.too_many_tries"), icon=":material/block:")
        return
    try:
        known = store().join(code)
    except TooManyLookups:
        st.warning(t("class.too_many_lookups"), icon=":material/hourglass_top:")
        return
    except StoreUnavailable:
        known = True  # taken on trust for now: the first check-in finds out (UnknownClass)
    if not known:
        tried.add(code)
        st.warning(t("class.code_unknown", code=show_code(code)), icon=":material/error:")
        if CLASS_PARAM in st.query_params:
            del st.query_params[CLASS_PARAM]
        return
    _forget_class()
    st.session_state[_CODE] = code


def _keep_code_in_url() -> None:
    """A student's URL keeps ``?class=CODE`` (a reload stays in the class; Streamlit drops the
    query string on a page switch); a teacher's URL never has it (the projector shows the URL)."""
    code = class_code()
    wanted = code if code is not None and not is_teacher() else None
    if wanted is None:
        if CLASS_PARAM in st.query_params and class_code() is not None:
            del st.query_params[CLASS_PARAM]
    elif st.query_params.get(CLASS_PARAM) != wanted:
        st.query_params[CLASS_PARAM] = wanted


def class_sidebar() -> None:
    """The sidebar's "Class answers" box and, in a class, the line above the page (``app.main``).

    Reads the teacher link and the student link first, so the page's questions know the class.
    """
    _read_teacher_link()
    code = class_code()
    with st.sidebar.expander(t("class.title"), icon=":material/groups:", expanded=code is not None):
        if is_teacher():
            st.markdown(t("class.you_teach", code=show_code(code)))
            shown = st.session_state.get(_SHOW, False)
            st.button(t("class.hide_code" if shown else "class.show_code"), key="class_show",
                      icon=":material/qr_code_2:", on_click=_toggle_code)  # fmt: skip
            st.button(t("class.stop"), key="class_stop", help=t("class.stop_help"), on_click=_leave)
        else:
            if not st.session_state.get(INPUT_KEY):  # first run, or a page switch emptied it
                if class_code() is not None:
                    st.session_state[INPUT_KEY] = show_code(class_code())
                elif raw := st.query_params.get(CLASS_PARAM):
                    st.session_state[INPUT_KEY] = raw[:40]
            typed = st.text_input(t("class.code_label"), key=INPUT_KEY, max_chars=40,
                                  placeholder="ABCD-EFGH", help=t("class.code_help"))  # fmt: skip
            st.session_state.setdefault(OPTIONS_SEEN, {})[INPUT_KEY] = ()  # kept in the URL here
            _join(typed)
            if class_code() is not None:
                _identify()
                st.caption(t("class.you_are_in", code=show_code(class_code())))
                st.button(t("class.leave"), key="class_leave", on_click=_leave)
            else:
                st.button(t("class.start"), key="class_start", icon=":material/co_present:",
                          help=t("class.start_help"), on_click=_start)  # fmt: skip
    _keep_code_in_url()
    if (notice := st.session_state.pop(_NOTICE, None)) is not None:
        kind, key, kwargs = notice
        getattr(st, kind)(t(key, **kwargs))
    if class_code() is None:
        return
    if is_teacher() and st.session_state.get(_SHOW):
        _code_panel(class_code())
    _check_in()


# ---------------------------------------------------------------------------------------- the code


def student_link(code: str) -> str:
    """The link students open: this page, with the teacher's current view, and ``?class=CODE``."""
    base = _page_url()
    query = {
        k: v for k, v in st.query_params.to_dict().items() if k not in ("present", "slide", TEACHER_PARAM)
    }
    query[CLASS_PARAM] = code
    return f"{base}?{urlencode(query)}"


def _page_url() -> str:
    url = getattr(st.context, "url", None) or ""
    parts = urlsplit(url)
    if not parts.scheme:
        return "/"
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


def qr_svg(link: str) -> str:
    """The QR code of ``link`` as an SVG drawn here (segno, pure Python: no network, no image)."""
    return segno.make(link, error="m").svg_inline(scale=1, border=2, omitsize=True, dark=BLACK)


def _code_panel(code: str) -> None:
    """The code in large type, the student link and its QR code (the teacher shows it to the class)."""
    link = student_link(code)
    with st.container(border=True, key="class_code_panel"):
        left, right = st.columns([3, 2], vertical_alignment="center")
        with left:
            st.subheader(t("class.join_title"), anchor=False)
            st.html(f'<div class="class-code" style="font-size:5rem;font-weight:700;letter-spacing:0.08em;'
                    f'line-height:1.1">{show_code(code)}</div>')  # fmt: skip
            st.code(link, language=None, wrap_lines=True)
            st.caption(t("class.join_how"))
        right.image(qr_svg(link), width=260)
        with st.expander(t("class.teacher_link"), icon=":material/key:"):
            query = urlencode({CLASS_PARAM: code, TEACHER_PARAM: st.session_state[_KEY]})
            st.code(f"{_page_url()}?{query}", language=None, wrap_lines=True)
            st.caption(t("class.teacher_link_help"))


# ---------------------------------------------------------------------------------------- check-in


def _check_in() -> None:
    """A full run's check-in (before the page draws its questions), then the polling line."""
    line = _pulse_once()
    st.session_state[_FRESH] = line
    st.fragment(_pulse_fragment, run_every=PULSE_S, key="class_pulse")()


def _pulse_fragment() -> None:
    """Every :data:`PULSE_S` s: check in; on news (a reveal, a reset, the store back) rerun the page."""
    line = st.session_state.pop(_FRESH, None)
    if line is None:  # a run of the fragment alone
        before = st.session_state.get(_SEEN)
        was_down = st.session_state.get(_DOWN, False)
        line = _pulse_once()
        after = st.session_state.get(_SEEN)
        back = was_down and not st.session_state.get(_DOWN, False)
        if back or (not is_teacher() and after is not None and before is not None and after != before):
            st.rerun(scope="app")  # the questions redraw with the news
    kind, text = line
    (st.caption if kind == "caption" else st.warning)(text)


def _pulse_once() -> tuple[str, str]:
    """Check in with the store and apply what changed; the line to show (kind, text)."""
    code = class_code()
    assert code is not None
    teacher = is_teacher()
    try:
        try:
            pulse = store().touch(code, None if teacher else browser_id())
        except UnknownClass:
            if not teacher:
                return "warning", t("class.gone", code=show_code(code))
            if not store().restore_class(code, st.session_state[_KEY]):
                _forget_class()
                return "warning", t("class.gone_teacher", code=show_code(code))
            pulse = store().touch(code, None)
        seen = st.session_state.get(_SEEN)
        if teacher:
            if seen is not None and seen[0] != pulse.generation:
                _restore_reveals(code)
        else:
            _apply_news(code, seen, pulse.generation, pulse.revision)
            _send_pending(code)
        st.session_state[_SEEN] = (pulse.generation, pulse.revision)
        st.session_state.pop(_DOWN, None)
    except StoreUnavailable:
        st.session_state[_DOWN] = True
        return "warning", t("class.unavailable" if teacher else "class.unavailable_student")
    if teacher:
        return "caption", ":material/groups: " + t(
            "class.bar_teacher", code=show_code(code), present=pulse.present
        )
    return "caption", ":material/groups: " + t("class.bar_student", code=show_code(code))


def _apply_news(code: str, seen: tuple[str, int] | None, generation: str, revision: int) -> None:
    """A student's page learns what changed: the store lost its data (send every answer again), or
    a question was reset (forget the answer to it, and clear its widget before the page draws it)."""
    if seen is None:
        return
    mine: dict[str, Mine] = st.session_state.setdefault(_MINE, {})
    if seen[0] != generation:
        for m in mine.values():
            m.sent, m.closed, m.round = False, False, None
    elif seen[1] != revision:
        for qid, m in list(mine.items()):
            if m.round is not None and store().question(code, qid).round != m.round:
                del mine[qid]
                _clear_widget(qid)


def _clear_widget(qid: str) -> None:

    with contextlib.suppress(StreamlitAPIException):  # drawn already this run: cleared next run
        st.session_state[widget_key(qid)] = None


def _send_pending(code: str) -> None:
    for m in st.session_state.get(_MINE, {}).values():
        if not m.sent and not m.closed:
            _send(code, m)


def _send(code: str, m: Mine) -> None:
    """Send one answer; on failure it stays pending (``m.sent`` False) for the next check-in."""
    try:
        round_ = m.round if m.round is not None else store().question(code, m.question.qid).round
        store().submit(code, m.question, browser_id(), m.value, round_)
        m.round, m.sent = round_, True
    except QuestionClosed:
        m.closed = True
    except UnknownClass:
        pass  # the store lost the class: sent again once the teacher's page restored it
    except StoreUnavailable:
        st.session_state[_DOWN] = True


def _restore_reveals(code: str) -> None:
    """The teacher's page puts back the reveals it made, into a store that lost them."""
    for qid, reveal in st.session_state.get(_REVEALS, {}).items():
        with contextlib.suppress(StoreError):
            view = store().question(code, qid, st.session_state[_KEY])
            if view.revealed is None:
                store().reveal(code, qid, st.session_state[_KEY], reveal, view.round)


# ---------------------------------------------------------------------------------------- questions


def on_question(
    qid: str,
    response: Any,
    *,
    answer: Any | Callable[[], Any],
    choices: Mapping[str, str] | None,
    labels: Mapping[str, str] | None,
    tolerance: float,
    relative: bool,
    min_value: float | None,
    max_value: float | None,
    fmt: str | None,
) -> bool:
    """The hook of ``ui.questions.ask``, called after the answer widget, inside the question's box.

    Outside a class it does nothing. A student's ``response`` goes to the class and a line says
    where it stands (after the reveal: the class result); the teacher gets the live panel.

    Returns:
        True while the student should keep their answer to themselves: in a class, before the
        teacher revealed the answer (``ask`` holds its Check button meanwhile).
    """
    code = class_code()
    if code is None:
        return False
    question = Question(qid, tuple(choices) if choices is not None else None, min_value, max_value)
    shown = _Shown(question, labels or {}, fmt)
    if is_teacher():
        panel = st.fragment(_teacher_panel, run_every=TEACHER_POLL_S, key=f"class_panel_{qid}")
        panel(code, question, shown, answer, tolerance, relative)
        return False
    return _student(code, question, shown, response)


@dataclass(frozen=True)
class _Shown:
    """How a question's answers read: a choice's label, or a number in the input's format."""

    question: Question
    labels: Mapping[str, str]
    fmt: str | None

    def answer(self, stored: str) -> str:
        value = decode_answer(self.question, stored)
        if isinstance(value, str):
            return self.labels.get(value, value)
        return self.fmt % value if self.fmt else f"{value:.4g}"


def _view(code: str, qid: str, key: str | None = None) -> QuestionView | None:
    try:
        return store().question(code, qid, key)
    except (StoreUnavailable, UnknownClass):
        return None


def _student(code: str, question: Question, shown: _Shown, response: Any) -> bool:
    view = _view(code, question.qid)
    mine: dict[str, Mine] = st.session_state.setdefault(_MINE, {})
    m = mine.get(question.qid)
    if response is not None and (view is None or view.revealed is None):
        try:
            encoded = encode_answer(question, response)
        except InvalidAnswer as error:
            st.error(t("class.invalid_answer", reason=str(error)), icon=":material/error:")
            return True
        if m is None or m.encoded != encoded:
            m = mine[question.qid] = Mine(question, decode_answer(question, encoded), encoded,
                                          view.round if view is not None else None)  # fmt: skip
            bucket: TokenBucket = st.session_state.setdefault(_BUCKET, TokenBucket())
            if bucket.take():
                _send(code, m)
            else:
                st.caption(":material/hourglass_top: " + t("class.slow_down"))
        elif not m.sent and not m.closed:
            _send(code, m)
    if view is None:
        st.caption(":material/cloud_off: " + t("class.unavailable_student"))
        return True
    if view.revealed is not None:
        _result(view, shown, mine=m)
        return False
    if m is not None and m.closed:
        st.caption(":material/block: " + t("class.too_late"))
    elif m is not None and m.sent:
        st.caption(":material/how_to_vote: " + t("class.your_answer_in", code=show_code(code)))
    elif m is not None:
        st.caption(":material/schedule: " + t("class.sending", code=show_code(code)))
    else:
        st.caption(":material/groups: " + t("class.not_yet", code=show_code(code)))
    return True


def _judge(question: Question, reveal: Reveal) -> Callable[[str], bool]:
    """Whether a stored answer is right against the revealed one (``ui.link_keys.is_right``)."""

    target = decode_answer(question, reveal.answer)

    def right(stored: str) -> bool:
        value = decode_answer(question, stored)
        return is_right(value, target, tolerance=reveal.tolerance, relative=reveal.relative)

    return right


def _chart(view: QuestionView, shown: _Shown, *, key: str) -> None:
    """The distribution: a bar per choice (or a histogram of numbers); right answers green."""
    answers = view.answers or {}
    question = shown.question
    size = PROJECTOR_FONT_SIZE if classroom.presenting() else None
    judge = _judge(question, view.revealed) if view.revealed is not None else None
    if question.choices is not None:
        labels = [shown.labels.get(c, c) for c in question.choices]
        counts = choice_counts(answers, question.choices)
        right = (
            [n if judge(c) else 0 for c, n in zip(question.choices, counts, strict=True)] if judge else None
        )
        titles = Labels.of(count=t("class.count_title"))
        fig = figs.answer_bars(labels, counts, right_counts=right, labels=titles, font_size=size)
    else:
        right_number = (lambda x: judge(repr(float(x)))) if judge else None
        bins = number_bins([float(a) for a in answers.values()], fmt=shown.fmt, is_right=right_number)
        if not bins.counts:
            return
        titles = Labels.of(count=t("class.count_title"), value=t("class.value_title"))
        fig = figs.answer_bars(bins.labels, bins.counts, right_counts=bins.right_counts, numeric=True,
                               font_size=size, labels=titles)  # fmt: skip
    config = {"displaylogo": False, "displayModeBar": False}
    if live_slider.enabled():  # one element kept as answers come in: one Plotly drawing per change
        house_chart(fig, key=key, config=config)
    else:  # ?live=0: Streamlit's chart, as before the kept charts
        st.plotly_chart(fig, width="stretch", key=key, config=config)


def _result(view: QuestionView, shown: _Shown, *, mine: Mine | None = None) -> None:
    """The revealed answer, the share of the class that was right, and the distribution."""
    assert view.revealed is not None
    answers = view.answers or {}
    judge = _judge(shown.question, view.revealed)
    answer = shown.answer(view.revealed.answer)
    n = len(answers)
    if n:
        right = right_count(answers, judge)
        st.success(t("class.revealed", answer=answer, right=right, n=n, pct=f"{right / n:.0%}"),
                   icon=":material/groups:")  # fmt: skip
    else:
        st.info(t("class.revealed_none", answer=answer), icon=":material/groups:")
    if mine is not None and mine.sent and not mine.closed:
        yours = shown.answer(mine.encoded)
        st.caption(
            t("class.you_were", answer=yours)
            if judge(mine.encoded)
            else t("class.you_were_wrong", answer=yours)
        )
    _chart(view, shown, key=f"class_chart_{shown.question.qid}")


def _teacher_panel(
    code: str, question: Question, shown: _Shown, answer: Any, tolerance: float, relative: bool
) -> None:
    """The teacher's live panel of one question (a fragment, every :data:`TEACHER_POLL_S` s)."""
    key = st.session_state.get(_KEY)
    if key is None:
        return
    qid = question.qid
    with st.container(border=True, key=f"class_box_{qid}"):
        view = _teacher_view(code, qid, key)
        if view is None:
            return
        st.markdown(f":material/groups: **{t('class.answered', n=view.answered, of=view.present)}**")
        if view.revealed is not None:
            _result(view, shown)
        else:
            _chart(view, shown, key=f"class_chart_{qid}")
        row = st.container(horizontal=True)
        row.button(t("class.reveal"), key=f"class_reveal_{qid}", icon=":material/visibility:", type="primary",
                   disabled=view.revealed is not None, on_click=_reveal,
                   args=(code, question, answer, tolerance, relative, view.round))  # fmt: skip
        row.button(t("class.reset"), key=f"class_reset_{qid}", icon=":material/restart_alt:",
                   help=t("class.reset_help"), on_click=_reset, args=(code, qid))  # fmt: skip
        if (note := st.session_state.get(_QNOTICE, {}).pop(qid, None)) is not None:
            st.warning(t(note))


def _teacher_view(code: str, qid: str, key: str) -> QuestionView | None:
    """The question as its teacher sees it; a class the store lost is restored first. None (and a
    line saying why) when the store is unavailable or the code went to another teacher."""
    try:
        try:
            return store().question(code, qid, key)
        except UnknownClass:
            if not store().restore_class(code, key):
                st.warning(t("class.gone_teacher", code=show_code(code)))
                return None
            _restore_reveals(code)
            return store().question(code, qid, key)
    except StoreUnavailable:
        st.warning(t("class.unavailable"), icon=":material/cloud_off:")
        return None


def _reveal(
    code: str, question: Question, answer: Any, tolerance: float, relative: bool, round_: int
) -> None:
    """Reveal callback: the answer computed on the teacher's controls now, to the class."""
    value = answer() if callable(answer) else answer
    encoded = str(value) if question.choices is not None else repr(float(value))
    reveal = Reveal(encoded, float(tolerance), bool(relative))
    try:
        store().reveal(code, question.qid, st.session_state.get(_KEY), reveal, round_)
    except StoreError:
        st.session_state.setdefault(_QNOTICE, {})[question.qid] = "class.unavailable"
        return
    st.session_state.setdefault(_REVEALS, {})[question.qid] = reveal


def _reset(code: str, qid: str) -> None:
    """Reset callback: the question's answers and reveal cleared, a new round."""
    try:
        store().reset(code, qid, st.session_state.get(_KEY))
    except StoreError:
        st.session_state.setdefault(_QNOTICE, {})[qid] = "class.unavailable"
        return
    st.session_state.get(_REVEALS, {}).pop(qid, None)
