"""The kernel regression <-> attention dictionary: defined once (``ui.layout.dictionary_table``),
the same table on the three pages that show it, complete in both languages."""

from __future__ import annotations

import pytest

from tests.app.conftest import assert_clean, open_page
from ui.i18n import load_catalogue
from ui.layout import DICTIONARY_COLUMNS, DICTIONARY_ROWS


def _expected(lang: str) -> dict[str, list[str]]:
    """The table written out from the catalogue, key by key."""
    cat = load_catalogue(lang)
    return {
        cat[f"common.dictionary_col_{c}"]: [cat[f"common.dictionary_{r}_{c}"] for r in DICTIONARY_ROWS]
        for c in DICTIONARY_COLUMNS
    }


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_entry_is_translated(lang):
    table = _expected(lang)
    assert len(table) == 3
    assert all(len(column) == 7 and all(cell.strip() for cell in column) for column in table.values())
    if lang == "zh":
        assert table != _expected("en")


@pytest.mark.parametrize("page", ["home", "kernel-regression", "kernels-to-attention"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_pages_show_the_one_dictionary(page, lang):
    at = open_page(page, lang=lang)
    assert_clean(at)
    expected = _expected(lang)
    shown = [
        {str(col): [str(v) for v in frame[col]] for col in frame.columns}
        for frame in (table.value for table in at.table)
        if list(frame.columns) == list(expected)
    ]
    assert shown == [expected]
