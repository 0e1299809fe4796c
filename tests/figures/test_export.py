"""figures.export: a figure's numbers as tidy rows, and the offline HTML handout."""

from __future__ import annotations

import io
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots

from figures.export import HandoutItem, HandoutMeta, build_html, figure_csv, figure_table


def test_scatter_rows_are_the_trace_arrays():
    x = np.linspace(0, 1, 7)
    y = x**2
    stems_x = [0.5, 0.5, None, 0.7, 0.7, None]
    stems_y = [0.0, 0.3, None, 0.0, 0.6, None]
    fig = go.Figure(
        [
            go.Scatter(x=x, y=y, name="curve"),
            go.Scatter(x=[None], y=[None], name="legend only"),  # decorative: no data
            go.Scatter(x=stems_x, y=stems_y, name="stems"),  # None separators are not data
        ]
    )
    table = figure_table(fig)
    assert list(table.columns) == ["trace", "x", "y"]
    curve = table[table.trace == "curve"]
    np.testing.assert_allclose(curve.x, x)
    np.testing.assert_allclose(curve.y, y)
    assert "legend only" not in set(table.trace)
    stems = table[table.trace == "stems"]
    assert stems.x.tolist() == [0.5, 0.5, 0.7, 0.7]
    assert stems.y.tolist() == [0.0, 0.3, 0.0, 0.6]
    # the CSV reads back to the same table
    back = pd.read_csv(io.StringIO(figure_csv(fig)))
    pd.testing.assert_frame_equal(back, table.reset_index(drop=True), check_dtype=False)


def test_heatmap_rows_are_every_cell_with_its_labels():
    rng = np.random.default_rng(0)
    z = rng.random((3, 4))
    z[1, 2] = np.nan  # an undefined weight stays in the table, as a blank
    cols, rows = ["k1", "k2", "k3", "k4"], ["q1", "q2", "q3"]
    table = figure_table(go.Figure(go.Heatmap(z=z, x=cols, y=rows, name="weights")))
    assert list(table.columns) == ["trace", "row", "column", "value"]
    assert len(table) == z.size
    for i, r in enumerate(rows):
        for j, c in enumerate(cols):
            value = table[(table.row == r) & (table.column == c)].value.item()
            if np.isnan(z[i, j]):
                assert np.isnan(value)
            else:
                assert value == z[i, j]


def test_heatmap_without_labels_uses_indices():
    z = [[1.0, 2.0], [3.0, 4.0]]
    table = figure_table(go.Figure(go.Heatmap(z=z)))
    assert table[["row", "column", "value"]].values.tolist() == [[0, 0, 1], [0, 1, 2], [1, 0, 3], [1, 1, 4]]


def test_subplots_are_named_by_their_titles():
    fig = make_subplots(rows=1, cols=2, subplot_titles=["scores", "counts"])
    z = np.arange(6.0).reshape(2, 3)
    fig.add_trace(go.Heatmap(z=z, name="s"), row=1, col=1)
    fig.add_trace(go.Bar(x=["a", "b"], y=[3, 5], name="n"), row=1, col=2)
    table = figure_table(fig)
    assert list(table.columns) == ["subplot", "trace", "x", "y", "row", "column", "value"]
    left = table[table.subplot == "scores"]
    assert left.value.tolist() == z.ravel().tolist()
    assert set(left.trace) == {"s"}
    right = table[table.subplot == "counts"]
    assert right.x.tolist() == ["a", "b"]
    assert right.y.tolist() == [3, 5]


def test_empty_figure_gives_an_empty_table():
    assert figure_table(go.Figure()).empty


class _Collector(HTMLParser):
    """Tags, script sources and plot divs of an HTML document (raises on nothing: counts only)."""

    def __init__(self) -> None:
        super().__init__()
        self.plots, self.scripts, self.open = [], [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "div" and "plotly-graph-div" in (a.get("class") or ""):
            self.plots.append(a.get("id"))
        if tag == "script":
            self.scripts.append(a.get("src"))


@pytest.fixture(scope="module")
def handout() -> str:
    figs = [go.Figure(go.Scatter(x=[0, 1], y=[1, 0]), layout={"title": f"T{i}"}) for i in range(3)]
    items = [HandoutItem("figure", f"fig_{i}", figure=f, caption=f"look **{i}**") for i, f in enumerate(figs)]
    items.insert(1, HandoutItem("table", "tab", table={"a": [1, 2], "b": ["<x>", "y"]}))
    items.append(HandoutItem("note", "note", caption="a note <b>"))
    meta = HandoutMeta(
        title="Kernel regression",
        lang="zh",
        date="2025-01-01 10:00",
        url="http://localhost:8501/kernel-regression?h=0.3",
        words={"figure": "图 {n}", "code": "代码"},
    )
    return build_html(items, meta)


def test_handout_is_one_offline_document(handout):
    doc = _Collector()
    doc.feed(handout)
    doc.close()
    assert doc.plots == ["fig-fig_0", "fig-fig_1", "fig-fig_2"]
    assert doc.scripts.count(None) == len(doc.scripts)  # every script inline: no src at all
    assert '<script src="http' not in handout
    assert handout.count("Plotly.newPlot(") == 3
    assert '<html lang="zh-Hans">' in handout
    assert "<title>Kernel regression</title>" in handout
    assert "图 2: T1" in handout  # numbered in page order, the table in between
    assert "&lt;x&gt;" in handout  # escaped
    assert "a note &lt;b&gt;" in handout
    assert "look <strong>1</strong>" in handout
