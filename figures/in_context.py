"""Figures of the in-context regression page: the task, the learned bandwidth and test error over
training, the window's ellipse, the paper's trends, softmax vs linear.

Pure Plotly builders: arrays and already-translated strings in, ``go.Figure`` out (no math beyond
drawing: the page passes what ``core.in_context`` measured).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from figures.common import (
    BLACK,
    DARK_GREY,
    GREY,
    MID_GREY,
    NARROW_MARGIN_LEFT,
    NARROW_X_AXIS,
    PALETTE,
    Labels,
    base_layout,
    stacked_layout,
    with_alpha,
)

#: Colours by role: the learned attention, the references.
COLORS = {
    "attention": PALETTE[0],
    "oracle": PALETTE[2],
    "loo": PALETTE[1],
    "floor": BLACK,
    "mean": GREY,
    "linear": PALETTE[3],
    "function": MID_GREY,
    "b": PALETTE[1],
}
#: Legend under the plot: these figures have long titles and several reference lines.
_LEGEND_BELOW = {"orientation": "h", "yanchor": "top", "y": -0.22, "xanchor": "left", "x": 0}


#: Tick values of log bandwidth axes (Plotly's own log ticks print 0.2 as "2" on short ranges).
LOG_TICKS = (
    0.001,
    0.002,
    0.005,
    0.01,
    0.02,
    0.03,
    0.05,
    0.07,
    0.1,
    0.15,
    0.2,
    0.3,
    0.5,
    0.7,
    1,
    1.5,
    2,
    3,
    5,
    10,
)


def _below(fig: go.Figure, title: str | None, height: int) -> go.Figure:
    base_layout(fig, title=title, height=height)
    fig.update_layout(legend=_LEGEND_BELOW, margin={"b": 140})  # the legend's room (a grown margin redraws)
    return fig


_DASH = {"oracle": "dash", "loo": "dot", "floor": "solid", "mean": "longdash", "linear": "dashdot"}


def task_figure(
    grid_s: np.ndarray,
    grid_f: np.ndarray,
    ctx_s: np.ndarray,
    ctx_y: np.ndarray,
    query_s: float,
    predictions: Mapping[str, float],
    weights: Mapping[str, np.ndarray],
    *,
    labels: Labels,
    height: int = 600,
) -> go.Figure:
    """One context: the function, the N noisy points, a query; below, who gets the weight.

    Args:
        grid_s, grid_f: (G,) positions along the drawn coordinate and f there (the true function).
        ctx_s, ctx_y: (N,) the context points' positions and labels.
        query_s: the query's position; ``predictions``: {role: ŷ(query)} (roles ``attention``,
            ``oracle``) drawn at the query.
        weights: {role: (N,) weights of the query's row} drawn as bars at ``ctx_s``.
        labels: the title, ``x``, ``y`` (upper panel), ``z`` (the weights' axis, lower panel) and
            legend names by role and for ``function``, ``context``.
    """
    # Two stacked panels sharing x, laid out by hand: make_subplots costs ~150 ms per figure,
    # too much for a chart redrawn while the unit trains.
    traces = [
        go.Scatter(
            x=grid_s, y=grid_f, mode="lines", name=labels.name("function"), line={"color": COLORS["function"]}
        ),
        go.Scatter(
            x=ctx_s, y=ctx_y, mode="markers", name=labels.name("context"),
            marker={"color": DARK_GREY, "size": 7, "opacity": 0.75},
        ),
    ]  # fmt: skip
    for role, value in predictions.items():
        traces.append(
            go.Scatter(
                x=[query_s],
                y=[value],
                mode="markers",
                name=labels.name(role),
                marker={"color": COLORS[role], "size": 14, "symbol": "diamond", "line": {"width": 1}},
            )
        )
    width = float(np.ptp(grid_s)) / (2.5 * max(1, len(ctx_s)))  # two bars side by side per point
    for k, (role, w) in enumerate(weights.items()):
        traces.append(
            go.Bar(
                x=np.asarray(ctx_s) + (k - 0.5) * width,
                y=w,
                width=width,
                xaxis="x",
                yaxis="y2",
                marker={"color": COLORS[role]},
                showlegend=False,
                hovertemplate="%{y:.3f}<extra>" + labels.name(role) + "</extra>",
            )
        )
    fig = go.Figure(traces)
    fig.update_layout(
        xaxis={"title": {"text": labels.x}, "anchor": "y2"},
        yaxis={"title": {"text": labels.y}, "domain": [0.42, 1.0]},
        yaxis2={"title": {"text": labels.z}, "domain": [0.0, 0.34], "rangemode": "tozero"},
        barmode="overlay",
        bargap=0,
        shapes=[
            {"type": "line", "xref": "x", "yref": "paper", "x0": query_s, "x1": query_s, "y0": 0, "y1": 1,
             "line": {"color": GREY, "dash": "dot"}},
        ],
    )  # fmt: skip
    return _below(fig, labels.title, height)


def _hline(fig: go.Figure, value: float, role: str, name: str, x_max: float) -> None:
    """A reference drawn as a horizontal line trace (so it has a legend entry)."""
    fig.add_trace(
        go.Scatter(
            x=[0, x_max],
            y=[value, value],
            mode="lines",
            name=name,
            line={"color": COLORS[role], "dash": _DASH.get(role, "dash"), "width": 2},
            hovertemplate="%{y:.3g}<extra>" + name + "</extra>",
        )
    )


def _against_references(
    steps: Sequence[int],
    values: Sequence[float],
    references: Mapping[str, float],
    *,
    max_steps: int,
    labels: Labels,
    markers: bool,
) -> go.Figure:
    """The attention unit's curve over training steps above its references as horizontal lines.

    Args:
        steps, values: the learned curve (may be empty before training), with ``markers`` or not.
        references: {role: value} drawn as horizontal lines, each named ``labels.name(role)``.
        labels: ``x`` (steps), ``attention`` and the references' names.
    """
    fig = go.Figure()
    for role, value in references.items():
        _hline(fig, value, role, labels.name(role), max_steps)
    fig.add_trace(
        go.Scatter(
            x=list(steps),
            y=list(values),
            mode="lines+markers" if markers else "lines",
            name=labels.name("attention"),
            line={"color": COLORS["attention"], "width": 3},
            **({"marker": {"size": 4}} if markers else {}),
        )
    )
    fig.update_xaxes(title_text=labels.x, range=[0, max_steps])
    return fig


def reference_curve(
    steps: Sequence[int],
    values: Sequence[float],
    references: Mapping[str, float],
    *,
    max_steps: int,
    labels: Labels,
    bandwidth: bool,
    height: int = 470,
) -> go.Figure:
    """A curve over training steps (log scale) against reference values drawn as lines: the learned
    bandwidth (``bandwidth=True``: no markers; the y range keeps the start, h = 1, and every line in
    view) or the held-out test error (markers at its evaluation steps).

    Args:
        steps, values: the curve (may be empty before training).
        references: {role: value} drawn as horizontal lines (``oracle``, ``loo``; for the error
            also ``mean``, ``floor``).
        labels: the title, ``x``, ``y`` and names for ``attention`` and each reference.
    """
    fig = _against_references(
        steps, values, references, max_steps=max_steps, labels=labels, markers=not bandwidth
    )
    fig.update_yaxes(title_text=labels.y, type="log", tickvals=LOG_TICKS)
    if bandwidth:
        shown = [v for v in (*references.values(), *values, 1.0) if v > 0]
        low, high = min(shown) / 1.5, max(shown) * 1.5  # the start (h = 1) and every line in view
        fig.update_yaxes(range=[np.log10(low), np.log10(high)])
    return _below(fig, labels.title, height)


def ellipse_figure(
    matrices: np.ndarray,
    steps: Sequence[int],
    b: np.ndarray,
    *,
    cap: float,
    labels: Labels,
    height: int = 460,
) -> go.Figure:
    """The window of a 2 x 2 key-query matrix as an ellipse, for snapshots over training.

    The ellipse of M has semi-axis 1/√λ along each eigenvector (λ its eigenvalue): the bandwidth
    in that direction, capped at ``cap`` (λ <= 0: an unbounded window).

    Args:
        matrices: (K, 2, 2) symmetric snapshots, oldest first; steps: their K training steps.
        b: (2,) the hidden direction, drawn as a line through the origin.
        labels: the title, ``x``, ``y`` and names ``window`` (legend of the ellipses, formatted
            with ``step=``) and ``b``.
    """
    fig = go.Figure()
    t = np.linspace(0, 2 * np.pi, 121)
    circle = np.stack([np.cos(t), np.sin(t)])  # (2, 121)
    k = len(matrices)
    for i, (m, step) in enumerate(zip(matrices, steps, strict=True)):
        lam, vec = np.linalg.eigh((m + m.T) / 2)
        widths = np.where(lam > 1.0 / cap**2, 1.0 / np.sqrt(np.maximum(lam, 1e-300)), cap)
        pts = vec @ (widths[:, None] * circle)  # (2, 2) @ (2, 121) -> (2, 121)
        last = i == k - 1
        shade = 0.2 + 0.8 * (i + 1) / k
        fig.add_trace(
            go.Scatter(
                x=pts[0],
                y=pts[1],
                mode="lines",
                name=labels.name("window").format(step=step),
                showlegend=last or i == 0,
                line={
                    "color": COLORS["attention"] if last else with_alpha(PALETTE[0], shade * 0.5),
                    "width": 3 if last else 1,
                },
            )
        )
    r = cap
    fig.add_trace(
        go.Scatter(
            x=[-r * b[0], r * b[0]],
            y=[-r * b[1], r * b[1]],
            mode="lines",
            name=labels.name("b"),
            line={"color": COLORS["b"], "dash": "dash", "width": 2},
        )
    )
    fig.update_xaxes(title_text=labels.x, zeroline=True)
    fig.update_yaxes(title_text=labels.y, zeroline=True, scaleanchor="x", scaleratio=1)
    return _below(fig, labels.title, height)


def sweep_figure(
    lipschitz: np.ndarray,
    noise: np.ndarray,
    learned_l: np.ndarray,
    oracle_l: np.ndarray,
    n_context: np.ndarray,
    learned_n: np.ndarray,
    oracle_n: np.ndarray,
    *,
    labels: Labels,
    titles: tuple[str, str],
    x_titles: tuple[str, str],
    height: int = 460,
    narrow: bool = False,
) -> go.Figure:
    """Learned (solid, markers) and oracle (dashed) bandwidths against L per noise level, and against N
    (side by side; one above the other when ``narrow``: a phone).

    Args:
        learned_l, oracle_l: (S, A) for the S noise levels and A values of L.
        learned_n, oracle_n: (C,) for the C context sizes.
        labels: ``y`` (bandwidth) and names ``learned`` and ``oracle`` (both formatted with
            ``noise=``), ``learned_n`` and ``oracle_n``.
        titles, x_titles: per panel (along L, along N).
    """
    fig = make_subplots(rows=1, cols=2, subplot_titles=titles, horizontal_spacing=0.1)
    for s, sigma in enumerate(noise):
        color = PALETTE[s % len(PALETTE)]
        for row, role, dash in ((learned_l, "learned", "solid"), (oracle_l, "oracle", "dash")):
            fig.add_trace(
                go.Scatter(
                    x=lipschitz,
                    y=row[s],
                    mode="lines+markers" if role == "learned" else "lines",
                    name=labels.name(role).format(noise=sigma),
                    line={"color": color, "dash": dash},
                ),
                row=1,
                col=1,
            )
    color = PALETTE[len(noise) % len(PALETTE)]
    for values, role, dash in ((learned_n, "learned_n", "solid"), (oracle_n, "oracle_n", "dash")):
        fig.add_trace(
            go.Scatter(
                x=n_context,
                y=values,
                mode="lines+markers" if role == "learned_n" else "lines",
                name=labels.name(role),
                line={"color": color, "dash": dash},
            ),
            row=1,
            col=2,
        )
    fig.update_xaxes(title_text=x_titles[0], type="log", tickvals=list(lipschitz), row=1, col=1)
    fig.update_xaxes(title_text=x_titles[1], type="log", tickvals=list(n_context), row=1, col=2)
    fig.update_yaxes(title_text=labels.y, type="log", tickvals=LOG_TICKS, row=1, col=1)
    fig.update_yaxes(type="log", tickvals=LOG_TICKS, row=1, col=2)
    if narrow:
        layout, _, area, top = stacked_layout(
            2, titles=titles, panel_height=220, below=NARROW_X_AXIS, margin_left=NARROW_MARGIN_LEFT
        )
        for name in ("xaxis", "yaxis", "xaxis2", "yaxis2"):
            fig.layout[name].domain = layout[name]["domain"]
        fig.update_yaxes(title_text=labels.y, row=1, col=2)
        fig.update_layout(annotations=layout["annotations"], height=top + area + NARROW_X_AXIS,
                          margin={"l": NARROW_MARGIN_LEFT, "t": top, "b": NARROW_X_AXIS})  # fmt: skip
        return fig
    return _below(fig, None, height)


def error_bars(
    bars: Sequence[str],
    errors: Sequence[float],
    roles: Sequence[str],
    *,
    labels: Labels,
    height: int = 380,
) -> go.Figure:
    """Test errors side by side (one bar per predictor, coloured by role).

    Args:
        bars: (N,) the bars' names; errors: (N,) their values; roles: (N,) their colours' roles.
        labels: the title and ``y``.
    """
    fig = go.Figure(
        go.Bar(
            x=list(bars),
            y=list(errors),
            marker={"color": [COLORS[r] for r in roles]},
            text=[f"{e:.3g}" for e in errors],
            textposition="outside",
        )
    )
    fig.update_yaxes(title_text=labels.y, rangemode="tozero")
    fig.update_layout(showlegend=False)
    return base_layout(fig, title=labels.title, height=height)
