"""``ui.sections`` and ``ui.questions.Question`` apart from the real pages: ``run_sections`` draws
each section's title once (an h2, an h3 at ``level=3``, none at ``level=None``; none inside a fold;
the slide's own title an h2 while presenting), and a declared ``Question`` asks with its keys."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from ui import questions
from ui.questions import Question
from ui.sections import Section


def _page() -> None:
    """Three sections: an h2, an h3 with something above it, one without a title, one folded."""
    import streamlit as st

    from ui.sections import Section, run_sections

    run_sections(
        "fake",
        [
            Section("kr.fit_header", lambda: st.markdown("fit body")),
            Section(
                "kr.row_header", lambda: st.markdown("row body"), level=3, above=lambda: st.header("group")
            ),
            Section("kr.matrix_header", lambda: st.markdown("untitled body"), level=None),
            Section("kr.cv_header", lambda: st.markdown("folded body"), folded=True),
        ],
    )


def _run(**params: str) -> AppTest:
    at = AppTest.from_function(_page, default_timeout=60)
    for name, value in params.items():
        at.query_params[name] = value
    return at.run()


def test_run_sections_draws_each_title_once_at_its_level() -> None:
    at = _run()
    assert not at.exception
    headers = [h.value for h in at.header]
    subheaders = [h.value for h in at.subheader]
    from ui.i18n import load_catalogue

    cat = load_catalogue("en")
    assert headers == [cat["kr.fit_header"], "group"]  # the h3's group title above it, no other h2
    assert subheaders == [cat["kr.row_header"]]
    assert cat["kr.matrix_header"] not in headers + subheaders  # level=None: no title
    assert cat["kr.cv_header"] not in headers + subheaders  # the fold's label says it
    assert [e.label for e in at.expander] == [cat["kr.cv_header"]]
    bodies = [m.value for m in at.markdown]
    assert "untitled body" in bodies
    assert "folded body" not in bodies

    at.session_state[Section("kr.cv_header", lambda: None, folded=True).open_key] = True
    at.run()
    assert "folded body" in [m.value for m in at.markdown]
    assert cat["kr.cv_header"] not in [h.value for h in at.header] + [h.value for h in at.subheader]


def test_question_spec_asks_with_its_declared_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, dict]] = []
    monkeypatch.setattr(questions, "ask", lambda qid, **kwargs: calls.append((qid, kwargs)) or True)
    spec = Question("kr_row", min_value=0, tolerance=0.2, relative=True)
    assert spec.ask(3, prompt={"q": 5}, explain={"row": 3}, max_value=9) is True
    qid, kwargs = calls[-1]
    assert qid == "kr_row"
    assert kwargs["prompt_key"] == "q.kr_row_prompt"
    assert kwargs["explain_key"] == "q.kr_row_explain"
    assert kwargs["answer"] == 3
    assert kwargs["prompt_kwargs"] == {"q": 5}
    assert kwargs["explain_kwargs"] == {"row": 3}
    assert (kwargs["min_value"], kwargs["max_value"], kwargs["tolerance"], kwargs["relative"]) == (
        0,
        9,
        0.2,
        True,
    )
    assert kwargs["choices"] is None

    yes_no = Question("ka_negative", prompt_key="q.other_prompt", choices=questions.YES_NO)
    yes_no.ask("no", explain_key="q.other_explain_no")
    qid, kwargs = calls[-1]
    assert kwargs["prompt_key"] == "q.other_prompt"
    assert kwargs["explain_key"] == "q.other_explain_no"
    assert kwargs["choices"] == {"yes": "common.yes", "no": "common.no"}
    assert kwargs["max_value"] is None
