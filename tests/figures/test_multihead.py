"""figures.multihead: the builders draw what they are given (one trace per head, marks where asked)."""

from __future__ import annotations

import numpy as np

from figures import multihead as figs


def _maps(H: int, T: int) -> np.ndarray:
    w = np.random.default_rng(0).random((H, T, T))
    return w / w.sum(-1, keepdims=True)


def test_head_grid_one_heatmap_per_head_on_one_scale():
    for H in (1, 3, 8, 32):
        fig = figs.head_grid(
            _maps(H, 5),
            labels=[f"{i}:w" for i in range(5)],
            head_titles=[f"head {h}" for h in range(H)],
            title="T",
            x_title="key",
            y_title="query",
            colorbar_title="weight",
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
        title="S",
        axis_title="head",
        colorbar_title="s",
        pair_name="pair",
    )
    marks = fig.data[-1]
    assert sorted(zip(marks.x, marks.y, strict=True)) == [("h1", "h3"), ("h3", "h1")]
    concat = figs.concat_heatmap(
        np.ones((5, 12)),
        n_heads=4,
        labels=list("abcde"),
        head_titles=["h1", "h2", "h3", "h4"],
        title="C",
        x_title="col",
        y_title="q",
    )
    assert [s.x0 for s in concat.layout.shapes] == [2.5, 5.5, 8.5]


def test_redundancy_curve_leaves_a_gap_for_one_head_and_permutation_grid_has_three_columns():
    fig = figs.redundancy_curve(
        [1, 2, 4],
        [("init", [None, 0.9, 0.8])],
        [("init", [8.0, 7.0, 6.0])],
        titles=("a", "b"),
        x_title="H",
        y_titles=("r", "k"),
    )
    assert fig.data[0].y == (None, 0.9, 0.8)
    w = _maps(1, 4)[0]
    grid = figs.permutation_grid(
        [("none", w, w, np.zeros_like(w)), ("pe", w, w.T, np.abs(w - w.T))],
        labels=list("abcd"),
        column_titles=("A(Px)", "PAP", "diff"),
        title="P",
        x_title="k",
        y_title="q",
        colorbar_titles=("w", "d"),
    )
    assert len(grid.data) == 6
    assert [tr.coloraxis for tr in grid.data] == ["coloraxis", "coloraxis", "coloraxis2"] * 2
