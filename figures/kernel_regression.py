"""Figures of the Kernel Regression page: fit, one query's weights, the weight matrix, kernel shapes,
the leave-one-out CV curve and the bandwidth sweep.

Pure Plotly builders: arrays and translated strings in, ``go.Figure`` out; no Streamlit, no math
(a figure that needs a number receives it). NaN in a fit is drawn as a gap, never bridged. The weight
matrix has rows = query points (y, top first) and columns = samples (x), like every attention map.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from figures.common import (
    MARGIN_BOTTOM,
    MARGIN_LEFT,
    PALETTE,
    WEIGHT_COLORSCALE,
    base_layout,
    grid_layout,
    heatmap,
    log_axis,
    position_labels,
    position_ticks,
    weight_axis,
)

DATA_COLOR = "#7f7f7f"
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


def fit_figure(
    x: np.ndarray,
    y: np.ndarray,
    grid: np.ndarray,
    fit: np.ndarray,
    *,
    truth: np.ndarray | None,
    x_query: float | None,
    title: str,
    x_title: str,
    y_title: str,
    data_name: str,
    truth_name: str,
    fit_name: str,
    undefined_name: str,
    query_name: str,
    height: int = 460,
) -> go.Figure:
    """Samples, the true curve and the NW fit; grid points where the fit is NaN are marked with ×.

    Args:
        x, y: (N,) samples.
        grid: (Q,) where the fit (and truth) are evaluated.
        fit: (Q,) NW fit, NaN where undefined (drawn as gaps).
        truth: (Q,) the noiseless curve, or None (uploaded data).
        x_query: x* marked by a vertical line, or None.
    """
    # One pass from plain dicts (validated once): this figure is rebuilt on every new h or x*.
    data = [_data_trace(x, y, data_name).to_plotly_json()]
    if truth is not None:
        data.append(
            {
                "type": "scatter",
                "x": grid,
                "y": truth,
                "mode": "lines",
                "name": truth_name,
                "line": {"color": TRUTH_COLOR, "width": 2, "dash": "dash"},
            }
        )
    data.append(
        {
            "type": "scatter",
            "x": grid,
            "y": fit,
            "mode": "lines",
            "name": fit_name,
            "meta": "fit",  # how the live slider's drawing finds a trace (ui.live_slider)
            "connectgaps": False,
            "line": {"color": FIT_COLOR, "width": 3},
        }
    )
    undefined = np.isnan(np.asarray(fit, dtype=float))
    if undefined.any():
        data.append(
            {
                "type": "scatter",
                "x": np.asarray(grid)[undefined],
                "y": np.full(int(undefined.sum()), float(np.min(y))),
                "mode": "markers",
                "name": undefined_name,
                "meta": "undefined",
                "marker": {"symbol": "x-thin", "size": 9, "line": {"width": 2, "color": "#d62728"}},
            }
        )
    shapes, annotations = [], []
    if x_query is not None:
        shapes.append(
            {
                "type": "line",
                "name": "x_query",
                "xref": "x",
                "yref": "paper",
                "x0": x_query,
                "x1": x_query,
                "y0": 0,
                "y1": 1,
                "line": {"color": QUERY_COLOR, "width": 2, "dash": "dot"},
            }
        )
        annotations.append(
            {
                "name": "x_query",
                "x": x_query,
                "y": 1,
                "xref": "x",
                "yref": "paper",
                "text": query_name,
                "showarrow": False,
                "xanchor": "center",
                "yanchor": "bottom",
            }
        )
    layout = {
        "xaxis": {"title": {"text": x_title}},
        "yaxis": {"title": {"text": y_title}},
        "shapes": shapes,
        "annotations": annotations,
        "title": {"text": title},
        "height": height,
        "margin": {
            "l": MARGIN_LEFT,
            "r": 20,
            "t": 90,
            "b": MARGIN_BOTTOM,
        },  # room for the title above the legend
    }
    return go.Figure({"data": data, "layout": layout})


def attention_row_figure(
    x: np.ndarray,
    y: np.ndarray,
    row: np.ndarray,
    *,
    x_query: float,
    y_hat: float,
    title: str,
    x_title: str,
    y_title: str,
    weight_title: str,
    data_name: str,
    estimate_name: str,
    weight_name: str,
    height: int = 560,
) -> go.Figure:
    """The weights every sample gets for the query x* (one row of the weight matrix), under the data.

    Top: samples coloured by their weight and the estimate f̂(x*) at x*. Bottom: the weights as
    stems, on the same x axis.

    Args:
        x, y: (N,) samples.
        row: (N,) weights for x* (sums to 1, or all NaN when undefined).
        y_hat: f̂(x*) (NaN when undefined: then no estimate is drawn).
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
            "name": data_name,
            "meta": "weighted",
            "showlegend": False,
            "hovertemplate": "x=%{x:.3f}<br>y=%{y:.3f}<extra></extra>",
            "marker": {
                "size": 8,
                "color": np.nan_to_num(row),
                "colorscale": WEIGHT_COLORSCALE,
                "line": {"width": 0.5, "color": DATA_COLOR},
                "showscale": False,
            },
        },
    ]
    if np.isfinite(y_hat):
        data.append(
            {
                "type": "scatter",
                "x": [x_query],
                "y": [y_hat],
                "xaxis": "x",
                "yaxis": "y",
                "mode": "markers",
                "name": estimate_name,
                "meta": "estimate",
                "marker": {
                    "size": 16,
                    "symbol": "star",
                    "color": FIT_COLOR,
                    "line": {"width": 1, "color": "black"},
                },
            }
        )
    # stems: one vertical segment per sample, as a single trace with None separators; both ends of
    # a stem hover with its weight (no marker per sample: 200 SVG points fewer to draw per redraw)
    sx = np.repeat(np.asarray(x, dtype=float), 3)
    sy = np.column_stack([np.zeros_like(row), row, np.full_like(row, np.nan)]).ravel()
    sx[2::3] = np.nan
    data += [
        {
            "type": "scatter",
            "x": sx,
            "y": sy,
            "customdata": np.repeat(row, 3),
            "xaxis": "x",
            "yaxis": "y2",
            "mode": "lines",
            "name": weight_name,
            "meta": "stems",
            "showlegend": False,
            "line": {"color": QUERY_COLOR, "width": 2},
            "hovertemplate": "x=%{x:.3f}<br>w=%{customdata:.4f}<extra></extra>",
        },
    ]
    dotted = {"color": QUERY_COLOR, "width": 2, "dash": "dot"}
    shapes = [
        {
            "type": "line",
            "name": name,
            "xref": "x",
            "yref": f"{axis} domain",
            "x0": x_query,
            "x1": x_query,
            "y0": 0,
            "y1": 1,
            "line": dotted,
        }
        for axis, name in (("y", "x_query"), ("y2", "x_query_weights"))
    ]
    finite = row[np.isfinite(row)]
    layout = {
        "xaxis": {"title": {"text": x_title}, "anchor": "y2"},
        "yaxis": {"title": {"text": y_title}, "domain": [0.483, 1.0], "anchor": "x"},
        "yaxis2": {
            "title": {"text": weight_title},
            "domain": [0.0, 0.423],
            "anchor": "x",
            # 0 to a 1-2.5-5 top: the ticks stay put while a live slider moves (weight_axis)
            **weight_axis(float(finite.max()) if finite.size else 0.0),
        },
        "shapes": shapes,
        "title": {"text": title},
        "height": height,
        "margin": {
            "l": MARGIN_LEFT,
            "r": 20,
            "t": 100,
            "b": MARGIN_BOTTOM,
        },  # room for the title above the legend
    }
    return go.Figure({"data": data, "layout": layout})


def weight_matrix_figure(
    w: np.ndarray,
    x_train: np.ndarray,
    x_queries: np.ndarray,
    *,
    title: str,
    x_title: str,
    y_title: str,
    height: int = 520,
) -> go.Figure:
    """The NW weight matrix (Q, N) as an attention map: rows = query points, columns = samples.

    One equal column per sample in x order (``x_train`` sorted), labelled by its x, and one row per
    query, top row = smallest query (``figures.common.position_labels``: Plotly then draws the map
    as one scaled image); NaN rows (undefined queries) are blank.
    """
    xs, ys = position_labels(x_train), position_labels(x_queries)
    fig = heatmap(
        w,
        x=xs,
        y=ys,
        title=title,
        x_title=x_title,
        y_title=y_title,
        colorscale=WEIGHT_COLORSCALE,
        zmin=0.0,
        height=height,
        hover_template=f"{x_title}: %{{x}}<br>{y_title}: %{{y}}<br>w = %{{z:.4f}}<extra></extra>",
        x_axis=position_ticks(x_train, xs),
        y_axis=position_ticks(x_queries, ys),
    )
    fig.data[0].meta = "weights"  # found by the live slider's drawing (ui.live_slider)
    return fig


def kernel_shapes_figure(
    u: np.ndarray,
    shapes: Mapping[str, np.ndarray],
    *,
    names: Mapping[str, str],
    selected: str,
    title: str,
    x_title: str,
    y_title: str,
    height: int = 420,
) -> go.Figure:
    """Every kernel K(u) on one plot; the selected one drawn thick, the others thin.

    Args:
        u: (M,) scaled distances.
        shapes: {kernel id: (M,) K(u)}.
        names: {kernel id: display name}.
    """
    fig = go.Figure()
    for i, (kid, k) in enumerate(shapes.items()):
        chosen = kid == selected
        fig.add_trace(
            go.Scatter(
                x=u,
                y=k,
                mode="lines",
                name=names[kid],
                line={"color": PALETTE[i % len(PALETTE)], "width": 5 if chosen else 2},
                opacity=1.0 if chosen else 0.6,
            )
        )
    fig.update_xaxes(title=x_title)
    fig.update_yaxes(title=y_title, rangemode="tozero")
    base_layout(fig, title=title, height=height)
    # Eight names wrap onto a second row (in Chinese already at 1400 px): below the plot they
    # never cover the title.
    fig.update_layout(
        legend={"orientation": "h", "yanchor": "top", "y": -0.22, "xanchor": "left", "x": 0},
        margin={"b": 120},
    )
    return fig


def cv_figure(
    hs: np.ndarray,
    cv: np.ndarray,
    *,
    h_star: float,
    cv_star: float,
    h_current: float,
    cv_current: float | None = None,
    title: str,
    x_title: str,
    y_title: str,
    curve_name: str,
    star_name: str,
    current_name: str,
    claim: tuple[float, float] | None = None,
    claim_name: str = "",
    height: int = 440,
) -> go.Figure:
    """Leave-one-out CV error against h on a log axis, with h* and the current h marked.

    Args:
        hs: (M,) bandwidths; cv: (M,) CV errors (NaN where undefined: gaps).
        cv_current: CV at ``h_current``, marked on the curve (None or NaN: no mark).
        claim: an optional (low, high) range of h to shade (the post's claim).
    """
    # Built in one pass from plain dicts (validated once): ~10x faster than add_vline & co,
    # and this figure is rebuilt on every new h.
    dotted = {"color": DATA_COLOR, "width": 2, "dash": "dot"}
    shapes = [
        {
            "type": "line",
            "name": "current_h",
            "xref": "x",
            "yref": "paper",
            "x0": h_current,
            "x1": h_current,
            "y0": 0,
            "y1": 1,
            "line": dotted,
        }
    ]
    annotations = []
    if claim is not None:
        shapes.insert(
            0,
            {
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
            },
        )
        annotations.append(
            {
                "x": float(np.log10(claim[0])),
                "y": 1.0,
                "xref": "x",
                "yref": "paper",
                "text": claim_name,
                "showarrow": False,
                "xanchor": "left",
                "yanchor": "top",
                "font": {"size": 14},
            }
        )  # on a log axis an annotation takes log10(x)
    data = [
        {
            "type": "scatter",
            "x": hs,
            "y": cv,
            "mode": "lines+markers",
            "name": curve_name,
            "connectgaps": False,
            "line": {"color": QUERY_COLOR, "width": 3},
            "marker": {"size": 5},
        },
        {
            "type": "scatter",
            "x": [h_star],
            "y": [cv_star],
            "mode": "markers",
            "name": star_name,
            "marker": {
                "size": 16,
                "symbol": "star",
                "color": FIT_COLOR,
                "line": {"width": 1, "color": "black"},
            },
        },
        {
            "type": "scatter",
            "x": [h_current],
            "y": [None],
            "mode": "lines",
            "name": current_name,
            "line": dotted,
        },
        {
            "type": "scatter",
            "x": [h_current],
            "y": [cv_current if cv_current is not None and np.isfinite(cv_current) else None],
            "mode": "markers",
            "name": current_name,
            "meta": "current",
            "showlegend": False,
            "marker": {"size": 11, "color": DATA_COLOR, "line": {"width": 1, "color": "black"}},
        },
    ]
    layout = {
        "xaxis": {"title": {"text": x_title}, **log_axis(hs)},  # 0.01, 0.02, 0.05, 0.1: full numbers
        "yaxis": {"title": {"text": y_title}, **log_axis(cv)},
        "shapes": shapes,
        "annotations": annotations,
        "title": {"text": title},
        "height": height,
        "margin": {
            "l": MARGIN_LEFT,
            "r": 20,
            "t": 100,
            "b": MARGIN_BOTTOM,
        },  # room for the title above the legend
    }
    return go.Figure({"data": data, "layout": layout})


def sweep_figure(
    x: np.ndarray,
    y: np.ndarray,
    grid: np.ndarray,
    fits: Sequence[np.ndarray],
    *,
    subtitles: Sequence[str],
    truth: np.ndarray | None,
    title: str,
    x_title: str,
    y_title: str,
    data_name: str,
    truth_name: str,
    fit_name: str,
    height: int = 400,
) -> go.Figure:
    """Small multiples: the same data fitted with several bandwidths, side by side.

    Args:
        fits: one (Q,) fit per panel (NaN gaps allowed); subtitles: one title per panel.
    """
    k = len(fits)
    # Panels laid out as plain dicts in one pass (make_subplots and the per-panel update calls
    # validate the figure at every step: ~200 ms; this figure is rebuilt whenever the data change).
    layout, axes = grid_layout(1, k, titles=subtitles, horizontal_spacing=0.03, title_size=15)
    data = []
    for i, (f, suffix) in enumerate(zip(fits, axes, strict=True)):
        first = i == 0
        on = {"xaxis": f"x{suffix}", "yaxis": f"y{suffix}"}
        data.append(_data_trace(x, y, data_name, show_legend=first).to_plotly_json() | on)
        if truth is not None:
            data.append(
                {
                    "type": "scatter",
                    "x": grid,
                    "y": truth,
                    "mode": "lines",
                    "name": truth_name,
                    "showlegend": first,
                    "line": {"color": TRUTH_COLOR, "width": 2, "dash": "dash"},
                }
                | on
            )
        data.append(
            {
                "type": "scatter",
                "x": grid,
                "y": f,
                "mode": "lines",
                "name": fit_name,
                "showlegend": first,
                "connectgaps": False,
                "line": {"color": FIT_COLOR, "width": 3},
            }
            | on
        )
        layout[f"xaxis{suffix}"]["title"] = {"text": x_title}
        # shared y: every panel follows the first one's range, only the first shows its labels
        layout[f"yaxis{suffix}"] |= (
            {"title": {"text": y_title}} if first else {"matches": "y", "showticklabels": False}
        )
    layout |= {
        "title": {"text": title},
        "height": height,
        # legend under the panels, so that it never covers the panel titles
        "margin": {"l": MARGIN_LEFT, "r": 20, "t": 90, "b": 110},
        "legend": {"orientation": "h", "yanchor": "top", "y": -0.25, "xanchor": "left", "x": 0},
    }
    return go.Figure({"data": data, "layout": layout})
