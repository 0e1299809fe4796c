"""Folded sections (``ui.sections``): the deeper sections of a page run only once opened.

On the default view a folded section is a closed expander titled with its section title, and
nothing inside it runs (its controls are not even registered); a click (or ``?open_...=true`` in a
shared link) opens it and draws the section, without repeating its title; presentation mode shows
every section as a slide, none folded.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.conftest import TIMEOUT, assert_clean, fold_keys, open_page, show_answers
from tests.conftest import ROOT
from ui.i18n import load_catalogue

#: page -> (a folded section's URL key, its title key, a control drawn only inside it).
FOLDED = {
    "scaled-dot-product": ("open_sdp_sparse", "sdp.sparse_title", "q_sdp_softmax_zero"),  # its question first
    "multi-head": ("open_mh_pos", "mh.pos_title", "mh_perm"),
    "kernel-regression": ("open_kr_cv", "kr.cv_header", "kr_use_hstar"),
    "kernels-to-attention": ("open_k2a_learn", "k2a.learn_title", "k2a_learn_run"),
    "kernel-approximation": ("open_ka_cost", "ka.cost_title", "ka_cost_m"),
}


def _folds(at) -> dict[str, object]:
    """URL key -> the fold's expander element, in page order."""
    expanders = at.main.get("expander")
    return {e.proto.query_param_key: e for e in expanders if e.proto.query_param_key.startswith("open_")}


def _keys(at) -> set[str]:
    """User keys of the widgets this run drew."""
    kinds = ("slider", "select_slider", "number_input", "radio", "selectbox", "button", "toggle", "checkbox")
    return {w.key for kind in kinds for w in at.get(kind)}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("page", list(FOLDED))
def test_folded_sections_are_closed_titled_and_not_run_until_opened(page, lang):
    key, title_key, inner_control = FOLDED[page]
    cat = load_catalogue(lang)
    at = open_page(page, lang=lang, folded=True)
    assert_clean(at)
    folds = _folds(at)
    assert list(folds) == fold_keys(page)  # every folded section of the page, in order
    assert folds[key].label == cat[title_key]
    assert not any(e.proto.expanded for e in folds.values())
    assert any(cat["common.folded_hint"] in c.value for c in at.caption)
    assert inner_control not in _keys(at)  # the section did not run
    elements = len(list(at.main))

    at.session_state[key] = True  # the learner opens it
    at.run()
    assert_clean(at)
    assert inner_control in _keys(at)
    assert len(list(at.main)) > elements
    titles = [h.value for h in at.main.get("header")] + [h.value for h in at.main.get("subheader")]
    assert cat[title_key] not in titles  # the expander shows the title: not said twice


@pytest.mark.parametrize("page", list(FOLDED))
def test_a_link_opens_a_fold_and_closing_it_stops_its_work(page):
    key, _, inner_control = FOLDED[page]
    at = open_page(page, params={key: "true"}, folded=True)
    assert_clean(at)
    assert inner_control in _keys(at)
    assert _folds(at)[key].proto.expanded or at.session_state[key]
    at.session_state[key] = False  # the learner closes it (the browser's URL follows)
    at.query_params[key] = "false"
    at.run()
    assert_clean(at)
    assert inner_control not in _keys(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("value", ["zzz", "2", "nan", "maybe"])
def test_a_tampered_fold_value_leaves_the_section_closed_and_says_so(value, lang):
    cat = load_catalogue(lang)
    params = {"open_sdp_nan": value}
    at = open_page("scaled-dot-product", lang=lang, params=params, folded=True, answered=False)
    assert_clean(at)
    assert not at.session_state["open_sdp_nan"]
    said = [w.value for w in at.warning if cat["sdp.nan_title"] in w.value]
    assert len(said) == 1
    assert value in said[0]
    assert cat["common.fold_closed"] in said[0]
    at.run()  # said once: the value left the link
    assert not [w.value for w in at.warning if cat["sdp.nan_title"] in w.value]


@pytest.mark.parametrize("value", ["1", "yes", "ON", "true"])
def test_a_hand_typed_link_opens_a_fold_as_it_turns_on_presenting(value):
    at = open_page("scaled-dot-product", params={"open_sdp_sparse": value}, folded=True)
    assert_clean(at)
    assert "sdp_nw_h" in _keys(at)
    assert not at.warning


def test_presenting_shows_a_folded_section_as_its_slide_with_its_title():
    cat = load_catalogue("en")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    for k, v in {"lang": "en", "present": "1", "slide": "6"}.items():
        at.query_params[k] = v
    at.switch_page("pages/scaled-dot-product.py").run()
    assert_clean(at)
    assert [h.value for h in at.main.get("header")] == [cat["sdp.sparse_title"]]
    assert not _folds(at)
    show_answers(at)  # the section's own sliders come after its question
    assert "sdp_nw_h" in _keys(at)
