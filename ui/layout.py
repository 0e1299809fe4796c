"""Page furniture shared by every page: header, "what to look for" notes, figure display."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ParamSpec

import plotly.graph_objects as go
import streamlit as st

from ui.i18n import t
from ui.router import ensure_routed

#: Plotly config for every chart: no logo, and the download button saves a big PNG for slides.
PLOTLY_CONFIG: dict[str, Any] = {
    "displaylogo": False,
    "toImageButtonOptions": {"format": "png", "scale": 2},
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
    return st.cache_resource(max_entries=FIGURE_CACHE_ENTRIES, show_spinner=False)(builder)


def page_header(title_key: str, intro_key: str | None = None) -> None:
    """Title and a one-paragraph introduction, both from the i18n catalogue.

    Every page starts with this call; it also makes sure the page runs inside the router.
    """
    ensure_routed()
    st.title(t(title_key))
    if intro_key:
        st.markdown(t(intro_key))


def look_for(key: str, **kwargs: object) -> None:
    """One or two sentences under a figure saying what to look for."""
    st.caption(":material/visibility: " + t(key, **kwargs))


def show_figure(fig: go.Figure, *, key: str, look_for_key: str | None = None, **kwargs: object) -> None:
    """Render a Plotly figure at full width, with its "what to look for" note under it."""
    st.plotly_chart(fig, width="stretch", config=PLOTLY_CONFIG, key=key)
    if look_for_key:
        look_for(look_for_key, **kwargs)
