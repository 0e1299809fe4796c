"""Figures of the multi-head & positions page: pure Plotly builders (arrays in, ``go.Figure`` out).

Every string shown is passed in already translated, as one ``labels: Labels`` (``figures.common``)
per figure; per-panel titles are data. Weight maps are (L, S) with rows = queries on y, top row
first, as in ``figures.common.heatmap``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from figures.attention_shared import signed_heatmap
from figures.common import (
    BASE_FONT_SIZE,
    BLACK,
    COLORBAR_MARGIN,
    GREY,
    MARGIN_LEFT,
    NARROW_COLORBAR_MARGIN,
    NARROW_FONT_SIZE,
    NARROW_MARGIN_LEFT,
    NARROW_TOKEN_MARGIN,
    NARROW_WIDTH,
    NARROW_X_AXIS,
    PALETTE,
    TOKEN_MARGIN,
    WEIGHT_COLORSCALE,
    Labels,
    base_layout,
    grid_layout,
    heatmap,
    stacked_layout,
    stacked_size,
    text_px,
)

#: Heads per row of the head grid.
GRID_COLUMNS_FEW = 4
GRID_COLUMNS_MANY = 8


def _vertical_ticks_px(labels: Sequence[str], font_px: float) -> int:
    """Height (px) under a plot for its x tick labels turned vertical and its x axis title.

    Key labels stand vertical (``tickangle=-90``): a label turned -45° reaches sideways under the
    neighbouring head's map and meets its labels there; a vertical one is one line wide.
    """
    return int(max((text_px(label, font_px) for label in labels), default=0) + 2.4 * font_px + 14)


def head_grid(
    weights: np.ndarray,
    *,
    tokens: Sequence[str],
    head_titles: Sequence[str],
    labels: Labels,
    narrow: bool = False,
) -> go.Figure:
    """One heatmap per head on a shared 0..1 colour scale (on a phone, ``narrow``: one head per
    row up to 8 heads, with its token labels).

    Args:
        weights: (H, L, S) attention weights (self-attention: L = S = len(tokens)).
        tokens: tick labels of the tokens (unique strings, e.g. "0 dog").
        head_titles: H subplot titles.
        labels: title, x (keys), y (queries), z (the colour bar).
    """
    weights = np.asarray(weights, dtype=float)
    H = weights.shape[0]
    if narrow and H <= 8:
        return _head_column(weights, tokens, head_titles, labels)
    cols = min(H, GRID_COLUMNS_FEW if H <= 8 else GRID_COLUMNS_MANY)
    if narrow:  # many heads on a phone: a few to a row, colours only
        cols = 4
    rows = math.ceil(H / cols)
    layout, axes = grid_layout(
        rows,
        cols,
        titles=head_titles,
        horizontal_spacing=0.02 if cols > 4 else 0.04,
        vertical_spacing=min(0.12, 0.3 / rows),
        title_size=14,
    )
    show_ticks = len(tokens) <= 12 and cols <= 4 and not narrow
    last_row_start = (rows - 1) * cols
    data = []
    for h in range(H):
        c = h % cols
        suffix = axes[h]
        data.append(_head_trace(weights[h], tokens, head_titles[h], suffix, labels))
        # tick labels and titles only on the outer edge of the grid
        first = c == 0
        layout[f"yaxis{suffix}"] |= {
            "autorange": "reversed",
            "type": "category",
            "showticklabels": first and show_ticks,
            "title": {"text": labels.y if first else ""},
        }
        bottom = h >= last_row_start or h + cols >= H  # the lowest heatmap of its column
        layout[f"xaxis{suffix}"] |= {
            "type": "category",
            "tickangle": -90,
            "showticklabels": bottom and show_ticks,
            "title": {"text": labels.x if bottom else ""},
        }
    for k in range(H, rows * cols):  # empty cells of the last row: no axes drawn
        layout[f"xaxis{axes[k]}"] |= {"visible": False}
        layout[f"yaxis{axes[k]}"] |= {"visible": False}
    per_row = 300 if cols <= 4 else 190
    bottom_px = max(105, _vertical_ticks_px(tokens, BASE_FONT_SIZE)) if show_ticks else 105
    layout |= {
        "coloraxis": {"colorscale": WEIGHT_COLORSCALE, "cmin": 0.0, "cmax": 1.0,
                      "colorbar": {"title": {"text": labels.z}}},
        "title": {"text": labels.title},
        "height": max(360, 90 + per_row * rows) + bottom_px - 105,
        "margin": {"l": TOKEN_MARGIN, "r": COLORBAR_MARGIN, "t": 60, "b": bottom_px},
    }  # fmt: skip
    return go.Figure({"data": data, "layout": layout})


def _head_trace(z: np.ndarray, tokens: Sequence[str], head_title: str, suffix: str, labels: Labels) -> dict:
    """One head's (L, S) map on the shared colour axis, in the subplot of axis ``suffix``."""
    hover = f"{head_title}<br>{labels.y} %{{y}} → {labels.x} %{{x}}<br>%{{z:.3f}}<extra></extra>"
    return {"type": "heatmap", "z": z, "x": list(tokens), "y": list(tokens), "xaxis": f"x{suffix}",
            "yaxis": f"y{suffix}", "coloraxis": "coloraxis", "hovertemplate": hover}  # fmt: skip


def _head_column(
    weights: np.ndarray, tokens: Sequence[str], head_titles: Sequence[str], labels: Labels
) -> go.Figure:
    """:func:`head_grid` on a phone: one head per row, each with its query and key labels."""
    H = weights.shape[0]
    show_ticks = len(tokens) <= 12
    below = _vertical_ticks_px(tokens, NARROW_FONT_SIZE) if show_ticks else NARROW_X_AXIS
    side = NARROW_WIDTH - NARROW_TOKEN_MARGIN - NARROW_COLORBAR_MARGIN  # square maps
    layout, axes, area, top = stacked_layout(
        H, titles=head_titles, panel_height=side, below=below, margin_left=NARROW_TOKEN_MARGIN
    )
    data = []
    for h, suffix in enumerate(axes):
        data.append(_head_trace(weights[h], tokens, head_titles[h], suffix, labels))
        ticks = {"type": "category", "showticklabels": show_ticks}
        layout[f"yaxis{suffix}"] |= ticks | {"autorange": "reversed", "title": {"text": labels.y}}
        layout[f"xaxis{suffix}"] |= ticks | {"tickangle": -90, "title": {"text": labels.x}}
    layout |= {
        "coloraxis": {"colorscale": WEIGHT_COLORSCALE, "cmin": 0.0, "cmax": 1.0,
                      "colorbar": {"title": {"text": labels.z}, "len": min(1.0, 2.5 * side / area),
                                   "y": 1.0, "yanchor": "top"}},
        "title": {"text": labels.title},
        **stacked_size(top, area, left=NARROW_TOKEN_MARGIN, right=NARROW_COLORBAR_MARGIN, bottom=below),
    }  # fmt: skip
    return go.Figure({"data": data, "layout": layout})


def concat_heatmap(
    concat: np.ndarray,
    *,
    n_heads: int,
    tokens: Sequence[str],
    head_titles: Sequence[str],
    labels: Labels,
    narrow: bool = False,
) -> go.Figure:
    """The heads' outputs side by side, (L, H * d_v), with a line between heads.

    Args:
        concat: (L, H * d_v) concatenated head outputs (the input of W_O).
        tokens: (L,) the rows' token labels.
        labels: title, x (the concatenated columns), y (queries).
        head_titles: H short labels written above each block; on a phone (``narrow``) every other
            label is raised a line when neighbours would touch, and none is written when even
            that is too tight.
    """
    concat = np.asarray(concat, dtype=float)
    width = concat.shape[1] // n_heads
    bound = float(np.abs(concat).max()) or 1.0
    hover = f"%{{y}}<br>{labels.x} %{{x}}<br>%{{z:.3f}}<extra></extra>"
    fig = _signed_heatmap(concat, bound, labels, max(360, 140 + 22 * len(tokens)), rows=tokens, hover=hover)
    # Head boundaries and labels in one layout update: add_vline / add_annotation re-validate every
    # shape and annotation already there on each call (16 heads: 0.23 s, 32 heads: 0.7 s).
    line = {"color": BLACK, "width": 2 if n_heads <= 8 else 1}
    shapes = [
        {"type": "line", "x0": h * width - 0.5, "x1": h * width - 0.5, "xref": "x",
         "y0": 0, "y1": 1, "yref": "y domain", "line": line}
        for h in range(1, n_heads)
    ]  # fmt: skip
    notes = [
        {"x": h * width + (width - 1) / 2, "y": 1.0, "yref": "paper", "yanchor": "bottom",
         "text": head_titles[h], "showarrow": False, "font": {"size": 13}}
        for h in range(n_heads if n_heads <= 16 else 0)
    ]  # fmt: skip
    if narrow:
        notes = _staggered(
            notes, block_px=(NARROW_WIDTH - NARROW_TOKEN_MARGIN - NARROW_COLORBAR_MARGIN) / n_heads
        )
    fig.update_layout(
        yaxis_type="category",
        xaxis={"tick0": 0, "dtick": max(1, math.ceil(concat.shape[1] / 12))},  # whole columns only
        shapes=shapes,
        annotations=notes,
        margin={"t": 90, "l": TOKEN_MARGIN},
    )
    return fig


def _staggered(notes: list[dict], block_px: float, size: int = 11) -> list[dict]:
    """Labels one per block ``block_px`` wide, at ``size``: in one line when each fits its block,
    every other one raised a line when each fits two blocks, else none."""
    widest = max((text_px(note["text"], size) for note in notes), default=0.0) + 4
    if widest > 2 * block_px:
        return []
    raise_px = 0 if widest <= block_px else round(1.3 * size)
    return [note | {"font": {"size": size}, "yshift": raise_px * (h % 2)} for h, note in enumerate(notes)]


def head_bars(
    normalized_entropy: np.ndarray,
    support: np.ndarray,
    *,
    head_labels: Sequence[str],
    max_support: float,
    titles: tuple[str, str],
    y_titles: tuple[str, str],
    labels: Labels,
    narrow: bool = False,
) -> go.Figure:
    """Two bar charts side by side (one above the other when ``narrow``: a phone): mean normalised
    entropy and mean effective support per head.

    Args:
        normalized_entropy: (H,) in [0, 1]; a dashed line marks 1 (uniform rows).
        support: (H,) effective number of keys; a dashed line marks ``max_support`` (all keys).
        titles, y_titles: the two panels' titles and y axis titles.
        labels: x (heads) and the dashed lines' names ``uniform`` and ``all_keys``.
    """
    if narrow:
        layout, axes, area, top = stacked_layout(
            2, titles=titles, panel_height=200, below=NARROW_X_AXIS, margin_left=NARROW_MARGIN_LEFT
        )
    else:
        layout, axes = grid_layout(1, 2, titles=titles, horizontal_spacing=0.1)  # one pass from plain dicts
    x = list(head_labels)
    data = [
        {"type": "bar", "x": x, "y": np.asarray(normalized_entropy, dtype=float),
         "marker": {"color": PALETTE[0]}, "showlegend": False},
        {"type": "bar", "x": x, "y": np.asarray(support, dtype=float), "marker": {"color": PALETTE[1]},
         "showlegend": False, "xaxis": "x2", "yaxis": "y2"},
    ]  # fmt: skip
    for suffix, level, name in (
        ("", 1.0, labels.name("uniform")),
        ("2", max_support, labels.name("all_keys")),
    ):
        data.append(
            {"type": "scatter", "x": [x[0], x[-1]], "y": [level, level], "mode": "lines",
             "line": {"dash": "dash", "color": GREY}, "name": name, "showlegend": True,
             "xaxis": f"x{suffix}", "yaxis": f"y{suffix}"}
        )  # fmt: skip
    layout["yaxis"] |= {"title": {"text": y_titles[0]}, "range": [0, 1.05]}
    layout["yaxis2"] |= {"title": {"text": y_titles[1]}, "range": [0, max_support * 1.05]}
    for suffix in axes:
        layout[f"xaxis{suffix}"] |= {"title": {"text": labels.x}, "type": "category"}
    if narrow:
        layout |= stacked_size(top, area)
        return go.Figure({"data": data, "layout": layout})
    layout |= {
        "height": 430,
        "legend": {"orientation": "h", "yanchor": "top", "y": -0.22, "xanchor": "left", "x": 0},
        "margin": {"l": MARGIN_LEFT, "r": 20, "t": 30, "b": 110},
    }
    return go.Figure({"data": data, "layout": layout})


def similarity_matrix(
    similarity: np.ndarray,
    *,
    head_labels: Sequence[str],
    pairs: Sequence[tuple[int, int, float]],
    labels: Labels,
) -> go.Figure:
    """The (H, H) head-similarity matrix (1 = identical maps), redundant pairs circled.

    Args:
        similarity: (H, H) values in [0, 1].
        pairs: (a, b, similarity) pairs to mark (a < b); both (a, b) and (b, a) get a marker.
        labels: title, x and y (heads), z (the colour bar), the markers' name ``pair``.
    """
    H = len(head_labels)
    fig = heatmap(
        np.asarray(similarity, dtype=float),
        x=list(head_labels),
        y=list(head_labels),
        labels=labels,
        colorscale="Viridis",
        zmin=0.0,
        zmax=1.0,
        height=max(420, min(760, 160 + 22 * H)),
        hover_template="%{y} · %{x}<br>%{z:.3f}<extra></extra>",
    )
    # the title along the bar: above it, it met the legend of circled pairs and the top tick label
    fig.update_traces(colorbar={"title": {"text": labels.z, "side": "right"}}, selector={"type": "heatmap"})
    fig.update_xaxes(type="category", tickangle=-45)
    fig.update_yaxes(type="category")
    if pairs:
        xs = [head_labels[b] for a, b, _ in pairs] + [head_labels[a] for a, b, _ in pairs]
        ys = [head_labels[a] for a, b, _ in pairs] + [head_labels[b] for a, b, _ in pairs]
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="markers",
                marker={
                    "symbol": "circle-open",
                    "size": 16 if H <= 16 else 9,
                    "color": PALETTE[1],
                    "line": {"width": 3},
                },
                name=labels.name("pair"),
                hoverinfo="skip",
            )
        )
    return fig


def redundancy_curve(
    heads: Sequence[int],
    series: Sequence[tuple[str, Sequence[float]]],
    support_series: Sequence[tuple[str, Sequence[float]]],
    *,
    titles: tuple[str, str],
    y_titles: tuple[str, str],
    labels: Labels,
    narrow: bool = False,
) -> go.Figure:
    """Redundancy score (left; top when ``narrow``: a phone) and mean effective support (right;
    below) against the number of heads.

    Args:
        heads: the head counts H (x axis, log 2 spaced categories).
        series: (legend name, one value per H) lines for the left panel; None leaves a gap
            (e.g. H = 1, where there is no pair of heads to compare).
        support_series: the same for the right panel.
        titles, y_titles: the two panels' titles and y axis titles.
        labels: x (the number of heads).
    """
    fig = make_subplots(rows=1, cols=2, subplot_titles=list(titles), horizontal_spacing=0.1)
    x = [str(h) for h in heads]
    # the left panel's lines carry the legend; the right panel's (dotted) share their groups
    panels = ((1, series, {}, {}), (2, support_series, {"dash": "dot"}, {"showlegend": False}))
    for col, rows, dash, legend in panels:
        for i, (name, values) in enumerate(rows):
            line = {"color": PALETTE[i], "width": 3} | dash
            trace = go.Scatter(
                x=x,
                y=list(values),
                mode="lines+markers",
                name=name,
                line=line,
                marker={"size": 10},
                legendgroup=name,
                **legend,
            )
            fig.add_trace(trace, row=1, col=col)
    fig.update_xaxes(title_text=labels.x, type="category")
    fig.update_yaxes(title_text=y_titles[0], range=[0, 1.02], row=1, col=1)
    fig.update_yaxes(title_text=y_titles[1], rangemode="tozero", row=1, col=2)
    if narrow:
        layout, _, area, top = stacked_layout(
            2, titles=titles, panel_height=220, below=NARROW_X_AXIS, margin_left=NARROW_MARGIN_LEFT
        )
        for name in ("xaxis", "yaxis", "xaxis2", "yaxis2"):
            fig.layout[name].domain = layout[name]["domain"]
        fig.update_layout(annotations=layout["annotations"], **stacked_size(top, area))
        return fig
    base_layout(fig, height=460)
    fig.update_layout(legend={"orientation": "h", "yanchor": "top", "y": -0.2, "xanchor": "left", "x": 0})
    fig.update_layout(margin={"b": 110})
    return fig


def _signed_heatmap(
    z: np.ndarray,
    bound: float,
    labels: Labels,
    height: int,
    *,
    rows: Sequence[str] | None = None,
    hover: str | None = None,
) -> go.Figure:
    """A signed (rows, columns) table on a diverging scale in [-bound, bound]
    (``figures.attention_shared.signed_heatmap``); ``rows``: the rows' tick labels, ``hover``: the
    hover template (default: both axis titles and the value)."""
    return signed_heatmap(
        z,
        labels=labels,
        y=None if rows is None else list(rows),
        height=height,
        bound=bound,
        hover_template=hover or f"{labels.y} %{{y}}<br>{labels.x} %{{x}}<br>%{{z:.3f}}<extra></extra>",
    )


def encoding_heatmap(table: np.ndarray, *, labels: Labels) -> go.Figure:
    """A positional table (T, d_model): positions down, dimensions across, values in [-1, 1]-ish.
    ``labels``: title, x (dimensions), y (positions)."""
    table = np.asarray(table, dtype=float)
    return _signed_heatmap(table, max(1.0, float(np.abs(table).max())), labels, 420)


def kernel_heatmap(kernel: np.ndarray, *, labels: Labels) -> go.Figure:
    """The (T, T) position kernel PE·PEᵀ. ``labels``: title, x and y (positions)."""
    kernel = np.asarray(kernel, dtype=float)
    return _signed_heatmap(kernel, float(np.abs(kernel).max()) or 1.0, labels, 440)


def kernel_by_distance(
    curves: Sequence[tuple[str, np.ndarray, np.ndarray]],
    *,
    labels: Labels,
    formula: tuple[str, np.ndarray, np.ndarray] | None = None,
) -> go.Figure:
    """Rows of the position kernel plotted against the signed distance q - p.

    Args:
        curves: (legend name, distances, kernel values) for a few reference positions p; if the
            kernel depends only on distance the curves lie on top of each other.
        labels: title, x (distance), y (kernel value).
        formula: optional (name, distances, values) of the closed form, drawn as a thin dashed line.
    """
    # (curve, its style): the rows thick to thin, so that lines on top of each other all show
    styled = [
        (curve, {"mode": "lines+markers", "marker": {"size": 7},
                 "line": {"color": PALETTE[i % len(PALETTE)], "width": 5 - min(i, 3)}})
        for i, curve in enumerate(curves)
    ]  # fmt: skip
    if formula is not None:
        styled.append((formula, {"mode": "lines", "line": {"color": BLACK, "width": 1.5, "dash": "dash"}}))
    fig = go.Figure()
    for (name, d, values), style in styled:
        fig.add_trace(
            go.Scatter(x=np.asarray(d, dtype=float), y=np.asarray(values, dtype=float), name=name, **style)
        )
    fig.update_xaxes(title_text=labels.x, zeroline=True)
    fig.update_yaxes(title_text=labels.y)
    return base_layout(fig, title=labels.title, height=440)


def _map_trace(z: np.ndarray, tokens: Sequence[str], coloraxis: str, number_format: str) -> go.Heatmap:
    return go.Heatmap(
        z=np.asarray(z, dtype=float),
        x=list(tokens),
        y=list(tokens),
        coloraxis=coloraxis,
        hovertemplate=f"%{{y}} → %{{x}}<br>%{{z:{number_format}}}<extra></extra>",
    )


def permutation_grid(
    rows: Sequence[tuple[str, np.ndarray, np.ndarray, np.ndarray]],
    *,
    tokens: Sequence[str],
    column_titles: tuple[str, str, str],
    labels: Labels,
    narrow: bool = False,
) -> go.Figure:
    """One row per setting: A(P x), P A(x) Pᵀ and |difference| for one head (on a phone,
    ``narrow``: every map in a row of its own, in the same order).

    Args:
        rows: (row name, shuffled map (T, T), predicted map (T, T), |difference| (T, T)).
        tokens: tick labels of the shuffled slots.
        column_titles: titles of the three columns (the row name is prefixed to each).
        labels: title, x (keys), y (queries), z (the weights' colour bar), ``diff`` (the
            difference's colour bar).
    """
    n = len(rows)
    subplot_titles = [f"{name}: {col}" for name, *_ in rows for col in column_titles]
    # One pass from plain dicts (make_subplots and per-panel updates validate at every step).
    show_ticks = len(tokens) <= 12
    if narrow:
        below = _vertical_ticks_px(tokens, NARROW_FONT_SIZE) if show_ticks else NARROW_X_AXIS
        side = NARROW_WIDTH - NARROW_TOKEN_MARGIN - NARROW_COLORBAR_MARGIN
        layout, axes, area, top = stacked_layout(
            3 * n, titles=subplot_titles, panel_height=side, below=below, margin_left=NARROW_TOKEN_MARGIN
        )
    else:
        layout, axes = grid_layout(
            n, 3, titles=subplot_titles, horizontal_spacing=0.06, vertical_spacing=0.16, title_size=14
        )
    data = []
    for r, (_, shuffled, predicted, diff) in enumerate(rows):
        panels = (
            (shuffled, "coloraxis", ".3f"),
            (predicted, "coloraxis", ".3f"),
            (diff, "coloraxis2", ".2e"),
        )
        for c, (z, coloraxis, fmt) in enumerate(panels):
            suffix = axes[3 * r + c]
            trace = _map_trace(z, tokens, coloraxis, fmt).to_plotly_json()
            data.append(trace | {"xaxis": f"x{suffix}", "yaxis": f"y{suffix}"})
            layout[f"yaxis{suffix}"] |= {
                "autorange": "reversed",
                "type": "category",
                "showticklabels": show_ticks,
                "title": {"text": labels.y if c == 0 else ""},
            }
            layout[f"xaxis{suffix}"] |= {
                "type": "category",
                "showticklabels": show_ticks,
                "tickangle": -90 if narrow else -45,
                "title": {"text": labels.x if r == n - 1 or narrow else ""},
            }
    bar = {"x": 1.02, "len": 0.45}
    layout |= {
        "coloraxis": {"colorscale": WEIGHT_COLORSCALE, "cmin": 0.0, "cmax": 1.0,
                      "colorbar": {"title": {"text": labels.z}, "y": 0.78, **bar}},
        "coloraxis2": {"colorscale": "Greys", "cmin": 0.0,
                       "colorbar": {"title": {"text": labels.name("diff")}, "y": 0.22, **bar}},
        "title": {"text": labels.title},
        "height": 300 + 330 * (n - 1) + 120,
        "margin": {"l": TOKEN_MARGIN, "r": COLORBAR_MARGIN, "t": 60, "b": 105},
    }  # fmt: skip
    if narrow:
        for name, axis in (("coloraxis", axes[0]), ("coloraxis2", axes[2])):  # beside a map of their own
            y0, y1 = layout[f"yaxis{axis}"]["domain"]
            layout[name]["colorbar"] |= {"y": (y0 + y1) / 2, "len": y1 - y0, "yanchor": "middle"}
        bottom = _vertical_ticks_px(tokens, NARROW_FONT_SIZE) if show_ticks else NARROW_X_AXIS
        layout |= stacked_size(
            top, area, left=NARROW_TOKEN_MARGIN, right=NARROW_COLORBAR_MARGIN, bottom=bottom
        )
    return go.Figure({"data": data, "layout": layout})
