"""Figures of the Kernel Regression page: fit, one query's weights, the weight matrix, kernel shapes,
the leave-one-out CV curve and the bandwidth sweep.

Pure Plotly builders: arrays and translated words (one ``labels: figures.common.Labels`` each) in,
``go.Figure`` out; no Streamlit, no math (a figure that needs a number receives it). NaN in a fit
is drawn as a gap, never bridged. The weight matrix has rows = query points (y, top first) and
columns = samples (x), like every attention map.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from figures.attention_shared import weight_map
from figures.common import (
    BLACK,
    GREY,
    MARGIN_BOTTOM,
    MARGIN_LEFT,
    NARROW_MARGIN_LEFT,
    NARROW_X_AXIS,
    PALETTE,
    WEIGHT_COLORSCALE,
    WHITE,
    Labels,
    base_layout,
    grid_layout,
    log_axis,
    stacked_layout,
    stacked_size,
    weight_axis,
    with_alpha,
)

DATA_COLOR = GREY
TRUTH_COLOR = PALETTE[2]
FIT_COLOR = PALETTE[1]
QUERY_COLOR = PALETTE[0]


def _data_trace(x: np.ndarray, y: np.ndarray, name: str, show_legend: bool = True) -> go.Scatter:
    return go.Scatter(
        x=x,
        y=y,
        mode="markers",
        name=name,
        showlegend=show_legend,
        marker={"size": 6, "color": DATA_COLOR, "opacity": 0.5},
    )


def _vline(x: float, line: dict, yref: str = "paper") -> dict:
    """A vertical line at ``x`` across the whole height of ``yref`` (a shape dict)."""
    return {"type": "line", "xref": "x", "yref": yref, "x0": x, "x1": x, "y0": 0, "y1": 1, "line": line}


def _star(x: float, y: float, name: str, **axes: str) -> dict:
    """The star that marks one chosen point (the estimate f̂(x*), h*), as a scatter trace dict."""
    return {
        "type": "scatter",
        "x": [x],
        "y": [y],
        **axes,
        "mode": "markers",
        "name": name,
        "marker": {"size": 16, "symbol": "star", "color": FIT_COLOR, "line": {"width": 1, "color": BLACK}},
    }


def _margin(top: int) -> dict:
    """The house margins with ``top`` px for the title above the legend."""
    return {"l": MARGIN_LEFT, "r": 20, "t": top, "b": MARGIN_BOTTOM}


def _figure(data: list[dict], layout: dict, labels: Labels, *, height: int, top: int) -> go.Figure:
    """A one-pass figure from plain dicts (validated once): ``layout`` with the title of ``labels``,
    its x and y axis titles (added to ``layout``'s own "xaxis" and "yaxis"), ``height`` and the
    house margins with ``top`` px above. The fit, the row and the CV curve are rebuilt on every new
    h or x*: add_vline & co. cost ~10x more."""
    axes = {
        axis: {"title": {"text": text}, **layout.get(axis, {})}
        for axis, text in (("xaxis", labels.x), ("yaxis", labels.y))
    }
    full = layout | axes | {"title": {"text": labels.title}, "height": height, "margin": _margin(top)}
    return go.Figure({"data": data, "layout": full})


def _truth_line(grid: np.ndarray, truth: np.ndarray, name: str) -> dict:
    """The noiseless curve (Q,) over the grid: a dashed line (a scatter trace dict)."""
    return _line(grid, truth, name, {"color": TRUTH_COLOR, "width": 2, "dash": "dash"})


def _fit_line(grid: np.ndarray, fit: np.ndarray, name: str) -> dict:
    """The NW fit (Q,) over the grid, NaN drawn as gaps, never bridged (a scatter trace dict)."""
    return _line(grid, fit, name, {"color": FIT_COLOR, "width": 3}) | {"connectgaps": False}


def _line(grid: np.ndarray, values: np.ndarray, name: str, line: dict) -> dict:
    """A named curve (Q,) over the grid drawn with ``line`` (a scatter trace dict)."""
    return {"type": "scatter", "x": grid, "y": values, "mode": "lines", "name": name, "line": line}


def _undefined_marks(grid: np.ndarray, fit: np.ndarray, y: np.ndarray, name: str) -> list[dict]:
    """× marks along the bottom where the fit (Q,) is NaN: none, or one trace."""
    undefined = np.isnan(np.asarray(fit, dtype=float))
    if not undefined.any():
        return []
    return [
        {
            "type": "scatter",
            "x": np.asarray(grid)[undefined],
            "y": np.full(int(undefined.sum()), float(np.min(y))),
            "mode": "markers",
            "name": name,
            "meta": "undefined",
            "marker": {"symbol": "x-thin", "size": 9, "line": {"width": 2, "color": FIT_COLOR}},
        }
    ]


def fit_figure(
    x: np.ndarray,
    y: np.ndarray,
    grid: np.ndarray,
    fit: np.ndarray,
    *,
    truth: np.ndarray | None,
    x_query: float | None,
    labels: Labels,
    height: int = 460,
) -> go.Figure:
    """Samples, the true curve and the NW fit; grid points where the fit is NaN are marked with ×.

    Args:
        x, y: (N,) samples.
        grid: (Q,) where the fit (and truth) are evaluated.
        fit: (Q,) NW fit, NaN where undefined (drawn as gaps).
        truth: (Q,) the noiseless curve, or None (uploaded data).
        x_query: x* marked by a vertical line, or None.
        labels: title, x, y; names "data", "fit", "undefined", "query" and (with a truth) "truth".
    """
    # One pass from plain dicts (validated once): this figure is rebuilt on every new h or x*.
    data = [_data_trace(x, y, labels.name("data")).to_plotly_json()]
    if truth is not None:
        data.append(_truth_line(grid, truth, labels.name("truth")))
    # meta: how the live slider's drawing finds a trace (ui.live_slider)
    data.append(_fit_line(grid, fit, labels.name("fit")) | {"meta": "fit"})
    data += _undefined_marks(grid, fit, y, labels.name("undefined"))
    shapes, annotations = [], []
    if x_query is not None:
        shapes.append(
            _vline(x_query, {"color": QUERY_COLOR, "width": 2, "dash": "dot"}) | {"name": "x_query"}
        )
        annotations.append(
            {
                "name": "x_query",
                "x": x_query,
                "y": 1,
                "xref": "x",
                "yref": "paper",
                "text": labels.name("query"),
                "showarrow": False,
                "xanchor": "center",
                "yanchor": "bottom",
            }
        )
    return _figure(data, {"shapes": shapes, "annotations": annotations}, labels, height=height, top=90)


#: Marker sizes (px) of the samples under one row of weights: zero weight to the row's largest.
WEIGHT_SIZE_RANGE = (5.0, 16.0)


def _weight_sizes(row: np.ndarray) -> np.ndarray:
    """(N,) marker sizes growing with the (N,) weights: the smallest for 0 (or NaN), the largest for
    the row's largest weight."""
    w = np.nan_to_num(np.asarray(row, dtype=float))
    low, high = WEIGHT_SIZE_RANGE
    top = w.max() if w.size else 0.0
    return low + (high - low) * (w / top if top > 0 else w)


def _stems(x: np.ndarray, row: np.ndarray, name: str) -> dict:
    """The (N,) weights as stems on the lower panel (y2): one scatter trace dict."""
    # stems: one vertical segment per sample, as a single trace with None separators; both ends of
    # a stem hover with its weight (no marker per sample: 200 SVG points fewer to draw per redraw)
    sx = np.repeat(np.asarray(x, dtype=float), 3)
    sy = np.column_stack([np.zeros_like(row), row, np.full_like(row, np.nan)]).ravel()
    sx[2::3] = np.nan
    return {
        "type": "scatter",
        "x": sx,
        "y": sy,
        "customdata": np.repeat(row, 3),
        "xaxis": "x",
        "yaxis": "y2",
        "mode": "lines",
        "name": name,
        "meta": "stems",
        "showlegend": False,
        "line": {"color": QUERY_COLOR, "width": 2},
        "hovertemplate": "x=%{x:.3f}<br>w=%{customdata:.4f}<extra></extra>",
    }


def attention_row_figure(
    x: np.ndarray,
    y: np.ndarray,
    row: np.ndarray,
    *,
    x_query: float,
    y_hat: float,
    labels: Labels,
    height: int = 560,
) -> go.Figure:
    """The weights every sample gets for the query x* (one row of the weight matrix), under the data.

    Top: samples coloured and sized by their weight and the estimate f̂(x*) at x*. Bottom: the
    weights as stems, on the same x axis.

    Args:
        x, y: (N,) samples.
        row: (N,) weights for x* (sums to 1, or all NaN when undefined).
        y_hat: f̂(x*) (NaN when undefined: then no estimate is drawn).
        labels: title, x, y (the upper panel); names "data", "estimate", "weights" (the stems) and
            "weight_axis" (the lower panel's axis).
    """
    row = np.asarray(row, dtype=float)
    # Two panels sharing one x axis, laid out by hand in one pass (make_subplots and add_vline
    # validate the figure again at every call; this figure is rebuilt on every new h or x*).
    data = [
        {
            "type": "scatter",
            "x": x,
            "y": y,
            "xaxis": "x",
            "yaxis": "y",
            "mode": "markers",
            "name": labels.name("data"),
            "meta": "weighted",
            "showlegend": False,
            "customdata": np.nan_to_num(row),
            "hovertemplate": "x=%{x:.3f}<br>y=%{y:.3f}<br>w=%{customdata:.4f}<extra></extra>",
            # the weight twice: colour, and size (a cue that needs no colour vision, WCAG 1.4.1)
            "marker": {
                "size": _weight_sizes(row),
                "color": np.nan_to_num(row),
                "colorscale": WEIGHT_COLORSCALE,
                "line": {"width": 0.5, "color": DATA_COLOR},
                "showscale": False,
            },
        },
    ]
    if np.isfinite(y_hat):
        data.append(
            _star(x_query, y_hat, labels.name("estimate"), xaxis="x", yaxis="y") | {"meta": "estimate"}
        )
    data.append(_stems(x, row, labels.name("weights")))
    dotted = {"color": QUERY_COLOR, "width": 2, "dash": "dot"}
    shapes = [
        _vline(x_query, dotted, f"{axis} domain") | {"name": name}
        for axis, name in (("y", "x_query"), ("y2", "x_query_weights"))
    ]
    finite = row[np.isfinite(row)]
    layout = {
        "xaxis": {"anchor": "y2"},
        "yaxis": {"domain": [0.483, 1.0], "anchor": "x"},
        "yaxis2": {
            "title": {"text": labels.name("weight_axis")},
            "domain": [0.0, 0.423],
            "anchor": "x",
            # 0 to a 1-2.5-5 top: the ticks stay put while a live slider moves (weight_axis)
            **weight_axis(float(finite.max()) if finite.size else 0.0),
        },
        "shapes": shapes,
    }
    return _figure(data, layout, labels, height=height, top=100)


def weight_matrix_figure(
    w: np.ndarray,
    x_train: np.ndarray,
    x_queries: np.ndarray,
    *,
    labels: Labels,
    height: int = 520,
    narrow: bool = False,
) -> go.Figure:
    """The NW weight matrix (Q, N) as an attention map: rows = query points, columns = samples
    (``figures.attention_shared.weight_map``: one column per sample in x order, top row = smallest
    query, NaN rows blank, fewer ticks when ``narrow``).

    ``labels``: title, x, y; ``labels.z`` names the colour bar; given a "peak" name, a marker on
    each row's largest weight draws the band the colours show without needing colour (WCAG 1.4.1),
    named so in the legend.
    """
    hover = f"{labels.x}: %{{x}}<br>{labels.y}: %{{y}}<br>w = %{{customdata:.4f}}<extra></extra>"
    fig = weight_map(
        w,
        x_train,
        x_queries,
        labels=labels,
        height=height,
        narrow=narrow,
        hover_template=hover.replace("customdata", "z"),
    )
    if labels.z:
        fig.update_traces(colorbar={"title": {"text": labels.z}})
    if labels.has("peak"):
        xs, ys = fig.data[0].x, fig.data[0].y
        w = np.asarray(w, dtype=float)
        rows = np.flatnonzero(np.nan_to_num(w).max(axis=1, initial=0.0) > 0)  # defined, not all zero
        cols = np.nanargmax(w[rows], axis=1) if rows.size else rows
        fig.add_trace(
            go.Scatter(
                x=[xs[j] for j in cols],
                y=[ys[i] for i in rows],
                customdata=w[rows, cols],
                mode="markers",
                name=labels.name("peak"),
                meta="peak",  # how the live slider's drawing finds it (static/live/live.js)
                marker={"symbol": "circle-open", "size": 7, "color": BLACK, "line": {"width": 1.5}},
                hovertemplate=hover,
            )
        )
        fig.update_layout(showlegend=True)
    return fig


#: Dash patterns of lines told apart by colour too: Plotly's six named ones, then two of our own.
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot", "12px,3px,3px,3px,3px,3px", "2px,6px")


def kernel_shapes_figure(
    u: np.ndarray,
    shapes: Mapping[str, np.ndarray],
    *,
    selected: str,
    labels: Labels,
    height: int = 420,
) -> go.Figure:
    """Every kernel K(u) on one plot, each its own colour and dash; the selected one thick.

    Args:
        u: (M,) scaled distances.
        shapes: {kernel id: (M,) K(u)}.
        labels: title, x, y and each kernel's display name by its id.
    """
    fig = go.Figure()
    for i, (kid, k) in enumerate(shapes.items()):
        chosen = kid == selected
        fig.add_trace(
            go.Scatter(
                x=u,
                y=k,
                mode="lines",
                name=labels.name(kid),
                # colour and dash pattern: two cues per kernel (WCAG 1.4.1)
                line={
                    "color": PALETTE[i % len(PALETTE)],
                    "width": 5 if chosen else 2,
                    "dash": DASHES[i % len(DASHES)],
                },
                opacity=1.0 if chosen else 0.6,
            )
        )
    fig.update_xaxes(title=labels.x)
    fig.update_yaxes(title=labels.y, rangemode="tozero")
    base_layout(fig, title=labels.title, height=height)
    # Eight names wrap onto a second row (in Chinese already at 1400 px): below the plot they
    # never cover the title.
    fig.update_layout(
        legend={"orientation": "h", "yanchor": "top", "y": -0.22, "xanchor": "left", "x": 0},
        margin={"b": 120},
    )
    return fig


def _claim_band(claim: tuple[float, float], name: str) -> tuple[dict, dict]:
    """A shaded range of h (the post's claim) on a log x axis: its shape and its label."""
    band = {
        "type": "rect",
        "xref": "x",
        "yref": "paper",
        "x0": claim[0],
        "x1": claim[1],
        "y0": 0,
        "y1": 1,
        "fillcolor": PALETTE[4],
        "opacity": 0.2,
        "line": {"width": 0},
        "layer": "below",
    }
    note = {
        "x": float(np.log10(claim[0])),  # on a log axis an annotation takes log10(x)
        "y": 1.0,
        "xref": "x",
        "yref": "paper",
        "text": name,
        "showarrow": False,
        "xanchor": "left",
        "yanchor": "top",
        "font": {"size": 14},
        "bgcolor": with_alpha(WHITE, 0.85),  # readable where the current h's dotted line crosses it
    }
    return band, note


def cv_figure(
    hs: np.ndarray,
    cv: np.ndarray,
    *,
    h_star: float,
    cv_star: float,
    h_current: float,
    cv_current: float | None = None,
    claim: tuple[float, float] | None = None,
    labels: Labels,
    height: int = 440,
) -> go.Figure:
    """Leave-one-out CV error against h on a log axis, with h* and the current h marked.

    Args:
        hs: (M,) bandwidths; cv: (M,) CV errors (NaN where undefined: gaps).
        cv_current: CV at ``h_current``, marked on the curve (None or NaN: no mark).
        claim: an optional (low, high) range of h to shade (the post's claim).
        labels: title, x, y; names "curve", "star" (h*), "current" (the current h) and, with a
            claim, "claim".
    """
    dotted = {"color": DATA_COLOR, "width": 2, "dash": "dot"}
    shapes = [_vline(h_current, dotted) | {"name": "current_h"}]
    annotations = []
    if claim is not None:
        band, note = _claim_band(claim, labels.name("claim"))
        shapes.insert(0, band)
        annotations.append(note)
    data = [
        {
            "type": "scatter",
            "x": hs,
            "y": cv,
            "mode": "lines+markers",
            "name": labels.name("curve"),
            "connectgaps": False,
            "line": {"color": QUERY_COLOR, "width": 3},
            "marker": {"size": 5},
        },
        _star(h_star, cv_star, labels.name("star")),
        {
            "type": "scatter",
            "x": [h_current],
            "y": [None],
            "mode": "lines",
            "name": labels.name("current"),
            "line": dotted,
        },
        {
            "type": "scatter",
            "x": [h_current],
            "y": [cv_current if cv_current is not None and np.isfinite(cv_current) else None],
            "mode": "markers",
            "name": labels.name("current"),
            "meta": "current",
            "showlegend": False,
            "marker": {"size": 11, "color": DATA_COLOR, "line": {"width": 1, "color": BLACK}},
        },
    ]
    layout = {
        "xaxis": log_axis(hs),  # 0.01, 0.02, 0.05, 0.1: full numbers
        "yaxis": log_axis(cv),
        "shapes": shapes,
        "annotations": annotations,
    }
    return _figure(data, layout, labels, height=height, top=100)


def sweep_figure(
    x: np.ndarray,
    y: np.ndarray,
    grid: np.ndarray,
    fits: Sequence[np.ndarray],
    *,
    subtitles: Sequence[str],
    truth: np.ndarray | None,
    labels: Labels,
    height: int = 400,
    narrow: bool = False,
) -> go.Figure:
    """Small multiples: the same data fitted with several bandwidths, side by side (one per row
    when ``narrow``: a phone).

    Args:
        fits: one (Q,) fit per panel (NaN gaps allowed); subtitles: one title per panel.
        labels: title, x, y; names "data", "fit" and (with a truth) "truth".
    """
    k = len(fits)
    # Panels laid out as plain dicts in one pass (make_subplots and the per-panel update calls
    # validate the figure at every step: ~200 ms; this figure is rebuilt whenever the data change).
    if narrow:
        layout, axes, area, top = stacked_layout(
            k, titles=subtitles, panel_height=170, below=NARROW_X_AXIS, margin_left=NARROW_MARGIN_LEFT
        )
    else:
        layout, axes = grid_layout(1, k, titles=subtitles, horizontal_spacing=0.03, title_size=15)
    data = []
    for i, (f, suffix) in enumerate(zip(fits, axes, strict=True)):
        first = i == 0
        on = {"xaxis": f"x{suffix}", "yaxis": f"y{suffix}"}
        data.append(_data_trace(x, y, labels.name("data"), show_legend=first).to_plotly_json() | on)
        if truth is not None:
            data.append(_truth_line(grid, truth, labels.name("truth")) | {"showlegend": first} | on)
        data.append(_fit_line(grid, f, labels.name("fit")) | {"showlegend": first} | on)
        layout[f"xaxis{suffix}"]["title"] = {"text": labels.x}
        # shared y: every panel follows the first one's range, only the first shows its labels
        layout[f"yaxis{suffix}"] |= (
            {"title": {"text": labels.y}} if first or narrow else {"matches": "y", "showticklabels": False}
        )
        if narrow and not first:
            layout[f"yaxis{suffix}"]["matches"] = "y"
    if narrow:
        layout |= {"title": {"text": labels.title}, **stacked_size(top, area)}
        return go.Figure({"data": data, "layout": layout})
    layout |= {
        "title": {"text": labels.title},
        "height": height,
        # legend under the panels, so that it never covers the panel titles
        "margin": {"l": MARGIN_LEFT, "r": 20, "t": 90, "b": 110},
        "legend": {"orientation": "h", "yanchor": "top", "y": -0.25, "xanchor": "left", "x": 0},
    }
    return go.Figure({"data": data, "layout": layout})
