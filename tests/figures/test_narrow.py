"""Figures laid out for a phone (``narrow=True`` and ``figures.common.narrow_layout``).

On a phone every multi-panel figure stacks one panel per row (each with the whole width, none
overlapping another), writes numbers only in cells that hold them, wraps titles to the phone's
width and puts legends under the plot, where they cannot cover a title. The desktop variants of the
same builders are unchanged (their own tests, and ``tests/e2e/test_margins.py``).
"""

from __future__ import annotations

import itertools
import re
import unicodedata

import numpy as np
import plotly.graph_objects as go
import pytest

from figures import attention_shared as fshared
from figures import in_context as fic
from figures import kernel_approximation as fka
from figures import kernel_regression as fkr
from figures import kernels_to_attention as fk2a
from figures import multi_head as fmh
from figures import scaled_dot_product as fa
from figures import training as ftr
from figures.common import (
    COLUMN_EM,
    NARROW_PANEL_TITLE_SIZE,
    NARROW_TITLE_SIZE,
    NARROW_WIDTH,
    Labels,
    base_layout,
    narrow_layout,
    position_labels,
    position_ticks,
)

RNG = np.random.default_rng(0)
LONG = "The weights of every sample for the query x* = 0.5: one row of the attention map"
LONG_ZH = "每个样本对查询点 x* = 0.5 的权重：注意力图中的一行，与核回归的权重完全相同"


def _columns(line: str) -> int:
    """Columns of a line, counted independently of the code under test (CJK: 2)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def _panels(fig: go.Figure) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """(x domain, y domain) of every panel that holds a trace."""
    used = sorted({(tr.xaxis or "x", tr.yaxis or "y") for tr in fig.data}, key=lambda a: (len(a[0]), a[0]))
    out = []
    for x, y in used:
        xa, ya = fig.layout["xaxis" + x[1:]], fig.layout["yaxis" + y[1:]]
        out.append((tuple(xa.domain or (0, 1)), tuple(ya.domain or (0, 1))))
    return out


def assert_stacked(fig: go.Figure, count: int) -> None:
    """``count`` panels, one per row: each spans the whole width, their y domains do not meet."""
    panels = _panels(fig)
    assert len(panels) == count, panels
    for x, _ in panels:
        assert x == (0.0, 1.0)
    ys = sorted((y for _, y in panels), reverse=True)
    for upper, lower in itertools.pairwise(ys):
        assert lower[1] < upper[0], (upper, lower)  # a gap between two rows


def assert_side_by_side(fig: go.Figure) -> None:
    xs = {x for x, _ in _panels(fig)}
    assert len(xs) > 1


def assert_titles_fit(fig: go.Figure) -> None:
    """The title and every panel title: lines no wider than a phone's chart at their size."""
    texts = [(fig.layout.title.text or "", NARROW_TITLE_SIZE)]
    texts += [(a.text, a.font.size or NARROW_PANEL_TITLE_SIZE) for a in fig.layout.annotations if a.text]
    for text, size in texts:
        for line in text.split("<br>"):
            assert _columns(line) * COLUMN_EM * size <= NARROW_WIDTH, line


def assert_no_cell_text(fig: go.Figure) -> None:
    for trace in fig.data:
        if trace.type == "heatmap":
            assert trace.text is None
            assert trace.texttemplate is None


# ---- the shared pass ---------------------------------------------------------------------------


@pytest.mark.parametrize("title", [LONG, LONG_ZH])
def test_narrow_layout_wraps_the_title_and_moves_a_top_legend_under_the_plot(title):
    fig = go.Figure([go.Scatter(x=[0, 1], y=[0, 1], name=f"series {i}") for i in range(4)])
    base_layout(fig, title=title, height=400)  # the house legend: one row above the plot
    area = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    narrow_layout(fig)
    lines = fig.layout.title.text.split("<br>")
    assert len(lines) >= 3
    assert "".join(lines).replace(" ", "") == title.replace(" ", "")  # nothing lost
    assert_titles_fit(fig)
    # the top margin holds every line of the title; the plot area keeps its height
    assert fig.layout.margin.t >= len(lines) * NARROW_TITLE_SIZE * 1.2
    assert fig.layout.height - fig.layout.margin.t - fig.layout.margin.b == area
    # the legend hangs under the plot (and its x axis), in the bottom margin
    legend = fig.layout.legend
    assert legend.yanchor == "top"
    assert legend.y < 0
    assert -legend.y * area >= 40  # below the x tick labels and title
    assert fig.layout.margin.b >= -legend.y * area + 20  # room for at least one row


def test_narrow_layout_leaves_no_legend_where_plotly_shows_none():
    fig = go.Figure([go.Scatter(x=[0, 1], y=[0, 1], name="only")])
    base_layout(fig, title="t", height=300)
    b = fig.layout.margin.b
    narrow_layout(fig)
    assert fig.layout.margin.b <= b  # no room made for a legend that is not drawn


# ---- stacked panels ----------------------------------------------------------------------------


def _pipeline(narrow: bool, L: int = 8) -> go.Figure:
    z = RNG.normal(size=(L, L))
    w = np.exp(z) / np.exp(z).sum(-1, keepdims=True)
    labels = [str(i) for i in range(L)]
    return fa.pipeline_heatmaps(
        [("1. Raw scores QKᵀ", z, "scores"), ("2. Scaled scores QKᵀ ÷ τ (τ = 4, × 0.25)", z / 4, "scores"),
         ("3. Masked scores (none)", z / 4, "scores"), ("4. Weights = softmax over each row", w, "weights")],
        x_labels=labels, y_labels=labels, labels=Labels.of(x="key", y="query"), narrow=narrow,
    )  # fmt: skip


def test_pipeline_stacks_its_panels_and_drops_numbers_cells_cannot_hold():
    desktop, phone = _pipeline(False), _pipeline(True)
    assert_side_by_side(desktop)
    assert all(tr.text is not None for tr in desktop.data)  # 8 x 8: numbers on a desktop
    assert_stacked(phone, 4)
    assert_no_cell_text(phone)  # 8 columns of "-0.45" in a phone's width: colours only
    assert_titles_fit(narrow_layout(phone))
    for trace, suffix in zip(phone.data, fa.panel_axes(4), strict=True):  # each bar beside its panel
        y0, y1 = phone.layout[f"yaxis{suffix}"].domain
        assert y0 < trace.colorbar.y < y1


def test_a_small_matrix_keeps_its_numbers_on_a_phone():
    fig = _pipeline(True, L=3)
    assert all(tr.text is not None for tr in fig.data)
    w = np.full((3, 3), 1 / 3)
    assert (
        fa.weights_heatmap(w, x_labels=None, y_labels=None, labels=Labels(), narrow=True).data[0].text
        is not None
    )
    big = np.full((10, 10), 0.1)
    assert_no_cell_text(fa.weights_heatmap(big, x_labels=None, y_labels=None, labels=Labels(), narrow=True))


def test_line_panels_stack_with_a_legend_under_each_panel():
    d_k = np.array([1.0, 4.0, 16.0, 64.0])
    panels = [
        fa.LinePanel("Variance of the scores vs d_k", {"a": d_k, "b": d_k / 2}, "variance", log_y=True),
        fa.LinePanel("Softmax entropy vs d_k", {"c": d_k}, "nats", hlines={"uniform: log 16": 2.77}),
        fa.LinePanel("Largest weight vs d_k", {"d": d_k / 64, "e": d_k / 70, "f": d_k / 80}, "weight"),
    ]
    fig = fa.line_panels(d_k, panels, labels=Labels.of(x="d_k"), log_x=True, narrow=True)
    assert_stacked(fig, 3)
    area = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    for k, suffix in enumerate(fa.panel_axes(3)):
        legend = fig.layout["legend" if k == 0 else f"legend{k + 1}"]
        y0 = fig.layout[f"yaxis{suffix}"].domain[0]
        assert (y0 - legend.y) * area >= 40  # under its panel's x axis
        if k < 2:  # the next panel starts below this legend's rows
            rows = len(panels[k].series)
            next_top = fig.layout[f"yaxis{fa.panel_axes(3)[k + 1]}"].domain[1]
            assert (legend.y - next_top) * area >= rows * 18


def _heatmap_row(n: bool) -> go.Figure:
    panels = [("a", np.eye(3)), ("b", np.eye(3)), ("diff", np.eye(3) - 0.5)]
    return fshared.heatmap_row(
        panels, x_labels=None, y_labels=None, labels=Labels.of(x="k", y="q"), signed_last=True, narrow=n
    )


def _qkv(n: bool) -> go.Figure:
    titles = ("Queries Q (L × d_k)", "Keys K (S × d_k)", "Values V (S × d_v)")
    q, v = np.ones((4, 8)), np.ones((4, 2))
    return fa.qkv_heatmaps(
        q,
        q,
        v,
        tokens=list("abcd"),
        titles=titles,
        labels=Labels.of(x="dim", y="token", dv="value dim"),
        narrow=n,
    )


def _side_by_side(n: bool) -> go.Figure:
    from figures.common import Labels

    x = np.linspace(-3, 3, 20)
    titles = ("kernel regression", "softmax attention")
    return fk2a.side_by_side(np.eye(20), np.eye(20), x_query=x, x_train=x, titles=titles,
                             labels=Labels.of(x="key", y="query"), narrow=n)  # fmt: skip


def _kr_sweep(n: bool) -> go.Figure:
    x = np.arange(5.0)
    subtitles = [f"h = {h}: {k} turning points" for h, k in ((0.1, 10), (0.3, 5), (1, 3), (2, 1))]
    labels = Labels.of(title="Sweep", x="x", y="y", data="d", truth="t", fit="f")
    return fkr.sweep_figure(x, x, x, [x] * 4, subtitles=subtitles, truth=None, labels=labels, narrow=n)


def _ka_matrices(n: bool) -> go.Figure:
    panels = [
        ("exact softmax", np.eye(4)),
        ("random features (m = 64)", np.eye(4)),
        ("difference", np.zeros((4, 4))),
    ]
    return fka.matrices_row(panels, labels=Labels.of(x="k", y="q"), signed_last=True, narrow=n)


def _head_bars(n: bool) -> go.Figure:
    titles = ("Mean normalised entropy (1 = uniform)", "Mean effective number of keys (1 / Σw²)")
    return fmh.head_bars(np.array([0.5, 0.7]), np.array([2.0, 3.0]), head_labels=["h1", "h2"], max_support=4,
                         titles=titles, y_titles=("entropy", "keys"),
                         labels=Labels.of(x="head", uniform="uniform", all_keys="all"), narrow=n)  # fmt: skip


def _redundancy(n: bool) -> go.Figure:
    titles = ("Redundancy score (mean pairwise head similarity)", "Mean effective number of keys per head")
    series, support = [("random", [None, 0.5, 0.6])], [("random", [3, 3, 3])]
    return fmh.redundancy_curve(
        [1, 2, 4],
        series,
        support,
        titles=titles,
        y_titles=("score", "keys"),
        labels=Labels.of(x="H"),
        narrow=n,
    )


def _ic_sweep(n: bool) -> go.Figure:
    names = {
        "learned": "learned σ={noise}",
        "oracle": "oracle σ={noise}",
        "learned_n": "learned",
        "oracle_n": "oracle",
    }
    titles = ("Learned bandwidth against L", "Learned bandwidth against N")
    ones = np.ones((1, 2))
    lipschitz, noise, context = np.array([1.0, 2.0]), np.array([0.1]), np.array([8.0, 16.0])
    return fic.sweep_figure(
        lipschitz, noise, ones, ones, context, np.ones(2), np.ones(2),
        labels=Labels.of(y="h", **names), titles=titles, x_titles=("L", "N"), narrow=n,
    )  # fmt: skip


@pytest.mark.parametrize(
    "build", [_heatmap_row, _qkv, _side_by_side, _kr_sweep, _ka_matrices, _head_bars, _redundancy, _ic_sweep]
)
def test_every_row_of_panels_stacks_on_a_phone(build):
    desktop, phone = build(False), build(True)
    assert_side_by_side(desktop)
    count = len(_panels(desktop))
    assert_stacked(phone, count)
    assert_titles_fit(narrow_layout(phone))


def test_permutation_grid_puts_every_map_in_a_row_of_its_own():
    T = 5
    maps = [
        ("none", *(RNG.random((T, T)) for _ in range(3))),
        ("sinusoidal", *(RNG.random((T, T)) for _ in range(3))),
    ]
    fig = fmh.permutation_grid(
        maps, tokens=[f"{i} w" for i in range(T)], column_titles=("A(Px)", "P A(x) Pᵀ", "|difference|"),
        labels=Labels.of(title="Shuffling the tokens", x="key", y="query", z="weight", diff="|diff|"),
        narrow=True,
    )  # fmt: skip
    assert_stacked(fig, 6)
    assert_titles_fit(narrow_layout(fig))


def test_head_grid_on_a_phone_one_head_per_row_with_vertical_key_labels():
    H, T = 4, 6
    labels = [f"{i} word" for i in range(T)]
    kwargs = dict(tokens=labels, head_titles=[f"head {h + 1}" for h in range(H)],
                  labels=Labels.of(title="T", x="key", y="query", z="weight"))  # fmt: skip
    fig = fmh.head_grid(RNG.random((H, T, T)), narrow=True, **kwargs)
    assert_stacked(fig, H)
    desktop = fmh.head_grid(RNG.random((H, T, T)), **kwargs)
    assert_side_by_side(desktop)
    # vertical key labels: a label turned -45° reached under the next head's map and met its labels
    shown = [fig.layout[f"xaxis{s}"] for s in ("", "2")] + [desktop.layout["xaxis"]]
    assert all(axis.tickangle == -90 for axis in shown)
    longest = max(len(label) for label in labels)
    assert desktop.layout.margin.b >= longest * 0.55 * 15 + 30  # the bottom margin holds them


# ---- labels that must not touch ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "H", "raised", "drawn"),
    [("h", 8, False, True), ("head ", 4, True, True), ("h", 32, False, False)],
)
def test_concat_head_labels_take_turns_in_height_or_give_way(label, H, raised, drawn):
    titles = [f"{label}{h + 1}" for h in range(H)]
    concat = RNG.normal(size=(6, 4 * H))
    fig = fmh.concat_heatmap(concat, n_heads=H, tokens=list("abcdef"), head_titles=titles,
                             labels=Labels.of(title="t", x="dim", y="query"), narrow=True)  # fmt: skip
    notes = list(fig.layout.annotations)
    assert bool(notes) == drawn
    if notes:
        shifts = [a.yshift or 0 for a in notes]
        assert (max(shifts) > 0) == raised
        if raised:  # neighbours alternate: no two neighbours on one line
            assert all((a > 0) != (b > 0) for a, b in itertools.pairwise(shifts))


def test_training_maps_leave_room_between_heads_for_their_key_labels():
    w = RNG.random((4, 32, 32))
    labels = Labels.of(title="t", x="k", y="q", z="w")
    fig = ftr.attention_heads(
        w, head_titles=[f"head {h}" for h in range(4)], labels=labels, cols=2, row_height=210
    )
    gap = fig.layout.xaxis2.domain[0] - fig.layout.xaxis.domain[1]
    plot_px = 560 - 85 - 120  # the chart beside the loss curves on a 1280 px screen: ~560 px
    half_label = 0.55 * 12 / 2  # "30" ends half a label right of its tick, "0" starts half one left
    assert gap * plot_px >= 2 * 2 * half_label + 8  # at least 8 px between "30" and "0"


def test_weight_matrix_ticks_sit_at_round_values_on_the_sample_nearest_them():
    x = np.sort(np.random.default_rng(1).uniform(-3, 3, 200))
    labels = position_labels(x)
    for count in (10, 7, 5):
        ticks = position_ticks(x, labels, count)
        values = [float(text) for text in ticks["ticktext"]]
        assert 3 <= len(values) <= count
        step = values[1] - values[0]
        assert step in (0.5, 1.0, 2.0)
        for value, label in zip(values, ticks["tickvals"], strict=True):
            assert abs(value / step - round(value / step)) < 1e-9  # a multiple of the step
            sample = x[labels.index(label)]
            assert abs(sample - value) <= step / 4  # drawn on a column at (nearly) that value
        assert all(re.fullmatch(r"-?\d+(\.\d)?", text) for text in ticks["ticktext"])  # no 2.29, 1.68
    fig = fkr.weight_matrix_figure(np.eye(200), x, x, labels=Labels.of(title="t", x="x_i", y="x"))
    assert "-2.29" not in fig.layout.xaxis.ticktext


def test_diagnostics_table_wraps_to_a_phone():
    rows = [{"level": "red", "status": "problem", "symptom": "loss oscillates between epochs",
             "measure": "oscillation index 0.21 (amber at 0.15, red at 0.30)",
             "remedy": "lower the learning rate or add warm-up; clip the gradients"}]  # fmt: skip
    headers = {"status": "Status", "symptom": "Symptom", "measure": "Measured", "remedy": "What to try"}
    fig = ftr.diagnostics_table(rows, headers=headers, narrow=True)
    cells = fig.data[0].cells
    widths = np.asarray(fig.data[0].columnwidth, dtype=float)
    for column, share in zip(cells.values, widths / widths.sum(), strict=True):
        for line in column[0].split("<br>"):
            assert _columns(line) * COLUMN_EM * cells.font.size <= share * (NARROW_WIDTH - 20) + 1, line
