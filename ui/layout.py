"""Page furniture shared by every page: header, "what to look for" notes, figure display."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import weakref
from collections.abc import Callable, Sequence
from typing import Any, ParamSpec

import plotly.graph_objects as go
import pyarrow as pa
import streamlit as st

from figures import projector
from figures.common import FIGURE_CONFIG, narrow_layout
from figures.export import figure_csv
from ui import a11y, caching, classroom, live_slider, viewport
from ui.handout import qualified_name, record, source
from ui.house_chart import house_chart
from ui.i18n import t
from ui.plotly_spec import Marks
from ui.router import ensure_routed

#: Plotly config for every chart (``figures.common``, shared with the handout's figures).
PLOTLY_CONFIG = FIGURE_CONFIG


#: How many figures of one builder stay cached per server process (all sessions share them).
FIGURE_CACHE_ENTRIES = 64

P = ParamSpec("P")


def cached_figure(builder: Callable[P, go.Figure]) -> Callable[P, go.Figure]:
    """Cache a ``figures`` builder on its inputs: the same inputs return the *same* figure object.

    Building a Plotly figure validates every property (tens of ms for a heatmap); a rerun that
    shows the same figure again should cost only its serialisation. The cache is shared by all
    sessions and bounded (:data:`FIGURE_CACHE_ENTRIES` per builder). The returned figure is shared:
    never mutate it (``st.plotly_chart`` only reads it). Arguments must be hashable by Streamlit
    (numpy arrays, numbers, strings, tuples, frozen dataclasses of those).

    On a phone (``ui.viewport.narrow()``) the figure is built for it, in a cache of its own: with
    ``narrow=True`` when the builder takes that flag (stacked panels, no cramped cell text), then
    through ``figures.common.narrow_layout`` (type, title, legend). Desktop figures are untouched.
    """
    desktop = caching.resource(max_entries=FIGURE_CACHE_ENTRIES)(builder)
    flag = {"narrow": True} if "narrow" in inspect.signature(builder).parameters else {}

    def for_phone(*args: Any, **kwargs: Any) -> go.Figure:
        return narrow_layout(builder(*args, **kwargs, **flag))

    for_phone.__qualname__ = f"{builder.__qualname__}.for_phone"  # its own cache, named for its builder
    phone = caching.resource(max_entries=FIGURE_CACHE_ENTRIES)(for_phone)

    @functools.wraps(builder)
    def build(*args: P.args, **kwargs: P.kwargs) -> go.Figure:
        return (phone if viewport.narrow() else desktop)(*args, **kwargs)

    return build


_CACHED_BUILDERS: dict[Callable[..., go.Figure], Callable[..., go.Figure]] = {}


def cached(builder: Callable[P, go.Figure]) -> Callable[P, go.Figure]:
    """The one :func:`cached_figure` of ``builder`` (made on its first use), typed as the builder.

    The one way the app caches a figure builder: a page's helpers call
    ``cached(fmod.some_figure)(...)`` where they draw, or a ``ui`` module names the twin a page
    calls (``fit_figure = cached(fkr.fit_figure)``). Every call for one builder reaches the same
    bounded cache (``tests/test_layers.py``: no other module calls :func:`cached_figure`).
    """
    wrapped = _CACHED_BUILDERS.get(builder)
    if wrapped is None:
        wrapped = _CACHED_BUILDERS.setdefault(builder, cached_figure(builder))
    return wrapped


def page_header(title_key: str, intro_key: str | None = None) -> None:
    """Title and a one-paragraph introduction, both from the i18n catalogue.

    Every page starts with this call; it also makes sure the page runs inside the router. While
    presenting, both are on the first slide only; the later slides start with the compact slide
    bar, which holds the title (``ui.classroom``).
    """
    ensure_routed()
    classroom.begin_page(t(title_key))
    if not classroom.on_title_slide():
        return
    st.title(t(title_key))
    if intro_key:
        st.markdown(t(intro_key))


def look_for(key: str, **kwargs: object) -> None:
    """One or two sentences under a figure saying what to look for (kept for the handout)."""
    text = t(key, **kwargs)
    record("note", st.caption(":material/visibility: " + text), key=key, caption=text)


#: What ``show_figure(code=...)`` accepts: one function, several, or None.
CodeArg = Callable[..., Any] | Sequence[Callable[..., Any]] | None


def show_code(code: CodeArg, *, key: str) -> tuple[Callable[..., Any], ...]:
    """An expander with the real source of the ``core`` function(s) that computed a figure.

    The source is read from the module (``inspect.getsource``, cached per process), so it can
    never drift from the code that runs. The expander is lazy (``on_change="rerun"``): its
    caption and code are sent only while it is open, not on every rerun of the page (15 code
    blocks, ~28 KB, on scaled dot-product). Opening it reruns the section it sits in. ``key``
    names its open/closed state. Returns the functions shown (empty when ``code`` is None).
    """
    if code is None:
        return ()
    fns = (code,) if callable(code) else tuple(code)
    box = st.expander(t("common.show_code"), icon=":material/code:", key=key, on_change="rerun")
    record("skip", box, key=key)  # the handout keeps the code with its figure
    if box.open:
        with box:
            for fn in fns:
                st.caption(f"`{qualified_name(fn)}`")
                st.code(source(fn), language="python")
    return fns


#: id(figure) -> (a weak reference to it, its projector copy): a slide shown again (every rerun)
#: reuses the copy, whose JSON ``server.plotly_spec`` then keeps too. Dropped with the figure.
_projected: dict[int, tuple[weakref.ref, go.Figure]] = {}


def _for_projector(fig: go.Figure) -> go.Figure:
    """``fig`` with projector type (``figures.projector``: every text >= 16 px), made once per figure.

    Only the shown slide's figures are copied. Figures are keyed by identity: the cached builders
    return the same object for the same inputs, and no figure is mutated once shown.
    """
    key = id(fig)
    entry = _projected.get(key)
    if entry is not None and entry[0]() is fig:
        return entry[1]
    big = projector.for_projector(fig)
    _projected[key] = (weakref.ref(fig, lambda _, key=key: _projected.pop(key, None)), big)
    return big


def _marks_for_projector(marks: Marks) -> Marks:
    """``marks`` with their annotations' type grown as the projected figure's."""
    annotations = tuple(projector.projected_annotation(a) for a in marks.annotations)
    return dataclasses.replace(marks, annotations=annotations)


def show_figure(
    fig: go.Figure,
    *,
    key: str,
    look_for_key: str | None = None,
    looks: Sequence[tuple[str, str]] = (),
    code: CodeArg = None,
    marks: Marks | None = None,
    summary: str | None = None,
    **kwargs: object,
) -> None:
    """Render a Plotly figure at full width, with its "what to look for" note under it.

    Under the note: "Download the numbers (CSV)" (``figures.export.figure_csv``, built only when
    clicked; the click does not rerun the page) and, given ``code``, the source of the function(s)
    that computed the figure (:func:`show_code`). The figure and its note are recorded for the
    page's handout (``ui.handout``). The CSV button, the record, the chart's description and the
    numbers expander add ~0.45 ms per figure (~0.23 ms before the last two; ``python -m benchmarks
    show_figure``). ``kwargs`` fill the note's placeholders. ``marks``
    (``ui.plotly_spec.Marks``) are drawn over ``fig`` without rebuilding it: a marker that follows
    a control on a figure cached on its data; the CSV holds ``fig``'s data, the handout the marks too.
    A figure of several panels gives ``looks`` instead of ``look_for_key``: (panel title, i18n key)
    pairs, one line of the note each.

    Accessibility (``ui.a11y``): the chart gets a name and a description generated from ``fig``'s
    data (``summary``, a sentence the caller knows better, leads it), and a lazy "Show the numbers"
    expander with the values as a table.

    The chart is drawn by ``ui.house_chart``: one element kept from run to run, one Plotly drawing
    when its figure changes (``st.plotly_chart`` draws a changed figure into a new element, twice),
    where a live slider's overlay hands over. ``?live=0`` (the release-only sliders, the path before
    issue 25) draws it with ``st.plotly_chart``, as before.
    """
    shown, shown_marks = fig, marks
    if classroom.presenting():
        shown = _for_projector(fig)
        shown_marks = None if marks is None else _marks_for_projector(marks)
    if live_slider.enabled():
        element = house_chart(shown, key=key, config=PLOTLY_CONFIG, marks=shown_marks)
    else:
        chart = shown_marks.over(shown) if shown_marks is not None else shown
        element = st.plotly_chart(chart, width="stretch", config=PLOTLY_CONFIG, key=key)
    text = a11y.label_chart(fig, key=key, summary=summary)
    caption = ""
    if look_for_key:
        caption = t(look_for_key, **kwargs)
    elif looks:
        caption = "  \n".join(f"**{title}**: {t(key, **kwargs)}" for title, key in looks)
    if caption:
        note = st.caption(":material/visibility: " + caption)
        record("skip", note, key=f"{key}_note")  # the handout keeps it with the figure
    st.download_button(
        t("common.download_csv"),
        data=functools.partial(figure_csv, fig),
        file_name=f"{key}.csv",
        mime="text/csv",
        key=f"{key}_csv",
        type="tertiary",
        on_click="ignore",
        icon=":material/download:",
    )
    a11y.show_numbers(fig, key=key, text=text)
    fns = show_code(code, key=f"{key}_code")
    record("figure", element, key=key, obj=fig if marks is None else (fig, marks), caption=caption, code=fns)


def arrow_table(data: Any) -> Any:
    """A dict of columns or a list of row dicts as a ``pyarrow.Table``; anything else unchanged.

    ``st.table`` turns a dict into a pandas DataFrame, twice (for its index and for the Arrow
    bytes): 2-5 ms per table in a live profile. Given an Arrow table it only serialises it (~0.1 ms).
    A DataFrame (e.g. with a named index to show) and data Arrow cannot type (a column mixing
    numbers and text) are returned as they are, for Streamlit to convert.
    """
    try:
        if isinstance(data, dict):
            return pa.table({str(k): list(v) for k, v in data.items()})
        if isinstance(data, list) and data and all(isinstance(row, dict) for row in data):
            return pa.Table.from_pylist(data)
    except (pa.ArrowException, TypeError):
        pass
    return data


def table(data: Any, *, where: Any = None, **kwargs: Any) -> Any:
    """``st.table`` (a static table that wraps to the page width) through :func:`arrow_table`.

    The index is hidden, as ``st.table`` hides a dict's or a list's row numbers, unless
    ``hide_index`` says otherwise or ``data`` is a DataFrame (its index may be the row labels).
    The table is recorded for the page's handout.
    """
    converted = arrow_table(data)
    if converted is not data:
        kwargs.setdefault("hide_index", True)
    element = (where or st).table(converted, **kwargs)
    record("table", element, key="table", obj=converted)  # by reference: read on the handout's click
    return element


#: The kernel regression <-> attention dictionary (the post's table, section 2.3): one row per
#: role, its texts in ``common.json`` (``common.dictionary_<row>_<column>``). Defined once; the home
#: page, the kernel regression page and the kernels-to-attention page show it.
DICTIONARY_ROWS = ("query", "keys", "values", "score", "normaliser", "bandwidth", "output")
DICTIONARY_COLUMNS = ("role", "nw", "attention")


def dictionary_table(where: Any = None) -> Any:
    """The kernel regression <-> attention dictionary as a table, in the current language."""
    return table(
        {
            t(f"common.dictionary_col_{c}"): [t(f"common.dictionary_{r}_{c}") for r in DICTIONARY_ROWS]
            for c in DICTIONARY_COLUMNS
        },
        where=where,
    )
