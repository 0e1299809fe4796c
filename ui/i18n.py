"""Internationalisation: every user-visible string goes through ``t(key)``.

Catalogues live in ``assets/i18n/<lang>/<section>.json`` (one file per page or concern, so that
work on one page never edits another page's file). All files of one language are merged into a
single flat ``{key: text}`` mapping; keys are namespaced by a prefix such as ``kr.`` (kernel
regression) or ``common.``. ``tests/app/test_i18n.py`` fails when a key is missing from either
language, duplicated across files, or used in code but absent from the catalogues.

The current language is the value of the sidebar's language switch (session-state key ``lang``,
bound to the URL as ``?lang=zh``).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import streamlit as st

LANGUAGES: dict[str, str] = {"en": "English", "zh": "中文"}
DEFAULT_LANGUAGE = "en"
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


def language_switch() -> str:
    """Render the language switch in the sidebar; returns the chosen language code.

    The switch is bound to the URL. Streamlit writes a bound choice as its displayed label
    (``?lang=中文``); the short codes (``?lang=zh``, ``?lang=en``) are accepted too, so
    hand-written links work.
    """
    code = st.query_params.get("lang")
    seeded = False
    if code in LANGUAGES and "_lang_seeded" not in st.session_state:
        st.session_state["_lang_seeded"] = True
        st.session_state["lang"] = code
        seeded = True
    st.sidebar.segmented_control(
        "Language / 语言",
        options=list(LANGUAGES),
        format_func=LANGUAGES.__getitem__,
        # A value set through session state above must not meet a second default.
        default=None if seeded else DEFAULT_LANGUAGE,
        required=True,
        key="lang",
        bind="query-params",
    )
    return current_language()
