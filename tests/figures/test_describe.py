"""figures.describe: a chart's accessible name and the description read out of its data.

Expected values are written by hand from the data each test builds (not computed by the code under
test); the templates are the catalogues' own, in both languages.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from figures.describe import MAX_TRACES, WORD_KEYS, Words, describe, number, plain, word_templates
from ui.i18n import LANGUAGES, load_catalogue

#: Plain templates, so that each test reads its expected sentence directly.
WORDS = Words(
    {
        "chart": "Chart",
        "axes": "{y} against {x}",
        "series": "series {i}",
        "line": "{name}: {n} points, {x} {x0}..{x1}, {y} {y0}..{y1}.",
        "point": "{name}: {x} = {x0}, {y} = {y0}.",
        "heatmap": "{name}: {rows}x{cols}, {lo}..{hi}, max at {row_title} {row}, {col_title} {col}.",
        "bar": "{name}: {n} bars {lo}..{hi}, top {at}.",
        "table": "{name}: {rows} rows, {cols} columns.",
        "more": "+{n} more.",
    }
)


def test_a_line_gives_its_points_and_ranges_without_the_gaps():
    fig = go.Figure(
        [
            go.Scatter(x=[0.0, 0.5, None, 2.0], y=[1.0, -3.0, None, 0.25], name="fit"),
            go.Scatter(x=[1.5], y=[0.125], name="x*"),
        ],
        layout={"title": {"text": "The <b>fit</b><br>at h = 0.3"}, "xaxis": {"title": {"text": "x"}},
                "yaxis": {"title": {"text": "f(x)"}}},
    )  # fmt: skip
    text = describe(fig, WORDS)
    assert text.name == "The fit at h = 0.3"
    assert text.description == "fit: 3 points, x 0..2, f(x) -3..1. x*: x = 1.5, f(x) = 0.125."


def test_a_heatmap_gives_its_shape_range_and_largest_cell():
    z = np.array([[0.1, 0.9, 0.0], [0.2, 0.3, np.nan]])
    fig = go.Figure(
        go.Heatmap(z=z, x=["k1", "k2", "k3"], y=["q1", "q2"]),
        layout={"xaxis": {"title": {"text": "key"}}, "yaxis": {"title": {"text": "query"}}},
    )
    text = describe(fig, WORDS)
    assert text.name == "query against key"  # no title: the axes say what it plots
    # a figure's only trace, unnamed, goes by the chart's name; else by its colour bar's title
    assert text.description == "query against key: 2x3, 0..0.9, max at query q1, key k2."
    fig.add_trace(go.Scatter(x=["k2"], y=["q1"], name="top"))
    fig.update_traces(colorbar={"title": {"text": "weight"}}, selector={"type": "heatmap"})
    assert describe(fig, WORDS).description.startswith("weight: 2x3, 0..0.9,")


def test_bars_tables_and_the_caller_summary():
    bars = go.Figure(go.Bar(x=["a", "b", "c"], y=[2.0, 7.0, 1.0], name="loss"), layout={"title": "Losses"})
    assert describe(bars, WORDS).description == "loss: 3 bars 1..7, top b."
    flat = go.Figure(go.Bar(y=["a", "b"], x=[5.0, 4.0], orientation="h", name="h"))
    assert describe(flat, WORDS).description == "h: 2 bars 4..5, top a."
    table = go.Figure(go.Table(header={"values": ["p", "q"]}, cells={"values": [[1, 2, 3], [4, 5, 6]]}))
    assert (
        describe(table, WORDS, summary="Three runs.").description == "Three runs. Chart: 3 rows, 2 columns."
    )


def test_many_traces_are_counted_and_panels_named():
    fig = go.Figure([go.Scatter(x=[0, 1], y=[i, i + 1]) for i in range(MAX_TRACES + 2)])
    desc = describe(fig, WORDS).description
    assert desc.count("points") == MAX_TRACES
    assert desc.startswith("series 1: 2 points, x 0..1, y 0..1.")
    assert desc.endswith("+2 more.")
    panels = go.Figure(
        [
            go.Scatter(x=[0, 1], y=[0, 1], name="a"),
            go.Scatter(x=[0, 1], y=[2, 3], name="b", xaxis="x2", yaxis="y2"),
        ],
        layout={
            "xaxis": {"domain": [0, 0.45]}, "xaxis2": {"domain": [0.55, 1], "anchor": "y2"},
            "yaxis2": {"anchor": "x2"},
            "annotations": [
                {"text": "Left", "x": 0.225, "y": 1, "xref": "paper", "yref": "paper", "showarrow": False},
                {"text": "Right", "x": 0.775, "y": 1, "xref": "paper", "yref": "paper", "showarrow": False},
            ],
        },
    )  # fmt: skip
    text = describe(panels, WORDS)
    assert text.name == "Left · Right"
    assert text.description == "Left · a: 2 points, x 0..1, y 0..1. Right · b: 2 points, x 0..1, y 2..3."


def test_a_figure_without_data_or_titles_still_has_a_name():
    text = describe(go.Figure(), WORDS)
    assert text.name == "Chart"
    assert text.description == ""


def test_numbers_read_as_three_significant_digits():
    assert [number(v) for v in (0.123456, 1234.5, 2.5e-7, 3, "0.25", float("nan"))] == [
        "0.123", "1.23e3", "2.5e-7", "3", "0.25", "nan",
    ]  # fmt: skip
    assert plain("a<br>b <sub>2</sub>") == "a b 2"


@pytest.mark.parametrize("lang", list(LANGUAGES))
def test_the_catalogues_hold_every_template(lang):
    catalogue = load_catalogue(lang)
    words = word_templates(lookup=catalogue.__getitem__)
    assert set(words.templates) == set(WORD_KEYS)
    fig = go.Figure(go.Scatter(x=[0, 1], y=[2, 3], name="n"))
    assert "n" in describe(fig, words).description
