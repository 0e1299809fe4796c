"""Figures of the training page: the data, loss curves, per-head attention maps, predictions, distances.

Pure Plotly builders: arrays and already-translated strings in, ``go.Figure`` out. The loss
curves and the attention maps are rebuilt after every epoch while a model trains, so they are
built from plain dicts with a minimal inline template (white background, light grid: the look of
``figures.common.base_layout``'s ``plotly_white``) instead of the named template, whose
validation costs 10-25 ms per figure and makes up most of a small figure's JSON. The static
figures use ``figures.common.base_layout``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from figures.common import (
    BASE_FONT_SIZE,
    BLACK,
    COLORBAR_MARGIN,
    DARK_GREY,
    GREY,
    GRID,
    LEVEL_COLORS,
    LIGHT_GREY,
    MARGIN_BOTTOM,
    MARGIN_LEFT,
    MID_GREY,
    NARROW_COLORBAR_MARGIN,
    NARROW_FONT_SIZE,
    NARROW_MARGIN_LEFT,
    NARROW_WIDTH,
    PALETTE,
    PANEL,
    WEIGHT_COLORSCALE,
    WHITE,
    Labels,
    base_layout,
    log_axis,
    wrap_lines,
)

#: Colours of the baseline lines, by baseline id (the page's legend names them).
BASELINE_COLORS = {"mean": GREY, "last_value": BLACK, "optimum": PALETTE[2]}
#: The few parts of plotly_white the live figures need, inline (cheap to validate and to send).
_LIGHT_TEMPLATE = {
    "layout": {
        "paper_bgcolor": WHITE,
        "plot_bgcolor": WHITE,
        "xaxis": {"gridcolor": GRID, "zerolinecolor": GRID, "linecolor": GRID},
        "yaxis": {"gridcolor": GRID, "zerolinecolor": GRID, "linecolor": GRID},
    }
}


def _light_layout(title: str | None, height: int) -> dict:
    return {
        "template": _LIGHT_TEMPLATE,
        "title": {"text": title} if title else None,
        "height": height,
        "font": {"size": BASE_FONT_SIZE},
        "margin": {"l": MARGIN_LEFT, "r": 20, "t": 70 if title else 30, "b": MARGIN_BOTTOM},
        "legend": {"orientation": "h", "yanchor": "bottom", "y": 1.02, "xanchor": "left", "x": 0},
    }


def loss_curves(
    train_loss: Sequence[float],
    val_loss: Sequence[float],
    baselines: Mapping[str, float],
    *,
    labels: Labels,
    max_epochs: int,
    batch_loss: Sequence[float] | None = None,
    batches_per_epoch: int | None = None,
    log_y: bool = True,
    height: int = 500,
) -> go.Figure:
    """Training and validation loss per epoch against horizontal baseline lines.

    Args:
        train_loss: mean training loss of epochs 1..n (plotted at x = 1..n).
        val_loss: validation loss after 0..n epochs (x = 0..n; 0 = before training).
        baselines: {id: loss} drawn as dashed horizontal lines; ids ``mean``, ``last_value``,
            ``optimum`` get fixed colours.
        labels: the title, ``x`` (epochs), ``y`` (loss) and names for ``train``, ``val``, ``batch``
            and every baseline id.
        max_epochs: the x axis spans [0, max_epochs] from the start, so a live chart does not
            rescale as it grows.
        batch_loss: optional training loss of every optimiser step, drawn faintly at fractional
            epochs (needs ``batches_per_epoch``): shows how much the loss jumps between batches.
        log_y: logarithmic loss axis (losses span orders of magnitude).
    """
    data: list[dict] = []
    if batch_loss is not None and batches_per_epoch and len(batch_loss):
        x_batch = (np.arange(len(batch_loss)) + 1) / batches_per_epoch
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "x": x_batch,
                "y": np.asarray(batch_loss, dtype=float),
                "name": labels.name("batch"),
                "line": {"color": PALETTE[5], "width": 1},
                "opacity": 0.45,
                "hovertemplate": "%{y:.3g}<extra></extra>",
            }
        )
    data.append(
        {
            "type": "scatter",
            "mode": "lines+markers",
            "x": np.arange(1, len(train_loss) + 1),
            "y": np.asarray(train_loss, dtype=float),
            "name": labels.name("train"),
            "line": {"color": PALETTE[0], "width": 3},
            "hovertemplate": "%{x}: %{y:.4g}<extra></extra>",
        }
    )
    data.append(
        {
            "type": "scatter",
            "mode": "lines+markers",
            "x": np.arange(len(val_loss)),
            "y": np.asarray(val_loss, dtype=float),
            "name": labels.name("val"),
            "line": {"color": PALETTE[1], "width": 3},
            "hovertemplate": "%{x}: %{y:.4g}<extra></extra>",
        }
    )
    for key, value in baselines.items():
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "x": [0, max_epochs],
                "y": [value, value],
                "name": labels.name(key),
                "line": {"color": BASELINE_COLORS.get(key, PALETTE[4]), "width": 2, "dash": "dash"},
                "hovertemplate": f"{labels.name(key)}: {value:.4g}<extra></extra>",
            }
        )
    layout = _light_layout(labels.title, height)
    layout["legend"] = {"orientation": "h", "yanchor": "top", "y": -0.2, "xanchor": "left", "x": 0}
    layout["margin"] = {"l": MARGIN_LEFT, "r": 20, "t": 60, "b": 130}
    layout["xaxis"] = {"title": {"text": labels.x}, "range": [-0.3, max_epochs + 0.3]}
    layout["yaxis"] = {"title": {"text": labels.y}, "type": "log" if log_y else "linear"}
    if log_y:  # every tick labelled with its full value (Plotly would print bare "2", "5")
        layout["yaxis"] |= log_axis(*(trace["y"] for trace in data))
    return go.Figure({"data": data, "layout": layout})


def _default_zmax(w: np.ndarray) -> float:
    """The largest weight of (H, L, S) below the first query row (1 when there is none > 0)."""
    below = w[:, 1:, :] if w.shape[1] > 1 else w
    zmax = float(np.nanmax(below)) if np.isfinite(below).any() else 1.0
    return zmax if zmax > 0 else 1.0


def _head_axes(
    axis: str,
    x: tuple[float, float],
    y: tuple[float, float],
    y_title: str,
    *,
    first_col: bool,
    last_row: bool,
    tick_size: int = BASE_FONT_SIZE - 3,
) -> dict[str, dict]:
    """The x and y axes of one head's cell (paper domains ``x``, ``y``): tick labels on the outer edges."""
    return {
        f"xaxis{axis}": {
            "domain": [max(0.0, round(x[0], 6)), min(1.0, round(x[1], 6))],
            "anchor": f"y{axis}",
            "showgrid": False,
            "zeroline": False,
            "tickfont": {"size": tick_size},
            "showticklabels": last_row,  # the row below's head titles sit where they would be
            "nticks": 4,
        },
        f"yaxis{axis}": {
            "domain": [max(0.0, round(y[0], 6)), min(1.0, round(y[1], 6))],
            "anchor": f"x{axis}",
            "autorange": "reversed",
            "title": {"text": y_title if first_col else ""},
            "showticklabels": first_col,
            "showgrid": False,
            "zeroline": False,
            "nticks": 5,
        },
    }


def _head_map(z: np.ndarray, axis: str, head: str, x_title: str, y_title: str) -> dict:
    """One head's (L, S) heatmap trace on the axes ``x<axis>``/``y<axis>``, hovering its weight."""
    return {
        "type": "heatmap",
        "z": z,
        "xaxis": f"x{axis}",
        "yaxis": f"y{axis}",
        "coloraxis": "coloraxis",
        "hovertemplate": f"{head}<br>{y_title} %{{y}}<br>{x_title} %{{x}}<br>%{{z:.3f}}<extra></extra>",
    }


def _head_title(text: str, x: float, y: float, *, small: bool) -> dict:
    """A head's title above its map (paper coordinates: centre ``x``, the map's top ``y``)."""
    return {
        "text": text,
        "x": x,
        "y": y,
        "xref": "paper",
        "yref": "paper",
        "xanchor": "center",
        "yanchor": "bottom",
        "showarrow": False,
        "font": {"size": BASE_FONT_SIZE - 2 if small else BASE_FONT_SIZE},
    }


def attention_heads(
    weights: np.ndarray,
    *,
    head_titles: Sequence[str],
    labels: Labels,
    cols: int | None = None,
    row_height: int | None = None,
    zmax: float | None = None,
    narrow: bool = False,
) -> go.Figure:
    """One heatmap per head, rows = queries (top = position 0), columns = keys (on a phone,
    ``narrow``: one head per row up to 4 heads, else 2 or 4 to a row, whatever ``cols`` says).

    Args:
        weights: (H, L, S) attention weights of one example and layer.
        head_titles: H titles (e.g. "head 1").
        labels: the title, ``x`` (keys), ``y`` (queries) and ``z`` (the weight's colour bar).
        cols: heads per row (default: up to 4, 8 for more than 8 heads).
        row_height: px per row of heads (default 300, 170 with more than 4 heads per row); the
            figure is ~130 px taller for its title and axis labels.
        zmax: top of the shared colour scale; default: the largest weight below the first query
            row. Under a causal mask query 0 sees only key 0 (weight 1, always): letting it set
            the scale would wash every other row out. Row 0 then shows at the top colour.

    Raises:
        ValueError: if weights is not (H, L, S) or head_titles has the wrong length.
    """
    w = np.asarray(weights, dtype=float)
    if w.ndim != 3:
        raise ValueError(f"weights must be (H, L, S), got shape {w.shape}")
    H = w.shape[0]
    if len(head_titles) != H:
        raise ValueError(f"need {H} head titles, got {len(head_titles)}")
    cols = cols or (H if H <= 4 else 4 if H <= 8 else 8)
    if narrow:
        cols = 1 if H <= 4 else 2 if H <= 8 else 4
    zmax = _default_zmax(w) if zmax is None else zmax
    rows = -(-H // cols)
    # between heads: room for the last key label of one map and the first of the next ("30", "0")
    gap_x, gap_y = 0.08, 0.07
    cell_w = (1.0 - gap_x * (cols - 1)) / cols
    cell_h = (1.0 - gap_y * (rows - 1)) / rows
    data, annotations = [], []
    row_height = row_height or (300 if cols <= 4 else 170)
    if narrow:
        side = (NARROW_WIDTH - NARROW_MARGIN_LEFT - NARROW_COLORBAR_MARGIN) * cell_w  # square maps
        row_height = round(side / (1 - gap_y) + 24)  # + the head's title
    layout = _light_layout(labels.title, height=130 + rows * row_height)
    for h in range(H):
        r, c = divmod(h, cols)
        axis = "" if h == 0 else str(h + 1)
        x0 = c * (cell_w + gap_x)
        y1 = 1.0 - r * (cell_h + gap_y)
        data.append(_head_map(w[h], axis, head_titles[h], labels.x, labels.y))
        layout |= _head_axes(
            axis,
            (x0, x0 + cell_w),
            (y1 - cell_h, y1),
            labels.y,
            first_col=c == 0,
            last_row=r == rows - 1,
            tick_size=(NARROW_FONT_SIZE if narrow else BASE_FONT_SIZE) - 3,
        )
        annotations.append(_head_title(head_titles[h], x0 + cell_w / 2, y1, small=cols > 4))
    # the keys' axis title once, under the whole grid
    bottom = {"xanchor": "center", "yanchor": "top", "yshift": -28, "showarrow": False}
    annotations.append({"text": labels.x, "x": 0.5, "y": 0, "xref": "paper", "yref": "paper", **bottom})
    layout["annotations"] = annotations
    layout["margin"] = {"l": MARGIN_LEFT, "r": COLORBAR_MARGIN, "t": 90, "b": 60}
    layout["coloraxis"] = {
        "colorscale": WEIGHT_COLORSCALE,
        "cmin": 0.0,
        "cmax": zmax,
        "colorbar": {"title": {"text": labels.z}, "thickness": 14},
    }
    return go.Figure({"data": data, "layout": layout})


def _titled(fig: go.Figure, labels: Labels, height: int, **y_axis: object) -> go.Figure:
    """The axes' titles (the y axis with ``y_axis`` settings too) and the house layout, titled."""
    fig.update_xaxes(title=labels.x)
    fig.update_yaxes(title=labels.y, **y_axis)
    return base_layout(fig, title=labels.title, height=height)


def walks_plot(
    walks: np.ndarray,
    example: np.ndarray,
    *,
    labels: Labels,
    height: int = 420,
) -> go.Figure:
    """The task's data: a few training windows and the validation window the attention maps read.

    Each window is drawn against its position t = 0..T (every window starts at 0). The validation
    window's last value is marked: the next value, what the model must predict from the values
    before it.

    Args:
        walks: (K, T + 1) training windows, one faint line each (one legend entry for all).
        example: (T + 1,) the validation window, drawn bold.
        labels: the title, ``x``, ``y`` and the legend names ``train``, ``example`` and ``target``.

    Raises:
        ValueError: if walks is not (K, T + 1) with the example's T + 1.
    """
    walks = np.asarray(walks, dtype=float)
    example = np.asarray(example, dtype=float)
    if walks.ndim != 2 or example.ndim != 1 or walks.shape[1] != example.shape[0]:
        raise ValueError(f"walks must be (K, T + 1) and example (T + 1,), got {walks.shape}, {example.shape}")
    positions = np.arange(example.shape[0])  # (T + 1,)
    fig = go.Figure()
    for k, walk in enumerate(walks):
        fig.add_trace(
            go.Scatter(
                x=positions,
                y=walk,
                mode="lines",
                name=labels.name("train"),
                legendgroup="train",
                showlegend=k == 0,
                line={"color": PALETTE[0], "width": 2},
                opacity=0.45,
                hovertemplate=f"{labels.name('train')} {k + 1}<br>t = %{{x}}: %{{y:.3f}}<extra></extra>",
            )
        )
    fig.add_trace(
        go.Scatter(
            x=positions[:-1],
            y=example[:-1],
            mode="lines+markers",
            name=labels.name("example"),
            line={"color": BLACK, "width": 3},
            marker={"size": 5},
            hovertemplate="t = %{x}: %{y:.3f}<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=positions[-2:],
            y=example[-2:],
            mode="lines+markers",
            name=labels.name("target"),
            line={"color": PALETTE[1], "width": 3, "dash": "dot"},
            marker={"size": [0, 14], "symbol": "star", "color": PALETTE[1]},
            hovertemplate=f"{labels.name('target')}<br>t = %{{x}}: %{{y:.3f}}<extra></extra>",
        )
    )
    return _titled(fig, labels, height)


def prediction_plot(
    values: np.ndarray,
    one_step: np.ndarray,
    rollout: np.ndarray,
    context: int,
    *,
    labels: Labels,
    height: int = 430,
) -> go.Figure:
    """One validation window: the true values, one-step predictions and a rollout.

    Args:
        values: (T + 1,) the true window (inputs are positions 0..T-1, targets 1..T).
        one_step: (T,) prediction for position t + 1 made at position t (drawn at x = 1..T).
        rollout: (T + 1 - context,) values generated from the first ``context`` values by feeding
            predictions back (drawn at x = context..T).
        labels: the title, ``x``, ``y`` and the legend names ``truth``, ``one_step``, ``rollout``,
            ``context``.
    """
    values = np.asarray(values, dtype=float)
    T = values.shape[0] - 1
    fig = go.Figure()
    fig.add_vrect(
        x0=-0.5,
        x1=context - 0.5,
        fillcolor=LIGHT_GREY,
        opacity=0.35,
        line_width=0,
        annotation_text=labels.name("context"),
        annotation_position="top left",
    )
    fig.add_trace(
        go.Scatter(
            x=np.arange(T + 1),
            y=values,
            mode="lines+markers",
            name=labels.name("truth"),
            line={"color": BLACK, "width": 3},
        )
    )
    fig.add_trace(
        go.Scatter(
            x=np.arange(1, T + 1),
            y=np.asarray(one_step, dtype=float),
            mode="markers",
            name=labels.name("one_step"),
            marker={"color": PALETTE[1], "size": 9, "symbol": "diamond"},
        )
    )
    fig.add_trace(
        go.Scatter(
            x=np.arange(context, T + 1),
            y=np.asarray(rollout, dtype=float),
            mode="lines+markers",
            name=labels.name("rollout"),
            line={"color": PALETTE[0], "width": 3, "dash": "dash"},
        )
    )
    return _titled(fig, labels, height)


def distance_bars(
    distances: np.ndarray,
    shares: np.ndarray,
    reference: np.ndarray,
    *,
    labels: Labels,
    height: int = 400,
) -> go.Figure:
    """Share of attention mass at each query-key distance, against uniform attention.

    Args:
        distances: (K,) distances d = query - key (0 = the query's own position).
        shares: (K,) the model's share of attention mass at each distance.
        reference: (K,) the same for perfectly uniform attention (the mean baseline).
        labels: the title, ``x``, ``y`` and the legend names ``model`` and ``uniform``.
    """
    fig = go.Figure()
    fig.add_trace(go.Bar(x=distances, y=shares, name=labels.name("model"), marker_color=PALETTE[1]))
    fig.add_trace(
        go.Scatter(
            x=distances,
            y=reference,
            mode="lines+markers",
            name=labels.name("uniform"),
            line={"color": MID_GREY, "dash": "dot", "width": 2},
        )
    )
    return _titled(fig, labels, height, rangemode="tozero")


#: Cell colours of the diagnostics table, by level.
#: Relative column widths of the diagnostics table and the characters that fit each at 15 px.
_TABLE_COLUMNS = {"status": (0.8, 10), "symptom": (1.8, 26), "measure": (2.0, 30), "remedy": (3.2, 48)}
#: The same on a phone (:data:`figures.common.NARROW_WIDTH`) at 11 px.
_NARROW_TABLE_COLUMNS = {"status": (1.0, 8), "symptom": (1.4, 11), "measure": (1.5, 12), "remedy": (1.9, 15)}


def diagnostics_table(
    rows: Sequence[Mapping[str, str]],
    *,
    headers: Mapping[str, str],
    labels: Labels | None = None,
    height: int | None = None,
    narrow: bool = False,
) -> go.Figure:
    """The post's troubleshooting table, evaluated: one coloured row per symptom (on a phone,
    ``narrow``: smaller type, cells wrapped to the phone's width).

    Args:
        rows: each with ``level`` (green/amber/red), ``status`` (translated level), ``symptom``,
            ``measure`` (what was measured, with its value) and ``remedy``.
        headers: column titles for ``status``, ``symptom``, ``measure``, ``remedy``.
        labels: its title, if any (``labels.title``); none by default.
        height: figure height in px (default: from the number of wrapped lines).

    Raises:
        ValueError: on an unknown level.
    """
    spec = _NARROW_TABLE_COLUMNS if narrow else _TABLE_COLUMNS
    columns = list(spec)
    for row in rows:
        if row["level"] not in LEVEL_COLORS:
            raise ValueError(f"level must be one of {sorted(LEVEL_COLORS)}, got {row['level']!r}")
    wrapped = [{c: wrap_lines(str(row[c]), spec[c][1]) for c in columns} for row in rows]
    header = {c: "<br>".join(wrap_lines(headers[c], spec[c][1])) if narrow else headers[c] for c in columns}
    lines = [max(len(cell) for cell in row.values()) for row in wrapped]
    fills = [LEVEL_COLORS[row["level"]] for row in rows]
    size = 11 if narrow else BASE_FONT_SIZE - 1
    line_px = 16 if narrow else 20
    header_px = 34 if not narrow else 10 + 16 * max(v.count("<br>") + 1 for v in header.values())
    fig = go.Figure(
        go.Table(
            columnwidth=[spec[c][0] for c in columns],
            header={
                "values": [f"<b>{header[c]}</b>" for c in columns],
                "fill_color": PANEL,
                "align": "left",
                "font": {"size": size + 1, "color": DARK_GREY},
                "height": header_px,
            },
            cells={
                "values": [["<br>".join(row[c]) for row in wrapped] for c in columns],
                "fill_color": [fills] * len(columns),
                "align": "left",
                "font": {"size": size, "color": DARK_GREY},
                "height": line_px + 4,
            },
        )
    )
    title = labels.title if labels is not None and labels.title else None
    fig = base_layout(
        fig, title=title, height=height or 60 + header_px + sum(line_px * n + 10 for n in lines)
    )
    fig.update_layout(margin={"l": 10, "r": 10, "t": 50 if title else 10, "b": 10})
    return fig
