"""Shared look of every figure: large fonts for projectors, one colour scale for weights."""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio


@dataclass(frozen=True)
class Labels:
    """The words on one figure, already translated: a figure builder never translates.

    The house's one label convention: every builder takes its words as one ``labels: Labels``
    argument, next to its data, instead of one keyword argument per title and legend entry. Build
    it in the ``ui`` layer with :meth:`of`; the builder reads :attr:`title`, :attr:`x`, :attr:`y`,
    :attr:`z` and each legend / trace name by its role with :meth:`name`. Frozen and made of
    strings, so a cached builder keys on it like on its data.

    Attributes:
        title: the figure's title ("" for none).
        x, y: the axis titles.
        z: the colour bar's title (heatmaps).
        names: ``(role, name)`` pairs: the legend / trace / annotation names, e.g.
            ``(("data", "Data"), ("fit", "NW fit"))``.
    """

    title: str = ""
    x: str = ""
    y: str = ""
    z: str = ""
    names: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, title: str = "", x: str = "", y: str = "", z: str = "", **names: str) -> Labels:
        """``Labels.of(title=..., x=..., y=..., data="Data", fit="NW fit")``: roles as keywords."""
        return cls(title, x, y, z, tuple(names.items()))

    def name(self, role: str) -> str:
        """The name given for ``role``; a role the caller did not give is a bug (``KeyError``)."""
        for given, name in self.names:
            if given == role:
                return name
        roles = ", ".join(given for given, _ in self.names) or "none"
        raise KeyError(f"this figure's labels have no name for {role!r} (they name: {roles})")

    def has(self, role: str) -> bool:
        """Whether a name was given for ``role`` (an optional legend entry)."""
        return any(given == role for given, _ in self.names)


#: Sequential scale for attention / kernel weights (0 = white, 1 = dark), as in the post's YlOrRd.
WEIGHT_COLORSCALE = "YlOrRd"
#: Diverging scale for signed quantities (scores, differences, encodings).
SIGNED_COLORSCALE = "RdBu_r"
#: Categorical colours, colour-blind safe (Okabe-Ito).
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"]
#: Neutral colours: with PALETTE, the two scales above and LEVEL_COLORS, the only colours the app
#: draws with. A figure (or the handout's style sheet) names one of these; ``tests/test_layers.py``
#: refuses a colour written anywhere else. A new colour is added here, with what it is for.
BLACK = PALETTE[7]  # reference curves: the truth, the best possible, the last-value baseline
DARK_GREY = "#333333"  # text on white, the query's marker line
MID_GREY = "#555555"  # annotations and dotted guides
GREY = "#7F7F7F"  # raw data points, the mean baseline, the true function
LIGHT_GREY = "#DDDDDD"  # shaded bands and rules
PANEL = "#F2F2F2"  # table headers, code blocks
WHITE = "#FFFFFF"
GRID = "#EBF0F8"  # plotly_white's grid, for a figure that draws its own axes
#: Fills of the diagnostics table's levels: light tints of green, amber and red.
LEVEL_COLORS = {"green": "#D8F0DF", "amber": "#FCEBC8", "red": "#F8D3D0"}


def with_alpha(color: str, alpha: float) -> str:
    """A ``#rrggbb`` colour of the palette made see-through: ``rgba(r,g,b,alpha)``, alpha in [0, 1].

    Raises:
        ValueError: if ``color`` is not ``#rrggbb`` or alpha is outside [0, 1].
    """
    if len(color) != 7 or color[0] != "#" or not 0.0 <= alpha <= 1.0:
        raise ValueError(f"expected #rrggbb and an alpha in [0, 1], got {color!r}, {alpha!r}")
    r, g, b = (int(color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha:.3g})"


#: Plotly config for every chart, on the page and in the handout: no logo, and the download button
#: saves a big PNG for slides.
FIGURE_CONFIG: dict[str, Any] = {
    "displaylogo": False,
    "toImageButtonOptions": {"format": "png", "scale": 2},
    # The toolbar keeps the buttons that matter (download PNG, reset axes; Streamlit adds full
    # screen): each button is a Tab stop, and eight per chart buried a page's controls (issue 24).
    # Dragging still zooms (Plotly's default drag mode); a double click resets.
    "modeBarButtonsToRemove": [
        "zoom2d",
        "pan2d",
        "select2d",
        "lasso2d",
        "zoomIn2d",
        "zoomOut2d",
        "autoScale2d",
    ],
}

BASE_FONT_SIZE = 15
#: House margins (px) roomy enough for the tick labels and axis titles at the house font size, and
#: for a colour bar on the right. Plotly grows a margin that is too small for what is drawn in it
#: and then draws the whole figure a second time (``margin.autoexpand``): twice the browser's work
#: on every redraw. These are the sizes it grew the app's figures to (measured in Chromium), so it
#: seldom has to (``tests/e2e/test_margins.py``).
MARGIN_LEFT = 85
MARGIN_BOTTOM = 75
#: Right margin of a figure without a colour bar.
MARGIN_RIGHT = 20
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


# --- Text measured in columns: a Latin character is one, a CJK character two ------------------

#: Chinese punctuation that must not start a line (it stays with the character before it).
_NO_LINE_START = set("，。、；：！？）》」』”’%")
#: The advance of one column in em, erring wide (the app's Source Sans averages ~0.5 em).
COLUMN_EM = 0.55
#: A line of text is this many times its font size tall.
LINE_HEIGHT = 1.3


def text_columns(text: str) -> int:
    """Columns ``text`` takes: 2 for a wide (CJK) character, 1 for any other."""
    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text)


def _tokens(paragraph: str) -> list[str]:
    """Unbreakable pieces: a run of Latin letters/digits/symbols ("0.21", "h=0.3"), one CJK
    character (with any closing punctuation after it), or a space."""
    tokens: list[str] = []
    for ch in paragraph:
        wide = text_columns(ch) == 2
        if ch == " ":
            tokens.append(" ")
        elif ch in _NO_LINE_START and tokens and tokens[-1] != " ":
            tokens[-1] += ch
        elif wide or not tokens or tokens[-1] == " " or text_columns(tokens[-1][-1]) == 2:
            tokens.append(ch)
        else:
            tokens[-1] += ch
    return tokens


def wrap_lines(text: str, width: int) -> list[str]:
    """Break ``text`` into lines of at most ``width`` columns (CJK characters count double).

    Plotly breaks text only at ``<br>`` (kept as line breaks). Lines break at spaces and between
    Chinese characters, never inside a number or a word ("0.21" stays whole), and never before
    closing punctuation; only a single word longer than a line is cut.
    """
    lines: list[str] = []
    for paragraph in text.split("<br>"):
        line = ""
        for token in _tokens(paragraph):
            if text_columns(line + token) <= width:
                line += token if (line or token != " ") else ""
                continue
            if token == " ":
                continue  # the break itself
            if line.strip():
                lines.append(line.rstrip())
            line = ""
            while text_columns(token) > width:  # a word longer than a line: cut it
                cut = next(i for i in range(len(token), 0, -1) if text_columns(token[:i]) <= width)
                lines.append(token[:cut])
                token = token[cut:]
            line = token
        lines.append(line.rstrip())
    return lines


def text_px(text: str, font_px: float) -> float:
    """An upper estimate of the width (px) of one line of ``text`` at ``font_px``."""
    return text_columns(text) * COLUMN_EM * font_px


def wrap_px(text: str, width_px: float, font_px: float) -> str:
    """``text`` with ``<br>`` between lines that fit ``width_px`` at ``font_px`` (:func:`wrap_lines`)."""
    return "<br>".join(wrap_lines(text, max(4, int(width_px / (COLUMN_EM * font_px)))))


def block_px(text: str, font_px: float) -> float:
    """The height (px) of ``text`` drawn at ``font_px``, one line per ``<br>``."""
    return (text.count("<br>") + 1) * LINE_HEIGHT * font_px


# --- Phones: figures laid out for a narrow viewport (``narrow=True``) ---------------------------

#: Below this viewport width (px) the app lays its figures out for a phone (``ui.viewport``);
#: Streamlit stacks ``st.columns`` below the same width.
NARROW_MAX_WIDTH = 640
#: The chart width (px) a narrow figure is laid out for: on a 390 px phone a chart is 358 px wide,
#: 324 px in a folded section (on a 360 px phone: 328 px, 294 px in a fold).
NARROW_WIDTH = 320
#: Type of a narrow figure: the house's 15 px is sized for the back row of a classroom.
NARROW_FONT_SIZE = 12
NARROW_TITLE_SIZE = 16
NARROW_PANEL_TITLE_SIZE = 13
#: Numbers written in heatmap cells on a phone.
NARROW_CELL_FONT_SIZE = 10
#: Narrow margins (px): numeric tick labels and an axis title on the left; token labels; a colour
#: bar with its tick labels and title on the right; x tick labels and title under a plot.
NARROW_MARGIN_LEFT = 76
NARROW_TOKEN_MARGIN = 108
NARROW_MARGIN_RIGHT = 14
NARROW_COLORBAR_MARGIN = 78
NARROW_X_AXIS = 68
#: Height (px) of one row of a legend at :data:`NARROW_FONT_SIZE`.
NARROW_LEGEND_ROW = 21


def stacked_layout(
    count: int,
    *,
    titles: Sequence[str] = (),
    panel_height: int,
    below: int,
    margin_left: int,
    title_size: int = NARROW_PANEL_TITLE_SIZE,
) -> tuple[dict, list[str], int, int]:
    """``count`` panels one per row, for a narrow figure: the phone's version of :func:`grid_layout`.

    Each panel is ``panel_height`` px tall with ``below`` px under it (its x tick labels and title,
    a legend of its own); its title, wrapped to the chart's width, sits above it at the chart's left
    edge (as the figure's title does) with room of its own, so no text of one panel reaches another.

    Returns:
        (layout, axes, area, top): ``layout`` and ``axes`` as :func:`grid_layout`'s (panel k's axes
        have the same suffix in both), ``area`` the height (px) of the plot area to give the figure
        (``height = top + area + bottom margin``), ``top`` the top margin its first title needs.
    """
    wrapped = [wrap_px(t, NARROW_WIDTH - 16, title_size) for t in titles]
    lift = 6  # a title clear of its panel's top tick label, which reaches half a line above the panel
    title_px = [int(block_px(t, title_size)) + lift + 4 if t else 0 for t in wrapped] + [0] * count
    area = count * panel_height + (count - 1) * below + sum(title_px[1:count])
    layout: dict = {"annotations": []}
    axes, cursor = [], 0
    for k in range(count):
        suffix = "" if k == 0 else str(k + 1)
        if k:
            cursor += below + title_px[k]
        y1 = 1.0 - cursor / area
        cursor += panel_height
        y0 = max(0.0, 1.0 - cursor / area)
        layout[f"xaxis{suffix}"] = {"domain": [0.0, 1.0], "anchor": f"y{suffix}"}
        layout[f"yaxis{suffix}"] = {"domain": [round(y0, 6), round(y1, 6)], "anchor": f"x{suffix}"}
        if k < len(wrapped) and wrapped[k]:
            layout["annotations"].append(
                {"text": wrapped[k], "x": 0, "y": y1, "xref": "paper", "yref": "paper", "xanchor": "left",
                 "xshift": 8 - margin_left, "yanchor": "bottom", "yshift": lift, "align": "left",
                 "showarrow": False, "font": {"size": title_size}}
            )  # fmt: skip
        axes.append(suffix)
    return layout, axes, area, title_px[0] + 4


def stacked_size(
    top: int,
    area: int,
    *,
    left: int = NARROW_MARGIN_LEFT,
    right: int = NARROW_MARGIN_RIGHT,
    bottom: int = NARROW_X_AXIS,
) -> dict[str, Any]:
    """``height`` and ``margin`` of a figure of :func:`stacked_layout` (its ``top`` and ``area``)."""
    return {"height": top + area + bottom, "margin": {"l": left, "r": right, "t": top, "b": bottom}}


def cells_hold(texts: Sequence[Sequence[str]], cell_px: float, font_px: int = NARROW_CELL_FONT_SIZE) -> bool:
    """Whether every cell text fits a cell ``cell_px`` wide (with a little room on each side)."""
    widest = max((text_px(t, font_px) for row in texts for t in row), default=0.0)
    return widest + 4 <= cell_px


def _legend_entries(fig: go.Figure) -> list[str]:
    """Names shown in the figure's main legend.

    Plotly shows a legend by default when two or more traces could be in it (a trace hidden from
    the legend by ``showlegend=False`` still counts; a heatmap does not), and lists the others.
    """
    names, candidates = [], 0
    for trace in fig.data:
        if trace.visible is False or getattr(trace, "legend", None) not in (None, "legend"):
            continue
        by_default = trace.type not in ("heatmap", "table")
        candidates += by_default or trace.showlegend is True
        if trace.name and (trace.showlegend is True or (trace.showlegend is None and by_default)):
            names.append(trace.name)
    shown = fig.layout.showlegend if fig.layout.showlegend is not None else candidates > 1
    return names if shown else []


def _legend_rows(names: Sequence[str], width: float, font_px: float) -> int:
    """Rows a horizontal legend of ``names`` takes in ``width`` px (symbol and gaps ~50 px each)."""
    rows, used = (1, 0.0) if names else (0, 0.0)
    for name in names:
        item = 50 + text_px(name, font_px)
        if used and used + item > width:
            rows, used = rows + 1, 0.0
        used += item
    return rows


def narrow_layout(fig: go.Figure) -> go.Figure:
    """Lay a figure out for a phone, in place, and return it: the one place every narrow figure
    gets its type size, wrapped title and legend.

    Builders with a ``narrow`` flag lay out their own panels (stacked, :func:`stacked_layout`) and
    cell text; this pass does what is the same for every figure: the type size, the title wrapped
    to :data:`NARROW_WIDTH` with the top margin sized for it and for whatever hangs above the plot
    (panel titles, labels), the main legend moved under the plot and its x axis (it never covers
    a title) with the bottom margin sized for its rows, desktop margins shrunk and colour bar
    bars thinner, their titles turned along them. The plot area keeps its height: the figure grows by what its
    margins grow.
    """
    lay = fig.layout
    height = lay.height or 450
    m = lay.margin
    t, b = (100 if m.t is None else m.t), (80 if m.b is None else m.b)
    left = {MARGIN_LEFT: NARROW_MARGIN_LEFT, TOKEN_MARGIN: NARROW_TOKEN_MARGIN}.get(m.l, m.l)
    right = {MARGIN_RIGHT: NARROW_MARGIN_RIGHT, COLORBAR_MARGIN: NARROW_COLORBAR_MARGIN}.get(m.r, m.r)
    update: dict[str, Any] = {"font": {"size": NARROW_FONT_SIZE}}
    title_px = 0.0
    if lay.title.text:
        text = wrap_px(lay.title.text, NARROW_WIDTH - 24, NARROW_TITLE_SIZE)
        # anchored as the house template anchors it (figures built on an inline template have its
        # look, not its title); a title of several lines reaches ~16 px above its pad: a wider pad
        update["title"] = {"text": text, "font": {"size": NARROW_TITLE_SIZE}, "x": 0, "xanchor": "left",
                           "xref": "container", "y": 1, "yanchor": "top", "yref": "container",
                           "pad": {"t": 22, "l": 12}}  # fmt: skip
        title_px = 22 + block_px(text, NARROW_TITLE_SIZE)
    notes, top_px = [], 0.0
    for note in lay.annotations:
        note = note.to_plotly_json()
        size = (note.get("font") or {}).get("size") or NARROW_FONT_SIZE
        if size > NARROW_PANEL_TITLE_SIZE:
            note["font"] = {**note["font"], "size": NARROW_PANEL_TITLE_SIZE}
            size = NARROW_PANEL_TITLE_SIZE
        if note.get("yref") == "paper" and note.get("y", 0) >= 0.999 and note.get("yanchor") == "bottom":
            above = block_px(str(note.get("text", "")), size) + max(0, note.get("yshift") or 0) + 2
            top_px = max(top_px, above)  # hangs above the plot
        notes.append(note)
    update["annotations"] = notes
    new_t = max(20, int(title_px + top_px + (8 if title_px or top_px else 0)))
    new_b = NARROW_X_AXIS if b == MARGIN_BOTTOM else b
    legend = lay.legend
    if legend.orientation != "v":
        # Plotly wraps a legend anchored at the plot's left edge at the plot's width (and margin)
        rows = _legend_rows(_legend_entries(fig), NARROW_WIDTH - left, NARROW_FONT_SIZE)
        if rows:
            axes = [ax for name, ax in lay.to_plotly_json().items() if name.startswith("yaxis")]
            bottom = min((ax.get("domain", [0.0])[0] for ax in axes), default=0.0)
            area = height - t - b
            below = bottom - NARROW_X_AXIS / area
            update["legend"] = {"orientation": "h", "x": 0, "xanchor": "left", "xref": "paper",
                                "y": below, "yanchor": "top", "yref": "paper"}  # fmt: skip
            new_b = max(new_b, NARROW_X_AXIS + rows * NARROW_LEGEND_ROW + 8)
    update["margin"] = {"t": new_t, "b": new_b, "l": left, "r": right}
    update["height"] = height + (new_t - t) + (new_b - b)
    fig.update_layout(update)
    _narrow_colorbars(fig)
    return fig


def _narrow_colorbars(fig: go.Figure) -> None:
    """Thin colour bars, titles along their bar (``side="right"``): above it a title meets the
    bar's top tick label."""
    bars = [fig.layout[name].colorbar for name in fig.layout.to_plotly_json() if name.startswith("coloraxis")]
    bars += [trace.colorbar for trace in fig.data if trace.type == "heatmap"]
    for bar in bars:
        bar.thickness, bar.xpad = 10, 2  # Plotly's 10 px pad on both sides grew the margin
        if bar.title.text:
            bar.title.side = "right"


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


def _round_step(span: float, count: int) -> float:
    """The smallest 1-2-5 step that cuts ``span`` into at most ``count - 1`` intervals."""
    raw = span / max(count - 1, 1)
    magnitude = 10.0 ** np.floor(np.log10(raw))
    return float(next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw * (1 - 1e-9)))


def position_ticks(values: Sequence[float], labels: Sequence[str], count: int = 10) -> dict[str, Any]:
    """Axis properties for a category axis of :func:`position_labels`: at most ``count`` ticks at
    round values (a 1-2-5 step: -3, -2, ..., 3), each on the column of the sample nearest to it
    (the hover keeps the sample's full label).

    A tick is left out where no sample lies within a quarter step of its value; when fewer than two
    remain (a very short range), ``count`` evenly spread samples are labelled with their values.

    Args:
        values: (N,) the positions; labels: their ``position_labels``.
    """
    xs = np.asarray(values, dtype=float)
    n = len(labels)
    idx: list[int] = []
    text: list[str] = []
    span = float(np.ptp(xs)) if n else 0.0
    if n and span > 0:
        step = _round_step(span, count)
        decimals = max(0, -int(np.floor(np.log10(step) + 1e-9)))
        for k in range(int(np.ceil(xs.min() / step - 1e-9)), int(np.floor(xs.max() / step + 1e-9)) + 1):
            value = k * step
            nearest = int(np.argmin(np.abs(xs - value)))
            if abs(xs[nearest] - value) <= step / 4 and nearest not in idx:
                idx.append(nearest)
                text.append(f"{value:.{decimals}f}")
    if len(idx) < 2:
        idx = sorted({round(i * (n - 1) / max(count - 1, 1)) for i in range(count)}) if n else []
        text = [f"{xs[i]:.2f}" for i in idx]
    return {"tickmode": "array", "tickvals": [labels[i] for i in idx], "ticktext": text}


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
    labels: Labels | None = None,
) -> go.Figure:
    """A heatmap with rows = queries on y (top row first), columns = keys on x.

    Args:
        z: (L, S) values; NaN cells are drawn blank (undefined, e.g. fully masked rows).
        x, y: optional tick labels for the S columns and L rows.
        x_title, y_title: axis titles (already translated); the hover text reuses them.
        x_axis, y_axis: more properties of each axis (e.g. :func:`position_ticks`).
        labels: a builder's words: its ``title``, ``x`` and ``y`` stand for ``title``, ``x_title``
            and ``y_title``.
    """
    if labels is not None:
        title, x_title, y_title = labels.title, labels.x, labels.y
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
