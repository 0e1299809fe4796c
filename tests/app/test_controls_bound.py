"""House rule: every control on every page has a stable key and is bound to the URL.

Walks the rendered element tree of each page (default state) and checks each widget: it has a
user key, and (unless it is a kind that cannot be bound: buttons, uploads, editors) its proto
carries ``query_param_key == key``, which is what ``bind="query-params"`` sets.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1.element_tree import Block, Widget

from app import PAGES
from tests.app.conftest import assert_clean, open_page

#: Widget kinds Streamlit cannot bind to the URL; they still need a stable key.
UNBINDABLE = {"button", "download_button", "file_uploader", "data_editor", "form_submit_button", "chat_input"}


def _widgets(node) -> list[Widget]:
    found = []
    if isinstance(node, Widget):
        found.append(node)
    if isinstance(node, Block):
        for child in node.children.values():
            found.extend(_widgets(child))
    return found


@pytest.mark.parametrize("page", [p[0].removeprefix("pages/").removesuffix(".py") for p in PAGES])
def test_every_control_is_keyed_and_bound(page):
    at = open_page(page)
    assert_clean(at)
    widgets = _widgets(at._tree)
    assert widgets, "every page has at least the language switch"
    for w in widgets:
        assert w.key, f"{w.type} {getattr(w, 'label', '')!r} has no key"
        if w.type in UNBINDABLE:
            continue
        bound = getattr(w.proto, "query_param_key", None)
        assert bound == w.key, f"{w.type} key={w.key!r} is not bound to the URL (bind='query-params')"
