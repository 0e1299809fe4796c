"""Shared look of every figure: large fonts for projectors, one colour scale for weights."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

#: Sequential scale for attention / kernel weights (0 = white, 1 = dark), as in the post's YlOrRd.
WEIGHT_COLORSCALE = "YlOrRd"
#: Diverging scale for signed quantities (scores, differences, encodings).
SIGNED_COLORSCALE = "RdBu_r"
#: Categorical colours, colour-blind safe (Okabe-Ito).
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"]

BASE_FONT_SIZE = 15
#: House margins (px) roomy enough for the tick labels and axis titles at the house font size, and
#: for a colour bar on the right. Plotly grows a margin that is too small for what is drawn in it
#: and then draws the whole figure a second time (``margin.autoexpand``): twice the browser's work
#: on every redraw. These are the sizes it grew the app's figures to (measured in Chromium), so it
#: seldom has to (``tests/e2e/test_margins.py``).
MARGIN_LEFT = 85
MARGIN_BOTTOM = 75
COLORBAR_MARGIN = 120
#: Left margin for token labels on a y axis (multi-head's maps).
TOKEN_MARGIN = 115

#: Name of the house template (plotly_white, large fonts, legend on top), registered once below.
HOUSE_TEMPLATE = "attention_house"
#: The trace types the app draws. The house template keeps plotly_white's styling for these only:
#: every figure carries (and Plotly copies, serialises and sends) its own copy of the template, and
#: plotly_white's full 7 KB (styles for 3-D, maps, polar, carpet ... traces) cost ~0.8 ms per
#: figure to copy and most of a small figure's bytes. A new trace type must be added here
#: (``tests/server/test_plotly_spec.py`` checks every figure the pages show).
TRACE_TYPES = ("bar", "heatmap", "scatter", "table")
#: plotly_white's layout parts for subplot kinds the app never draws.
UNUSED_LAYOUT = ("geo", "polar", "scene", "ternary")


def _register_house_template() -> None:
    """Register the house look as Plotly's default template, once per process.

    Every ``go.Figure`` picks up the default template when it is created; passing ``template=`` to
    ``update_layout`` instead deep-copied and re-validated the whole template for every figure
    (~20 ms each, most of a page's rerun time before this was changed).
    """
    if HOUSE_TEMPLATE in pio.templates and pio.templates.default == HOUSE_TEMPLATE:
        return
    house = go.layout.Template(pio.templates["plotly_white"])
    for trace_type in house.data.to_plotly_json():
        if trace_type not in TRACE_TYPES:
            house.data[trace_type] = None
    for part in UNUSED_LAYOUT:
        house.layout[part] = None
    house.layout.font = {"size": BASE_FONT_SIZE}
    house.layout.legend = {"orientation": "h", "yanchor": "bottom", "y": 1.02, "xanchor": "left", "x": 0}
    # Plotly's toolbar appears at the top right on hover: titles start at the chart's left edge
    # (the whole width is theirs: a long title in a half-width chart is not cut at the plot's
    # margin) and the toolbar stands vertically at the right edge, so it never covers a title.
    # The title hangs from the top edge, clear of a legend drawn just above the plot.
    house.layout.title = {"x": 0, "xanchor": "left", "xref": "container", "y": 1, "yref": "container",
                          "yanchor": "top", "pad": {"t": 12, "l": 12}}  # fmt: skip
    house.layout.modebar = {"orientation": "v"}
    # Plotly's default "hide past div" re-measures every tick label of an axis once per label drawn
    # (quadratic in the labels, a forced layout each): ~70 ms of a multi-head step in Chromium.
    # Labels never reach past the chart here (fixed margins), so nothing needs hiding.
    house.layout.xaxis.ticklabeloverflow = "allow"
    house.layout.yaxis.ticklabeloverflow = "allow"
    pio.templates[HOUSE_TEMPLATE] = house
    pio.templates.default = HOUSE_TEMPLATE


_register_house_template()


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _tick_text(value: float) -> str:
    """A log-axis tick as a full number: 0.02, 5, 300; 2×10⁻⁵ outside [0.001, 1e5)."""
    exponent = int(np.floor(np.log10(value) + 1e-9))
    mantissa = round(value / 10.0**exponent, 6)
    if -3 <= exponent < 5:
        return f"{value:.{max(0, -exponent)}f}"
    power = str(exponent).translate(_SUPERSCRIPT)
    return f"10{power}" if mantissa == 1 else f"{mantissa:g}×10{power}"


def log_axis(*values: Sequence[float] | np.ndarray | float) -> dict:
    """Settings for a log axis on which every labelled tick reads as a full number.

    Plotly labels a log axis's minor ticks with bare mantissas ("0.01, 2, 5, 0.1"); here each tick
    has its value written out. Ticks are 1-2-5 per decade when the data span at most three
    decades, one per decade beyond that.

    Args:
        values: the data on the axis (arrays or scalars); non-positive and NaN values are ignored.

    Returns:
        ``{"type": "log", "tickvals": [...], "ticktext": [...]}`` for ``update_xaxes`` / a layout.
    """
    data = np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in values]) if values else np.array([])
    data = data[np.isfinite(data) & (data > 0)]
    if data.size == 0:
        return {"type": "log"}
    low, high = int(np.floor(np.log10(data.min()))), int(np.ceil(np.log10(data.max())))
    mantissas = (1, 2, 5) if high - low <= 3 else (1,)
    # one decade of ticks beyond the data on each side: Plotly shows only those in range
    ticks = [m * 10.0**e for e in range(low - 1, high + 2) for m in mantissas]
    return {"type": "log", "tickvals": ticks, "ticktext": [_tick_text(v) for v in ticks]}


#: The top of a weight axis is 1, 2.5 or 5 times a power of ten: five intervals of 0.2, 0.5 or 1 times
#: a power of ten (static/live/math.js ``weightAxis`` draws the same while a live slider moves).
WEIGHT_AXIS_STEPS = (1.0, 2.5, 5.0)


def weight_axis(top: float) -> dict[str, Any]:
    """A weight axis from 0 to the smallest of 1, 2.5, 5 × 10^k that holds ``top``, in five intervals.

    Weights of a query live in [0, 1] but their largest value spans orders of magnitude with the
    bandwidth; this axis follows it in steps that always put the six ticks at the same places, so a
    live slider (``ui.live_slider``) relabels them while it moves and the figure drawn on release
    has the same ticks. Labels have as many decimals as the step needs, trailing zeros trimmed.

    Args:
        top: the largest value shown (NaN, inf or <= 0: the axis goes to 1).

    Returns:
        ``{"range": [0, c], "tickmode": "linear", "tick0": 0, "dtick": c / 5, "tickformat": ...}``.
    """
    v = float(top) if np.isfinite(top) and top > 0 else 1.0
    exponent = int(np.floor(np.log10(v)))
    top_tick = None
    while top_tick is None:
        for mantissa in WEIGHT_AXIS_STEPS:
            candidate = float(f"{mantissa * 10.0**exponent:.12g}")
            if candidate >= v * (1 - 1e-12):
                top_tick = candidate
                break
        exponent += 1
    dtick = float(f"{top_tick / 5:.12g}")
    decimals = max(0, -int(np.floor(np.log10(dtick) + 1e-9)))
    return {"range": [0.0, top_tick], "tickmode": "linear", "tick0": 0.0, "dtick": dtick,
            "tickformat": f".{decimals}~f"}  # fmt: skip


def grid_layout(
    rows: int,
    cols: int,
    *,
    titles: Sequence[str] = (),
    horizontal_spacing: float = 0.04,
    vertical_spacing: float = 0.08,
    title_size: int = BASE_FONT_SIZE,
    column_widths: Sequence[float] | None = None,
) -> tuple[dict, list[str]]:
    """The axes of a rows x cols grid of panels, as ``make_subplots`` lays them out, as plain dicts.

    ``make_subplots`` and the ``update_*(row=, col=)`` calls that follow it validate the figure at
    every step (tens of ms); a figure built from these dicts is validated once.

    Returns:
        (layout, axes): ``layout`` has ``xaxis``/``yaxis``, ``xaxis2``/``yaxis2``, ... with their
        domains and anchors, and ``annotations`` holding the panel titles; ``axes[k]`` is the
        suffix of panel k (row-major, "" for the first), for a trace's ``xaxis="x" + suffix``.
    """
    free = 1.0 - horizontal_spacing * (cols - 1)
    shares = np.asarray(column_widths if column_widths is not None else [1.0] * cols, dtype=float)
    widths = free * shares / shares.sum()  # relative widths, as make_subplots' column_widths
    starts = np.concatenate([[0.0], np.cumsum(widths[:-1] + horizontal_spacing)])
    height = (1.0 - vertical_spacing * (rows - 1)) / rows
    layout: dict = {"annotations": []}
    axes = []
    for k in range(rows * cols):
        r, c = divmod(k, cols)
        suffix = "" if k == 0 else str(k + 1)
        x0, width = float(starts[c]), float(widths[c])
        y1 = 1.0 - r * (height + vertical_spacing)
        layout[f"xaxis{suffix}"] = {"domain": [max(0.0, x0), min(1.0, x0 + width)], "anchor": f"y{suffix}"}
        layout[f"yaxis{suffix}"] = {"domain": [max(0.0, y1 - height), min(1.0, y1)], "anchor": f"x{suffix}"}
        if k < len(titles):
            layout["annotations"].append(
                {"text": titles[k], "name": f"panel_title_{k}",  # a live slider retitles it by name
                 "x": x0 + width / 2, "y": y1, "xref": "paper", "yref": "paper",
                 "xanchor": "center", "yanchor": "bottom", "showarrow": False, "font": {"size": title_size}}
            )  # fmt: skip
        axes.append(suffix)
    return layout, axes


def base_layout(fig: go.Figure, *, title: str | None = None, height: int = 420) -> go.Figure:
    """Apply the per-figure part of the house layout (title, height, margins) and return ``fig``.

    Font size, colours and the legend come from the house template, the default of every figure.
    """
    fig.update_layout(
        title=title,
        height=height,
        margin={"l": MARGIN_LEFT, "r": 20, "t": 60 if title else 30, "b": MARGIN_BOTTOM},
    )
    return fig


def position_labels(values: Sequence[float], decimals: int = 2) -> list[str]:
    """Tick labels for the columns (or rows) of a weight matrix at sample positions: one distinct
    label per position, in order.

    A heatmap given these labels puts its cells on a category axis, one equal column per sample:
    the map reads like an attention map (keys in x order), and Plotly draws the matrix as one
    image scaled up (its fast path for evenly spaced cells: ~0.1 s less per redraw of a 60 x 200
    map in Chromium) instead of one rectangle per cell at uneven numeric positions. Labels get
    more decimals until they differ (``-1.23`` and ``-1.2345`` rather than merging two samples
    into one column, as equal labels would); samples at the very same position are numbered
    (``0.5``, ``0.5 (2)``).

    Args:
        values: (N,) positions, e.g. the samples' x sorted.
        decimals: the fewest decimals shown.
    """
    xs = [float(v) for v in values]
    for d in range(decimals, 7):
        labels = [f"{v:.{d}f}" for v in xs]
        if len(set(labels)) == len(labels):
            return labels
    seen: dict[str, int] = {}
    unique = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        unique.append(label if seen[label] == 1 else f"{label} ({seen[label]})")
    return unique


def position_ticks(values: Sequence[float], labels: Sequence[str], count: int = 10) -> dict[str, Any]:
    """Axis properties for a category axis of :func:`position_labels`: ``count`` evenly spread
    ticks, written with two decimals (the hover keeps the full label).

    Args:
        values: (N,) the positions; labels: their ``position_labels``.
    """
    n = len(labels)
    idx = sorted({round(i * (n - 1) / max(count - 1, 1)) for i in range(count)}) if n else []
    return {
        "tickmode": "array",
        "tickvals": [labels[i] for i in idx],
        "ticktext": [f"{values[i]:.2f}" for i in idx],
    }


def heatmap(
    z: np.ndarray,
    *,
    x: Sequence | None = None,
    y: Sequence | None = None,
    title: str | None = None,
    x_title: str = "",
    y_title: str = "",
    colorscale: str = WEIGHT_COLORSCALE,
    zmin: float | None = None,
    zmax: float | None = None,
    zmid: float | None = None,
    height: int = 420,
    hover_template: str | None = None,
    x_axis: Mapping[str, Any] | None = None,
    y_axis: Mapping[str, Any] | None = None,
) -> go.Figure:
    """A heatmap with rows = queries on y (top row first), columns = keys on x.

    Args:
        z: (L, S) values; NaN cells are drawn blank (undefined, e.g. fully masked rows).
        x, y: optional tick labels for the S columns and L rows.
        x_title, y_title: axis titles (already translated); the hover text reuses them.
        x_axis, y_axis: more properties of each axis (e.g. :func:`position_ticks`).
    """
    z = np.asarray(z, dtype=float)
    hover = f"{y_title} %{{y}} → {x_title} %{{x}}<br>%{{z:.4g}}<extra></extra>"
    trace = {"type": "heatmap", "z": z, "colorscale": colorscale, "hovertemplate": hover_template or hover}
    for name, value in (("x", x), ("y", y)):
        if value is not None:
            trace[name] = list(value)
    for name, value in (("zmin", zmin), ("zmax", zmax), ("zmid", zmid)):
        if value is not None:
            trace[name] = value
    # One pass from plain dicts: a figure validated once (update_* calls validate it again each).
    layout = {
        "yaxis": {"autorange": "reversed", "title": {"text": y_title}, **(y_axis or {})},
        "xaxis": {"title": {"text": x_title}, **(x_axis or {})},
        "title": {"text": title},
        "height": height,
        "margin": {"l": MARGIN_LEFT, "r": COLORBAR_MARGIN, "t": 60 if title else 30, "b": MARGIN_BOTTOM},
    }
    return go.Figure({"data": [trace], "layout": layout})
