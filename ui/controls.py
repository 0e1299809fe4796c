"""Shared Streamlit controls: every widget keyed, labelled through i18n and bound to the URL.

A teacher's URL reproduces the exact view because each control here passes
``key=...`` and ``bind="query-params"``. Streamlit ignores (and removes from the URL) a query
value that is out of range or not among the options, so a tampered URL falls back to defaults.

Selection widgets (selectbox, radio) are written to the URL by Streamlit as their *displayed*
label, which depends on the language. Links carry ``lang`` too, so they reproduce as made; and
:func:`selectbox`/:func:`radio` also accept, from a URL, the stable option id
(``?kr_kernel=gaussian``) or the label in any language, so a link keeps its meaning when the
language changes.

Use these instead of calling ``st.slider`` & co. directly in pages. ``where`` is the container
to draw into (``st.sidebar``, a column, ...); it defaults to the main area.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

from ui.i18n import LANGUAGES, load_catalogue, t, translator

BIND = "query-params"

#: Largest seed a seed control accepts (numpy and torch both take any value in this range).
MAX_SEED = 2**31 - 1


def _where(where: Any | None) -> Any:
    return st if where is None else where


def _labels_in_every_language(option: Any, option_prefix: str | None) -> set[str]:
    names = {str(option)}
    if option_prefix:
        for lang in LANGUAGES:
            label = load_catalogue(lang).get(f"{option_prefix}{option}")
            if label:
                names.add(label)
    return names


def _seed_selection_from_url(
    key: str, options: Sequence[Any], option_prefix: str | None, format_func: Callable[[Any], str]
) -> bool:
    """Seed a selection widget from a URL value that Streamlit itself would not recognise.

    Streamlit recognises only the current language's label. On the first run of the widget, an
    option id or a label in another language is mapped to its option and put in session state.
    Returns True when it seeded (the caller then makes the seeded option the default too).
    """
    if key in st.session_state:
        return False
    raw = st.query_params.get(key)
    if raw is None or raw in {format_func(o) for o in options}:
        return False
    for option in options:
        if raw in _labels_in_every_language(option, option_prefix):
            st.session_state[key] = option
            return True
    return False


def slider(
    label_key: str,
    *,
    key: str,
    min_value: float,
    max_value: float,
    value: float,
    step: float,
    help_key: str | None = None,
    fmt: str | None = None,
    where: Any | None = None,
) -> Any:
    """A bound slider. ``label_key`` and ``help_key`` are i18n keys."""
    return _where(where).slider(
        t(label_key),
        min_value=min_value,
        max_value=max_value,
        value=value,
        step=step,
        format=fmt,
        key=key,
        help=t(help_key) if help_key else None,
        bind=BIND,
    )


def select_slider(
    label_key: str,
    *,
    key: str,
    options: Sequence[Any],
    value: Any,
    help_key: str | None = None,
    format_func: Callable[[Any], str] = str,
    where: Any | None = None,
) -> Any:
    """A bound select-slider over discrete ``options`` (e.g. a log-spaced bandwidth grid)."""
    return _where(where).select_slider(
        t(label_key),
        options=list(options),
        value=value,
        format_func=format_func,
        key=key,
        help=t(help_key) if help_key else None,
        bind=BIND,
    )


def selectbox(
    label_key: str,
    *,
    key: str,
    options: Sequence[Any],
    index: int = 0,
    option_prefix: str | None = None,
    format_func: Callable[[Any], str] | None = None,
    help_key: str | None = None,
    where: Any | None = None,
) -> Any:
    """A bound selectbox over stable option ids.

    Options are stable ids (``"gaussian"``), shown as ``t(option_prefix + id)`` when
    ``option_prefix`` is given, else through ``format_func``. A URL may name the option by id or
    by its label in any language (see the module docstring).
    """
    if format_func is None:
        format_func = translator(option_prefix) if option_prefix else str
    seeded = _seed_selection_from_url(key, options, option_prefix, format_func)
    return _where(where).selectbox(
        t(label_key),
        options=list(options),
        # the seeded option as the default too: index=None would make the widget clearable
        index=list(options).index(st.session_state[key]) if seeded else index,
        format_func=format_func,
        key=key,
        help=t(help_key) if help_key else None,
        bind=BIND,
    )


def radio(
    label_key: str,
    *,
    key: str,
    options: Sequence[Any],
    index: int = 0,
    option_prefix: str | None = None,
    format_func: Callable[[Any], str] | None = None,
    help_key: str | None = None,
    horizontal: bool = True,
    where: Any | None = None,
) -> Any:
    """A bound radio group over stable option ids (see :func:`selectbox`)."""
    if format_func is None:
        format_func = translator(option_prefix) if option_prefix else str
    seeded = _seed_selection_from_url(key, options, option_prefix, format_func)
    return _where(where).radio(
        t(label_key),
        options=list(options),
        # the seeded option as the default too: index=None would make the widget clearable
        index=list(options).index(st.session_state[key]) if seeded else index,
        format_func=format_func,
        key=key,
        help=t(help_key) if help_key else None,
        horizontal=horizontal,
        bind=BIND,
    )


def number_input(
    label_key: str,
    *,
    key: str,
    min_value: float,
    max_value: float,
    value: float,
    step: float,
    help_key: str | None = None,
    fmt: str | None = None,
    where: Any | None = None,
) -> Any:
    """A bound number input with hard bounds (values outside them are rejected by Streamlit)."""
    return _where(where).number_input(
        t(label_key),
        min_value=min_value,
        max_value=max_value,
        value=value,
        step=step,
        format=fmt,
        key=key,
        help=t(help_key) if help_key else None,
        bind=BIND,
    )


def toggle(
    label_key: str,
    *,
    key: str,
    value: bool = False,
    help_key: str | None = None,
    where: Any | None = None,
) -> bool:
    """A bound on/off toggle."""
    return _where(where).toggle(
        t(label_key),
        value=value,
        key=key,
        help=t(help_key) if help_key else None,
        bind=BIND,
    )


def seed(key: str, *, value: int = 42, where: Any | None = None) -> int:
    """The seed control every random thing on a page takes (bound to the URL)."""
    return int(
        number_input(
            "common.seed",
            key=key,
            min_value=0,
            max_value=MAX_SEED,
            value=value,
            step=1,
            help_key="common.seed_help",
            where=where,
        )
    )
