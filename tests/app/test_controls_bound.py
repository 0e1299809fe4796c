"""House rule: every control on every page has a stable key and is bound to the URL.

Walks the rendered element tree of each page (default state) and checks each widget: it has a
user key, and (unless it is a kind that cannot be bound: buttons, uploads, editors) its proto
carries ``query_param_key == key``, which is what ``bind="query-params"`` sets. The exception: a
question's answer (``q_...``) must *not* be bound, and must not be in the URL. Radio groups and
selectboxes keep the URL themselves (stable ids, see ``ui.controls``): they must have been drawn
by ``ui.controls`` (which records them) and carry no Streamlit binding (which would write labels).
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1.element_tree import Block, Widget

from lessons import PAGES
from tests.app.conftest import assert_clean, open_page
from ui.controls import OPTIONS_SEEN
from ui.questions import is_answer_param

#: Widget kinds Streamlit cannot bind to the URL; they still need a stable key.
UNBINDABLE = {"button", "download_button", "file_uploader", "data_editor", "form_submit_button", "chat_input"}


#: Widget kinds whose URL value ``ui.controls`` writes itself, as a stable id.
SELF_SYNCED = {"radio", "selectbox"}


def _is_answer(key: str) -> bool:
    """A question's widget (``ui.questions``): the one documented exception. An answer stays in the
    session and is never bound to the URL, so a shared link or a handout cannot give it away
    (issue 22.2)."""
    return is_answer_param(key)


def _widgets(node) -> list[Widget]:
    found = []
    if isinstance(node, Widget):
        found.append(node)
    if isinstance(node, Block):
        for child in node.children.values():
            found.extend(_widgets(child))
    return found


@pytest.mark.parametrize("page", [p.url_path for p in PAGES])
def test_every_control_is_keyed_and_bound(page):
    at = open_page(page)
    assert_clean(at)
    widgets = _widgets(at._tree)
    assert widgets, "every page has at least the language switch"
    for w in widgets:
        assert w.key, f"{w.type} {getattr(w, 'label', '')!r} has no key"
        if _is_answer(w.key):
            assert not getattr(w.proto, "query_param_key", None), f"answer {w.key!r} is bound to the URL"
            assert w.key not in at.query_params, f"answer {w.key!r} is in the URL"
            continue
        if w.type in UNBINDABLE:
            continue
        if w.type in SELF_SYNCED or w.key in at.session_state[OPTIONS_SEEN]:  # incl. ui.controls.flag
            assert w.key in at.session_state[OPTIONS_SEEN], f"{w.type} {w.key!r} not drawn by ui.controls"
            assert not w.proto.query_param_key, f"{w.key!r} bound by Streamlit: the URL would get labels"
            continue
        bound = getattr(w.proto, "query_param_key", None)
        assert bound == w.key, f"{w.type} key={w.key!r} is not bound to the URL (bind='query-params')"
