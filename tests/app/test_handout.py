"""Handout, CSV and code of a page's figures (issue 10.4, 10.5), through the real app.

Download buttons hand Streamlit a callable that runs on click; AppTest never clicks, so the
callables are caught where Streamlit registers them (``MediaFileManager.add_deferred``) and run
here, as a click would.
"""

from __future__ import annotations

import base64
import inspect
import io
import json
import re
from collections.abc import Callable
from html import escape, unescape
from html.parser import HTMLParser
from urllib.parse import urlencode

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from streamlit.runtime.media_file_manager import MediaFileManager

from core import nadaraya_watson as nw
from tests.app.conftest import assert_clean, charts, open_page
from ui.i18n import load_catalogue


@pytest.fixture
def downloads(monkeypatch) -> dict[str, Callable[[], str | bytes]]:
    """``file name -> data callable`` of every download button of the last run."""
    caught: dict[str, Callable[[], str | bytes]] = {}
    original = MediaFileManager.add_deferred

    def add_deferred(self, data_callable, mimetype, coordinates, file_name=None, **kwargs):
        caught[file_name] = data_callable
        return original(self, data_callable, mimetype, coordinates, file_name, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add_deferred", add_deferred)
    return caught


class _Document(HTMLParser):
    """Plot divs, script sources, the title and the html lang of a document (tags must balance)."""

    VOID = frozenset({"meta", "br", "hr", "img", "input", "link", "area", "base", "col", "source", "wbr"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.plots: list[str] = []
        self.script_sources: list[str | None] = []
        self.lang = None
        self.title = ""
        self.stack: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "html":
            self.lang = a.get("lang")
        if tag == "div" and "plotly-graph-div" in (a.get("class") or "").split():
            self.plots.append(a["id"])
        if tag == "script":
            self.script_sources.append(a.get("src"))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack, f"</{tag}> closes nothing"
        assert self.stack[-1] == tag, f"</{tag}> closes <{self.stack[-1]}>"
        self.stack.pop()

    def handle_data(self, data):
        if self.stack and self.stack[-1] == "title":
            self.title += data


def _chart_key(chart) -> str:
    """The user key of an ``st.plotly_chart`` (its element id ends with it)."""
    return chart.proto.id.split("-", 2)[-1]


# page, language, i18n key of the page title
PAGES = [
    ("kernel-regression", "en", "nav.kernel_regression"),
    ("scaled-dot-product", "zh", "nav.scaled_dot_product"),
    ("induction-heads", "zh", "nav.induction_heads"),
]


@pytest.mark.parametrize(("page", "lang", "title_key"), PAGES)
def test_handout_holds_every_figure_offline(downloads, page, lang, title_key):
    at = open_page(page, lang=lang)
    assert_clean(at)
    shown = charts(at)
    assert shown, "the page shows figures"
    html = downloads[f"{page}-{lang}-handout.html"]()
    doc = _Document()
    doc.feed(html)
    doc.close()
    assert doc.stack == [], f"unclosed tags {doc.stack}"
    assert len(doc.plots) == len(shown)
    assert html.count("Plotly.newPlot(") == len(shown)
    assert sorted(doc.plots) == sorted(f"fig-{_chart_key(c)}" for c in shown)
    assert '<script src="http' not in html
    assert doc.script_sources == [None] * len(doc.script_sources)  # everything inline
    assert doc.title == load_catalogue(lang)[title_key]
    assert doc.lang == {"en": "en", "zh": "zh-Hans"}[lang]
    query = urlencode(dict(at.query_params))
    if lang != "en":  # English is the default: the URL does not name it
        assert "lang=" + lang in query
    assert escape(f"?{query}") in html  # the URL of the view
    assert load_catalogue(lang)["common.handout_made"] in html


def _array(value) -> list:
    """A data array of a chart's spec JSON (Plotly writes numeric arrays as base64 typed arrays)."""
    if isinstance(value, dict) and "bdata" in value:
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"])).tolist()
    return list(value)


def test_csv_of_a_figure_equals_its_data(downloads):
    at = open_page("kernel-regression")
    chart = next(c for c in charts(at) if _chart_key(c) == "kr_fig_fit")
    spec = json.loads(chart.proto.spec)
    expected = []
    for trace in spec["data"]:
        if "x" not in trace or "y" not in trace:
            continue
        for x, y in zip(_array(trace["x"]), _array(trace["y"]), strict=True):
            if x is None and y is None:
                continue
            expected.append((trace["name"], x, y))
    assert expected
    table = pd.read_csv(io.StringIO(downloads["kr_fig_fit.csv"]()))
    assert list(table.columns) == ["trace", "x", "y"]
    assert table.trace.tolist() == [e[0] for e in expected]
    np.testing.assert_allclose(table.x.to_numpy(float), np.array([e[1] for e in expected], float))
    np.testing.assert_allclose(table.y.to_numpy(float), np.array([e[2] for e in expected], float))


def test_code_expander_shows_the_real_source():
    at = open_page("kernel-regression")
    label = load_catalogue("en")["common.show_code"]
    expanders = [e for e in at.expander if e.label == label]
    assert len(expanders) == len(charts(at))  # every figure of this page has its code

    def source(fn) -> str:  # st.code shows the text without its final newline
        return inspect.getsource(fn).strip("\n")

    # Closed, an expander sends nothing inside it: its code is drawn once it is opened.
    assert all(len(e.code) == 0 and len(e.caption) == 0 for e in expanders)
    at.session_state["kr_fig_fit_code"] = True
    at.session_state["kr_fig_cv_code"] = True
    at.run()
    assert not at.exception
    expanders = [e for e in at.expander if e.label == label]
    assert sum(len(e.code) > 0 for e in expanders) == 2

    def opened(name: str):
        return next(e for e in expanders if e.caption and name in e.caption[0].value)

    fit = opened("core.nadaraya_watson.nw_predict")
    assert fit.code[0].value == source(nw.nw_predict)
    cv = opened("core.nadaraya_watson.loo_cv_errors")
    assert [c.value for c in cv.code] == [source(nw.loo_cv_errors), source(nw.select_bandwidth)]


# ----------------------------------------------------------------------------------------------
# the handout as a worksheet (issue 22.5)
# ----------------------------------------------------------------------------------------------

ANSWERS = '<section class="answers">'


def _fixed_part(text: str) -> str:
    """The longest part of a catalogue sentence without placeholders (what any filling of it holds)."""
    return max(re.split(r"\{[^}]*\}", text), key=len).strip()


def _title(chart) -> str:
    spec = json.loads(chart.proto.spec)
    return re.sub(r"<[^>]+>", " ", spec["layout"].get("title", {}).get("text", "")).strip()


#: page, language, a catalogue key of its intro (first paragraph), a TeX fragment of one of its
#: formulas, (control label key, the value the handout lists), its questions' explanation keys
WORKSHEETS = [
    (
        "kernel-regression",
        "en",
        "kr.intro",
        r"\hat f(x) = \sum_{i=1}^{N}",
        ("kr.bandwidth", "0.3"),
        {
            "kr_active": "q.kr_active_explain",
            "kr_row": "q.kr_row_explain",
            "kr_cv_small_h": "q.kr_cv_explain_rises",
        },
    ),
    (
        "scaled-dot-product",
        "zh",
        "sdp.intro",
        r"\mathrm{Attention}(Q,K,V)",
        ("sdp.dk", "16"),
        {"sdp_dk_peak": "q.sdp_dk_explain", "sdp_softmax_zero": "q.sdp_zero_explain"},
    ),
]


@pytest.mark.parametrize(("page", "lang", "intro", "tex", "setting", "explained"), WORKSHEETS)
def test_handout_is_a_worksheet_with_the_answers_last(downloads, page, lang, intro, tex, setting, explained):
    cat = load_catalogue(lang)
    at = open_page(page, lang=lang)  # every question shown: what they held back is in the handout
    assert_clean(at)
    html = downloads[f"{page}-{lang}-handout.html"]()
    assert html.count(ANSWERS) == 1
    sheet, answers = html.split(ANSWERS)
    # the lesson: its text, its formulas (TeX, offline), the settings of its controls
    read = unescape(re.sub(r"<[^>]+>", "", sheet))  # the worksheet as a reader reads it
    assert re.sub(r"\*\*|`", "", cat[intro])[:80] in read
    assert escape(tex) in sheet
    label, value = setting
    assert f"<td>{escape(cat[label])}</td><td>{value}</td>" in sheet
    # each question in the worksheet without its answer, its answer and explanation after
    read_answers = unescape(re.sub(r"<[^>]+>", "", answers))
    for qid, key in explained.items():
        assert f'id="q-{qid}"' in sheet
        fixed = re.sub(r"\*\*|`", "", _fixed_part(cat[key]))[:50]
        assert fixed not in read, f"{qid}: its explanation is in the worksheet"
        assert fixed in read_answers, f"{qid}: its explanation is not with the answers"
    assert cat["common.handout_answers"] in answers
    assert sheet.count('class="handout-question"') == len(explained) + (page == "scaled-dot-product") * 2
    # what a question held back (here: revealed) is printed with its answer, the rest in place
    for chart in charts(at):
        key = _chart_key(chart)
        assert html.count(f'id="fig-{key}"') == 1
        section = re.search(rf'<section id="item-{key}".*?</section>', html, re.S).group(0)
        if _title(chart):  # in the figure's heading, not again in the plot
            assert section.count(escape(_title(chart))) == 1, f"{key}: its title is not printed exactly once"
    assert cat["q.hidden"] not in html  # nothing to press on paper


def test_an_unanswered_question_keeps_its_figure_out_and_its_answer_last(downloads):
    at = open_page("kernel-regression", answered=False)
    assert_clean(at)
    html = downloads["kernel-regression-en-handout.html"]()
    sheet, answers = html.split(ANSWERS)
    assert 'id="fig-kr_fig_row"' not in html  # not drawn: not printed
    assert 'id="fig-kr_fig_fit"' in sheet
    en = load_catalogue("en")
    assert en["q.kr_cv_rises"] in sheet  # the choices, none marked
    assert f"{en['common.handout_answer']}: {en['q.kr_cv_rises']}" in answers
    assert en["common.handout_answer"] + ":" not in sheet


def test_the_handout_records_the_page_by_reference_not_by_value():
    """Recording stays cheap: a rerun keeps references (a figure object, a callable question), and
    nothing is built before the click."""
    from ui.handout import STATE_KEY

    at = open_page("kernel-regression")
    entries = list(at.session_state[STATE_KEY].items.values())
    figures = [e for e in entries if e.kind == "figure"]
    assert figures
    assert all(isinstance(e.obj, go.Figure | tuple) for e in figures)  # the figure (and its marks)
    questions = [e for e in entries if e.kind == "question"]
    assert len(questions) == 3
    assert all(callable(e.obj) for e in questions)  # its text and answer are made on the click
    assert {e.kind for e in entries} >= {"text", "formula", "heading", "question", "figure", "table"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_handout_lists_a_typed_sequence_with_the_settings(downloads, lang):
    """A text control (induction heads' own sequence) is a setting like a slider: the worksheet's
    table gives its label and the text the page shows, in the page's language."""
    typed = "ABCDABCD" if lang == "en" else "注意力注意力"
    at = open_page("induction-heads", lang=lang, params={"ih_text": typed}, folded=True, answered=False)
    assert_clean(at)
    assert at.text_input(key="ih_text").value == typed
    html = downloads[f"induction-heads-{lang}-handout.html"]()
    sheet = html.split(ANSWERS)[0]
    assert f"<td>{escape(load_catalogue(lang)['ih.text'])}</td><td>{escape(typed)}</td>" in sheet
