"""figures.training: what each figure draws, and its input checks."""

from __future__ import annotations

import re

import numpy as np
import pytest

from figures import training as figs
from figures.common import Labels, text_columns, wrap_lines

NAMES = {"train": "t", "val": "v", "batch": "b", "mean": "m", "last_value": "l", "optimum": "o"}


def test_loss_curves_traces_and_fixed_axis():
    fig = figs.loss_curves(
        [0.5, 0.2],
        [1.0, 0.4, 0.3],
        {"mean": 0.9, "last_value": 0.3, "optimum": 0.1},
        labels=Labels.of(title="loss", x="epoch", y="MSE", **NAMES),
        max_epochs=20,
        batch_loss=[0.6, 0.4, 0.3, 0.2],
        batches_per_epoch=2,
    )
    by_name = {trace.name: trace for trace in fig.data}
    assert list(by_name["t"].x) == [1, 2]  # epoch e's training loss at x = e
    assert list(by_name["v"].x) == [0, 1, 2]  # validation from epoch 0
    np.testing.assert_allclose(by_name["b"].x, [0.5, 1.0, 1.5, 2.0])
    assert list(by_name["o"].y) == [0.1, 0.1]
    assert list(fig.layout.xaxis.range) == [-0.3, 20.3]
    assert fig.layout.yaxis.type == "log"


@pytest.mark.parametrize("heads", [1, 2, 4, 6, 8, 16, 32])
def test_attention_heads_every_head_count(heads):
    weights = np.random.default_rng(0).random((heads, 4, 4))
    fig = figs.attention_heads(
        weights,
        head_titles=[str(h) for h in range(heads)],
        labels=Labels.of(title="a", x="k", y="q", z="w"),
    )
    assert len(fig.data) == heads


def test_attention_heads_grid():
    weights = np.random.default_rng(0).random((6, 5, 5))
    fig = figs.attention_heads(
        weights,
        head_titles=[f"h{i}" for i in range(6)],
        labels=Labels.of(title="a", x="key", y="query", z="w"),
    )
    assert len(fig.data) == 6
    np.testing.assert_allclose(np.asarray(fig.data[5].z), weights[5])
    assert fig.layout.yaxis6.autorange == "reversed"  # rows = queries, top = position 0
    with pytest.raises(ValueError, match="head titles"):
        figs.attention_heads(weights, head_titles=["x"], labels=Labels.of(title="a", x="", y="", z=""))
    with pytest.raises(ValueError, match="H, L, S"):
        figs.attention_heads(weights[0], head_titles=[], labels=Labels.of(title="a", x="", y="", z=""))


def test_prediction_plot_positions():
    values = np.arange(9.0)
    fig = figs.prediction_plot(
        values,
        values[1:] + 0.1,
        values[4:] - 0.1,
        4,
        labels=Labels.of(title="p", x="t", y="x", truth="T", one_step="O", rollout="R", context="C"),
    )
    by_name = {trace.name: trace for trace in fig.data}
    assert list(by_name["O"].x) == list(range(1, 9))
    assert list(by_name["R"].x) == list(range(4, 9))


def test_wrap_counts_chinese_characters_double():
    assert wrap_lines("one two three", 7) == ["one two", "three"]
    lines = wrap_lines("加注意力 dropout。对随机游走来说集中在最新位置", 12)
    assert all(text_columns(line) <= 12 for line in lines)
    assert "".join(lines).replace(" ", "") == "加注意力dropout。对随机游走来说集中在最新位置"


def test_diagnostics_table_rows_and_levels():
    rows = [
        {"level": level, "status": level, "symptom": "s", "measure": "m", "remedy": "r " * 40}
        for level in ("green", "amber", "red")
    ]
    fig = figs.diagnostics_table(rows, headers={"status": "S", "symptom": "Y", "measure": "M", "remedy": "R"})
    assert list(fig.data[0].cells.fill.color[0]) == [figs.LEVEL_COLORS[r["level"]] for r in rows]
    assert "<br>" in fig.data[0].cells.values[3][0]  # long remedies are wrapped
    headers = {c: c for c in ("status", "symptom", "measure", "remedy")}
    with pytest.raises(ValueError, match="level"):
        figs.diagnostics_table([{**rows[0], "level": "blue"}], headers=headers)


def test_walks_plot_draws_every_window_and_marks_the_next_value():
    rng = np.random.default_rng(0)
    walks, example = rng.normal(size=(5, 9)).cumsum(1), rng.normal(size=9).cumsum()
    names = {"train": "tr", "example": "ex", "target": "next"}
    fig = figs.walks_plot(walks, example, labels=Labels.of(title="data", x="t", y="x", **names))
    train = [trace for trace in fig.data if trace.name == "tr"]
    assert len(train) == 5
    assert [trace.showlegend for trace in train] == [True, False, False, False, False]  # one legend entry
    for trace, walk in zip(train, walks, strict=True):
        np.testing.assert_array_equal(trace.x, np.arange(9))
        np.testing.assert_allclose(trace.y, walk)
    (shown,) = [trace for trace in fig.data if trace.name == "ex"]
    np.testing.assert_allclose(shown.y, example[:-1])  # the inputs ...
    (target,) = [trace for trace in fig.data if trace.name == "next"]
    assert list(target.x) == [7, 8]  # ... and the value they must predict, marked
    np.testing.assert_allclose(target.y, example[-2:])
    assert fig.layout.xaxis.title.text == "t"


def test_walks_plot_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match="walks"):
        figs.walks_plot(
            np.zeros((3, 5)),
            np.zeros(6),
            labels=Labels.of(title="", x="", y="", train="", example="", target=""),
        )


def test_attention_heads_row_height_and_loss_ticks():
    weights = np.random.default_rng(0).random((4, 5, 5))
    fig = figs.attention_heads(
        weights,
        head_titles=list("abcd"),
        labels=Labels.of(title="a", x="k", y="q", z="w"),
        cols=2,
        row_height=200,
    )
    assert fig.layout.height == 130 + 2 * 200  # a 2 x 2 grid
    assert fig.layout.xaxis2.anchor == "y2"
    loss = figs.loss_curves(
        [],
        [],
        {"mean": 0.1, "last_value": 0.002, "optimum": 0.001},
        labels=Labels.of(title="", x="", y="", **NAMES),
        max_epochs=5,
    )
    assert "0.01" in loss.layout.yaxis.ticktext  # full values on the short log axis, not every digit
    assert [len(trace.y) for trace in loss.data[:2]] == [0, 0]  # empty curves, baselines drawn
    assert [list(trace.y) for trace in loss.data[2:]] == [[0.1, 0.1], [0.002, 0.002], [0.001, 0.001]]


def test_attention_heads_scale_is_not_set_by_the_first_query_row():
    # causal weights: row 0 is all on key 0 (weight 1); the other rows spread out
    L = 6
    rows = [np.r_[np.full(i + 1, 1.0 / (i + 1)), np.zeros(L - i - 1)] for i in range(L)]
    weights = np.stack([np.array(rows)] * 2)
    fig = figs.attention_heads(
        weights, head_titles=["a", "b"], labels=Labels.of(title="t", x="k", y="q", z="w")
    )
    assert fig.layout.coloraxis.cmax == pytest.approx(0.5)  # row 1's largest weight, not row 0's 1
    fixed = figs.attention_heads(
        weights, head_titles=["a", "b"], labels=Labels.of(title="t", x="k", y="q", z="w"), zmax=1.0
    )
    assert fixed.layout.coloraxis.cmax == 1.0


@pytest.mark.parametrize(
    "text",
    [
        "振荡指数 0.21（阈值 0.15 为黄色预警，0.30 为红色），损失在两个 epoch 之间的相对跳动 12.345%",
        "冗余度0.873，超过0.8即为黄色预警；头与头之间的平均相似度为0.912",
        "oscillation index 0.21 (amber at 0.15, red at 0.30) of the validation loss",
    ],
)
@pytest.mark.parametrize("width", [10, 18, 26, 30])
def test_table_cells_wrap_between_words_never_inside_a_number(text, width):
    lines = wrap_lines(text, width)
    assert all(text_columns(line) <= width for line in lines)
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")  # nothing lost or added
    for number in re.findall(r"\d+(?:\.\d+)?", text):
        assert any(number in line for line in lines), (number, lines)
    assert not any(line[:1] in "，。）；" for line in lines[1:])  # no line starts with closing punctuation


def test_loss_axis_labels_every_tick_with_its_full_value():
    fig = figs.loss_curves(
        [0.05, 0.02],
        [0.1, 0.04, 0.03],
        {"mean": 0.09, "last_value": 0.003, "optimum": 0.001},
        labels=Labels.of(title="loss", x="epoch", y="MSE", **NAMES),
        max_epochs=20,
    )
    axis = fig.layout.yaxis
    assert {"0.001", "0.002", "0.005", "0.01", "0.02", "0.05", "0.1"} <= set(axis.ticktext)
    for value, text in zip(axis.tickvals, axis.ticktext, strict=True):
        if "×" not in text and "⁻" not in text:  # "2" is the tick at 2, never the one at 0.002
            assert float(text) == pytest.approx(value)
