"""figures.kernel_approximation: the builders draw what they are given, on the axes they promise."""

from __future__ import annotations

import numpy as np

from figures import kernel_approximation as figs
from figures.common import Labels


def test_rff_fit_figure_draws_data_exact_and_approximate_fit_with_a_pinned_range():
    x = np.linspace(-3, 3, 20)
    y = np.sin(x)
    xq = np.linspace(-3, 3, 50)
    wild = np.where(xq > 2, 1e6, np.sin(xq))  # a denominator near zero shoots off
    fig = figs.rff_fit_figure(
        x, y, xq, np.sin(xq), wild, labels=Labels.of(title="T", x="x", y="y", data="d", exact="e", approx="a")
    )
    assert [tr.name for tr in fig.data] == ["d", "e", "a"]
    assert fig.data[2].line.dash == "dash"
    lo, hi = fig.layout.yaxis.range
    assert lo < y.min()
    assert hi > y.max()
    assert hi < 10


def test_loglog_figure_drops_points_a_log_axis_cannot_show_and_marks_m():
    m = np.array([1.0, 2.0, 4.0, 8.0])
    fig = figs.loglog_figure(
        m,
        {"err": np.array([1.0, np.nan, 0.0, 0.3]), "ref": 1 / np.sqrt(m)},
        labels=Labels.of(title="T", x="m", y="e", marker="now"),
        dashed=("ref",),
        marker_x=4.0,
    )
    assert list(fig.data[0].x) == [1.0, 8.0]
    assert fig.data[1].line.dash == "dash"
    assert fig.data[0].line.dash is None
    assert fig.layout.xaxis.type == "log"
    assert fig.layout.yaxis.type == "log"
    assert fig.layout.shapes[0].x0 == 4.0
    assert fig.layout.annotations[0].text == "now"


def test_share_figure_is_in_percent():
    fig = figs.share_figure(
        np.array([2.0, 4.0]), {"s": np.array([0.5, 0.25])}, labels=Labels.of(title="T", x="m", y="%")
    )
    assert list(fig.data[0].y) == [50.0, 25.0]


def test_matrices_row_shares_one_scale_and_gives_the_difference_its_own():
    a = np.full((3, 3), 0.2)
    b = np.full((3, 3), 0.3)
    fig = figs.matrices_row(
        (("A", a), ("B", b), ("diff", b - a)), labels=Labels.of(x="k", y="q"), signed_last=True
    )
    assert [tr.zmax for tr in fig.data[:2]] == [0.3, 0.3]
    assert fig.data[0].zmin == 0.0
    assert fig.data[0].colorscale != fig.data[2].colorscale
    assert fig.data[2].zmin == -fig.data[2].zmax
    assert abs(fig.data[2].zmax - 0.1) < 1e-12
    assert [x.text for x in fig.layout.annotations] == ["A", "B", "diff"]
    signed = figs.matrices_row((("A", -a), ("B", b)), labels=Labels.of(x="k", y="q"), signed=True)
    assert signed.data[0].zmin == -0.3
    assert signed.data[1].zmax == 0.3


def test_cost_figure_one_curve_per_method_and_one_mark_per_crossover():
    L = np.array([256.0, 512.0, 1024.0])
    fig = figs.cost_figure(
        {"exact": L, "favor": L[:2]},
        {"exact": L**2, "favor": 300 * L[:2]},
        labels=Labels.of(title="T", x="L", y="ms"),
        crossovers={"favor wins": 300.0},
    )
    assert [tr.name for tr in fig.data] == ["exact", "favor"]
    assert len(fig.data[1].x) == 2
    assert fig.layout.shapes[0].x0 == 300.0
    assert fig.layout.annotations[0].text == "favor wins"
    assert fig.layout.xaxis.type == "log"


def test_share_figure_legend_hangs_from_the_bottom_edge_clear_of_the_x_axis_title():
    """Three long series names wrap to three legend rows in a half-width chart: anchored to the
    figure's bottom edge (not at a fixed fraction under the plot, where it reached into the x
    axis's title), the rows (~22 px each) leave the tick labels and the title (~60 px) their room."""
    names = ("trigonometric: negative", "trigonometric: near zero or negative", "positive: near zero")
    m = np.array([2.0, 8.0, 32.0, 128.0])
    fig = figs.share_figure(m, {n: np.zeros(4) for n in names}, labels=Labels.of(title="T", x="m", y="share"))
    legend = fig.layout.legend
    assert (legend.yref, legend.yanchor, legend.y) == ("container", "bottom", 0)
    assert fig.layout.margin.b - 3 * 22 >= 60


def test_matrices_row_labels_rows_once_so_the_shared_colour_bar_meets_no_tick_label():
    """The shared colour bar stands in the gap before the difference panel: that panel's own row
    labels stood in the same gap ('-0.5' over '10'). Rows are labelled by the first panel only."""
    z = np.random.default_rng(0).random((16, 16))
    fig = figs.matrices_row(
        (("a", z), ("b", z), ("d", z - z.T)), labels=Labels.of(x="k", y="q"), signed_last=True
    )
    shown = [fig.layout[f"yaxis{s}"].showticklabels for s in ("", "2", "3")]
    assert shown == [True, False, False]
    bars = [tr.colorbar.x for tr in fig.data if tr.showscale]
    gap = (fig.layout.xaxis2.domain[1], fig.layout.xaxis3.domain[0])
    assert gap[0] < min(bars) < gap[1]  # the shared bar is in the gap, where no labels are now
