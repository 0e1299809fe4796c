"""The names a link and a question's widgets use: one leaf module (no other ``ui`` import).

``ui.classroom`` (presentation mode), ``ui.questions`` (predict, then see), ``ui.handout`` (the
view's link for students) and ``ui.class_answers`` (the class answers together) all need these
names; keeping them here lets those modules import each other in one direction only
(``tests/test_layers.py`` forbids import cycles).
"""

from __future__ import annotations

import math
from numbers import Real
from typing import Any

#: The teacher's projector settings in a link (``ui.classroom``): never part of a student's link.
PRESENT_KEY = "present"
SLIDE_KEY = "slide"
QUESTIONS_KEY = "questions"
TEACHER_KEYS = frozenset({PRESENT_KEY, SLIDE_KEY, QUESTIONS_KEY})

#: Prefix of every question widget's key: the URL parameters an answer would have used.
ANSWER_PREFIX = "q_"


def widget_key(qid: str) -> str:
    """The key of question ``qid``'s answer widget (session state only, never the URL)."""
    return f"{ANSWER_PREFIX}{qid}"


def check_key(qid: str) -> str:
    """The key of question ``qid``'s Check button."""
    return f"{ANSWER_PREFIX}{qid}_check"


def show_key(qid: str) -> str:
    """The key of question ``qid``'s Show me button."""
    return f"{ANSWER_PREFIX}{qid}_show"


def is_answer_param(name: str) -> bool:
    """Whether a URL parameter (or widget key) belongs to a question: never kept in a link."""
    return name.startswith(ANSWER_PREFIX)


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
