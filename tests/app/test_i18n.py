"""The i18n catalogues: both languages complete, no duplicates, every literal key in code defined."""

from __future__ import annotations

import json
import re

import pytest

from tests.app.conftest import DOUBLED_PUNCTUATION
from tests.conftest import ROOT
from ui.i18n import CATALOGUE_DIR, LANGUAGES, load_catalogue

#: t("some.key") / t('some.key') / *_key="some.key" literals in the code.
KEY_USE = re.compile(r"""(?:\bt\(|_key=)\s*["']([a-z0-9_]+\.[a-z0-9_.]+)["']""")


def _files(lang: str) -> list[str]:
    return sorted(p.name for p in (CATALOGUE_DIR / lang).glob("*.json"))


def test_same_files_in_every_language():
    names = {lang: _files(lang) for lang in LANGUAGES}
    assert len(set(map(tuple, names.values()))) == 1, names


@pytest.mark.parametrize("name", _files("en"))
def test_every_file_has_the_same_keys_in_both_languages(name):
    en = json.loads((CATALOGUE_DIR / "en" / name).read_text(encoding="utf-8"))
    zh = json.loads((CATALOGUE_DIR / "zh" / name).read_text(encoding="utf-8"))
    assert sorted(set(en) - set(zh)) == [], "missing in zh"
    assert sorted(set(zh) - set(en)) == [], "missing in en"


@pytest.mark.parametrize("lang", list(LANGUAGES))
def test_no_empty_strings_and_no_duplicate_keys(lang):
    catalogue = load_catalogue.__wrapped__(lang)  # raises on duplicates across files
    assert [k for k, v in catalogue.items() if not v.strip()] == []


def test_chinese_is_really_translated():
    """A zh string equal to its en string is allowed only when it holds no letters of prose."""
    en, zh = load_catalogue("en"), load_catalogue("zh")
    same = [k for k in en if en[k] == zh[k] and re.search(r"[A-Za-z]{4,}\s+[A-Za-z]{4,}", en[k])]
    assert same == [], same


def test_placeholders_match():
    en, zh = load_catalogue("en"), load_catalogue("zh")
    field = re.compile(r"\{([a-zA-Z_][a-zA-Z0-9_]*)(?:[:!][^}]*)?\}")
    bad = [k for k in en if set(field.findall(en[k])) != set(field.findall(zh[k]))]
    assert bad == [], bad


def test_every_key_used_in_code_exists():
    en = load_catalogue("en")
    used: set[str] = set()
    for folder in ("app.py", "pages", "ui"):
        path = ROOT / folder
        files = [path] if path.is_file() else sorted(path.rglob("*.py"))
        for f in files:
            used |= set(KEY_USE.findall(f.read_text(encoding="utf-8")))
    missing = sorted(k for k in used if k not in en)
    assert missing == [], missing


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_doubled_punctuation(lang):
    """Issue 22.8: "。，" in a Chinese sentence; no catalogue may hold two marks in a row (the pages'
    composed text is checked in their own zh tests with ``page_texts``)."""
    catalogue = load_catalogue(lang)
    bad = {k: m.group(0) for k, v in catalogue.items() if (m := DOUBLED_PUNCTUATION.search(v))}
    assert bad == {}


def test_the_doubled_punctuation_check_catches_what_it_should():
    for text in ("权重。，然后", "如下，。", "结束。。", "比较：。", "例如。.", "x,，y"):
        assert DOUBLED_PUNCTUATION.search(text), text
    for text in ("权重。然后", "（查询，键）", "0.5，", "e.g. 1.0。", "……", "“是”。", "4:上, 5:，, 0:小猫"):
        assert not DOUBLED_PUNCTUATION.search(text), text
