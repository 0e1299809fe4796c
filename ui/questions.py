"""Predict, then see: a short question the learner answers before the page tells them.

``ask`` draws one question in a bordered box: a multiple choice (a radio with nothing picked) or a
number, a Check button and a "Show me" button. The right answer is an argument computed by the
*caller* from the live computation on the current controls (never a stored string), so the same
question is right for one setting and wrong for another. After Check the box says right or wrong
and reveals the explanation, which may quote live numbers; "Show me" gives the answer without one.

The question comes before anything that gives its answer away (issue 22.1). What does (a chart, a
metric, a sentence quoting the number) is drawn through :func:`reveal`: only once the learner
pressed Check or Show me (a flag kept for the session), and in its place a short line says to
answer first. A question not on screen (hidden by a presenting teacher, ``?questions=0``, or not
drawn this run) hides nothing. A page draws a question first in its section, then wraps what
answers it: ``questions.reveal("kr_active", partial(_row_figure, v))``.

The checked response is kept in the session with the answer it was checked against. Each run
compares that response with the *current* answer again: when a control of the page moves, the
verdict follows the new computation (and says it was re-checked) instead of staying stale. Changing
the response hides the verdict until Check is pressed again.

Answers live in the session only, never in the URL (issue 22.2): a shared link or a handout would
give them away. Widget keys: ``q_<qid>`` (the answer, not bound to the URL; a choice is kept
through language switches by ``ui.controls.radio(url=False)``), ``q_<qid>_check`` and
``q_<qid>_show``. :func:`start_page` drops any ``q_...`` parameter an old link still carries.
The handout records each question with its answer, built on click (``ui.handout``): the worksheet
prints the question, its answers section the answer and what :func:`reveal` drew.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from numbers import Integral
from typing import Any

import streamlit as st

from figures.export import HandoutQuestion
from ui import class_answers, classroom, handout
from ui import controls as uc
from ui.i18n import t, translator
from ui.link_keys import check_key, is_answer_param, is_right, show_key, widget_key

#: Session-state slot of a checked question: ``(response, answer it was checked against)``.
_CHECKED = "_q_{qid}_checked"
#: Session-state flag: question ``qid``'s answer was revealed (Check or Show me pressed).
_REVEALED = "_q_{qid}_revealed"
#: Session-state set of the questions drawn on this page view (see :func:`start_page`).
_ASKED = "_q_asked"
#: Session-state set of the questions a student in a class must not see answered yet (issue 26:
#: the teacher has not revealed them): no Show me, and nothing they hold back is drawn.
_HELD = "_q_held"


def start_page() -> None:
    """Before a page runs (``app.main``): no question asked yet; answers dropped from the URL.

    A link made before answers left the URL (``?q_kr_row=34``) opens with the answer ignored and
    the parameter removed, so copying the address bar again gives a clean link.
    """
    st.session_state[_ASKED] = set()
    st.session_state[_HELD] = set()
    for name in [n for n in st.query_params if is_answer_param(n)]:
        del st.query_params[name]


def revealed(qid: str) -> bool:
    """Whether what answers question ``qid`` may be shown: it was answered (Check) or shown (Show
    me), or it is not on screen (not drawn this page view, or hidden by a presenting teacher)."""
    if not classroom.questions_on() or qid not in st.session_state.get(_ASKED, ()):
        return True
    if qid in st.session_state.get(_HELD, ()):
        return False  # a student in a class: the teacher reveals it
    return bool(st.session_state.get(_REVEALED.format(qid=qid), False))


def reveal(
    qid: str | tuple[str, ...],
    draw: Callable[[], object],
    *,
    where: Any | None = None,
    placeholder: bool = True,
) -> bool:
    """Draw what answers question ``qid`` (``draw()``), or, until it is answered, a line saying so.

    Args:
        qid: the question, drawn above by :func:`ask`; a tuple: what answers all of them, drawn
            once each is answered.
        draw: draws the revealing elements (a chart, a metric, a sentence with the number).
        where: the container of the placeholder line (e.g. the ``st.empty`` ``draw`` fills).
        placeholder: False draws nothing in its place (a second element of the same answer).

    Returns:
        Whether it was drawn. What it draws goes to the handout's answers section (of the last
        question of ``qid`` on screen).
    """
    qids = (qid,) if isinstance(qid, str) else tuple(qid)
    if all(revealed(q) for q in qids):
        asked = [q for q in qids if classroom.questions_on() and q in st.session_state.get(_ASKED, ())]
        if not asked:
            draw()
            return True
        with handout.answers_to(asked[-1]):
            draw()
        return True
    if placeholder:
        line = (where or st).caption(":material/visibility_off: " + t("q.hidden"))
        handout.record("skip", line, key=f"{qids[-1]}_hidden")  # a worksheet has no button to press
    return False


def _record_check(qid: str, answer: Any) -> None:
    """Check button callback: remember the response and the answer it is checked against."""
    response = st.session_state.get(widget_key(qid))
    if response is not None:
        st.session_state[_CHECKED.format(qid=qid)] = (response, answer)
        st.session_state[_REVEALED.format(qid=qid)] = True


def _show(qid: str) -> None:
    """Show me button callback: reveal the answer without a response."""
    st.session_state[_REVEALED.format(qid=qid)] = True


def _check_answer(qid: str, answer: Any, choices: Mapping[str, str] | None) -> None:
    if choices is not None and str(answer) not in choices:
        raise ValueError(f"answer {answer!r} of question {qid!r} is not among {sorted(choices)}")


def _format_number(value: float, fmt: str | None) -> str:
    if fmt:
        return fmt % value
    return f"{value:.4g}"


def _answer_widget(
    key: str,
    labels: Mapping[str, str] | None,
    min_value: float | None,
    max_value: float | None,
    step: float,
    fmt: str | None,
) -> Any:
    """The answer's widget: a radio over the choices' ``labels`` (no pick yet), or a number input.

    Returns the response (None until given).
    """
    if labels is not None:
        return uc.radio(
            "q.your_answer",
            key=key,
            options=list(labels),
            index=None,
            format_func=labels.__getitem__,
            url=False,
        )
    return st.number_input(
        t("q.your_answer"),
        key=key,
        min_value=min_value,
        max_value=max_value,
        value=None,
        step=step,
        format=fmt,
        placeholder=t("q.number_placeholder"),
    )


def _buttons(qid: str, answer: Any, response: Any, *, shown: bool, hold: bool) -> bool:
    """Check and Show me in one row; returns whether the answer is shown now.

    ``hold``: a student in a class before the teacher's reveal: Check waits, no Show me, and
    :func:`revealed` holds back what the question answers (the question joins the held set).
    """
    row = st.container(horizontal=True)
    row.button(
        t("q.check"),
        key=check_key(qid),
        icon=":material/check:",
        on_click=_record_check,
        args=(qid, answer),
        disabled=response is None or hold,  # a student in a class: Check after the teacher's reveal
    )
    held = st.session_state.setdefault(_HELD, set())
    if hold:
        held.add(qid)
        return False
    held.discard(qid)
    if not shown:
        row.button(t("q.show"), key=show_key(qid), icon=":material/visibility:", on_click=_show, args=(qid,))
    return shown


def ask(
    qid: str,
    *,
    prompt_key: str,
    answer: Any | Callable[[], Any],
    explain_key: str,
    choices: Mapping[str, str] | None = None,
    prompt_kwargs: Mapping[str, object] | None = None,
    choice_kwargs: Mapping[str, object] | None = None,
    explain_kwargs: Mapping[str, object] | Callable[[], Mapping[str, object]] | None = None,
    tolerance: float = 0.0,
    relative: bool = False,
    min_value: float | None = None,
    max_value: float | None = None,
    step: float | None = None,
    fmt: str | None = None,
) -> bool | None:
    """Draw question ``qid``; returns the verdict shown this run (None: hidden or not checked).

    Args:
        qid: stable id, unique on the page (e.g. ``"kr_row"``); keys ``q_<qid>``,
            ``q_<qid>_check``, ``q_<qid>_show``.
        prompt_key: i18n key of the question, formatted with ``prompt_kwargs``.
        answer: the right answer on the current controls: a choice id when ``choices`` is given,
            else a number. The caller computes it from the page's live computation. A callable
            (no arguments) is called only once the learner has given a response or pressed Show
            me, for an answer that costs a computation the page does not otherwise need (for a
            number, give ``fmt`` or ``step``: an integer answer cannot be recognised before it is
            computed).
        explain_key: i18n key of the explanation revealed after Check (``explain_kwargs``, which
            may likewise be a callable returning the mapping).
        choices: ``{choice id: i18n key}`` for a multiple choice (labels take ``choice_kwargs``);
            None asks for a number.
        tolerance, relative: how close a number must be (absolute, or a fraction of ``|answer|``).
        min_value, max_value, step, fmt: the number input's bounds, step (default 1 for an int
            answer, else 0.01) and printf format (``"%d"``, ``"%.3f"``).

    Raises:
        ValueError: if ``answer`` is not among ``choices``.
    """
    if not classroom.questions_on():
        return None
    if not callable(answer):
        _check_answer(qid, answer, choices)
    st.session_state.setdefault(_ASKED, set()).add(qid)
    key = widget_key(qid)
    prompt = t(prompt_key, **(prompt_kwargs or {}))
    labels = {cid: t(label, **(choice_kwargs or {})) for cid, label in (choices or {}).items()}
    integer = fmt == "%d" or (step is None and isinstance(answer, Integral) and not isinstance(answer, bool))
    fmt = fmt or ("%d" if integer else None)
    box = st.container(border=True)
    with box:
        st.markdown(f":material/quiz: **{t('q.predict')}** " + prompt)
        step = step if step is not None else (1 if integer else 0.01)
        response = _answer_widget(
            key, labels if choices is not None else None, min_value, max_value, step, fmt
        )
        shown = revealed(qid)
        if callable(answer) and (response is not None or shown):
            answer = answer()
            _check_answer(qid, answer, choices)
        # The class answers together (issue 26): in a class, the response goes to the class and the
        # teacher's box shows the class's answers; outside a class this does nothing.
        hold = class_answers.on_question(
            qid, response, answer=answer, choices=choices, labels=labels if choices is not None else None,
            tolerance=tolerance, relative=relative, min_value=min_value, max_value=max_value, fmt=fmt,
        )  # fmt: skip
        shown = _buttons(qid, answer, response, shown=shown, hold=hold)
        verdict = (
            None
            if hold
            else _verdict(qid, response, answer, labels, tolerance=tolerance, relative=relative, fmt=fmt)
        )
        if verdict is not None or shown:
            if callable(explain_kwargs):
                explain_kwargs = explain_kwargs()
            st.markdown(":material/lightbulb: " + t(explain_key, **(explain_kwargs or {})))
    handout.record(
        "question",
        box,
        key=qid,
        obj=functools.partial(
            _handout_question,
            translator(),
            prompt,
            tuple(labels.values()),
            answer,
            labels,
            fmt,
            explain_key,
            explain_kwargs,
        ),
    )
    return verdict


#: The choices of a yes/no question (shared: never mutate it).
YES_NO: Mapping[str, str] = {"yes": "common.yes", "no": "common.no"}


@dataclass(frozen=True)
class Question:
    """A question's fixed parts, declared once next to the section that asks it.

    What is the same on every run (its id, its texts' keys, its choices, how close a number must
    be) is declared here; what the live computation gives (the answer, the numbers its texts quote)
    is passed to :meth:`ask`, which draws it with :func:`ask`.

    Attributes:
        qid: stable id, unique on the page (keys ``q_<qid>``, ``q_<qid>_check``, ``q_<qid>_show``).
        prompt_key, explain_key: i18n keys of the question and its explanation; empty:
            ``q.<qid>_prompt`` and ``q.<qid>_explain``.
        choices: ``{choice id: i18n key}`` for a multiple choice; None asks for a number.
        choice_kwargs: what the choices' labels quote.
        tolerance, relative, min_value, max_value, step, fmt: a number's tolerance and input, as
            for :func:`ask`.
    """

    qid: str
    prompt_key: str = ""
    explain_key: str = ""
    choices: Mapping[str, str] | None = None
    choice_kwargs: Mapping[str, object] | None = None
    tolerance: float = 0.0
    relative: bool = False
    min_value: float | None = None
    max_value: float | None = None
    step: float | None = None
    fmt: str | None = None

    def ask(
        self,
        answer: Any | Callable[[], Any],
        *,
        prompt: Mapping[str, object] | None = None,
        explain: Mapping[str, object] | Callable[[], Mapping[str, object]] | None = None,
        explain_key: str | None = None,
        choices: Mapping[str, str] | None = None,
        choice_kwargs: Mapping[str, object] | None = None,
        max_value: float | None = None,
    ) -> bool | None:
        """Draw the question with this run's ``answer`` and the numbers its texts quote.

        ``prompt`` and ``explain`` are the prompt's and the explanation's format arguments
        (``explain`` may be a callable, called once the answer shows); ``explain_key``,
        ``choices``, ``choice_kwargs`` and ``max_value``, when given, replace the declared ones
        for this run (an explanation per outcome, choices or a bound that follow the controls).
        Returns :func:`ask`'s verdict.
        """
        return ask(
            self.qid,
            prompt_key=self.prompt_key or f"q.{self.qid}_prompt",
            prompt_kwargs=prompt,
            answer=answer,
            explain_key=explain_key or self.explain_key or f"q.{self.qid}_explain",
            explain_kwargs=explain,
            choices=choices if choices is not None else self.choices,
            choice_kwargs=choice_kwargs if choice_kwargs is not None else self.choice_kwargs,
            tolerance=self.tolerance,
            relative=self.relative,
            min_value=self.min_value,
            max_value=max_value if max_value is not None else self.max_value,
            step=self.step,
            fmt=self.fmt,
        )


def _verdict(
    qid: str,
    response: Any,
    answer: Any,
    labels: Mapping[str, str],
    *,
    tolerance: float,
    relative: bool,
    fmt: str | None,
) -> bool | None:
    """Right or wrong for the checked response (drawn in the box); the answer after Show me alone.

    Returns the verdict, or None when the response was not checked (or changed since).
    """
    checked = st.session_state.get(_CHECKED.format(qid=qid))
    if checked is None or response is None or checked[0] != response:
        if revealed(qid) and not callable(answer):
            st.markdown(":material/visibility: " + t("q.answer_is", answer=_shown(answer, labels, fmt)))
        return None  # not checked yet, or the response changed since: press Check again
    right = is_right(response, answer, tolerance=tolerance, relative=relative)
    if not is_right(checked[1], answer, tolerance=0.0):
        st.caption(":material/refresh: " + t("q.rechecked"))
    if right:
        st.success(t("q.right"), icon=":material/check_circle:")
    else:
        st.error(t("q.wrong", answer=_shown(answer, labels, fmt)), icon=":material/cancel:")
    return right


def _shown(answer: Any, labels: Mapping[str, str], fmt: str | None) -> str:
    """The answer as the learner reads it: a choice's label, or the number in the input's format."""
    return labels[str(answer)] if labels else _format_number(float(answer), fmt)


def _handout_question(
    text: Callable[[object], str],
    prompt: str,
    choices: tuple[str, ...],
    answer: Any,
    labels: Mapping[str, str],
    fmt: str | None,
    explain_key: str,
    explain_kwargs: Mapping[str, object] | Callable[[], Mapping[str, object]] | None,
) -> HandoutQuestion:
    """The question as the handout prints it; runs on click (``text``: the run's translator).

    An answer (or explanation) still to be computed is computed now; one that cannot be (its
    computation failed) is left blank rather than breaking the whole handout.
    """
    try:
        if callable(answer):
            answer = answer()
        if callable(explain_kwargs):
            explain_kwargs = explain_kwargs()
        shown = _shown(answer, labels, fmt)
        explanation = text(explain_key).format(**(explain_kwargs or {}))
    except Exception:  # on click, off the script thread: no rerun signal to swallow
        shown, explanation = "", ""
    return HandoutQuestion(prompt, choices, shown, explanation)
