"""The class's distribution figure: one bar per choice or bin, the right one green after the reveal."""

from __future__ import annotations

import pytest

from figures.class_answers import BLUE, GREEN, GREY, answer_bars
from figures.common import Labels


def test_choices_are_horizontal_bars_with_wrapped_labels():
    labels = ["It rises above the minimum (the fit chases the noise)", "It keeps falling", "Undefined"]
    fig = answer_bars(labels, [5, 2, 0], labels=Labels.of(count="students"))
    (bar,) = fig.data
    assert bar.orientation == "h"
    assert list(bar.x) == [5, 2, 0]
    assert all(len(line) <= 34 for label in bar.y for line in label.split("<br>"))
    assert bar.y[0].replace("<br>", " ") == labels[0]
    assert list(bar.text) == ["5", "2", ""]  # no "0" written on an empty bar
    assert bar.marker.color == BLUE  # before the reveal nothing is marked
    assert fig.layout.xaxis.title.text == "students"


def test_after_the_reveal_right_answers_are_green_and_wrong_ones_grey():
    fig = answer_bars(["40–43", "76–79", "80–83"], [2, 3, 4], right_counts=[0, 3, 1], numeric=True)
    right, wrong = fig.data
    assert (right.marker.color, wrong.marker.color) == (GREEN, GREY)
    assert list(right.y) == [0, 3, 1]
    assert list(wrong.y) == [2, 0, 3]  # the rest of each bar
    assert fig.layout.barmode == "stack"
    with pytest.raises(ValueError, match="more right answers"):
        answer_bars(["a"], [1], right_counts=[2])


def test_numbers_are_vertical_bars_and_a_projector_gets_larger_type():
    fig = answer_bars(
        ["40–43", "44–47"], [1, 2], numeric=True, labels=Labels.of(value="answer"), font_size=20
    )
    (bar,) = fig.data
    assert bar.orientation in (None, "v")
    assert list(bar.x) == ["40–43", "44–47"]
    assert fig.layout.font.size == 20
    assert fig.layout.xaxis.tickfont.size == fig.layout.yaxis.tickfont.size == 20
    assert fig.layout.xaxis.title.text == "answer"


def test_a_very_long_label_is_cut():
    fig = answer_bars(["word " * 40], [1])
    assert fig.data[0].y[0].count("<br>") == 2
    assert fig.data[0].y[0].endswith("…")


def test_lengths_must_match():
    with pytest.raises(ValueError, match="one entry per bar"):
        answer_bars(["a"], [1, 2])
    with pytest.raises(ValueError, match="one entry per bar"):
        answer_bars(["a", "b"], [1, 2], right_counts=[1])
