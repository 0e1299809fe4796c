"""Figures of the kernels-to-attention page: the post's three figures (weights, the NW matrix, the
fit), a query's weights, dot product vs Gaussian kernel and the learnable kernel's curves.

Pure Plotly builders: arrays and translated words in (one ``labels: Labels`` per figure, the house's
convention: ``figures.common.Labels``), ``go.Figure`` out. No Streamlit, no math
beyond reshaping. Weight matrices are drawn with rows = queries (y, top first) and columns = keys
(x), through ``figures.common.heatmap``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from figures.attention_shared import bar_beside, legend_below, rule, vline_marks
from figures.attention_shared import heatmap_row as heatmap_row  # the page draws it from here too
from figures.common import (
    COLORBAR_MARGIN,
    DARK_GREY,
    GREY,
    MARGIN_BOTTOM,
    MARGIN_LEFT,
    NARROW_COLORBAR_MARGIN,
    NARROW_MARGIN_LEFT,
    NARROW_X_AXIS,
    PALETTE,
    WEIGHT_COLORSCALE,
    Labels,
    base_layout,
    grid_layout,
    log_axis,
    position_labels,
    position_ticks,
    stacked_layout,
    stacked_size,
    weight_axis,
)


def line_figure(
    x: np.ndarray,
    series: Mapping[str, np.ndarray],
    *,
    labels: Labels,
    log_x: bool = False,
    log_y: bool = False,
    dashed: Sequence[str] = (),
    hlines: Mapping[str, float] | None = None,
    vline: float | None = None,
    markers: bool = True,
    height: int = 400,
) -> go.Figure:
    """Several named curves over a shared x; optional dashed series, labelled horizontal lines and
    one vertical marker (e.g. the current d_k).

    ``labels``: title, x, y; ``name("vline")`` the marker's text (optional). The series' and the
    horizontal lines' names are their mappings' keys (data: one per curve).

    Built in one pass (traces, shapes and annotations as plain dicts, validated once): a figure
    rebuilt on every step of a control should cost milliseconds.
    """
    traces = [
        go.Scatter(
            x=np.asarray(x),
            y=np.asarray(y),
            name=name,
            mode="lines+markers" if markers else "lines",
            line={"color": PALETTE[i % len(PALETTE)], "width": 3, "dash": "dash" if name in dashed else None},
        )
        for i, (name, y) in enumerate(series.items())
    ]
    shapes, annotations = [], []
    for j, (name, value) in enumerate((hlines or {}).items()):
        color = PALETTE[(len(series) + j) % len(PALETTE)]
        shapes.append(rule("y", value, {"color": color, "dash": "dot", "width": 2}))
        annotations.append(
            {"x": 0, "xref": "x domain", "y": value, "yref": "y", "text": name, "showarrow": False,
             "xanchor": "left", "yanchor": "bottom", "font": {"size": 14}}
        )  # fmt: skip
    if vline is not None:
        text = labels.name("vline") if labels.has("vline") else ""
        marker_shapes, marker_notes = vline_marks(vline, text, log_x=log_x)
        shapes += marker_shapes
        annotations += marker_notes
    xaxis: dict = {"title": {"text": labels.x}, **(log_axis(x) if log_x else {})}
    if log_x:  # pin the range to the data (a marker's label must not stretch the axis)
        xs = np.asarray(x, dtype=float)
        xaxis["range"] = [float(np.log10(xs.min())) - 0.05, float(np.log10(xs.max())) + 0.05]
    yaxis = {"title": {"text": labels.y}, **(log_axis(*series.values()) if log_y else {})}
    layout = {
        "xaxis": xaxis,
        "yaxis": yaxis,
        "shapes": shapes,
        "annotations": annotations,
        # legend under the plot, so long series names never collide with the title
        "legend": {"orientation": "h", "yanchor": "top", "y": -0.22, "xanchor": "left", "x": 0},
    }
    fig = base_layout(go.Figure(data=traces, layout=layout), title=labels.title, height=height + 70)
    fig.update_layout(margin={"b": 130})
    return fig


def weight_distribution(
    x_train: np.ndarray,
    weights_nw: np.ndarray,
    weights_att: np.ndarray,
    *,
    x0: float,
    labels: Labels,
    height: int = 400,
) -> go.Figure:
    """The post's first figure: one query's weights over the samples x_i (NW filled curve, attention dots).

    ``labels``: title, x, y and the names ``nw``, ``att`` and ``query`` (the marker at x0).
    """
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=x_train,
            y=weights_nw,
            name=labels.name("nw"),
            meta="nw",  # how the live slider's drawing finds a trace (ui.live_slider)
            mode="lines",
            fill="tozeroy",
            line={"color": PALETTE[0], "width": 2},
        )
    )
    fig.add_trace(
        go.Scatter(
            x=x_train,
            y=weights_att,
            name=labels.name("att"),
            meta="att",
            mode="markers",
            marker={"color": PALETTE[1], "size": 7},
        )
    )
    fig.add_vline(
        x=x0,
        line={"color": DARK_GREY, "dash": "dot"},
        name="x_query",
        annotation_text=labels.name("query"),
        annotation={"name": "x_query"},
    )
    top = np.nanmax(np.concatenate([np.ravel(weights_nw), np.ravel(weights_att)]))
    fig.update_xaxes(title=labels.x)
    fig.update_yaxes(title=labels.y, **weight_axis(float(top)))  # ticks that stay put (weight_axis)
    return legend_below(base_layout(fig, title=labels.title, height=height))


def side_by_side(
    w_nw: np.ndarray,
    w_att: np.ndarray,
    *,
    x_query: np.ndarray,
    x_train: np.ndarray,
    titles: tuple[str, str],
    labels: Labels,
    height: int = 440,
    narrow: bool = False,
) -> go.Figure:
    """The post's third figure: the NW weight matrix and the attention weight matrix, side by side
    (one above the other when ``narrow``: a phone). ``titles``: the two panels' titles (data, one
    per panel); ``labels``: title ("" for none), x, y."""
    zmax = float(np.nanmax([np.nanmax(w_nw), np.nanmax(w_att)]))
    count = 5 if narrow else 7
    if narrow:
        layout, axes, area, top = stacked_layout(
            2, titles=titles, panel_height=220, below=NARROW_X_AXIS, margin_left=NARROW_MARGIN_LEFT
        )
    else:
        layout, axes = grid_layout(1, 2, titles=titles, horizontal_spacing=0.1, title_size=16)
    xs, ys = position_labels(x_train), position_labels(x_query)
    data = []
    for i, (w, suffix, meta) in enumerate(zip((w_nw, w_att), axes, ("nw", "att"), strict=True)):
        data.append(
            {"type": "heatmap", "z": np.asarray(w, dtype=float), "x": xs, "y": ys, "meta": meta,
             "xaxis": f"x{suffix}", "yaxis": f"y{suffix}", "colorscale": WEIGHT_COLORSCALE, "zmin": 0,
             "zmax": zmax, "showscale": i == 1,
             "hovertemplate": "x_i %{x}<br>x %{y}<br>%{z:.4g}<extra></extra>"}
        )  # fmt: skip
        if narrow:
            data[-1]["colorbar"] = bar_beside(layout, suffix)
        layout[f"yaxis{suffix}"] |= {
            "autorange": "reversed",
            **position_ticks(x_query, ys, count),
            "title": {"text": labels.y if i == 0 or narrow else ""},
        }
        layout[f"xaxis{suffix}"] |= {**position_ticks(x_train, xs, count), "title": {"text": labels.x}}
    if narrow:
        layout |= {
            "title": {"text": labels.title or None},
            **stacked_size(top, area, right=NARROW_COLORBAR_MARGIN),
        }
        return go.Figure({"data": data, "layout": layout})
    layout |= {
        "title": {"text": labels.title or None},
        "height": height,
        "margin": {
            "l": MARGIN_LEFT,
            "r": COLORBAR_MARGIN,
            "t": 60 if labels.title else 30,
            "b": MARGIN_BOTTOM,
        },
    }
    return go.Figure({"data": data, "layout": layout})


def fit_figure(
    x: np.ndarray,
    y: np.ndarray,
    grid: np.ndarray,
    curves: Mapping[str, np.ndarray],
    *,
    labels: Labels,
    dashed: Sequence[str] = (),
    metas: Sequence[str] | None = None,
    height: int = 420,
) -> go.Figure:
    """Samples as dots and named fitted curves over a grid (``metas``: one id per curve, how a live
    slider's drawing finds it). ``labels``: title, x, y and the name ``samples``; the curves' names
    are ``curves``' keys (data: one per curve, ``dashed`` names some of them)."""
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=x,
            y=y,
            mode="markers",
            name=labels.name("samples"),
            marker={"color": GREY, "size": 5, "opacity": 0.6},
        )
    )
    for i, (name, c) in enumerate(curves.items()):
        fig.add_trace(
            go.Scatter(
                x=grid,
                y=c,
                mode="lines",
                name=name,
                meta=None if metas is None else metas[i],
                line={
                    "color": PALETTE[i % len(PALETTE)],
                    "width": 3,
                    "dash": "dash" if name in dashed else None,
                },
            )
        )
    fig.update_xaxes(title=labels.x)
    fig.update_yaxes(title=labels.y)
    return legend_below(base_layout(fig, title=labels.title, height=height))


def bar_figure(
    categories: Sequence[str],
    series: Mapping[str, np.ndarray],
    *,
    labels: Labels,
    height: int = 360,
) -> go.Figure:
    """Grouped bars: one group per category, one bar per named series (``series``' keys: data).
    ``labels``: title, x, y."""
    fig = go.Figure()
    for i, (name, values) in enumerate(series.items()):
        fig.add_trace(go.Bar(x=list(categories), y=np.asarray(values), name=name, marker_color=PALETTE[i]))
    fig.update_xaxes(title=labels.x, type="category")
    fig.update_yaxes(title=labels.y)
    fig.update_layout(barmode="group")
    return legend_below(base_layout(fig, title=labels.title, height=height))
