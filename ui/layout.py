"""Page furniture shared by every page: header, "what to look for" notes, figure display."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, ParamSpec

import plotly.graph_objects as go
import pyarrow as pa
import streamlit as st

from figures.export import figure_csv
from ui import a11y, caching, classroom
from ui.handout import qualified_name, record, source
from ui.i18n import t
from ui.plotly_spec import Marks
from ui.router import ensure_routed

#: Plotly config for every chart: no logo, and the download button saves a big PNG for slides.
#: The toolbar keeps the buttons that matter (download PNG, reset axes; Streamlit adds full
#: screen): each button is a Tab stop, and eight per chart buried a page's controls (issue 24).
#: Dragging still zooms (Plotly's default drag mode); a double click resets.
PLOTLY_CONFIG: dict[str, Any] = {
    "displaylogo": False,
    "toImageButtonOptions": {"format": "png", "scale": 2},
    "modeBarButtonsToRemove": [
        "zoom2d",
        "pan2d",
        "select2d",
        "lasso2d",
        "zoomIn2d",
        "zoomOut2d",
        "autoScale2d",
    ],
}


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
    """
    return caching.resource(max_entries=FIGURE_CACHE_ENTRIES)(builder)


class cached_figures:
    """A ``figures`` module whose every builder is :func:`cached_figure`: ``figs.fit_figure(...)``
    builds a figure once per distinct input, shared by all sessions."""

    def __init__(self, module: Any) -> None:
        self._module = module

    def __getattr__(self, name: str) -> Callable[..., go.Figure]:
        if name.startswith("_"):
            raise AttributeError(name)
        key = (self._module.__name__, name)
        if key not in _CACHED_BUILDERS:  # once per process: making the cache reads the source
            _CACHED_BUILDERS[key] = cached_figure(getattr(self._module, name))
        return _CACHED_BUILDERS[key]


#: (module, builder name) -> its cached version, shared by every run of every page.
_CACHED_BUILDERS: dict[tuple[str, str], Callable[..., go.Figure]] = {}


def page_header(title_key: str, intro_key: str | None = None) -> None:
    """Title and a one-paragraph introduction, both from the i18n catalogue.

    Every page starts with this call; it also makes sure the page runs inside the router.
    """
    ensure_routed()
    st.title(t(title_key))
    if intro_key and (not classroom.presenting() or classroom.requested_slide() == 1):
        st.markdown(t(intro_key))  # while presenting: on the first slide only


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
    if box.open:
        with box:
            for fn in fns:
                st.caption(f"`{qualified_name(fn)}`")
                st.code(source(fn), language="python")
    return fns


#: Plotly's base font while presenting (the house template's is 15 px): read from the back row.
PROJECTOR_FONT_SIZE = 20


def _for_projector(fig: go.Figure) -> go.Figure:
    """A copy of a (shared, cached) figure with larger type, for presentation mode.

    Only the shown slide's figures are copied; text with its own size (annotations) keeps it.
    """
    big = go.Figure(fig)
    big.update_layout(font={"size": PROJECTOR_FONT_SIZE})
    legends = big.layout.to_plotly_json()  # legends with a size of their own (one per panel) grow too
    sized = [k for k, v in legends.items() if k.startswith("legend") and (v.get("font") or {}).get("size")]
    if sized:
        big.update_layout({k: {"font": {"size": PROJECTOR_FONT_SIZE}} for k in sized})
    return big


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
    """
    shown = _for_projector(fig) if classroom.presenting() else fig
    chart = marks.over(shown) if marks is not None else shown
    element = st.plotly_chart(chart, width="stretch", config=PLOTLY_CONFIG, key=key)
    text = a11y.label_chart(fig, key=key, summary=summary)
    caption = ""
    if look_for_key:
        caption = t(look_for_key, **kwargs)
    elif looks:
        caption = "  \n".join(f"**{title}**: {t(key, **kwargs)}" for title, key in looks)
    if caption:
        st.caption(":material/visibility: " + caption)
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
    """
    converted = arrow_table(data)
    if converted is not data:
        kwargs.setdefault("hide_index", True)
    return (where or st).table(converted, **kwargs)
