"""Figures of the induction-heads page: the task, the head forming over training, the heads' maps,
the token strip, the ablation and the kernel view.

Pure Plotly builders: arrays and already-translated strings in, ``go.Figure`` out. The numbers
come from ``core.induction*`` and ``core.lessons.induction_heads``; the only arithmetic here is
drawing (where a line or a bin goes). Panels are laid out from plain dicts
(``figures.common.grid_layout``): the curves are redrawn while the model trains.

Shapes: T sequence length, n_layers layers, H heads, K scale multipliers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from figures.common import (
    BLACK,
    COLORBAR_MARGIN,
    DARK_GREY,
    GREY,
    LIGHT_GREY,
    MARGIN_BOTTOM,
    MARGIN_LEFT,
    MID_GREY,
    PALETTE,
    WEIGHT_COLORSCALE,
    Labels,
    grid_layout,
    log_axis,
    with_alpha,
)

#: Colours by role.
COLORS = {
    "accuracy": PALETTE[0],
    "control": BLACK,
    "loss": PALETTE[0],
    "copy_loss": PALETTE[1],
    "match": PALETTE[1],
    "other": PALETTE[0],
    "prefix": PALETTE[0],
    "segment": PALETTE[2],
    "repeat": PALETTE[1],
    "full": GREY,
}
#: One colour per head's score line (previous-token heads, then induction heads).
HEAD_COLORS = (PALETTE[2], PALETTE[3], PALETTE[1], PALETTE[4], PALETTE[5], PALETTE[6])
_LEGEND_BELOW = {"orientation": "h", "yanchor": "top", "y": -0.2, "xanchor": "left", "x": 0}


def _layout(layout: dict, title: str | None, height: int, *, bottom: int = MARGIN_BOTTOM) -> dict:
    layout.update(
        title={"text": title},
        height=height,
        margin={"l": MARGIN_LEFT, "r": 20, "t": 70 if title else 30, "b": bottom},
    )
    return layout


def sequence_figure(
    tokens: Sequence[int],
    roles: Sequence[str],
    *,
    labels: Labels,
    height: int = 220,
    narrow: bool = False,
) -> go.Figure:
    """One sequence of the task as a strip of numbered cells, coloured by part.

    Args:
        tokens: (T,) token ids.
        roles: (T,) ``prefix``, ``segment`` (first occurrence) or ``repeat`` per position.
        labels: the title, ``x`` (position) and a name per role (``prefix``, ``segment``, ``repeat``).
        narrow: small cells without their numbers (a phone; the hover keeps them).
    """
    traces = []
    mode, size = ("markers", 9) if narrow else ("markers+text", 26)
    positions = np.arange(len(tokens))
    roles_a = np.asarray(roles)
    tokens_a = np.asarray(tokens)
    for role in ("prefix", "segment", "repeat"):
        at = roles_a == role
        if not at.any():
            continue
        traces.append(
            go.Scatter(
                x=positions[at], y=np.zeros(int(at.sum())), mode=mode, name=labels.name(role),
                text=[str(v) for v in tokens_a[at]], textfont={"color": DARK_GREY},
                marker={"symbol": "square", "size": size, "color": with_alpha(COLORS[role], 0.35),
                        "line": {"color": COLORS[role], "width": 1}},
                hovertemplate=labels.x + " %{x}: %{text}<extra>" + labels.name(role) + "</extra>",
            )
        )  # fmt: skip
    layout = {
        "xaxis": {
            "title": {"text": labels.x},
            "dtick": 4,
            "zeroline": False,
            "range": [-0.7, len(tokens) - 0.3],
        },
        "yaxis": {"visible": False, "range": [-1, 1]},
        "legend": {"orientation": "h", "yanchor": "bottom", "y": 1.0, "xanchor": "left", "x": 0},
    }
    return go.Figure({"data": traces, "layout": _layout(layout, labels.title, height)})


def formation_figure(
    steps: Sequence[int],
    accuracy: Sequence[float],
    loss: Sequence[float],
    scores: Mapping[str, Sequence[float]],
    control_steps: Sequence[int],
    control_accuracy: Sequence[float],
    control_loss: Sequence[float],
    *,
    cliff: int | None,
    max_steps: int,
    labels: Labels,
    titles: tuple[str, str],
    y_titles: tuple[str, str],
    height: int = 520,
    narrow: bool = False,
) -> go.Figure:
    """Left: accuracy on the repeated part and each head's score against steps (one 0-1 axis), the
    1-layer control's accuracy dashed, the cliff marked; right: the loss of both models.

    Args:
        steps, accuracy, loss: the run's measurements (N,).
        scores: {legend name: (N,) a head's previous-token or prefix-matching score}.
        control_steps, control_accuracy, control_loss: the 1-layer control's (M,), maybe empty.
        cliff: the measured formation step (None: no cliff), drawn as a dotted line.
        labels: ``x`` (steps, both panels) and names for ``accuracy``, ``loss``, ``control``,
            ``control_loss`` and ``cliff`` (the cliff's mark).
        titles, y_titles: per panel (accuracy, loss).
        narrow: the two panels stacked (a phone).
    """
    shape, widths = ((2, 1), None) if narrow else ((1, 2), (3, 2))
    layout, axes = grid_layout(*shape, titles=titles, horizontal_spacing=0.1, vertical_spacing=0.2,
                               column_widths=widths)  # fmt: skip
    height = 820 if narrow else height
    traces = [
        go.Scatter(x=steps, y=accuracy, mode="lines+markers", name=labels.name("accuracy"),
                   line={"color": COLORS["accuracy"], "width": 3}, marker={"size": 5})
    ]  # fmt: skip
    for k, (name, values) in enumerate(scores.items()):
        traces.append(
            go.Scatter(x=steps, y=values, mode="lines", name=name,
                       line={"color": HEAD_COLORS[k % len(HEAD_COLORS)], "width": 2, "dash": "dot"})
        )  # fmt: skip
    if len(control_steps):
        traces.append(
            go.Scatter(x=control_steps, y=control_accuracy, mode="lines", name=labels.name("control"),
                       line={"color": COLORS["control"], "width": 2, "dash": "dash"})
        )  # fmt: skip
    second = axes[1]
    traces.append(
        go.Scatter(x=steps, y=loss, mode="lines", name=labels.name("loss"), xaxis="x" + second,
                   yaxis="y" + second, line={"color": COLORS["loss"], "width": 3}, showlegend=False)
    )  # fmt: skip
    if len(control_steps):
        traces.append(
            go.Scatter(x=control_steps, y=control_loss, mode="lines", name=labels.name("control_loss"),
                       xaxis="x" + second, yaxis="y" + second, showlegend=False,
                       line={"color": COLORS["control"], "width": 2, "dash": "dash"})
        )  # fmt: skip
    extent = [0, max(max_steps, 1)]
    layout["xaxis"].update(title={"text": labels.x}, range=extent)
    layout["yaxis"].update(title={"text": y_titles[0]}, range=[0, 1.02])
    layout["xaxis" + second].update(title={"text": labels.x}, range=extent)
    layout["yaxis" + second].update(title={"text": y_titles[1]}, rangemode="tozero")
    if cliff is not None:
        layout["shapes"] = [
            {"type": "line", "xref": "x", "yref": "y", "x0": cliff, "x1": cliff, "y0": 0, "y1": 1,
             "line": {"color": MID_GREY, "dash": "dot", "width": 2}}
        ]  # fmt: skip
        layout["annotations"].append(
            {"text": labels.name("cliff"), "x": cliff, "y": 1.0, "xref": "x", "yref": "y", "showarrow": False,
             "xanchor": "left", "yanchor": "top", "font": {"color": MID_GREY}}
        )  # fmt: skip
    layout["legend"] = _LEGEND_BELOW
    return go.Figure({"data": traces, "layout": _layout(layout, None, height, bottom=170)})


def heads_figure(
    weights: np.ndarray,
    positions: Sequence[str],
    *,
    titles: Sequence[str],
    labels: Labels,
    narrow: bool = False,
) -> go.Figure:
    """Every head's attention map on one sequence, a grid of layers x heads (one colour scale).

    Args:
        weights: (n_layers, H, T, T) rows = queries.
        positions: (T,) a label per position (``"5:17"``: position and token), unique.
        titles: one per panel, row-major (layer by layer).
        labels: ``x`` (keys), ``y`` (queries), ``z`` (the weight's colour bar).
        narrow: one column (a phone).
    """
    n_layers, n_heads = weights.shape[:2]
    panels = n_layers * n_heads
    rows, cols = (panels, 1) if narrow else (n_layers, n_heads)
    spacing = 0.1 if rows == 2 else 0.25 / rows
    layout, axes = grid_layout(rows, cols, titles=titles, horizontal_spacing=0.08, vertical_spacing=spacing)
    traces = []
    for k, suffix in enumerate(axes[:panels]):
        layer, head = divmod(k, n_heads)
        traces.append(
            go.Heatmap(
                z=weights[layer, head], x=list(positions), y=list(positions), coloraxis="coloraxis",
                xaxis="x" + suffix, yaxis="y" + suffix, hovertemplate=f"{labels.y} %{{y}} → {labels.x} "
                f"%{{x}}<br>%{{z:.3f}}<extra>{titles[k]}</extra>",
            )
        )  # fmt: skip
        bottom = k >= panels - cols  # the key axis titled under the last row only
        layout["xaxis" + suffix].update(showticklabels=False, title={"text": labels.x if bottom else ""})
        layout["yaxis" + suffix].update(autorange="reversed", showticklabels=False, title={"text": labels.y})
    layout["coloraxis"] = {"colorscale": WEIGHT_COLORSCALE, "cmin": 0, "cmax": 1,
                           "colorbar": {"title": {"text": labels.z}}}  # fmt: skip
    height = (300 if narrow else 330) * rows + 60
    layout = _layout(layout, None, height)
    layout["margin"]["r"] = COLORBAR_MARGIN
    return go.Figure({"data": traces, "layout": layout})


def strip_figure(
    symbols: Sequence[str],
    weights: Sequence[float],
    query: int,
    *,
    labels: Labels,
    height: int = 300,
) -> go.Figure:
    """BertViz-like lines from one query token (bottom row) to the keys it attends (top row).

    Args:
        symbols: (T,) the sequence's tokens as text.
        weights: (T,) the query's attention row (zeros after the query: the mask).
        query: the query's position.
        labels: the title and the rows' names ``keys``, ``queries``.
    """
    T = len(symbols)
    w = np.asarray(weights, dtype=float)
    traces = []
    for s in range(T):  # one line per attended key, its width and opacity the weight
        if w[s] < 0.02:
            continue
        traces.append(
            go.Scatter(x=[query, s], y=[0, 1], mode="lines", showlegend=False, hoverinfo="skip",
                       line={"color": with_alpha(PALETTE[1], float(0.25 + 0.75 * w[s])),
                             "width": float(1 + 9 * w[s])})
        )  # fmt: skip
    positions = list(range(T))
    traces.append(
        go.Scatter(x=positions, y=[1] * T, mode="markers+text", text=list(symbols), name=labels.name("keys"),
                   textposition="top center", customdata=w,
                   marker={"size": 6 + 18 * w, "color": PALETTE[1], "line": {"color": DARK_GREY, "width": 1}},
                   hovertemplate="%{x}: %{text}<br>%{customdata:.3f}<extra></extra>")
    )  # fmt: skip
    traces.append(
        go.Scatter(x=positions, y=[0] * T, mode="markers+text", text=list(symbols),
                   name=labels.name("queries"), textposition="bottom center",
                   marker={"size": [16 if i == query else 6 for i in positions],
                           "color": [PALETTE[0] if i == query else LIGHT_GREY for i in positions]},
                   hovertemplate="%{x}: %{text}<extra></extra>")
    )  # fmt: skip
    layout = {
        "xaxis": {"visible": False, "range": [-1, T]},
        "yaxis": {"visible": False, "range": [-0.45, 1.45]},
        "showlegend": False,
    }
    return go.Figure({"data": traces, "layout": _layout(layout, labels.title, height, bottom=20)})


def ablation_figure(
    bars: Sequence[str],
    accuracy: Sequence[float],
    roles: Sequence[str],
    *,
    labels: Labels,
    height: int = 400,
) -> go.Figure:
    """Accuracy on the repeated part with nothing off (first bar) and each head (or group) off.

    Args:
        bars: (N,) bar labels; accuracy: (N,) values in [0, 1].
        roles: (N,) ``full`` (nothing off), ``previous``, ``induction`` or ``other`` (the bar's colour).
        labels: the title and ``y`` (accuracy).
    """
    colors = {"full": GREY, "previous": PALETTE[2], "induction": PALETTE[1], "other": PALETTE[0]}
    bar = go.Bar(
        x=list(bars), y=list(accuracy), marker={"color": [colors[r] for r in roles]},
        text=[f"{a:.2f}" for a in accuracy], textposition="outside",
        hovertemplate="%{x}: %{y:.3f}<extra></extra>",
    )  # fmt: skip
    layout = {"yaxis": {"title": {"text": labels.y}, "range": [0, 1.1]}, "showlegend": False}
    return go.Figure({"data": [bar], "layout": _layout(layout, labels.title, height)})


def kernel_figure(
    match_scores: np.ndarray,
    other_scores: np.ndarray,
    scales: Sequence[float],
    accuracy: Sequence[float],
    effective_keys: Sequence[float],
    *,
    labels: Labels,
    titles: tuple[str, str],
    x_titles: tuple[str, str],
    y_titles: tuple[str, str],
    bins: int = 40,
    height: int = 460,
    narrow: bool = False,
) -> go.Figure:
    """Left: the induction head's query-key scores, "same previous token" against every other key
    (share of each group per bin, bins shared); right: copy accuracy and the kernel's width in
    tokens against the QK-scale multiplier (log x).

    Args:
        match_scores, other_scores: (N_match,), (N_other,) scaled scores q·k/√d_k.
        scales, accuracy, effective_keys: (K,) from ``core.lessons.induction_heads.kernel_view``.
        labels: names for ``match``, ``other``, ``accuracy``, ``keys``.
        titles, x_titles, y_titles: per panel (scores, scale).
        narrow: the two panels stacked (a phone).
    """
    layout, axes = grid_layout(*((2, 1) if narrow else (1, 2)), titles=titles, horizontal_spacing=0.12,
                               vertical_spacing=0.22)  # fmt: skip
    height = 780 if narrow else height
    both = np.concatenate([match_scores, other_scores])
    edges = np.linspace(float(both.min()), float(both.max()), bins + 1)  # where the bars go
    centres, width = (edges[:-1] + edges[1:]) / 2, float(edges[1] - edges[0])
    traces = []
    for role, values in (("other", other_scores), ("match", match_scores)):
        counts, _ = np.histogram(values, bins=edges)
        traces.append(
            go.Bar(x=centres, y=counts / max(len(values), 1), width=width, name=labels.name(role),
                   marker={"color": with_alpha(COLORS[role], 0.6)},
                   hovertemplate="%{x:.2f}: %{y:.3f}<extra>" + labels.name(role) + "</extra>")
        )  # fmt: skip
    second = axes[1]
    traces.append(
        go.Scatter(x=list(scales), y=list(accuracy), mode="lines+markers", name=labels.name("accuracy"),
                   xaxis="x" + second, yaxis="y" + second, line={"color": PALETTE[2], "width": 3})
    )  # fmt: skip
    traces.append(
        go.Scatter(x=list(scales), y=list(effective_keys), mode="lines+markers", name=labels.name("keys"),
                   xaxis="x" + second, yaxis="y3", line={"color": PALETTE[3], "width": 2, "dash": "dash"})
    )  # fmt: skip
    layout["barmode"] = "overlay"
    layout["xaxis"].update(title={"text": x_titles[0]})
    layout["yaxis"].update(title={"text": y_titles[0]})
    layout["xaxis" + second].update(title={"text": x_titles[1]}, **log_axis(scales))
    layout["yaxis" + second].update(title={"text": y_titles[1]}, range=[0, 1.02])
    domain = layout["xaxis" + second]["domain"]
    layout["yaxis3"] = {"overlaying": "y" + second, "side": "right", "anchor": "x" + second,
                        "showgrid": False, "position": domain[1], **log_axis(effective_keys),
                        "title": {"text": labels.name("keys")}}  # fmt: skip
    layout["legend"] = _LEGEND_BELOW
    layout = _layout(layout, None, height, bottom=150)
    layout["margin"]["r"] = 80
    return go.Figure({"data": traces, "layout": layout})
