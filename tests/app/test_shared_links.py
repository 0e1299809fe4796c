"""Shared links keep their meaning: a selection may be named by id or by its label in any language."""

from __future__ import annotations

import pytest

from tests.app.conftest import assert_clean, open_page
from ui.i18n import load_catalogue


@pytest.mark.parametrize("page_lang", ["en", "zh"])
@pytest.mark.parametrize("how", ["id", "en", "zh"])
def test_kernel_choice_survives_any_language(page_lang, how):
    value = "uniform" if how == "id" else load_catalogue(how)["kr.kernel_uniform"]
    at = open_page("kernel-regression", lang=page_lang, params={"kr_kernel": value})
    assert_clean(at)
    assert at.selectbox(key="kr_kernel").value == "uniform"


def test_unknown_choice_falls_back_to_the_default():
    at = open_page("kernel-regression", lang="zh", params={"kr_kernel": "no-such-kernel"})
    assert_clean(at)
    assert at.selectbox(key="kr_kernel").value == "gaussian"


def test_language_code_in_url_selects_the_catalogue():
    at = open_page("kernel-regression", lang="zh")
    assert at.session_state["lang"] == "zh"
    assert at.title[0].value == load_catalogue("zh")["kr.title"]
