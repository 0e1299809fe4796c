"""Figures of the scaled-dot-product page: pipeline heatmaps, the d_k experiment, normalisers.

Pure Plotly builders: arrays and translated strings in, ``go.Figure`` out. No Streamlit, no math
beyond reshaping (a figure that needs a number receives it). Weight matrices are always drawn with
rows = queries (y, top first) and columns = keys (x), through ``figures.common.heatmap``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np
import plotly.graph_objects as go

from figures.attention_shared import bar_beside, legend_below, rule, signed_heatmap
from figures.common import (
    BASE_FONT_SIZE,
    COLORBAR_MARGIN,
    DARK_GREY,
    MARGIN_BOTTOM,
    MARGIN_LEFT,
    NARROW_CELL_FONT_SIZE,
    NARROW_COLORBAR_MARGIN,
    NARROW_FONT_SIZE,
    NARROW_LEGEND_ROW,
    NARROW_MARGIN_LEFT,
    NARROW_WIDTH,
    NARROW_X_AXIS,
    PALETTE,
    SIGNED_COLORSCALE,
    WEIGHT_COLORSCALE,
    Labels,
    base_layout,
    cells_hold,
    grid_layout,
    heatmap,
    log_axis,
    stacked_layout,
    stacked_size,
    text_px,
    wrap_px,
)

#: Width (px) a heatmap's title may take in a half-width chart (two columns beside the sidebar at
#: 1400 px: ~445 px less the title's padding); a longer one is wrapped.
HALF_TITLE_PX = 410
#: Size (px) of a desktop chart's title in Streamlit's chart theme, and of one more line of it.
TITLE_PX = 17

#: Cells get their value written in them up to this many rows/columns.
MAX_ANNOTATED = 12
#: Width (px) of a narrow heatmap's plot area: the chart less its axis labels and colour bar.
NARROW_PLOT_WIDTH = NARROW_WIDTH - NARROW_MARGIN_LEFT - NARROW_COLORBAR_MARGIN


def _cell_text(z: np.ndarray, fmt: str, special: Mapping[str, str] | None = None) -> list[list[str]]:
    """Per-cell strings; NaN -> special['nan'], -inf -> special['-inf'] when given."""
    special = special or {}
    rows = []
    for row in np.asarray(z, dtype=float):
        cells = []
        for v in row:
            if np.isnan(v):
                cells.append(special.get("nan", ""))
            elif np.isneginf(v):
                cells.append(special.get("-inf", "−∞"))
            else:
                cells.append(format(v, fmt))
        rows.append(cells)
    return rows


def _line(i: int, dashed: bool) -> dict:
    return {"color": PALETTE[i % len(PALETTE)], "width": 3, "dash": "dash" if dashed else None}


def _cell_numbers(
    z: np.ndarray, fmt: str, special: Mapping[str, str] | None = None, *, narrow: bool = False
) -> dict:
    """A heatmap trace's properties that write each cell's value in it, or {} when they would not
    fit: more than :data:`MAX_ANNOTATED` rows or columns, or (``narrow``) a cell too small for its
    text on a phone.
    """
    z = np.asarray(z, dtype=float)
    if z.ndim != 2 or z.shape[0] > MAX_ANNOTATED or z.shape[1] > MAX_ANNOTATED:
        return {}
    text = _cell_text(z, fmt, special)
    if narrow and not cells_hold(text, NARROW_PLOT_WIDTH / max(z.shape[1], 1)):
        return {}
    size = NARROW_CELL_FONT_SIZE if narrow else 12
    return {"text": text, "texttemplate": "%{text}", "textfont": {"size": size}}


def _annotate(
    fig: go.Figure, z: np.ndarray, fmt: str, special: Mapping[str, str] | None = None, *, narrow: bool = False
) -> None:
    numbers = _cell_numbers(z, fmt, special, narrow=narrow)
    if numbers:
        fig.data[0].update(numbers)


def score_heatmap(
    z: np.ndarray,
    *,
    x_labels: Sequence[str],
    y_labels: Sequence[str],
    labels: Labels,
    neg_inf_text: str = "−∞",
    height: int = 430,
    narrow: bool = False,
) -> go.Figure:
    """Signed scores (L, S), centred at 0. -inf cells (masked) are drawn blank and labelled (while
    the numbers fit their cells: on a phone, ``narrow``, only in larger cells).

    Args:
        z: (L, S) scores; -inf marks a masked position.
        labels: title, x (keys) and y (queries).
    """
    z = np.asarray(z, dtype=float)
    fig = signed_heatmap(z, labels=labels, x=list(x_labels), y=list(y_labels), height=height)
    _annotate(fig, z, ".2f", {"-inf": neg_inf_text}, narrow=narrow)
    return fig


def weights_heatmap(
    w: np.ndarray,
    *,
    x_labels: Sequence[str] | None,
    y_labels: Sequence[str] | None,
    labels: Labels,
    nan_text: str = "NaN",
    height: int = 430,
    annotate: bool = True,
    narrow: bool = False,
) -> go.Figure:
    """Attention / kernel weights (L, S) on [0, 1]; NaN cells (undefined rows) blank and labelled;
    values written in cells that hold them (``narrow``: a phone's). ``labels``: title, x, y."""
    w = np.asarray(w, dtype=float)
    title = labels.title
    wrapped = (
        title
        if narrow or text_px(title, TITLE_PX) <= HALF_TITLE_PX
        else wrap_px(title, HALF_TITLE_PX, TITLE_PX)
    )
    fig = heatmap(
        w,
        x=None if x_labels is None else list(x_labels),
        y=None if y_labels is None else list(y_labels),
        title=wrapped,
        x_title=labels.x,
        y_title=labels.y,
        colorscale=WEIGHT_COLORSCALE,
        zmin=0.0,
        zmax=1.0,
        height=height,
    )
    fig.layout.margin.t += round(1.3 * TITLE_PX) * wrapped.count("<br>")  # a wrapped title's room
    if annotate:
        _annotate(fig, w, ".2f", {"nan": nan_text}, narrow=narrow)
    return fig


def output_heatmap(
    out: np.ndarray,
    *,
    y_labels: Sequence[str],
    labels: Labels,
    height: int = 430,
    narrow: bool = False,
) -> go.Figure:
    """The output (L, Dv): one row per query, one column per value dimension (values written in
    cells that hold them: ``narrow``, a phone's). ``labels``: title, x (Dv) and y (queries)."""
    out = np.asarray(out, dtype=float)
    x = [str(j) for j in range(out.shape[1])]
    fig = signed_heatmap(out, labels=labels, x=x, y=list(y_labels), height=height)
    _annotate(fig, out, ".2f", {"nan": "NaN"}, narrow=narrow)
    return fig


class LinePanel(NamedTuple):
    """One panel of :func:`line_panels`: named curves over the shared x.

    ``series`` maps a curve's name to its (X,) values; ``dashed`` names curves drawn dashed;
    ``hlines`` maps a label to a horizontal reference line's y.
    """

    title: str
    series: Mapping[str, np.ndarray]
    y_title: str
    log_y: bool = False
    dashed: tuple[str, ...] = ()
    hlines: Mapping[str, float] | None = None


def line_panels(
    x: np.ndarray,
    panels: Sequence[LinePanel],
    *,
    labels: Labels,
    log_x: bool = False,
    cols: int = 2,
    panel_height: int = 330,
    narrow: bool = False,
) -> go.Figure:
    """Several ``figures.kernels_to_attention.line_figure``-like panels over one shared x in one
    figure (a grid, row-major; one panel per row when ``narrow``: a phone), each with its own y
    axis and its own legend under it.

    One chart instead of one per panel: a step of a control that feeds them all redraws one chart
    in the browser. Mark a value of x on every panel with ``figures.attention_shared.vline_marks``
    (``axes`` from ``panel_axes(len(panels), cols)``).

    Args:
        x: (X,) shared x values (positive when ``log_x``).
        panels: the panels, in reading order (each with its own title and y title).
        labels: x, the shared x axis's title.
    """
    rows = -(-len(panels) // cols)
    gap_px, top, bottom = 185, 40, 170  # under each panel: its x ticks, x title and legend
    legend_gap, legend_font = 62, BASE_FONT_SIZE
    if narrow:  # one panel per row, each with room under it for its x axis and its legend's rows
        legend_gap, legend_font = NARROW_X_AXIS, NARROW_FONT_SIZE
        bottom = NARROW_X_AXIS + max(len(p.series) for p in panels) * NARROW_LEGEND_ROW + 8
        layout, axes, area, top = stacked_layout(
            len(panels), titles=[p.title for p in panels], panel_height=220, below=bottom,
            margin_left=NARROW_MARGIN_LEFT,
        )  # fmt: skip
    else:
        area = rows * panel_height + (rows - 1) * gap_px  # the plot area's height in pixels
        layout, axes = grid_layout(rows, cols, titles=[p.title for p in panels], horizontal_spacing=0.1,
                                   vertical_spacing=gap_px / area, title_size=16)  # fmt: skip
    xs = np.asarray(x, dtype=float)
    xaxis: dict = {"title": {"text": labels.x}, **(log_axis(xs) if log_x else {})}
    if log_x:  # pin the range to the data (a marker's label must not stretch the axis)
        xaxis["range"] = [float(np.log10(xs.min())) - 0.05, float(np.log10(xs.max())) + 0.05]
    data, shapes, annotations = [], [], layout["annotations"]
    for k, (panel, suffix) in enumerate(zip(panels, axes, strict=False)):
        legend = "legend" if k == 0 else f"legend{k + 1}"
        for i, (name, y) in enumerate(panel.series.items()):
            data.append(
                {"type": "scatter", "x": xs, "y": np.asarray(y), "name": name, "mode": "lines+markers",
                 "xaxis": f"x{suffix}", "yaxis": f"y{suffix}", "legend": legend,
                 "line": _line(i, name in panel.dashed)}
            )  # fmt: skip
        for j, (name, value) in enumerate((panel.hlines or {}).items()):
            color = PALETTE[(len(panel.series) + j) % len(PALETTE)]
            shapes.append(rule("y", value, {"color": color, "dash": "dot", "width": 2}, suffix))
            annotations.append(
                {"x": 0, "xref": f"x{suffix} domain", "y": value, "yref": f"y{suffix}", "text": name,
                 "showarrow": False, "xanchor": "left", "yanchor": "bottom", "font": {"size": 14}}
            )  # fmt: skip
        layout[f"xaxis{suffix}"] |= dict(xaxis)
        layout[f"yaxis{suffix}"] |= {"title": {"text": panel.y_title},
                                     **(log_axis(*panel.series.values()) if panel.log_y else {})}  # fmt: skip
        x0, y0 = layout[f"xaxis{suffix}"]["domain"][0], layout[f"yaxis{suffix}"]["domain"][0]
        layout[legend] = {
            "orientation": "v",
            "xanchor": "left",
            "x": x0,
            "yanchor": "top",
            "y": y0 - legend_gap / area,
            "xref": "paper",
            "yref": "paper",
            "font": {"size": legend_font},
        }  # fmt: skip (one size for all: Streamlit's theme styles only the first)
    if narrow:
        layout |= {"shapes": shapes, **stacked_size(top, area, bottom=bottom)}
        return go.Figure({"data": data, "layout": layout})
    layout |= {"shapes": shapes, "height": area + top + bottom,
               "margin": {"l": MARGIN_LEFT, "r": 20, "t": top, "b": bottom}}  # fmt: skip
    return go.Figure({"data": data, "layout": layout})


def panel_axes(count: int) -> tuple[str, ...]:
    """The axis suffixes of ``count`` panels of :func:`line_panels` / :func:`pipeline_heatmaps`."""
    return tuple("" if k == 0 else str(k + 1) for k in range(count))


def pipeline_heatmaps(
    panels: Sequence[tuple[str, np.ndarray, str]],
    *,
    x_labels: Sequence[str],
    y_labels: Sequence[str],
    labels: Labels,
    cols: int = 2,
    neg_inf_text: str = "−∞",
    nan_text: str = "NaN",
    panel_height: int = 360,
    narrow: bool = False,
) -> go.Figure:
    """Steps of the attention pipeline as heatmaps in one figure (a grid, row-major; one panel per
    row when ``narrow``: a phone, with cell values only where they fit).

    Each panel is (title, (L, S) matrix, kind): kind "scores" is drawn on a signed scale centred at
    0 with its own range (-inf cells, the masked ones, blank and labelled ``neg_inf_text``); kind
    "weights" on [0, 1] (NaN cells, undefined rows, blank and labelled ``nan_text``). Every panel
    has its own colour bar beside it, as :func:`score_heatmap` / :func:`weights_heatmap` would.
    One chart instead of four: a step of a page-wide control redraws one chart in the browser.
    ``labels``: x (keys) and y (queries), the titles of every panel's axes.
    """
    x_title, y_title = labels.x, labels.y
    rows = -(-len(panels) // cols)
    gap_px, top, bottom = 100, 40, MARGIN_BOTTOM  # between rows: x ticks and title, the next panel's title
    if narrow:
        cols, bottom = 1, NARROW_X_AXIS
        layout, axes, area, top = stacked_layout(
            len(panels), titles=[p[0] for p in panels], panel_height=200, below=NARROW_X_AXIS,
            margin_left=NARROW_MARGIN_LEFT,
        )  # fmt: skip
    else:
        area = rows * panel_height + (rows - 1) * gap_px
        layout, axes = grid_layout(rows, cols, titles=[p[0] for p in panels], horizontal_spacing=0.16,
                                   vertical_spacing=gap_px / area, title_size=16)  # fmt: skip
    data = []
    for k, ((_, z, kind), suffix) in enumerate(zip(panels, axes, strict=False)):
        z = np.asarray(z, dtype=float)
        if kind == "scores":
            shown = np.where(np.isneginf(z), np.nan, z)
            finite = shown[np.isfinite(shown)]
            bound = float(np.abs(finite).max()) if finite.size else 1.0
            scale = {"colorscale": SIGNED_COLORSCALE, "zmin": -(bound or 1.0), "zmax": bound or 1.0}
            special = {"-inf": neg_inf_text}
        else:
            shown = z
            scale = {"colorscale": WEIGHT_COLORSCALE, "zmin": 0.0, "zmax": 1.0}
            special = {"nan": nan_text}
        trace = {
            "type": "heatmap", "z": shown, "x": list(x_labels), "y": list(y_labels), **scale,
            "meta": f"panel{k}",  # found by the live slider's drawing (ui.live_slider)
            "xaxis": f"x{suffix}", "yaxis": f"y{suffix}", "colorbar": bar_beside(layout, suffix),
            "hovertemplate": f"{y_title} %{{y}} → {x_title} %{{x}}<br>%{{z:.4g}}<extra></extra>",
        }  # fmt: skip
        data.append(trace | _cell_numbers(z, ".2f", special, narrow=narrow))
        layout[f"yaxis{suffix}"] |= {
            "autorange": "reversed",
            "title": {"text": y_title if k % cols == 0 else ""},
        }
        layout[f"xaxis{suffix}"] |= {"title": {"text": x_title}}
    if narrow:
        layout |= stacked_size(top, area, right=NARROW_COLORBAR_MARGIN)
        return go.Figure({"data": data, "layout": layout})
    layout |= {"height": area + top + bottom, "margin": {"l": MARGIN_LEFT, "r": 80, "t": top, "b": bottom}}
    return go.Figure({"data": data, "layout": layout})


def qkv_heatmaps(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    *,
    tokens: Sequence[str],
    titles: tuple[str, str, str],
    labels: Labels,
    height: int = 420,
    narrow: bool = False,
) -> go.Figure:
    """Q (L, D), K (S, D) and V (S, Dv) side by side (one per row when ``narrow``: a phone): one
    row per token, one column per dimension.

    One signed colour scale for all three (centred at 0), so entries compare across panels.
    ``tokens``: the L row labels; ``titles``: the three panels' titles; ``labels``: title (none
    when empty), x (the D axis of Q and K), y (the tokens) and ``name("dv")`` (the Dv axis of V).
    """
    title, y_title = labels.title or None, labels.y
    mats = [np.asarray(m, dtype=float) for m in (q, k, v)]
    bound = max(float(np.abs(m).max()) if m.size else 0.0 for m in mats) or 1.0
    d, dv = mats[0].shape[1], mats[2].shape[1]
    widths = [d, d, max(dv, d / 4)]
    if narrow:
        layout, axes, area, top = stacked_layout(
            3, titles=titles, panel_height=max(120, min(220, 18 * mats[0].shape[0])), below=NARROW_X_AXIS,
            margin_left=NARROW_MARGIN_LEFT,
        )  # fmt: skip
    else:
        layout, axes = grid_layout(
            1, 3, titles=titles, horizontal_spacing=0.06, title_size=16, column_widths=widths
        )  # one pass from plain dicts
    data = []
    for i, (m, suffix) in enumerate(zip(mats, axes, strict=True)):
        data.append(
            {"type": "heatmap", "z": m, "x": [str(j) for j in range(m.shape[1])], "y": list(tokens),
             "xaxis": f"x{suffix}", "yaxis": f"y{suffix}", "coloraxis": "coloraxis",
             "hovertemplate": "%{y}, %{x}<br>%{z:.3g}<extra></extra>"}
        )  # fmt: skip
        layout[f"yaxis{suffix}"] |= {"autorange": "reversed", "showticklabels": i == 0 or narrow,
                                     "title": {"text": y_title if i == 0 or narrow else ""}}  # fmt: skip
        layout[f"xaxis{suffix}"] |= {"title": {"text": labels.x if i < 2 else labels.name("dv")}}
    if narrow:
        layout |= stacked_size(top, area, right=NARROW_COLORBAR_MARGIN)
    layout |= {
        "coloraxis": {
            "colorscale": SIGNED_COLORSCALE,
            "cmin": -bound,
            "cmax": bound,
            "colorbar": {"thickness": 14},
        },
        "title": {"text": title},
    }
    if not narrow:
        layout |= {
            "height": height,
            "margin": {"l": MARGIN_LEFT, "r": COLORBAR_MARGIN, "t": 60 if title else 30, "b": MARGIN_BOTTOM},
        }
    return go.Figure({"data": data, "layout": layout})


def normaliser_rows(
    x_train: np.ndarray,
    rows: Mapping[str, np.ndarray],
    *,
    x0: float,
    radius: float | None,
    labels: Labels,
    height: int = 400,
) -> go.Figure:
    """One query's weights over the samples under several normalisers; the sparsemax radius shaded.

    ``rows``: {normaliser's name: (N,) weights}; ``labels``: title, x, y, ``name("query")`` (the
    query's marker) and ``name("radius")`` (the shaded band's legend entry).
    """
    data = [
        {"type": "scatter", "x": x_train, "y": w, "mode": "lines+markers", "name": name,
         "line": {"color": PALETTE[i % len(PALETTE)], "width": 2}, "marker": {"size": 5}}
        for i, (name, w) in enumerate(rows.items())
    ]  # fmt: skip
    if radius is not None:  # the shaded band, and a legend entry for it (before the curves)
        band = {"symbol": "square", "size": 14, "color": PALETTE[1], "opacity": 0.25}
        data.insert(0, {"type": "scatter", "x": [None], "y": [None], "mode": "markers",
                        "name": labels.name("radius"), "marker": band})  # fmt: skip
    fig = go.Figure(data)
    if radius is not None:
        fig.add_vrect(x0=x0 - radius, x1=x0 + radius, fillcolor=PALETTE[1], opacity=0.08, line_width=0)
    fig.add_vline(
        x=x0,
        line={"color": DARK_GREY, "dash": "dot"},
        annotation_text=labels.name("query"),
        annotation_position="bottom right",
    )
    fig.update_xaxes(title=labels.x)
    fig.update_yaxes(title=labels.y, rangemode="tozero")
    return legend_below(base_layout(fig, title=labels.title, height=height))
