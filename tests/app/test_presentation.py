"""Presentation mode (?present=1): one section per slide, stepped with Previous / Next."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

import lessons
from tests.app.conftest import TIMEOUT, assert_clean, is_chart, open_page
from tests.app.live import live_slider
from tests.conftest import ROOT
from ui.i18n import load_catalogue

#: Every page and the number of sections it has (its slides) on the default view.
PAGES = {
    "home": 3,
    "kernel-regression": 9,
    "kernels-to-attention": 4,
    "scaled-dot-product": 7,
    "kernel-approximation": 6,
    "multi-head": 5,
    "training": 1,  # before any run: the live section only (the findings need a trained model)
    "in-context": 5,
    "induction-heads": 7,
}


def test_every_page_has_its_slide_count():
    assert list(PAGES) == [p.url_path for p in lessons.PAGES]


def _titles(at) -> list[str]:
    """Every header and subheader drawn in the main area, then the titles of the folded sections
    (``ui.sections``: their expander shows the title in place of the section's header)."""
    folds = [e.label for e in at.main.get("expander") if e.proto.query_param_key.startswith("open_")]
    return [h.value for h in at.main.get("header")] + [h.value for h in at.main.get("subheader")] + folds


def _open_link(page: str, **params: str) -> AppTest:
    """Open ``/<page>?params`` directly, as a shared link does (no visit to the start page first)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    for k, v in params.items():
        at.query_params[k] = v
    at.switch_page(f"pages/{page}.py")
    return at.run()


def _slide(at) -> int:
    return int(at.selectbox(key="slide").value)


@pytest.mark.parametrize("page", list(PAGES))
def test_present_mode_steps_through_every_section(page):
    whole = open_page(page)
    assert_clean(whole)
    at = open_page(page, params={"present": "1"})
    assert_clean(at)
    picker = at.selectbox(key="slide")
    assert len(picker.options) == PAGES[page]
    assert _slide(at) == 1
    first = _titles(at)
    assert len(first) < len(_titles(whole)) or PAGES[page] == 1  # a slide is part of the page
    seen = [tuple(first)]
    for n in range(2, PAGES[page] + 1):
        at.button(key="slide_next").click().run()
        assert_clean(at)
        assert _slide(at) == n
        seen.append(tuple(_titles(at)))
    assert at.button(key="slide_next").disabled
    assert len(set(seen)) == len(seen)  # every slide shows something else
    if PAGES[page] > 1:
        at.button(key="slide_previous").click().run()
        assert _slide(at) == PAGES[page] - 1


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_link_opens_on_its_slide_with_the_intro_only_on_the_first(lang):
    at = _open_link("scaled-dot-product", lang=lang, present="1", slide="3")
    assert_clean(at)
    assert _slide(at) == 3
    cat = load_catalogue(lang)
    headers = [h.value for h in at.main.get("header")]
    assert headers == [cat["sdp.dk_title"]]  # slide 3 is the d_k experiment, alone
    intro = cat["sdp.intro"]
    assert not any(intro in m.value for m in at.main.get("markdown"))
    first = _open_link("scaled-dot-product", lang=lang, present="1")
    assert any(intro in m.value for m in first.main.get("markdown"))
    # the page-wide controls are still there (folded), so the slide's figures can be driven
    live_slider(at, "sdp_dk").set_value(64).run()
    assert_clean(at)
    assert _slide(at) == 3


def test_presenting_is_off_by_default_and_a_bad_slide_falls_back():
    at = open_page("kernel-regression")
    assert not at.toggle(key="present").value
    assert "slide" not in [s.key for s in at.selectbox]
    bad = _open_link("kernel-regression", present="1", slide="99")
    assert_clean(bad)
    assert _slide(bad) == 1
    nan = _open_link("kernel-regression", present="1", slide="NaN")
    assert_clean(nan)
    assert _slide(nan) == 1


def test_turning_presentation_on_in_the_sidebar():
    at = open_page("multi-head")
    at.toggle(key="present").set_value(True).run()
    assert_clean(at)
    assert _slide(at) == 1
    assert at.toggle(key="questions").value  # questions shown unless the teacher turns them off


#: Each page's introduction (i18n key) and what else its header holds (a formula, a fold).
INTROS = {
    "home": "home.intro",
    "kernel-regression": "kr.intro",
    "kernels-to-attention": "k2a.intro",
    "scaled-dot-product": "sdp.intro",
    "kernel-approximation": "ka.intro",
    "multi-head": "mh.intro",
    "in-context": "ic.intro",
    "induction-heads": "ih.intro",
}


@pytest.mark.parametrize("page", list(INTROS))
def test_the_page_header_is_on_the_first_slide_only(page):
    """Slide 2 starts with the slide bar: no introduction, no page formula, no setup fold; the page
    title is the bar's running head (one title, in the bar)."""
    cat = load_catalogue("en")
    intro = cat[INTROS[page]]
    first = _open_link(page, present="1")
    second = _open_link(page, present="1", slide="2")
    assert_clean(second)
    assert _slide(second) == 2
    assert any(intro in m.value for m in first.main.get("markdown"))
    assert not any(intro in m.value for m in second.main.get("markdown"))
    titles = [e.value for e in second.main.get("title")]
    assert titles == [first.main.get("title")[0].value]  # the page title, once: in the slide bar
    latex = [e.value for e in second.main.get("latex")]
    folds = [e.label for e in second.main.get("expander")]
    if page == "scaled-dot-product":
        assert any("mask" in f for f in [e.value for e in first.main.get("latex")])
        assert not any(r"\mathrm{mask}" in f for f in latex)  # the page's formula
    if page == "in-context":
        assert cat["ic.idea_title"] in [e.label for e in first.main.get("expander")]
        assert cat["ic.idea_title"] not in folds


def _kinds_in_order(node) -> list[str]:
    """The element types under ``node``, in page order (a block's children by their index); every
    chart is ``"chart"`` (``st.plotly_chart`` or a kept chart)."""
    children = getattr(node, "children", None)
    if children is None:
        return ["chart" if is_chart(node) else node.type]
    return [kind for key in sorted(children) for kind in _kinds_in_order(children[key])]


@pytest.mark.parametrize(
    ("page", "slide"), [("kernel-approximation", 1), ("kernel-approximation", 2), ("kernels-to-attention", 4)]
)
def test_a_slide_shows_its_charts_before_the_metrics_around_them(page, slide):
    """These slides' metrics (and table, body text) pushed their first chart below a 1280x720
    screen: while presenting, the slide's charts come first."""
    at = _open_link(page, present="1", questions="0", slide=str(slide))
    assert_clean(at)
    assert _slide(at) == slide
    kinds = _kinds_in_order(at.main)
    assert "metric" in kinds
    assert "chart" in kinds
    assert kinds.index("chart") < kinds.index("metric")


def test_the_scrolling_page_keeps_its_metrics_above_the_charts():
    """Not presenting, the random-features section reads as before: its metrics, then its charts."""
    at = open_page("kernel-approximation")
    assert_clean(at)
    kinds = _kinds_in_order(at.main)
    assert kinds.index("metric") < kinds.index("chart")
