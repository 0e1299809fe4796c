"""Issue 13.1: selections keep stable ids in the URL and survive language switches.

For every radio group and selectbox on every page: choose a non-default option, check the URL
holds its stable id (never a label), switch the language back and forth, and check the control
still shows that option (in the new language's label) and the URL still holds the id. Then open
the copied URL in a fresh session in the other language and check the same view comes back.
"""

from __future__ import annotations

import pytest

from lessons import LESSONS
from tests.app.conftest import assert_clean, open_page
from ui.controls import OPTIONS_SEEN

#: every page but home (whose only selection is the language switch itself)
PAGE_NAMES = [lesson.url_path for lesson in LESSONS]


def _selections(at):
    return [("radio", w) for w in at.radio] + [("selectbox", w) for w in at.selectbox]


def _switch_language(at, lang: str) -> None:
    at.session_state["lang"] = lang
    at.run()
    assert_clean(at)


def _widget(at, kind: str, key: str):
    return getattr(at, kind)(key=key)


@pytest.mark.parametrize("page", PAGE_NAMES)
def test_selections_survive_language_switches_and_reopen(page):
    at = open_page(page)
    assert_clean(at)
    chosen: dict[tuple[str, str], object] = {}
    for kind, w in _selections(at):
        if w.key == "lang" or len(w.options) < 2 or w.disabled:
            continue
        if w.key.startswith("q_"):
            continue  # a question's answer: it exists only while its result is shown (ui.questions)
        chosen[(kind, w.key)] = None
    assert chosen, f"{page} has no selection widget: drop it from this test"
    # choose the last option of each selection (one at a time: options may depend on others)
    for kind, key in list(chosen):
        try:
            w = _widget(at, kind, key)
        except KeyError:
            continue  # hidden by an earlier choice
        target = w.options[-1]
        w.set_value(_option_of(at, w, target)).run()
        assert_clean(at)
        chosen[(kind, key)] = _widget(at, kind, key).value
    # a choice may set others (the training preset writes every control): read the final view
    chosen = {(kind, key): _widget(at, kind, key).value for (kind, key), v in chosen.items() if v is not None}
    ids = {key: value for (kind, key), value in chosen.items() if value is not None}
    fresh = open_page(page)
    defaults = {key: _value_or_none(fresh, kind, key) for (kind, key) in chosen}
    for key, value in ids.items():
        if value == defaults[key]:
            assert key not in at.query_params, f"{key}: a default value stays out of the URL"
        else:
            assert at.query_params.get(key) == str(value), (key, at.query_params.get(key))
    for lang in ("zh", "en", "zh"):
        _switch_language(at, lang)
        for (kind, key), value in chosen.items():
            if value is None:
                continue
            w = _widget(at, kind, key)
            assert w.value == value, f"{key} blank or changed after switching to {lang}: {w.value!r}"
            assert w.index is not None, f"{key} shows nothing selected after switching to {lang}"
    # a copied link, opened in a fresh session in English, gives the same choices
    params = {k: (v[0] if isinstance(v, list) else v) for k, v in at.query_params.items() if k != "lang"}
    again = open_page(page, lang="en", params=params)
    assert_clean(again)
    for (kind, key), value in chosen.items():
        if value is not None:
            assert _widget(again, kind, key).value == value, key


def _option_of(at, w, label):
    """AppTest widgets take the option itself; map the displayed label back to its id."""
    for option in at.session_state[OPTIONS_SEEN][w.key]:
        if w.format_func(option) == label:
            return option
    raise AssertionError(f"no option of {w.key} shows {label!r}")


def _value_or_none(at, kind: str, key: str):
    try:
        return _widget(at, kind, key).value
    except KeyError:
        return None  # not drawn on the default view
