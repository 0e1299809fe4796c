"""figures.multi_head: the builders draw what they are given (one trace per head, marks where asked)."""

from __future__ import annotations

import numpy as np

from figures import multi_head as figs
from figures.common import Labels


def _maps(H: int, T: int) -> np.ndarray:
    w = np.random.default_rng(0).random((H, T, T))
    return w / w.sum(-1, keepdims=True)


def test_head_grid_one_heatmap_per_head_on_one_scale():
    for H in (1, 3, 8, 32):
        fig = figs.head_grid(
            _maps(H, 5),
            tokens=[f"{i}:w" for i in range(5)],
            head_titles=[f"head {h}" for h in range(H)],
            labels=Labels.of(title="T", x="key", y="query", z="weight"),
        )
        assert [tr.type for tr in fig.data] == ["heatmap"] * H
        assert {tr.coloraxis for tr in fig.data} == {"coloraxis"}
        assert (fig.layout.coloraxis.cmin, fig.layout.coloraxis.cmax) == (0.0, 1.0)
        assert [a.text for a in fig.layout.annotations][:H] == [f"head {h}" for h in range(H)]


def test_similarity_marks_each_pair_twice_and_concat_separates_heads():
    sim = np.eye(4)
    fig = figs.similarity_matrix(
        sim,
        head_labels=["h1", "h2", "h3", "h4"],
        pairs=[(0, 2, 0.95)],
        labels=Labels.of(title="S", x="head", y="head", z="s", pair="pair"),
    )
    marks = fig.data[-1]
    assert sorted(zip(marks.x, marks.y, strict=True)) == [("h1", "h3"), ("h3", "h1")]
    concat = figs.concat_heatmap(
        np.ones((5, 12)),
        n_heads=4,
        tokens=list("abcde"),
        head_titles=["h1", "h2", "h3", "h4"],
        labels=Labels.of(title="C", x="col", y="q"),
    )
    assert [s.x0 for s in concat.layout.shapes] == [2.5, 5.5, 8.5]


def test_redundancy_curve_leaves_a_gap_for_one_head_and_permutation_grid_has_three_columns():
    fig = figs.redundancy_curve(
        [1, 2, 4],
        [("init", [None, 0.9, 0.8])],
        [("init", [8.0, 7.0, 6.0])],
        titles=("a", "b"),
        y_titles=("r", "k"),
        labels=Labels.of(x="H"),
    )
    assert fig.data[0].y == (None, 0.9, 0.8)
    w = _maps(1, 4)[0]
    grid = figs.permutation_grid(
        [("none", w, w, np.zeros_like(w)), ("pe", w, w.T, np.abs(w - w.T))],
        tokens=list("abcd"),
        column_titles=("A(Px)", "PAP", "diff"),
        labels=Labels.of(title="P", x="k", y="q", z="w", diff="d"),
    )
    assert len(grid.data) == 6
    assert [tr.coloraxis for tr in grid.data] == ["coloraxis", "coloraxis", "coloraxis2"] * 2


def test_concat_heatmap_marks_are_plotlys_add_vline_and_add_annotation():
    """The head boundaries and labels, laid out in one pass, equal what Plotly's own add_vline and
    add_annotation calls build on the same heatmap (for few heads, and past the 16-label limit)."""
    import json

    from figures.common import BLACK, SIGNED_COLORSCALE, TOKEN_MARGIN, heatmap

    for heads, width in ((3, 4), (12, 2), (20, 1)):
        concat = np.random.default_rng(heads).normal(size=(6, heads * width))
        args = {"tokens": list("abcdef"), "labels": Labels.of(title="C", x="col", y="q")}
        titles = [f"h{h}" for h in range(heads)]
        fig = figs.concat_heatmap(concat, n_heads=heads, head_titles=titles, **args)
        bound = float(np.abs(concat).max())
        ref = heatmap(
            concat, y=list("abcdef"), title="C", x_title="col", y_title="q",
            colorscale=SIGNED_COLORSCALE,
            zmin=-bound, zmax=bound, height=max(360, 140 + 22 * 6),
            hover_template="%{y}<br>col %{x}<br>%{z:.3f}<extra></extra>",
        )  # fmt: skip
        ref.update_yaxes(type="category")
        ref.update_xaxes(tick0=0, dtick=max(1, -(-concat.shape[1] // 12)))
        for h in range(1, heads):
            ref.add_vline(x=h * width - 0.5, line={"color": BLACK, "width": 2 if heads <= 8 else 1})
        for h in range(heads if heads <= 16 else 0):
            ref.add_annotation(
                x=h * width + (width - 1) / 2, y=1.0, yref="paper", yanchor="bottom", text=titles[h],
                showarrow=False, font={"size": 13},
            )  # fmt: skip
        ref.update_layout(margin={"t": 90, "l": TOKEN_MARGIN})
        assert json.loads(fig.to_json()) == json.loads(ref.to_json())


def test_similarity_colour_bar_title_runs_along_the_bar():
    """Above the bar, the title met the legend of circled pairs and the bar's top tick label."""
    fig = figs.similarity_matrix(
        np.eye(4),
        head_labels=["h1", "h2", "h3", "h4"],
        pairs=[(0, 1, 0.9)],
        labels=Labels.of(title="T", x="head", y="head", z="similarity", pair="redundant pair"),
    )
    bar = fig.data[0].colorbar
    assert (bar.title.text, bar.title.side) == ("similarity", "right")
