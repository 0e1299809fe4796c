"""The router: every page is reachable, in both languages, with no exception."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from lessons import PAGES
from tests.app.conftest import assert_clean, open_page
from tests.conftest import ROOT
from ui.i18n import load_catalogue


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_home_renders(lang):
    at = open_page("home", lang=lang)
    assert_clean(at)
    assert at.title[0].value == load_catalogue(lang)["home.title"]
    assert len(at.table) == 1  # the kernel regression <-> attention mapping table


@pytest.mark.parametrize("code", ["zh"])
def test_chinese_from_short_code(code):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["lang"] = code
    at.run()
    assert_clean(at)
    assert at.session_state["lang"] == "zh"
    assert at.title[0].value == load_catalogue("zh")["home.title"]


def test_unknown_language_falls_back_to_english():
    at = open_page("home", params={"lang": "klingon"})
    assert_clean(at)
    assert at.session_state["lang"] == "en"


def test_every_page_is_registered_and_exists():
    assert [p.url_path for p in PAGES] == [
        "home", "kernel-regression", "kernels-to-attention", "scaled-dot-product", "kernel-approximation",
        "multi-head", "training", "in-context", "induction-heads",
    ]  # fmt: skip
    for p in PAGES:
        assert (ROOT / p.script).exists(), p.script


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("index", range(len(PAGES)))
def test_every_page_ends_with_a_link_to_the_next_lesson(lang, index):
    """Issue 13.7: the bottom of every page links to the next page of the lesson (last: home)."""
    at = open_page(PAGES[index].url_path, lang=lang)
    assert_clean(at)
    links = at.get("page_link")
    assert links, "no page link on the page"
    last = links[-1].proto
    catalogue = load_catalogue(lang)
    if index + 1 < len(PAGES):
        following = PAGES[index + 1]
        assert last.label == catalogue["common.next_lesson"].format(title=catalogue[following.title_key])
        assert last.page == following.url_path
    else:
        assert last.label == catalogue["common.back_to_start"]
