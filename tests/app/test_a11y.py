"""Accessibility through the real app (issue 24): every chart's name, description and numbers.

The browser side (``<html lang>``, titles, axe-core, keyboard) is ``tests/e2e/test_accessibility.py``;
here AppTest checks what the server sends: one hidden name-and-description element per chart, in the
page's language, and the "Show the numbers" table equal to the chart's own data (its spec JSON).
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import numpy as np
import pytest

from lessons import LESSONS
from tests.app.conftest import assert_clean, charts, open_page
from tests.app.test_handout import _array, _chart_key
from tests.app.test_presentation import _open_link
from ui.a11y import ASSETS
from ui.i18n import load_catalogue


class _ChartText(HTMLParser):
    """The attributes and text of the ``attn-chart-text`` element(s) of an ``st.html`` body."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[dict[str, str]] = []
        self.inside = False  # within an attn-chart-text element (other elements' texts are not its)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "attn-chart-text" in (a.get("class") or "").split():
            self.found.append({**a, "text": ""})
            self.inside = True

    def handle_endtag(self, tag):
        self.inside = self.inside and tag != "div"

    def handle_data(self, data):
        if self.inside:
            self.found[-1]["text"] += data


def _chart_texts(at) -> dict[str, dict[str, str]]:
    parser = _ChartText()
    for element in at.get("html"):
        parser.feed(element.proto.body)
    return {f["data-chart"]: f for f in parser.found}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("page", [lesson.url_path for lesson in LESSONS])
def test_every_chart_has_a_name_and_a_description(page, lang):
    at = open_page(page, lang=lang)
    assert_clean(at)
    keys = [_chart_key(c) for c in charts(at)]
    texts = _chart_texts(at)
    assert sorted(texts) == sorted(keys)  # one each, linked by the chart's key
    for key, text in texts.items():
        assert text["id"] == f"attn-chart-{key}"
        assert text["data-name"].strip(), key
        assert text["text"].strip(), key
    if lang == "zh":  # described in the page's language: Chinese words, not English templates
        assert all(re.search(r"[\u4e00-\u9fff]", t["text"]) for t in texts.values())


def test_description_says_what_the_fit_chart_draws():
    at = open_page("kernel-regression", folded=True, params={"kr_n": "120"})
    text = _chart_texts(at)["kr_fig_fit"]
    cat = load_catalogue("en")
    assert f"{cat['kr.legend_data']}: 120 points" in text["text"]  # N = 120 samples, from the link
    assert text["data-name"] == re.sub(r"<[^>]+>", " ", _title(at, "kr_fig_fit")).strip()


def _title(at, key: str) -> str:
    chart = next(c for c in charts(at) if _chart_key(c) == key)
    return json.loads(chart.proto.spec)["layout"]["title"]["text"]


def test_show_the_numbers_is_lazy_and_equals_the_chart_data():
    at = open_page("kernel-regression", folded=True)
    label = load_catalogue("en")["a11y.show_numbers"]
    boxes = [e for e in at.expander if e.label == label]
    assert len(boxes) == len(charts(at))  # one under every chart
    assert len(at.dataframe) == 0  # closed: nothing sent
    at.session_state["kr_fig_fit_numbers"] = True
    at.run()
    assert_clean(at)
    assert len(at.dataframe) == 1
    table = at.dataframe[0].value
    series = load_catalogue("en")["a11y.col_trace"]  # the CSV's "trace", in the page's words
    assert list(table.columns) == [series, "x", "y"]
    chart = next(c for c in charts(at) if _chart_key(c) == "kr_fig_fit")
    spec = json.loads(chart.proto.spec)
    for trace in spec["data"]:
        if "x" not in trace:
            continue
        rows = table[table[series] == trace["name"]]
        pairs = [(x, y) for x, y in zip(_array(trace["x"]), _array(trace["y"]), strict=True) if x is not None]
        np.testing.assert_allclose(rows.x.to_numpy(float), [p[0] for p in pairs])
        np.testing.assert_allclose(rows.y.to_numpy(float), [p[1] for p in pairs])


def test_the_style_survives_the_html_sanitiser():
    """``st.html`` drops a style element whose text holds a less-than sign (DOMPurify)."""
    assert "<" not in (ASSETS / "a11y.css").read_text(encoding="utf-8")


def test_a_slide_title_is_an_h2_even_where_the_page_has_it_as_an_h3():
    """Kernel approximation's random-features section titles itself with a sub-heading (an h3
    under the section before it); while presenting, its slide puts it right under the page's h1."""
    cat = load_catalogue("en")
    title = cat["ka.features_title"]
    at = _open_link("kernel-approximation", present="1", slide="3")  # its section
    assert_clean(at)
    assert title in [h.value for h in at.main.get("header")]
    assert title not in [h.value for h in at.main.get("subheader")]
