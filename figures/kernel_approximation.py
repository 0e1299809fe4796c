"""Figures of the kernel-approximation page: random-feature fits, error against m, cost against L.

Pure Plotly builders: arrays and already-translated words (one ``labels: Labels`` per figure, see
``figures.common``) in, ``go.Figure`` out. The page wraps them with ``ui.layout.cached``;
never mutate a returned figure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from figures.attention_shared import panel_row_figure, panel_row_layout
from figures.common import (
    GREY,
    MID_GREY,
    PALETTE,
    SIGNED_COLORSCALE,
    WEIGHT_COLORSCALE,
    Labels,
    base_layout,
    log_axis,
)


def _legend_below(fig: go.Figure) -> go.Figure:
    # anchored to the figure's bottom edge, not the plot's: a legend of three rows (a narrow column)
    # hung at a fixed fraction under the plot reached up into the x axis's title
    fig.update_layout(
        legend={
            "orientation": "h",
            "yanchor": "bottom",
            "y": 0,
            "yref": "container",
            "xanchor": "left",
            "x": 0,
        },
        margin={"b": 170},  # the legend's room: a margin Plotly must grow draws the figure twice
    )
    return fig


def rff_fit_figure(
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_query: np.ndarray,
    exact: np.ndarray,
    approx: np.ndarray,
    *,
    labels: Labels,
    height: int = 430,
) -> go.Figure:
    """The data (N,), the exact fit and the random-feature fit on the query grid (Q,).

    ``labels``: title, x, y and the names ``data``, ``exact`` and ``approx`` (the two fits). The y
    range is pinned to the data (a wild approximate fit at small m would otherwise squash
    everything else).
    """
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=np.asarray(x_train),
            y=np.asarray(y_train),
            mode="markers",
            name=labels.name("data"),
            marker={"color": GREY, "size": 6, "opacity": 0.6},
        )
    )
    fig.add_trace(
        go.Scatter(
            x=np.asarray(x_query),
            y=np.asarray(exact),
            name=labels.name("exact"),
            line={"color": PALETTE[0], "width": 4},
        )
    )
    fig.add_trace(
        go.Scatter(
            x=np.asarray(x_query),
            y=np.asarray(approx),
            name=labels.name("approx"),
            line={"color": PALETTE[1], "width": 3, "dash": "dash"},
        )
    )
    y = np.asarray(y_train, dtype=float)
    pad = 0.25 * float(y.max() - y.min() or 1.0)
    fig.update_yaxes(title=labels.y, range=[float(y.min()) - pad, float(y.max()) + pad])
    fig.update_xaxes(title=labels.x)
    return _legend_below(base_layout(fig, title=labels.title, height=height))


def _curves(
    fig: go.Figure,
    x: np.ndarray,
    series: Mapping[str, np.ndarray],
    *,
    dashed: Sequence[str] = (),
    scale: float = 1.0,
    log_y: bool = False,
) -> None:
    """One line per named series (values scaled by ``scale``) over the shared x (M,); dashed ones
    are thinner references. On a log y axis (``log_y``) non-positive or non-finite values are left
    out of a curve: they cannot be drawn there."""
    xs = np.asarray(x, dtype=float)
    for i, (name, y) in enumerate(series.items()):
        ys = scale * np.asarray(y, dtype=float)
        ok = np.isfinite(ys) & (ys > 0) if log_y else np.ones(ys.shape, dtype=bool)
        ref = name in dashed
        fig.add_trace(
            go.Scatter(
                x=xs[ok],
                y=ys[ok],
                name=name,
                mode="lines" if ref else "lines+markers",
                line={"color": PALETTE[i % len(PALETTE)], "width": 2 if ref else 3}
                | ({"dash": "dash"} if ref else {}),
            )
        )


def loglog_figure(
    x: np.ndarray,
    series: Mapping[str, np.ndarray],
    *,
    labels: Labels,
    dashed: Sequence[str] = (),
    marker_x: float | None = None,
    height: int = 420,
) -> go.Figure:
    """Named curves over a shared x on log-log axes; dashed ones are references (e.g. c/√m).

    Non-positive or non-finite values are left out of a curve (they cannot be drawn on a log
    axis). ``marker_x`` draws a dotted vertical line (e.g. the current m), named by the optional
    label ``marker``. ``labels``: title, x, y (the series' names are the keys of ``series``).
    """
    fig = go.Figure()
    xs = np.asarray(x, dtype=float)
    _curves(fig, xs, series, dashed=dashed, log_y=True)
    if marker_x is not None:
        fig.add_vline(x=marker_x, line={"color": MID_GREY, "dash": "dot"})
        fig.add_annotation(
            x=float(np.log10(marker_x)),
            y=1.0,
            yref="paper",
            text=labels.name("marker") if labels.has("marker") else "",
            showarrow=False,
            xanchor="right",
            yanchor="bottom",
            font={"size": 13, "color": MID_GREY},
        )
    fig.update_xaxes(title=labels.x, **log_axis(xs))
    fig.update_yaxes(title=labels.y, **log_axis(*series.values()))
    return _legend_below(base_layout(fig, title=labels.title, height=height))


def share_figure(
    x: np.ndarray,
    series: Mapping[str, np.ndarray],
    *,
    labels: Labels,
    height: int = 400,
) -> go.Figure:
    """Shares in [0, 1] (e.g. of near-zero denominators) against m on a log x axis, in percent.
    ``labels``: title, x, y (the series' names are the keys of ``series``)."""
    fig = go.Figure()
    _curves(fig, x, series, scale=100.0)
    fig.update_xaxes(title=labels.x, **log_axis(x))
    fig.update_yaxes(title=labels.y, range=[-2, 102], ticksuffix="%")
    return _legend_below(base_layout(fig, title=labels.title, height=height))


def matrices_row(
    panels: Sequence[tuple[str, np.ndarray]],
    *,
    labels: Labels,
    signed_last: bool = False,
    signed: bool = False,
    zmax: float | None = None,
    height: int = 420,
    narrow: bool = False,
) -> go.Figure:
    """(L, S) matrices side by side (one per row when ``narrow``: a phone, each colour bar beside
    the panel it belongs to), rows = queries, one shared colour scale [0, zmax].

    zmax defaults to the largest finite value of the shared panels (attention weights of a
    long sequence are far below 1). With ``signed`` the shared panels are signed (a diverging
    scale in [-zmax, zmax], zmax the largest |value|). With ``signed_last`` the last panel is a
    difference, drawn on its own diverging scale symmetric about 0. ``labels``: title (optional),
    x (keys or columns), y (queries).
    """
    n = len(panels)
    shared = [np.asarray(z, dtype=float) for _, z in (panels[:-1] if signed_last else panels)]
    if zmax is None:
        finite = [np.abs(z[np.isfinite(z)]) if signed else z[np.isfinite(z)] for z in shared]
        zmax = max((float(f.max()) for f in finite if f.size), default=1.0)
    zmax = zmax if zmax > 0 else 1.0
    spacing = 0.1 if signed_last else 0.04
    layout, axes, area, top = panel_row_layout(
        [p[0] for p in panels], narrow=narrow, spacing=spacing, title_size=15
    )
    panel_width = (1 - spacing * (n - 1)) / n
    hover = f"{labels.y} %{{y}} → {labels.x} %{{x}}<br>%{{z:.4g}}<extra></extra>"
    data = []
    for i, ((_, z), suffix) in enumerate(zip(panels, axes, strict=True)):
        z = np.asarray(z, dtype=float)
        own = signed_last and i == n - 1
        bound = float(np.abs(z[np.isfinite(z)]).max()) if own and np.isfinite(z).any() else zmax
        bound = bound if bound > 0 else 1e-16
        diverging = own or signed
        show = own or i == (n - 2 if signed_last else n - 1)
        trace = {
            "type": "heatmap", "z": z, "xaxis": f"x{suffix}", "yaxis": f"y{suffix}",
            "colorscale": SIGNED_COLORSCALE if diverging else WEIGHT_COLORSCALE,
            "zmin": -bound if diverging else 0.0, "zmax": bound, "showscale": show, "hovertemplate": hover,
        }  # fmt: skip
        if show:
            # the shared scale's bar sits in the gap before the difference panel
            x = 1.02 if own or not signed_last else (n - 1) * panel_width + (n - 2) * spacing + 0.01
            trace["colorbar"] = {"x": x, "xanchor": "left", "len": 0.9, "thickness": 12}
            if narrow:  # beside its panel; the shared scale spans the panels it serves
                lowest = layout[f"yaxis{suffix}"]["domain"][0]
                highest = layout["yaxis"]["domain"][1] if not own else layout[f"yaxis{suffix}"]["domain"][1]
                trace["colorbar"] = {"x": 1.01, "xanchor": "left", "y": highest, "yanchor": "top",
                                     "len": highest - lowest, "thickness": 12}  # fmt: skip
        data.append(trace)
        # the difference panel's rows are the first panel's: its own labels met the shared colour
        # bar's tick labels in the gap between them
        layout[f"yaxis{suffix}"] |= {"autorange": "reversed", "showticklabels": i == 0 or narrow,
                                     "title": {"text": labels.y if i == 0 or narrow else ""}}  # fmt: skip
        layout[f"xaxis{suffix}"] |= {"title": {"text": labels.x}}
    title = labels.title or None
    return panel_row_figure(data, layout, title=title, height=height, narrow=narrow, area=area, top=top)


def cost_figure(
    lengths: Mapping[str, np.ndarray],
    values: Mapping[str, np.ndarray],
    *,
    labels: Labels,
    crossovers: Mapping[str, float] | None = None,
    height: int = 420,
) -> go.Figure:
    """Cost (time or memory) against L per method on log-log axes, crossover lengths marked.

    Args:
        lengths: method name -> (P,) lengths it was measured at.
        values: method name -> (P,) costs (same keys).
        labels: title, x (L), y (the cost's unit).
        crossovers: label -> L where a method becomes cheaper than the exact attention.
    """
    fig = go.Figure()
    for i, name in enumerate(values):
        fig.add_trace(
            go.Scatter(
                x=np.asarray(lengths[name], dtype=float),
                y=np.asarray(values[name], dtype=float),
                name=name,
                mode="lines+markers",
                line={"color": PALETTE[i % len(PALETTE)], "width": 3},
            )
        )
    for j, (label, x) in enumerate((crossovers or {}).items()):
        fig.add_vline(x=x, line={"color": PALETTE[(j + 1) % len(PALETTE)], "dash": "dot", "width": 2})
        fig.add_annotation(
            x=float(np.log10(x)),
            y=1.0 - 0.08 * j,
            yref="paper",
            text=label,
            showarrow=False,
            xanchor="left",
            yanchor="top",
            font={"size": 13, "color": PALETTE[(j + 1) % len(PALETTE)]},
        )
    fig.update_xaxes(title=labels.x, **log_axis(*lengths.values()))
    fig.update_yaxes(title=labels.y, **log_axis(*values.values()))
    return _legend_below(base_layout(fig, title=labels.title, height=height))
