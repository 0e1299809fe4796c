"""The benchmarks' reference page (``benchmarks/reference_page.py``): one slider, one chart, and with
``?elements=N`` N elements under the chart (the drag benchmark's second floor)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT

PAGE = str(ROOT / "benchmarks" / "reference_page.py")


def _run(elements: str | None) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    if elements is not None:
        at.query_params["elements"] = elements
    return at.run()


def test_without_elements_one_slider_one_chart_nothing_else() -> None:
    at = _run(None)
    assert not at.exception
    assert [s.key for s in at.slider] == ["ref_f"]
    assert len(at.get("plotly_chart")) == 1
    counts = (len(at.expander), len(at.caption), len(at.get("download_button")), len(at.markdown))
    assert counts == (0, 0, 0, 0)


def test_elements_are_added_in_turn_and_none_changes_with_the_slider() -> None:
    at = _run("10")  # 3 folds (each with a line), 3 notes, 2 download buttons, 2 paragraphs
    assert not at.exception
    assert len(at.expander) == 3
    assert len(at.caption) == 3
    assert len(at.get("download_button")) == 2
    assert len(at.markdown) == 3 + 2  # the folds' lines and the paragraphs
    before = [m.value for m in at.markdown] + [c.value for c in at.caption]
    at.slider(key="ref_f").set_value(2.5).run()
    assert [m.value for m in at.markdown] + [c.value for c in at.caption] == before


@pytest.mark.parametrize(("asked", "count"), [("abc", 0), ("-5", 0), ("100000", 400), ("", 0)])
def test_a_tampered_count_is_refused_or_capped(asked: str, count: int) -> None:
    at = _run(asked)
    assert not at.exception
    assert len(at.expander) == (count + 3) // 4
