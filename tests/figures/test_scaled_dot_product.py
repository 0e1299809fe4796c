"""figures.scaled_dot_product's multi-panel figures: the pipeline heatmaps and the d_k line panels."""

from __future__ import annotations

import math
import unicodedata

import numpy as np
import plotly.graph_objects as go
import pytest

from figures.attention_shared import signed_heatmap, vline_marks
from figures.common import Labels
from figures.scaled_dot_product import LinePanel, line_panels, panel_axes, pipeline_heatmaps, weights_heatmap
from ui.i18n import load_catalogue


def _domain(fig: go.Figure, axis: str) -> tuple[float, float]:
    return tuple(fig.layout[axis].domain)


def test_pipeline_panels_keep_their_own_scales_and_colour_bars():
    raw = np.array([[3.0, -1.0], [0.5, 2.0]])
    masked = np.array([[0.3, -math.inf], [0.05, 0.2]])
    weights = np.array([[1.0, 0.0], [0.4, 0.6]])
    fig = pipeline_heatmaps(
        [
            ("raw", raw, "scores"),
            ("scaled", raw / 10, "scores"),
            ("masked", masked, "scores"),
            ("w", weights, "weights"),
        ],
        x_labels=["a", "b"],
        y_labels=["a", "b"],
        labels=Labels.of(x="key", y="query"),
    )
    assert [tr.xaxis for tr in fig.data] == ["x", "x2", "x3", "x4"]
    assert [a.text for a in fig.layout.annotations] == ["raw", "scaled", "masked", "w"]
    assert (fig.data[0].zmin, fig.data[0].zmax) == (-3.0, 3.0)  # each scores panel its own range
    assert (fig.data[1].zmin, fig.data[1].zmax) == (-0.3, 0.3)
    assert (fig.data[3].zmin, fig.data[3].zmax) == (0.0, 1.0)
    assert math.isnan(fig.data[2].z[0][1])  # a masked cell is blank ...
    assert fig.data[2].text[0][1] == "−∞"  # ... and says why
    for k, (trace, suffix) in enumerate(zip(fig.data, panel_axes(4), strict=True)):
        x0, x1 = _domain(fig, f"xaxis{suffix}")
        y0, y1 = _domain(fig, f"yaxis{suffix}")
        assert x1 < trace.colorbar.x < x1 + 0.05  # beside its own panel
        assert y0 < trace.colorbar.y < y1
        assert fig.layout[f"yaxis{suffix}"].autorange == "reversed"  # first query on top
        if k % 2 == 1:  # the right column starts after the left column's colour bar
            assert x0 > fig.data[k - 1].colorbar.x + 0.03
    top, bottom = _domain(fig, "yaxis"), _domain(fig, "yaxis3")
    assert bottom[1] < top[0]


def test_line_panels_have_one_legend_each_under_their_panel_and_a_marker_on_every_panel():
    d_k = np.array([1.0, 4.0, 16.0, 64.0])
    panels = [
        LinePanel("var", {"measured": d_k * 1.1, "theory": d_k}, "variance", log_y=True, dashed=("theory",)),
        LinePanel("entropy", {"scaled": np.full(4, 2.0)}, "nats", hlines={"uniform": 2.77}),
        LinePanel("max", {"unscaled": np.linspace(0.2, 0.9, 4)}, "weight"),
    ]
    fig = line_panels(d_k, panels, labels=Labels.of(x="d_k"), log_x=True)
    assert [tr.legend for tr in fig.data] == ["legend", "legend", "legend2", "legend3"]
    assert [tr.yaxis for tr in fig.data] == ["y", "y", "y2", "y3"]
    assert fig.data[1].line.dash == "dash"
    assert fig.layout.yaxis.type == "log"
    assert fig.layout.yaxis2.type != "log"
    for legend, suffix in zip(("legend", "legend2", "legend3"), panel_axes(3), strict=True):
        y0, _ = _domain(fig, f"yaxis{suffix}")
        assert fig.layout[legend].y < y0  # under its own panel
        assert fig.layout[legend].x == _domain(fig, f"xaxis{suffix}")[0]
    (hline,) = fig.layout.shapes
    assert (hline.yref, hline.y0, hline.xref) == ("y2", 2.77, "x2 domain")
    shapes, notes = vline_marks(16, "now", log_x=True, axes=panel_axes(3))
    assert [(s["xref"], s["x0"], s["yref"]) for s in shapes] == [
        ("x", 16, "y domain"),
        ("x2", 16, "y2 domain"),
        ("x3", 16, "y3 domain"),
    ]
    assert [n["x"] for n in notes] == [math.log10(16)] * 3  # a log axis takes an annotation in log10
    go.Figure(fig).update_layout(shapes=shapes, annotations=notes)  # valid Plotly layout


def _columns(line: str) -> int:
    """Display columns of a line: two for a wide (CJK) character."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_long_heatmap_title_wraps_to_a_half_width_chart(lang):
    """The safe masking's title (the scaled dot-product page, in one of two columns: ~445 px at
    1400 px beside the sidebar) was cut at the chart's right edge. Each line now holds at most ~44
    columns of 17 px type, and the top margin grows a line for each line added."""
    title = load_catalogue(lang)["sdp.fig_safe"]
    assert _columns(title) > 50  # too long for one line of a half-width chart
    w = np.full((3, 3), 1 / 3)
    fig = weights_heatmap(w, x_labels=None, y_labels=None, labels=Labels.of(title=title, x="k", y="q"))
    lines = fig.layout.title.text.split("<br>")
    assert len(lines) >= 2
    assert "".join(lines).replace(" ", "") == title.replace(" ", "")
    assert max(_columns(line) for line in lines) <= 44
    short = weights_heatmap(w, x_labels=None, y_labels=None, labels=Labels.of(title="Weights", x="k", y="q"))
    assert short.layout.title.text == "Weights"
    assert fig.layout.margin.t >= short.layout.margin.t + 20 * (len(lines) - 1)


def test_signed_heatmap_is_centred_at_zero_on_the_finite_cells_and_blanks_the_rest():
    """The shared signed map (scores, output, multi-head's concatenation): range ± the largest
    finite |z|; -inf / NaN cells blank; an all-zero or all-masked matrix still gets a range."""
    z = np.array([[1.5, -math.inf], [-4.0, math.nan]])
    fig = signed_heatmap(z, labels=Labels.of(title="T", x="key", y="query"), x=["a", "b"], y=["c", "d"])
    (trace,) = fig.data
    assert (trace.zmin, trace.zmax) == (-4.0, 4.0)
    assert trace.z[0][0] == 1.5
    assert math.isnan(trace.z[0][1])
    assert math.isnan(trace.z[1][1])
    assert (fig.layout.title.text, fig.layout.xaxis.title.text, fig.layout.yaxis.title.text) == (
        "T",
        "key",
        "query",
    )
    assert list(trace.x) == ["a", "b"]
    assert list(trace.y) == ["c", "d"]
    for flat in (np.zeros((2, 2)), np.full((2, 2), -math.inf)):
        trace = signed_heatmap(flat, labels=Labels()).data[0]
        assert (trace.zmin, trace.zmax) == (-1.0, 1.0)
