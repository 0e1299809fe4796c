"""Live sliders: figures that move while the slider moves, and one rerun on release (issue 25).

A live slider is a native ``input[type=range]`` drawn by one Streamlit v2 component
(``st.components.v2.component``). While the hand moves, the browser recomputes the figures the
slider drives (``static/live/math.js``: the same numbers as ``core``, checked against it in
Chromium by ``tests/e2e/test_live_math.py``) and draws them over the page's Plotly charts
(``static/live/live.js``); nothing reaches the server. On release (the input's ``change`` event) the
value is committed: one rerun, and the Python figures take over.

The committed value keeps the session-state key and the URL parameter of the ``st.slider`` it
replaces (``kr_h``, ``sdp_dk``, ...), so links, the language switch, handouts, questions,
presentation mode and the buttons that set a control (``st.session_state["kr_h"] = h*``) work as
before:

* ``st.session_state[key]`` holds the committed value (a plain session-state value: the
  component's own widget is ``live_<key>``). It is read on every run; a value the control cannot
  take (not an option, out of range) is dropped and the default is used.
* v2 mounts have no ``bind=``: the URL is synced here on every run (``?kr_h=0.27``, removed at the
  default, numbers written as Streamlit writes them), read when the session has no value yet, and a
  link value the control cannot take is refused with the page's usual warning under the control
  (``ui.controls.warn_refused_link``).
* Like a widget's state, the value is forgotten when the learner leaves the page (the component's
  widget state is gone on return), so coming back shows the defaults, as for every other control.

AppTest cannot run JavaScript: a test sets the committed value the way the component's commit does,
``at.session_state["kr_h"] = 1.0; at.run()`` (or through the URL), see ``tests/app/live.py``.

``?live=0`` draws the release-only ``st.slider`` / ``st.select_slider`` of ``ui.controls`` instead
(today's path before this module: the drag benchmark measures both in one run; also a fallback).

The JavaScript is served by Streamlit's static file serving (``server.enableStaticServing`` in
``.streamlit/config.toml``, files under ``static/``) with a content hash in its URL; the component's
inline ``js=`` is a short loader (``ui.static_module``: one import per page, retried after a failed
fetch), so a rerun does not resend the code.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, partial
from pathlib import Path
from typing import Any

import streamlit as st

from ui import classroom, controls
from ui.handout import record_control
from ui.i18n import t
from ui.static_module import loader

ROOT = Path(__file__).resolve().parent.parent
#: The component's JavaScript, served at ``/app/static/live/`` (Streamlit's static serving).
STATIC_DIR = ROOT / "static" / "live"
COMPONENT_NAME = "attention_lesson.live_slider"
#: ``?live=0`` (``0/false/no/off``): release-only sliders, the path before live sliders.
LIVE_FLAG = "live"

#: The inline module of the component: it loads the real code from the static URL in ``data``.
_LOADER = loader("""  const data = JSON.parse(component.data);
  const live = await load(data.module);
  return live.mount(component, data);""")


@dataclass(frozen=True)
class Control:
    """What a live slider shows and accepts; the arguments of the ``st.slider`` it replaces.

    A select-slider over ``options`` (ascending numbers: a log-spaced bandwidth grid, the d_k
    values) or, with ``options=None``, a numeric slider from ``min_value`` to ``max_value`` in
    steps of ``step``. ``value`` is the default. ``format_func`` writes an option as the slider shows
    it; a numeric slider shows ``decimals`` digits.
    """

    label_key: str
    key: str
    value: Any
    options: tuple[Any, ...] | None = None
    min_value: float | None = None
    max_value: float | None = None
    step: float | None = None
    help_key: str | None = None
    format_func: Callable[[Any], str] = str
    decimals: int = 2

    @property
    def component_key(self) -> str:
        """Key of the component's own widget (its commits), not the committed value's key."""
        return f"live_{self.key}"

    def accept(self, raw: Any) -> Any | None:
        """The value the control takes for ``raw`` (a number, or a link's text), or None if none.

        An option matches by value (``8`` for ``8.0``) or by its shown text; a numeric slider takes
        a finite number in range, rounded to its step.
        """
        if raw is None or isinstance(raw, bool):
            return None
        if self.options is not None:
            for option in self.options:
                if isinstance(raw, str) and raw in (str(option), self.format_func(option)):
                    return option
            number = _number(raw)
            if number is None:
                return None
            for option in self.options:
                if math.isclose(float(option), number, rel_tol=1e-12, abs_tol=0.0):
                    return option
            return None
        number = _number(raw)
        if number is None or not self.min_value <= number <= self.max_value:  # type: ignore[operator]
            return None
        steps = round((number - self.min_value) / self.step)  # type: ignore[operator]
        snapped = min(self.max_value, self.min_value + steps * self.step)  # type: ignore[operator]
        return round(snapped, max(self.decimals, decimals_of(self.step)))  # type: ignore[arg-type]


def _number(raw: Any) -> float | None:
    try:
        v = float(raw)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def decimals_of(step: float) -> int:
    """Digits after the point that a step needs (0.05 -> 2, 1 -> 0)."""
    text = f"{step:.10f}".rstrip("0")
    return len(text.split(".")[1]) if "." in text else 0


def url_text(value: Any) -> str:
    """A value as Streamlit writes a number into the URL: ``5.0 -> "5"``, ``0.27 -> "0.27"``."""
    if isinstance(value, float) and math.isfinite(value) and value == int(value):
        return str(int(value))
    return str(value)


@dataclass(frozen=True)
class Target:
    """A chart that a live slider redraws while it moves.

    Attributes:
        key: the ``show_figure`` key of the chart (its element carries ``st-key-<key>``).
        view: the drawing in ``static/live/live.js`` (``VIEWS``) that knows the chart's traces.
        titles: (where, template) pairs: the chart's title (``"title"``) or one of its annotations
            (``"annotation:<name>"``) as text with ``{name:spec}`` fields filled from the live state
            as Python's ``format`` would (``"... h = {h:.3g})"``).
    """

    key: str
    view: str
    titles: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Readout:
    """A number shown under the slider while it moves (e.g. the largest attention weight).

    ``label`` is translated; ``stat`` names what live.js computes; ``spec`` formats it."""

    label: str
    stat: str
    spec: str = ".3f"


@dataclass(frozen=True)
class Live:
    """What the browser needs to redraw while a slider moves: the model's inputs (numbers only,
    JSON), which of them the slider moves, and the charts and readouts it redraws."""

    model: Mapping[str, Any]
    param: str
    targets: tuple[Target, ...] = ()
    readouts: tuple[Readout, ...] = field(default=())


def enabled() -> bool:
    """Whether sliders are live (``?live=0`` asks for the release-only sliders)."""
    return controls.link_flag(st.query_params.get(LIVE_FLAG)) is not False


def _resolve(c: Control) -> tuple[Any, str | None]:
    """(the committed value, the link's refused text or None). Sets session state from a link."""
    state = st.session_state
    synced = state.get(_SYNCED, {})
    # Unchanged since this module last wrote the URL, yet the URL lost it: the learner left the page
    # (Streamlit drops the query string) and came back. The value goes, as a widget's would. (A
    # value set since, by the commit, a button or a test, differs from the synced one.)
    if (
        c.key in state
        and c.key in synced
        and _same(state[c.key], synced[c.key])
        and st.query_params.get(c.key) != _url_value(c, state[c.key])
    ):
        del state[c.key]
        del synced[c.key]
    if c.key in state:
        value = c.accept(state[c.key])
        if value is not None:
            return value, None
        del state[c.key]  # a value it cannot take (set by code): the default
    raw = st.query_params.get(c.key)
    if raw is None:
        return c.value, None
    value = c.accept(raw)
    if value is None:
        return c.value, raw
    state[c.key] = value
    return value, None


def value(c: Control) -> Any:
    """The committed value of ``c`` for this run (session state, else the link, else the default)
    without drawing anything: a page reads it to describe the other sliders' state."""
    return _resolve(c)[0]


def _on_commit(c: Control) -> None:
    """The component's commit (release of the slider, a key press): the value becomes the committed
    one. Runs before the script, as a widget callback; a value the control cannot take is ignored."""
    state = st.session_state.get(c.component_key) or {}
    commit = state.get("commit") if hasattr(state, "get") else None
    chosen = c.accept(commit.get("value")) if isinstance(commit, Mapping) else None
    if chosen is not None:
        st.session_state[c.key] = chosen


#: Session-state key: {control key: the value last written to the URL}.
_SYNCED = "_live_synced"


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _url_value(c: Control, value: Any) -> str | None:
    """What the URL holds for ``value``: its text, or nothing at the default."""
    return None if value == c.value else url_text(value)


def _sync_url(c: Control, chosen: Any) -> None:
    """The URL holds the committed value, as a bound control's: removed at the default."""
    st.session_state.setdefault(_SYNCED, {})[c.key] = chosen
    text = _url_value(c, chosen)
    if text is None:
        if c.key in st.query_params:
            del st.query_params[c.key]
    elif st.query_params.get(c.key) != text:
        st.query_params[c.key] = text


@cache
def module_url(base_path: str = "") -> str:
    """URL of ``live.js``, with a hash of every file of ``static/live`` (a new version is fetched
    anew; ``math.js`` is imported with the same hash)."""
    digest = hashlib.sha256()
    for path in sorted(STATIC_DIR.glob("*.js")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    prefix = f"/{base_path.strip('/')}" if base_path.strip("/") else ""
    return f"{prefix}/app/static/live/live.js?v={digest.hexdigest()[:12]}"


@cache
def _component() -> Callable[..., Any]:
    """The registered component (once per process; each runtime gets it on first mount)."""
    return st.components.v2.component(COMPONENT_NAME, js=_LOADER, isolate_styles=False)


def _jsonable(value: Any) -> Any:
    """Numbers as JSON takes them: numpy scalars and arrays as Python ones, NaN as None."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _data(c: Control, chosen: Any, live: Live) -> str:
    """The component's data (one JSON text: a dict would have its lists taken for tables)."""
    spec: dict[str, Any] = {
        "module": module_url(str(st.get_option("server.baseUrlPath") or "")),
        "key": c.key,
        "label": t(c.label_key),
        "help": t(c.help_key) if c.help_key else None,
        # said under the slider while none of its charts is on the page (static/live/live.js)
        "absent": t("common.live_absent"),
        # kept at the window's bottom once its place has scrolled away (static/live/live.js: the
        # dock); not while presenting, where the controls are in the slide bar's box
        "dock": not classroom.presenting(),
        "value": chosen,
        "param": live.param,
        "model": live.model,
        "targets": [{"key": x.key, "view": x.view, "titles": dict(x.titles)} for x in live.targets],
        "readouts": [{"label": r.label, "stat": r.stat, "spec": r.spec} for r in live.readouts],
    }
    if c.options is not None:
        spec |= {"options": list(c.options), "labels": [c.format_func(o) for o in c.options]}
    else:
        spec |= {"min": c.min_value, "max": c.max_value, "step": c.step, "decimals": c.decimals}
    return _dumps(spec)


def _dumps(spec: dict[str, Any]) -> str:
    """``spec`` as compact JSON, NaN and infinities as null (:func:`_jsonable`).

    The models hold thousands of numbers (the data, the grid, the queries): JSON's C encoder takes
    them as they are, ~10x faster than walking them in Python first, which is left for a spec
    holding a NaN or an infinity (the encoder refuses those) or a numpy value (handed back by
    ``default``).
    """
    try:
        return json.dumps(spec, allow_nan=False, separators=(",", ":"), default=_numpy_value)
    except ValueError:  # a NaN or an infinity: null
        return json.dumps(_jsonable(spec), allow_nan=False, separators=(",", ":"))


def _numpy_value(value: Any) -> Any:
    """A numpy scalar or array as Python numbers, another mapping as a dict (``json.dumps``'
    ``default``)."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def slider(c: Control, live: Live, *, where: Any | None = None) -> Any:
    """Draw the live slider ``c`` into ``where`` (default: the main area); returns its committed value.

    ``live`` says what the browser redraws while the slider moves. With ``?live=0`` this is the
    release-only slider of ``ui.controls`` (same key, same URL parameter).
    """
    if not enabled():
        return _release_only(c, where)
    chosen, refused = _resolve(c)
    st.session_state[c.key] = chosen  # as a widget's: the key holds the value shown, default included
    _sync_url(c, chosen)
    with where if where is not None else st.container():
        _component()(
            key=c.component_key,
            data=_data(c, chosen, live),
            on_commit_change=partial(_on_commit, c),
        )
    if refused is not None:
        shown = c.format_func(chosen) if c.options is not None else chosen
        controls.warn_refused_link(c.label_key, refused, shown, where=where)
    # the handout's settings table lists it as ui.controls' sliders list theirs
    shown = str(c.format_func(chosen)) if c.options is not None else controls.shown_value(chosen)
    record_control(c.key, t(c.label_key), shown)
    return chosen


def _release_only(c: Control, where: Any | None) -> Any:
    """The slider of ``ui.controls`` (``st.select_slider`` / ``st.slider``, bound to the URL)."""
    if c.options is not None:
        return controls.select_slider(
            c.label_key,
            key=c.key,
            options=c.options,
            value=c.value,
            help_key=c.help_key,
            format_func=c.format_func,
            where=where,
        )
    return controls.slider(
        c.label_key,
        key=c.key,
        min_value=c.min_value,  # type: ignore[arg-type]
        max_value=c.max_value,  # type: ignore[arg-type]
        value=c.value,
        step=c.step,  # type: ignore[arg-type]
        help_key=c.help_key,
        where=where,
    )


def numbers(values: Sequence[float] | Any) -> list[float]:
    """An array as a list of floats for a model (JSON)."""
    return [float(v) for v in values]
