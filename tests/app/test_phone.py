"""Pages on a phone, server side: once the viewport probe (``ui.viewport``) has said "narrow", every
page runs, and its figures are the narrow ones (stacked panels, phone margins); before that, and on
a desktop, they are the desktop figures.

AppTest runs no JavaScript: the probe's report is set in the session state, as its rerun sets it.
"""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from figures.common import MARGIN_LEFT, NARROW_MARGIN_LEFT, NARROW_TOKEN_MARGIN, TOKEN_MARGIN
from lessons import LESSONS
from tests.app.conftest import TIMEOUT, assert_clean, charts, fold_keys, show_answers
from tests.conftest import ROOT
from ui import viewport

PAGES = tuple(lesson.url_path for lesson in LESSONS)


def _run(page: str, *, narrow: bool | None, lang: str = "en") -> AppTest:
    """``page`` with every fold open and every question shown, after the probe reported ``narrow``
    (None: no report yet)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.query_params["lang"] = lang
    for key in fold_keys(page):
        at.query_params[key] = "true"
    if narrow is not None:
        at.session_state[viewport.KEY] = {"narrow": narrow}
    at.run()
    at.switch_page(f"pages/{page}.py")
    at.run()
    return show_answers(at)  # the charts a question holds back are drawn too


def _layouts(at: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec)["layout"] for chart in charts(at)]


@pytest.mark.parametrize("page", PAGES)
def test_every_page_draws_its_narrow_figures_on_a_phone(page):
    at = _run(page, narrow=True)
    assert_clean(at)
    layouts = _layouts(at)
    assert len(layouts) >= 3
    desktop_margins = {MARGIN_LEFT, TOKEN_MARGIN}
    assert not [lay["margin"]["l"] for lay in layouts if lay["margin"]["l"] in desktop_margins]
    assert any(lay["margin"]["l"] in (NARROW_MARGIN_LEFT, NARROW_TOKEN_MARGIN) for lay in layouts)


@pytest.mark.parametrize("narrow", [None, False])
def test_before_a_report_and_on_a_desktop_the_figures_are_the_desktop_ones(narrow):
    at = _run("scaled-dot-product", narrow=narrow)
    assert_clean(at)
    pipeline = next(lay for lay in _layouts(at) if "xaxis4" in lay and "yaxis4" in lay)
    assert pipeline["xaxis"]["domain"] != pipeline["xaxis2"]["domain"]  # two panels side by side
    assert {lay["margin"]["l"] for lay in _layouts(at)} & {MARGIN_LEFT}


def test_the_pipeline_stacks_on_a_phone():
    at = _run("scaled-dot-product", narrow=True, lang="zh")
    assert_clean(at)
    pipeline = next(lay for lay in _layouts(at) if "xaxis4" in lay and "yaxis4" in lay)
    tops = [pipeline[f"yaxis{s}"]["domain"][1] for s in ("", "2", "3", "4")]
    assert tops == sorted(tops, reverse=True)  # one panel per row, first on top
    assert all(pipeline[f"xaxis{s}"]["domain"] == [0.0, 1.0] for s in ("", "2", "3", "4"))
