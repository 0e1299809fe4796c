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
from collections.abc import Callable
from html import escape
from html.parser import HTMLParser
from urllib.parse import urlencode

import numpy as np
import pandas as pd
import pytest
from streamlit.runtime.media_file_manager import MediaFileManager

from core import nadaraya_watson as nw
from tests.app.conftest import assert_clean, open_page
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
]


@pytest.mark.parametrize(("page", "lang", "title_key"), PAGES)
def test_handout_holds_every_figure_offline(downloads, page, lang, title_key):
    at = open_page(page, lang=lang)
    assert_clean(at)
    charts = at.get("plotly_chart")
    assert charts, "the page shows figures"
    html = downloads[f"{page}-{lang}-handout.html"]()
    doc = _Document()
    doc.feed(html)
    doc.close()
    assert doc.stack == [], f"unclosed tags {doc.stack}"
    assert len(doc.plots) == len(charts)
    assert html.count("Plotly.newPlot(") == len(charts)
    assert sorted(doc.plots) == sorted(f"fig-{_chart_key(c)}" for c in charts)
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
    chart = next(c for c in at.get("plotly_chart") if _chart_key(c) == "kr_fig_fit")
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
    assert len(expanders) == len(at.get("plotly_chart"))  # every figure of this page has its code

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
