"""Shared look of every figure: large fonts for projectors, one colour scale for weights."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

#: Sequential scale for attention / kernel weights (0 = white, 1 = dark), as in the post's YlOrRd.
WEIGHT_COLORSCALE = "YlOrRd"
#: Diverging scale for signed quantities (scores, differences, encodings).
SIGNED_COLORSCALE = "RdBu_r"
#: Categorical colours, colour-blind safe (Okabe-Ito).
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"]

BASE_FONT_SIZE = 15

#: Name of the house template (plotly_white, large fonts, legend on top), registered once below.
HOUSE_TEMPLATE = "attention_house"


def _register_house_template() -> None:
    """Register the house look as Plotly's default template, once per process.

    Every ``go.Figure`` picks up the default template when it is created; passing ``template=`` to
    ``update_layout`` instead deep-copied and re-validated the whole template for every figure
    (~20 ms each, most of a page's rerun time before this was changed).
    """
    if HOUSE_TEMPLATE in pio.templates and pio.templates.default == HOUSE_TEMPLATE:
        return
    house = go.layout.Template(pio.templates["plotly_white"])
    house.layout.font = {"size": BASE_FONT_SIZE}
    house.layout.legend = {"orientation": "h", "yanchor": "bottom", "y": 1.02, "xanchor": "left", "x": 0}
    pio.templates[HOUSE_TEMPLATE] = house
    pio.templates.default = HOUSE_TEMPLATE


_register_house_template()


def base_layout(fig: go.Figure, *, title: str | None = None, height: int = 420) -> go.Figure:
    """Apply the per-figure part of the house layout (title, height, margins) and return ``fig``.

    Font size, colours and the legend come from the house template, the default of every figure.
    """
    fig.update_layout(
        title=title,
        height=height,
        margin={"l": 60, "r": 20, "t": 60 if title else 30, "b": 50},
    )
    return fig


def heatmap(
    z: np.ndarray,
    *,
    x: Sequence | None = None,
    y: Sequence | None = None,
    title: str | None = None,
    x_title: str = "",
    y_title: str = "",
    colorscale: str = WEIGHT_COLORSCALE,
    zmin: float | None = None,
    zmax: float | None = None,
    zmid: float | None = None,
    height: int = 420,
    hover_template: str | None = None,
) -> go.Figure:
    """A heatmap with rows = queries on y (top row first), columns = keys on x.

    Args:
        z: (L, S) values; NaN cells are drawn blank (undefined, e.g. fully masked rows).
        x, y: optional tick labels for the S columns and L rows.
        x_title, y_title: axis titles (already translated); the hover text reuses them.
    """
    z = np.asarray(z, dtype=float)
    trace = go.Heatmap(
        z=z,
        x=list(x) if x is not None else None,
        y=list(y) if y is not None else None,
        colorscale=colorscale,
        zmin=zmin,
        zmax=zmax,
        zmid=zmid,
        hovertemplate=hover_template or f"{y_title} %{{y}} → {x_title} %{{x}}<br>%{{z:.4g}}<extra></extra>",
    )
    fig = go.Figure(trace)
    fig.update_yaxes(autorange="reversed", title=y_title)
    fig.update_xaxes(title=x_title)
    return base_layout(fig, title=title, height=height)
