"""Figure pieces both attention pages draw with (kernels-to-attention, scaled-dot-product): a row of
heatmaps, a colour bar beside its panel, a legend under the plot, full-width rules, the
vertical marker drawn over a figure without rebuilding it, and the signed map centred at 0
(scaled-dot-product's scores and output, multi-head's concatenated heads).

Pure Plotly builders, like every ``figures`` module: arrays and translated strings in,
``go.Figure`` or layout dicts out.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from figures.common import (
    COLORBAR_MARGIN,
    MARGIN_BOTTOM,
    MARGIN_LEFT,
    MID_GREY,
    NARROW_COLORBAR_MARGIN,
    NARROW_MARGIN_LEFT,
    NARROW_X_AXIS,
    SIGNED_COLORSCALE,
    WEIGHT_COLORSCALE,
    WHITE,
    Labels,
    grid_layout,
    heatmap,
    position_labels,
    position_ticks,
    stacked_layout,
    stacked_size,
    with_alpha,
)


def legend_below(fig: go.Figure) -> go.Figure:
    """Legend under the plot, so long series names never collide with the title."""
    fig.update_layout(
        legend={"orientation": "h", "yanchor": "top", "y": -0.22, "xanchor": "left", "x": 0},
        margin={"b": 130},
        height=fig.layout.height + 70,
    )
    return fig


def bar_beside(layout: dict, suffix: str, thickness: int = 12) -> dict:
    """A colour bar just right of the panel whose axes end in ``suffix``, as tall as the panel."""
    x1, (y0, y1) = layout[f"xaxis{suffix}"]["domain"][1], layout[f"yaxis{suffix}"]["domain"]
    return {"x": x1 + 0.01, "xanchor": "left", "y": (y0 + y1) / 2, "yanchor": "middle", "len": y1 - y0,
            "thickness": thickness}  # fmt: skip


def vline_marks(
    x: float, text: str, *, log_x: bool = False, axes: Sequence[str] = ("",)
) -> tuple[list[dict], list[dict]]:
    """The vertical marker of ``figures.kernels_to_attention.line_figure`` (a dotted line at ``x``
    labelled ``text``) as (shapes, annotations) layout dicts: to draw on a figure built without
    it, so that moving the marker (e.g. the current d_k) does not rebuild the figure
    (``ui.layout.show_figure(marks=)``).

    ``axes`` are the suffixes of the panels to mark ("" for the first, "2", ...:
    ``figures.scaled_dot_product.line_panels``).
    """
    shapes, notes = [], []
    for suffix in axes:
        # a shape takes data coordinates; an annotation on a log axis takes log10 units; both are
        # named, so a live slider's drawing can move them (ui.live_slider)
        name = f"current_{suffix}" if suffix else "current"
        shapes.append(rule("x", x, {"color": MID_GREY, "dash": "dot"}, suffix) | {"name": name})
        notes.append(
            {"name": name, "x": float(np.log10(x)) if log_x else x, "xref": f"x{suffix}", "y": 1.0,
             "yref": f"y{suffix} domain", "text": text, "showarrow": False, "xanchor": "left",
             "xshift": 3, "yanchor": "top", "bgcolor": with_alpha(WHITE, 0.8),
             "font": {"size": 13, "color": MID_GREY}}
        )  # fmt: skip
    return shapes, notes


def rule(axis: str, value: float, line: dict, suffix: str = "") -> dict:
    """A full-width horizontal (axis "y") or full-height vertical (axis "x") line shape at ``value``
    on the panel whose axes end in ``suffix``."""
    other = "x" if axis == "y" else "y"
    return {
        "type": "line", "line": line, "layer": "above",
        f"{axis}0": value, f"{axis}1": value, f"{axis}ref": f"{axis}{suffix}",
        f"{other}0": 0, f"{other}1": 1, f"{other}ref": f"{other}{suffix} domain",
    }  # fmt: skip


def heatmap_row(
    panels: Sequence[tuple[str, np.ndarray]],
    *,
    x_labels: Sequence[str] | None,
    y_labels: Sequence[str] | None,
    labels: Labels,
    signed_last: bool = False,
    height: int = 420,
    narrow: bool = False,
) -> go.Figure:
    """Weight matrices side by side (shared colour scale [0, 1]); the last may be a signed difference.
    One per row when ``narrow`` (a phone), each colour bar beside its panel. ``panels``: (panel
    title, (L, S) matrix) pairs; ``x_labels`` / ``y_labels``: the S column / L row ticks;
    ``labels``: title (none when empty), x and y (axis titles)."""
    n = len(panels)
    layout, axes, area, top = panel_row_layout(
        [p[0] for p in panels], narrow=narrow, spacing=0.08, title_size=16
    )
    data = []
    for i, ((_, z), suffix) in enumerate(zip(panels, axes, strict=True)):
        z = np.asarray(z, dtype=float)
        signed = signed_last and i == n - 1
        bound = float(np.abs(z[np.isfinite(z)]).max()) if signed and np.isfinite(z).any() else 1.0
        bound = bound if bound > 0 else 1e-16
        trace = {
            "type": "heatmap", "z": z, "xaxis": f"x{suffix}", "yaxis": f"y{suffix}",
            "colorscale": SIGNED_COLORSCALE if signed else WEIGHT_COLORSCALE,
            "zmin": -bound if signed else 0.0, "zmax": bound if signed else 1.0,
            "showscale": signed or i == n - 1,
            "hovertemplate": "%{y} → %{x}<br>%{z:.4g}<extra></extra>",
        }  # fmt: skip
        if x_labels is not None:
            trace["x"] = list(x_labels)
        if y_labels is not None:
            trace["y"] = list(y_labels)
        if signed or i == n - 1:
            trace["colorbar"] = (
                bar_beside(layout, suffix) if narrow else {"x": 1.02, "len": 0.9, "thickness": 14}
            )
        data.append(trace)
        layout[f"yaxis{suffix}"] |= {
            "autorange": "reversed",
            "title": {"text": labels.y if i == 0 or narrow else ""},
        }
        layout[f"xaxis{suffix}"] |= {"title": {"text": labels.x}}
    title = labels.title or None
    return panel_row_figure(data, layout, title=title, height=height, narrow=narrow, area=area, top=top)


def panel_row_layout(
    titles: Sequence[str], *, narrow: bool, spacing: float, title_size: int
) -> tuple[dict, list[str], float | None, float | None]:
    """The layout of a row of panels titled ``titles`` (matrices side by side), built in one pass
    from plain dicts (make_subplots and per-panel updates validate at every step).

    On a phone (``narrow``) one panel per row, 200 px each. Returns (layout, axis suffixes, area,
    top): area and top (``figures.common.stacked_layout``'s) for :func:`panel_row_figure`, None
    on a desktop.
    """
    if narrow:
        return stacked_layout(
            len(titles),
            titles=list(titles),
            panel_height=200,
            below=NARROW_X_AXIS,
            margin_left=NARROW_MARGIN_LEFT,
        )
    layout, axes = grid_layout(
        1, len(titles), titles=list(titles), horizontal_spacing=spacing, title_size=title_size
    )
    return layout, axes, None, None


def panel_row_figure(
    data: list[dict],
    layout: dict,
    *,
    title: str | None,
    height: int,
    narrow: bool,
    area: float | None,
    top: float | None,
) -> go.Figure:
    """The figure of a :func:`panel_row_layout` row with its traces and title: ``height`` px with
    room for the colour bar on a desktop, sized by its stacked panels on a phone (``narrow``)."""
    if narrow:
        layout |= {"title": {"text": title}, **stacked_size(top, area, right=NARROW_COLORBAR_MARGIN)}
        return go.Figure({"data": data, "layout": layout})
    layout |= {"title": {"text": title}, "height": height,
               "margin": {"l": MARGIN_LEFT, "r": COLORBAR_MARGIN, "t": 60 if title else 30,
                          "b": MARGIN_BOTTOM}}  # fmt: skip
    return go.Figure({"data": data, "layout": layout})


def weight_map(
    w: np.ndarray,
    x_train: np.ndarray,
    x_queries: np.ndarray,
    *,
    labels: Labels,
    height: int,
    narrow: bool = False,
    hover_template: str | None = None,
) -> go.Figure:
    """A (Q, N) weight matrix as an attention map: the NW weight matrix of kernel regression and of
    kernels-to-attention (``labels``: title, x and y).

    One equal column per sample in x order (``x_train`` sorted), labelled by its x, and one row per
    query, top row = smallest query (``figures.common.position_labels``: Plotly then draws the map
    as one scaled image); NaN rows (undefined queries) are blank. Ticks at round positions, fewer
    when ``narrow`` (a phone). The map's trace has meta "weights" (how the live slider's drawing
    finds it, ``ui.live_slider``).
    """
    xs, ys = position_labels(x_train), position_labels(x_queries)
    count = 5 if narrow else 10
    fig = heatmap(
        np.asarray(w, dtype=float),
        x=xs,
        y=ys,
        labels=labels,
        colorscale=WEIGHT_COLORSCALE,
        zmin=0.0,
        height=height,
        hover_template=hover_template,
        x_axis=position_ticks(x_train, xs, count),
        y_axis=position_ticks(x_queries, ys, count),
    )
    fig.data[0].meta = "weights"
    return fig


def signed_heatmap(
    z: np.ndarray,
    *,
    labels: Labels,
    x: Sequence[str] | None = None,
    y: Sequence[str] | None = None,
    height: int = 420,
    hover_template: str | None = None,
    bound: float | None = None,
) -> go.Figure:
    """A signed matrix (L, C) as ``figures.common.heatmap`` on the signed scale centred at 0, its
    range ± ``bound`` (default: the largest finite |z|, 1 when there is none or it is 0); NaN / ±inf
    cells blank.

    ``labels``: title, x and y (axis titles); ``x`` / ``y``: tick labels of the C columns / L rows.
    Shared by the scaled-dot-product page's scores and output and multi-head's concatenation.
    """
    z = np.asarray(z, dtype=float)
    shown = np.where(np.isfinite(z), z, np.nan)
    finite = np.abs(shown[np.isfinite(shown)])
    if bound is None:
        bound = (float(finite.max()) if finite.size else 0.0) or 1.0
    return heatmap(
        shown,
        x=x,
        y=y,
        labels=labels,
        colorscale=SIGNED_COLORSCALE,
        zmin=-bound,
        zmax=bound,
        height=height,
        hover_template=hover_template,
    )
