"""Shared Streamlit controls: every widget keyed, labelled through i18n and bound to the URL.

A teacher's URL reproduces the exact view because each control here passes
``key=...`` and ``bind="query-params"``. Streamlit ignores (and removes from the URL) a query
value that is out of range or not among the options, so a tampered URL falls back to defaults;
numeric controls say so under the control (:func:`warn_if_refused`).

Selection widgets (selectbox, radio) are the exception: Streamlit's binding writes the
*displayed* label to the URL (``?sdp_mask=因果``), which changes with the language, and after a
language switch the browser sends the old label back, which the new language does not know (a
blank control). :func:`selectbox` and :func:`radio` therefore keep the URL themselves: they write
the option's stable id (``?sdp_mask=causal``), read an id or (old links) a label in any language,
and re-assert the chosen option after a language switch. A link survives any number of switches
and re-copies.

Each control tells the handout its label and the value it shows (``ui.handout.record_control``):
the worksheet lists the settings of the view. A question's answer (``radio(..., url=False)``)
is neither in the URL nor in that list (``ui.questions``).

Use these instead of calling ``st.slider`` & co. directly in pages. ``where`` is the container
to draw into (``st.sidebar``, a column, ...); it defaults to the main area.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

from ui.handout import record_control
from ui.i18n import LANGUAGES, current_language, load_catalogue, t, translator

BIND = "query-params"

#: Session-state key of the options drawn last run, with their language: {key: (option, lang)}.
_SHADOW = "_selection_shadow"

#: Session-state key of {key: options} of every selection drawn (tests map labels back to ids).
OPTIONS_SEEN = "_selection_options"

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


def option_from_url(raw: str | None, options: Sequence[Any], option_prefix: str | None = None) -> Any | None:
    """The option a URL value names: its stable id, or (old links) its label in any language.

    Returns None when ``raw`` names none of ``options`` (a tampered or stale link).
    """
    if raw is None:
        return None
    for option in options:
        if raw == str(option):
            return option
    for option in options:
        if raw in _labels_in_every_language(option, option_prefix):
            return option
    return None


def _sync_selection(key: str, options: Sequence[Any], option_prefix: str | None, *, url: bool = True) -> None:
    """Put the right option into session state *before* a selection widget is drawn.

    - First draw in a session: the URL's value (an id, or a label in any language) seeds it.
    - After a language switch: the browser still holds the widget's old *label*, which the new
      language does not know, and Streamlit would show a blank control; the option remembered
      from the last draw is written back, so the control shows it in the new language.
    - A value that is not among the options (options changed) is dropped: the default applies.

    ``url=False``: the URL is not read (a question's answer).
    """
    shadow: dict[str, tuple[Any, str]] = st.session_state.setdefault(_SHADOW, {})
    lang = current_language()
    if key not in st.session_state and url:
        chosen = option_from_url(st.query_params.get(key), options, option_prefix)
        if chosen is not None:
            st.session_state[key] = chosen
    elif key in shadow and shadow[key][1] != lang and shadow[key][0] in options:
        st.session_state[key] = shadow[key][0]
    if key in st.session_state and st.session_state[key] not in options:
        del st.session_state[key]


def _write_selection(key: str, value: Any, default: Any, *, url: bool = True) -> None:
    """Write the chosen option's stable id to the URL (removed when it is the default)."""
    st.session_state.setdefault(_SHADOW, {})[key] = (value, current_language())
    if not url:
        return
    if value is None or value == default:
        if key in st.query_params:
            del st.query_params[key]
    elif st.query_params.get(key) != str(value):
        st.query_params[key] = str(value)


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
    """A bound slider. ``label_key`` and ``help_key`` are i18n keys.

    A link value it cannot take (not a number, out of range) is replaced by the default, with a
    warning under the slider that says so (:func:`warn_if_refused`).
    """
    return _bounded(
        "slider", label_key, key, (min_value, max_value), help_key, where, value=value, step=step, format=fmt
    )


def shown_value(value: Any) -> str:
    """A control's value as the handout lists it: numbers short (``0.3``, ``200``), a range as
    ``a – b``, nothing as ``—``."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return t("common.yes" if value else "common.no")
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, tuple | list):
        return " – ".join(shown_value(v) for v in value)
    return str(value)


def refused_number(raw: str | None, lo: float | None, hi: float | None) -> bool:
    """Whether a link's value ``raw`` cannot be taken by a numeric control bounded by lo..hi
    (None: no value in the link, or an open bound)."""
    if raw is None:
        return False
    try:
        v = float(raw)
    except ValueError:
        return True
    return not math.isfinite(v) or (lo is not None and v < lo) or (hi is not None and v > hi)


def warn_if_refused(
    label_key: str,
    raw: str | None,
    lo: float | None,
    hi: float | None,
    shown: Any,
    *,
    where: Any | None = None,
) -> None:
    """Say, under the control, that the link asked for ``raw`` and the control shows ``shown``.

    Streamlit drops a refused value from the URL, so the warning shows on the run that opened the
    link and not after.
    """
    if refused_number(raw, lo, hi):
        empty = shown is None  # an empty number input (a question's answer box)
        warn_refused_link(label_key, raw, "—" if empty else shown, where=where)


def warn_refused_link(label_key: str, raw: str | None, shown: Any, *, where: Any | None = None) -> None:
    """The warning of :func:`warn_if_refused`: the link's ``raw`` for control ``label_key``, and what
    it shows instead."""
    _where(where).warning(
        t("common.link_value_refused", label=t(label_key), value=str(raw)[:40], shown=shown),
        icon=":material/link_off:",
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
    warn_refused: bool = True,
) -> Any:
    """A bound select-slider over discrete ``options`` (e.g. a log-spaced bandwidth grid).

    A link value that names none of the options (``ic_L=999``, ``kr_h=abc``) is replaced by the
    default, with a warning under the control that says so, as for a slider (``warn_refused=False``:
    the caller says it its own way).
    """
    raw = st.query_params.get(key)
    chosen = _where(where).select_slider(
        t(label_key),
        options=list(options),
        value=value,
        format_func=format_func,
        key=key,
        help=t(help_key) if help_key else None,
        bind=BIND,
    )
    if warn_refused and refused_option(raw, chosen, format_func):
        warn_refused_link(label_key, raw, format_func(chosen), where=where)
    record_control(key, t(label_key), str(format_func(chosen)))
    return chosen


def option_slider(
    label_key: str, key: str, options: Sequence[Any], value: Any, format_func: Callable[[Any], str] = str
) -> Any:
    """:func:`select_slider` whose help text is ``<label_key>_help`` (a config form's convention),
    in one line per control: ``option_slider("ic.noise", "ic_noise", NOISE_OPTIONS, d.noise)``."""
    return select_slider(
        label_key,
        key=key,
        options=options,
        value=value,
        help_key=f"{label_key}_help",
        format_func=format_func,
    )


def refused_option(raw: str | None, chosen: Any, format_func: Callable[[Any], str] = str) -> bool:
    """Whether a link's value ``raw`` was refused by a select-slider that shows ``chosen``: it names
    neither ``chosen`` (as its label or its ``str``) nor the same number (``8`` for ``8.0``)."""
    if raw is None or raw in (str(chosen), format_func(chosen)):
        return False
    try:
        return float(raw) != float(chosen)  # NaN never equals: refused
    except (TypeError, ValueError):
        return True


def _selection(
    kind: str,
    label_key: str,
    *,
    key: str,
    options: Sequence[Any],
    index: int | None,
    option_prefix: str | None,
    format_func: Callable[[Any], str] | None,
    help_key: str | None,
    where: Any | None,
    on_change: Callable[[], None] | None = None,
    url: bool = True,
    **extra: Any,
) -> Any:
    options = list(options)
    if index is not None and not 0 <= index < len(options):
        raise ValueError(f"index {index} is out of range for {len(options)} options of {key!r}")
    if format_func is None:
        format_func = translator(option_prefix) if option_prefix else str
    _sync_selection(key, options, option_prefix, url=url)
    widget = getattr(_where(where), kind)
    value = widget(
        t(label_key),
        options=options,
        # a value in session state wins; passing its index would only log a duplication warning
        index=0 if key in st.session_state and st.session_state[key] is not None else index,
        format_func=format_func,
        key=key,
        help=t(help_key) if help_key else None,
        on_change=on_change,
        **extra,
    )
    _write_selection(key, value, None if index is None else options[index], url=url)
    st.session_state.setdefault(OPTIONS_SEEN, {})[key] = tuple(options)
    if url:
        record_control(key, t(label_key), "—" if value is None else str(format_func(value)))
    return value


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
    on_change: Callable[[], None] | None = None,
    label_visibility: str = "visible",
) -> Any:
    """A selectbox over stable option ids, kept in the URL as the id (``?kr_kernel=gaussian``).

    Options are stable ids, shown as ``t(option_prefix + id)`` when ``option_prefix`` is given,
    else through ``format_func``. See the module docstring for why this is not ``bind=``.
    """
    return _selection(
        "selectbox",
        label_key,
        key=key,
        options=options,
        index=index,
        option_prefix=option_prefix,
        format_func=format_func,
        help_key=help_key,
        where=where,
        on_change=on_change,
        label_visibility=label_visibility,
    )


def radio(
    label_key: str,
    *,
    key: str,
    options: Sequence[Any],
    index: int | None = 0,
    option_prefix: str | None = None,
    format_func: Callable[[Any], str] | None = None,
    help_key: str | None = None,
    horizontal: bool = True,
    where: Any | None = None,
    on_change: Callable[[], None] | None = None,
    url: bool = True,
) -> Any:
    """A radio group over stable option ids, kept in the URL as the id (see :func:`selectbox`).

    ``index=None`` draws it with nothing picked (returns None until the user picks). ``url=False``
    keeps the choice in the session only (a question's answer: never in a link or the handout's
    settings), still carried over a language switch.
    """
    return _selection(
        "radio",
        label_key,
        key=key,
        options=options,
        index=index,
        option_prefix=option_prefix,
        format_func=format_func,
        help_key=help_key,
        where=where,
        on_change=on_change,
        url=url,
        horizontal=horizontal,
    )


def number_input(
    label_key: str,
    *,
    key: str,
    min_value: float | None,
    max_value: float | None,
    value: float | None,
    step: float,
    help_key: str | None = None,
    fmt: str | None = None,
    where: Any | None = None,
    placeholder: str | None = None,
    disabled: bool = False,
) -> Any:
    """A bound number input with hard bounds (values outside them are rejected by Streamlit).

    ``value=None`` draws it empty (returns None until the user types); a None bound is open. A
    refused link value gets a warning, as for :func:`slider`. ``disabled``: shown (with its value
    kept) but not editable, for an input that does not apply under the other controls.
    """
    return _bounded(
        "number_input",
        label_key,
        key,
        (min_value, max_value),
        help_key,
        where,
        value=value,
        step=step,
        format=fmt,
        placeholder=placeholder,
        disabled=disabled,
    )


def _bounded(
    widget: str,
    label_key: str,
    key: str,
    bounds: tuple[float | None, float | None],
    help_key: str | None,
    where: Any | None,
    **options: Any,
) -> Any:
    """Draw the bound ``st.<widget>`` (``"slider"`` or ``"number_input"``) between ``bounds``
    (min, max) with ``options`` (value, step, format...): a refused link value gets a warning
    (:func:`warn_if_refused`) and the value is listed in the handout's settings."""
    raw = st.query_params.get(key)
    low, high = bounds
    chosen = getattr(_where(where), widget)(
        t(label_key),
        min_value=low,
        max_value=high,
        key=key,
        help=t(help_key) if help_key else None,
        bind=BIND,
        **options,
    )
    warn_if_refused(label_key, raw, low, high, chosen, where=where)
    record_control(key, t(label_key), shown_value(chosen))
    return chosen


def text_input(
    label_key: str,
    *,
    key: str,
    value: str = "",
    help_key: str | None = None,
    where: Any | None = None,
) -> str:
    """A bound line of text (a sequence to type): kept in the link and listed in the handout."""
    text = _plain("text_input", label_key, key, value, help_key, where)
    record_control(key, t(label_key), text)
    return text


def toggle(
    label_key: str,
    *,
    key: str,
    value: bool = False,
    help_key: str | None = None,
    where: Any | None = None,
) -> bool:
    """A bound on/off toggle."""
    on = _plain("toggle", label_key, key, value, help_key, where)
    record_control(key, t(label_key), shown_value(bool(on)))
    return on


def _plain(widget: str, label_key: str, key: str, value: Any, help_key: str | None, where: Any | None) -> Any:
    """Draw the bound ``st.<widget>`` (``"text_input"`` or ``"toggle"``) with its label, value and help."""
    return getattr(_where(where), widget)(
        t(label_key), value=value, key=key, help=t(help_key) if help_key else None, bind=BIND
    )


#: How a link may spell a flag.
_FLAG_WORDS = {w: True for w in ("1", "true", "yes", "on")} | {w: False for w in ("0", "false", "no", "off")}


def link_flag(raw: str | None) -> bool | None:
    """An on/off word of a hand-typed link (``1/true/yes/on``, ``0/false/no/off``, any case);
    None for no value or any other word."""
    return None if raw is None else _FLAG_WORDS.get(str(raw).strip().lower())


def flag(
    label_key: str,
    *,
    key: str,
    value: bool = False,
    help_key: str | None = None,
    where: Any | None = None,
) -> bool:
    """An on/off toggle kept in the URL as ``?key=1`` by this module (``?key=0`` when it is off
    against a default of on). ``1/true/yes/on`` and ``0/false/no/off`` are read from a link;
    anything else falls back to ``value``. For switches a teacher types into a link by hand
    (``?present=1``), which Streamlit's own binding (``true``/``false``) would drop.
    """
    # The toggle's starting value comes from the URL, which this function keeps in step with the
    # toggle: the same value is passed on every run, so Streamlit keeps the widget's state.
    word = link_flag(st.query_params.get(key))
    start = value if word is None else word
    help_text = t(help_key) if help_key else None
    on = bool(_where(where).toggle(t(label_key), value=start, key=key, help=help_text))
    st.session_state.setdefault(OPTIONS_SEEN, {})[key] = (False, True)
    if on == value:
        if key in st.query_params:
            del st.query_params[key]
    elif st.query_params.get(key) != ("1" if on else "0"):
        st.query_params[key] = "1" if on else "0"
    record_control(key, t(label_key), shown_value(on))
    return on


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
