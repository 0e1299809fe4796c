"""Internationalisation: every user-visible string goes through ``t(key)``.

Catalogues live in ``assets/i18n/<lang>/<section>.json`` (one file per page or concern, so that
work on one page never edits another page's file). All files of one language are merged into a
single flat ``{key: text}`` mapping; keys are namespaced by a prefix such as ``kr.`` (kernel
regression) or ``common.``. A page's catalogue (``lessons.Lesson.catalogue``) also holds its
nav title (``nav.<slug>``) and its questions (``q.<prefix>_*``); shared strings live in
``common.json`` (the question widget's own in ``questions.json``). ``tests/app/test_i18n.py``
fails when a key is missing from either language, duplicated across files, or used in code but
absent from the catalogues; ``tests/test_lessons.py`` when a page's keys leave its catalogue.

The current language is the value of the sidebar's language switch (session-state key ``lang``,
bound to the URL as ``?lang=zh``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path

import streamlit as st

LANGUAGES: dict[str, str] = {"en": "English", "zh": "中文"}
DEFAULT_LANGUAGE = "en"
#: Session-state key (not a widget) remembering the language across page switches.
_LANG_MEMORY = "_lang_memory"
CATALOGUE_DIR = Path(__file__).resolve().parent.parent / "assets" / "i18n"


@cache
def load_catalogue(lang: str) -> dict[str, str]:
    """Merge every ``assets/i18n/<lang>/*.json`` into one ``{key: text}`` dict.

    Raises:
        ValueError: if ``lang`` is unknown or two files define the same key.
    """
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}; known: {sorted(LANGUAGES)}")
    merged: dict[str, str] = {}
    for path in sorted((CATALOGUE_DIR / lang).glob("*.json")):
        entries = json.loads(path.read_text(encoding="utf-8"))
        for key, text in entries.items():
            if key in merged:
                raise ValueError(f"i18n key {key!r} is defined twice ({path.name})")
            merged[key] = text
    return merged


def current_language() -> str:
    """The language chosen in the sidebar (``en`` when unset or invalid)."""
    lang = st.session_state.get("lang", DEFAULT_LANGUAGE)
    return lang if lang in LANGUAGES else DEFAULT_LANGUAGE


def t(key: str, /, **kwargs: object) -> str:
    """Translate ``key`` into the current language, formatting ``{placeholders}`` with kwargs.

    A missing key falls back to English, then to the key itself (so a gap shows up on screen
    and in tests instead of crashing the page).
    """
    text = load_catalogue(current_language()).get(key)
    if text is None:
        text = load_catalogue(DEFAULT_LANGUAGE).get(key, key)
    return text.format(**kwargs) if kwargs else text


def translator(prefix: str = "") -> Callable[[object], str]:
    """``option -> t(prefix + str(option))`` bound to the language of *this* script run.

    Use it as a widget's ``format_func``: Streamlit may call it outside the script run (AppTest
    does), where the session's language is not visible and ``t`` would fall back to English.
    """
    catalogue = load_catalogue(current_language())
    english = load_catalogue(DEFAULT_LANGUAGE)

    def fmt(option: object) -> str:
        key = f"{prefix}{option}"
        return catalogue.get(key) or english.get(key, key)

    return fmt


def language_switch() -> str:
    """Render the language switch in the sidebar; returns the chosen language code.

    Bound to the URL as ``?lang=en`` / ``?lang=zh``: a bound choice is written to the URL as its
    displayed text, so the buttons show the codes themselves, which keeps links short and stable.
    """
    # Moving to another page drops the query string, and with it ``lang``, and Streamlit resets the
    # switch to its default. Carry the language over from this session's memory, unless the URL
    # names one or the user has just picked another.
    remembered = st.session_state.get(_LANG_MEMORY)
    carried = (
        remembered in LANGUAGES
        and remembered != DEFAULT_LANGUAGE
        and "lang" not in st.query_params
        and st.session_state.get("lang", remembered) == remembered
    )
    if carried:
        st.session_state["lang"] = remembered
    st.sidebar.segmented_control(
        "Language / 语言",
        options=list(LANGUAGES),
        default=None if carried else DEFAULT_LANGUAGE,
        required=True,
        key="lang",
        bind="query-params",
        help="English / 简体中文",
    )
    st.session_state[_LANG_MEMORY] = current_language()
    return current_language()
