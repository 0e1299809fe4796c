"""figures.export: a figure's numbers as tidy rows, and the offline HTML handout."""

from __future__ import annotations

import io
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots

from figures.export import HandoutItem, HandoutMeta, HandoutQuestion, build_html, figure_csv, figure_table


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


def test_handout_prints_each_figure_title_once(handout):
    for i in range(3):
        assert handout.count(f": T{i}</h3>") == 1  # in the handout's heading
        assert '"text":"T' not in handout  # not again inside the plot


def _worksheet() -> str:
    fig = go.Figure(go.Scatter(x=[0, 1], y=[1, 0]), layout={"title": "Answer figure"})
    items = [
        HandoutItem("heading", "", caption="The **fit**", level=3),
        HandoutItem("text", "", caption="Intro with *kernel* and `code`.\n\n- one\n- two"),
        HandoutItem("formula", "", caption=r"\frac{a}{b} < c"),
        HandoutItem("metric", "", caption="Largest weight", value="0.69"),
        HandoutItem(
            "question",
            "q1",
            question=HandoutQuestion("Closer to **1**?", ("Yes", "No"), "Yes", "Because 0.69."),
        ),
        HandoutItem("figure", "fig_answer", figure=fig, caption="look", answer_of="q1"),
        HandoutItem("text", "", caption="The measured peak is 0.69.", answer_of="q1"),
        HandoutItem("question", "q2", question=HandoutQuestion("How many?", (), "34", "Row 34.")),
        HandoutItem("caption", "", caption="after the questions"),
    ]
    meta = HandoutMeta(
        title="Scaled dot-product",
        lang="en",
        date="2025-01-01 10:00",
        url="",
        words={
            "figure": "Figure {n}",
            "question": "Question {n}",
            "answers": "Answers",
            "answer": "Answer",
            "your_answer": "Your answer",
            "settings": "Settings of this view",
            "control": "Control",
            "value": "Value",
        },
        settings=(("Key dimension d_k", "64"), ("Mask", "<none>")),
    )
    return build_html(items, meta)


def test_worksheet_holds_the_lesson_and_keeps_the_answers_for_last():
    html = _worksheet()
    sheet, answers = html.split('<section class="answers">')
    assert "<h3>The <strong>fit</strong></h3>" in sheet
    assert "Intro with <em>kernel</em> and <code>code</code>." in sheet
    assert "<ul><li>one</li><li>two</li></ul>" in sheet
    assert r"<code>\frac{a}{b} &lt; c</code>" in sheet  # TeX kept readable, escaped, no CDN
    assert '<span class="label">Largest weight</span>: <span class="value">0.69</span>' in sheet
    assert "<td>Key dimension d_k</td><td>64</td>" in sheet
    assert "<td>Mask</td><td>&lt;none&gt;</td>" in sheet
    assert sheet.index("Question 1") < sheet.index("Question 2") < sheet.index("after the questions")
    assert "Closer to <strong>1</strong>?" in sheet
    assert '<ul class="choices"><li>Yes</li><li>No</li></ul>' in sheet
    assert "Your answer: " in sheet  # a line to write the number on
    for answer_text in ("Because 0.69.", "Row 34.", "The measured peak is 0.69.", "Answer figure"):
        assert answer_text not in sheet
        assert answer_text in answers
    assert "<h2>Answers</h2>" in answers
    assert "Answer: Yes" in answers
    assert "Answer: 34" in answers
    assert answers.index("Because 0.69.") < answers.index("fig-fig_answer") < answers.index("Question 2")
    assert "break-before: page" in html  # the teacher can print the worksheet without the answers


def test_worksheet_without_questions_has_no_answers_section():
    items = [HandoutItem("text", "", caption="Only text.")]
    html = build_html(items, HandoutMeta(title="Home", lang="en", date="", url=""))
    assert "Only text." in html
    assert '<section class="answers">' not in html
