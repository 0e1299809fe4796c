"""Predict, then see: a short question the learner answers before the page tells them.

``ask`` draws one question in a bordered box: a multiple choice (a radio with nothing picked) or a
number, and a Check button. The right answer is an argument computed by the *caller* from the
live computation on the current controls (never a stored string), so the same question is right
for one setting and wrong for another. After Check the box says right or wrong and reveals the
explanation, which may quote live numbers.

The checked response is kept in the session with the answer it was checked against. Each run
compares that response with the *current* answer again: when a control of the page moves, the
verdict follows the new computation (and says it was re-checked) instead of staying stale. Changing
the response hides the verdict until Check is pressed again.

Widget keys: ``q_<qid>`` (the answer, bound to the URL like every control) and ``q_<qid>_check``.
Questions are hidden when a presenting teacher turns them off (:func:`ui.classroom.questions_on`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from numbers import Integral, Real
from typing import Any

import streamlit as st

from ui import class_answers, classroom
from ui import controls as uc
from ui.i18n import t

#: Session-state slot of a checked question: ``(response, answer it was checked against)``.
_CHECKED = "_q_{qid}_checked"


def widget_key(qid: str) -> str:
    """The key (and URL parameter) of question ``qid``'s answer widget."""
    return f"q_{qid}"


def check_key(qid: str) -> str:
    """The key of question ``qid``'s Check button."""
    return f"q_{qid}_check"


def is_right(response: Any, answer: Any, *, tolerance: float = 0.0, relative: bool = False) -> bool:
    """Whether ``response`` matches ``answer``: ids compare equal, numbers within the tolerance.

    ``relative`` makes ``tolerance`` a fraction of ``|answer|``. A None response is never right.
    """
    if response is None:
        return False
    if isinstance(answer, Real) and not isinstance(answer, bool):
        a, r = float(answer), float(response)
        allowed = tolerance * abs(a) if relative else tolerance
        return math.isfinite(r) and abs(r - a) <= allowed + 1e-9 * max(1.0, abs(a))
    return str(response) == str(answer)


def _record_check(qid: str, answer: Any) -> None:
    """Check button callback: remember the response and the answer it is checked against."""
    response = st.session_state.get(widget_key(qid))
    if response is not None:
        st.session_state[_CHECKED.format(qid=qid)] = (response, answer)


def _check_answer(qid: str, answer: Any, choices: Mapping[str, str] | None) -> None:
    if choices is not None and str(answer) not in choices:
        raise ValueError(f"answer {answer!r} of question {qid!r} is not among {sorted(choices)}")


def _format_number(value: float, fmt: str | None) -> str:
    if fmt:
        return fmt % value
    return f"{value:.4g}"


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
        qid: stable id, unique on the page (e.g. ``"kr_row"``); keys ``q_<qid>``, ``q_<qid>_check``.
        prompt_key: i18n key of the question, formatted with ``prompt_kwargs``.
        answer: the right answer on the current controls: a choice id when ``choices`` is given,
            else a number. The caller computes it from the page's live computation. A callable
            (no arguments) is called only once the learner has given a response, for an answer
            that costs a computation the page does not otherwise need (for a number, give
            ``fmt`` or ``step``: an integer answer cannot be recognised before it is computed).
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
    key = widget_key(qid)
    with st.container(border=True):
        st.markdown(f":material/quiz: **{t('q.predict')}** " + t(prompt_key, **(prompt_kwargs or {})))
        if choices is not None:
            labels = {cid: t(label, **(choice_kwargs or {})) for cid, label in choices.items()}
            response = uc.radio(
                "q.your_answer", key=key, options=list(choices), index=None, format_func=labels.__getitem__
            )
        else:
            integer = fmt == "%d" or (
                step is None and isinstance(answer, Integral) and not isinstance(answer, bool)
            )
            step = step if step is not None else (1 if integer else 0.01)
            response = uc.number_input(
                "q.your_answer",
                key=key,
                min_value=min_value,
                max_value=max_value,
                value=None,
                step=step,
                fmt=fmt or ("%d" if integer else None),
                placeholder=t("q.number_placeholder"),
            )
        if response is not None and callable(answer):
            answer = answer()
            _check_answer(qid, answer, choices)
        # The class answers together (issue 26): in a class, the response goes to the class and the
        # teacher's box shows the class's answers; outside a class this does nothing.
        hold = class_answers.on_question(
            qid, response, answer=answer, choices=choices, labels=labels if choices is not None else None,
            tolerance=tolerance, relative=relative, min_value=min_value, max_value=max_value, fmt=fmt,
        )  # fmt: skip
        st.button(
            t("q.check"),
            key=check_key(qid),
            icon=":material/check:",
            on_click=_record_check,
            args=(qid, answer),
            disabled=response is None or hold,  # a student in a class: Check after the teacher's reveal
        )
        checked = st.session_state.get(_CHECKED.format(qid=qid))
        if checked is None or response is None or checked[0] != response:
            return None  # not checked yet, or the response changed since: press Check again
        right = is_right(response, answer, tolerance=tolerance, relative=relative)
        if not is_right(checked[1], answer, tolerance=0.0):
            st.caption(":material/refresh: " + t("q.rechecked"))
        if right:
            st.success(t("q.right"), icon=":material/check_circle:")
        else:
            shown_answer = labels[str(answer)] if choices is not None else _format_number(float(answer), fmt)
            st.error(t("q.wrong", answer=shown_answer), icon=":material/cancel:")
        if callable(explain_kwargs):
            explain_kwargs = explain_kwargs()
        st.markdown(":material/lightbulb: " + t(explain_key, **(explain_kwargs or {})))
        return right
