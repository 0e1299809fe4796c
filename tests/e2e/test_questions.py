"""Questions before answers, and answers out of links (issue 22.1, 22.2), in a real browser."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit

import pytest

from tests.e2e.conftest import RUN_TIMEOUT_MS, assert_no_exception, wait_for_app

pytestmark = pytest.mark.e2e

ROW_CHART = ".st-key-kr_fig_row"


def test_a_question_holds_its_answer_back_until_show_me_and_the_student_link_holds_no_answer(page):
    page.open("kernel-regression", folded=True, answered=False, q_kr_row="34")
    assert_no_exception(page)
    assert "q_kr_row" not in page.url  # an old link's answer is dropped from the address bar
    assert page.locator(ROW_CHART).count() == 0  # the weights of x* would answer "how many"
    assert page.get_by_text("Answer the question above").count() >= 1

    page.locator(".st-key-q_kr_active_show button").click()
    wait_for_app(page)
    page.locator(ROW_CHART).wait_for(timeout=RUN_TIMEOUT_MS)

    number = page.locator(".st-key-q_kr_row input")
    number.fill("7")
    number.press("Enter")
    wait_for_app(page)
    page.locator(".st-key-q_kr_row_check button").click()
    wait_for_app(page)
    assert "q_" not in urlsplit(page.url).query  # answered and checked: still not in the link

    thumb = page.locator(".st-key-kr_xq").get_by_role("slider")
    thumb.focus()
    thumb.press("Home")  # x* = -3
    wait_for_app(page)
    assert "kr_xq=-3" in page.url

    page.get_by_role("button", name=re.compile("Copy link for students")).click()
    wait_for_app(page)
    code = page.locator('[data-testid="stPopoverBody"] code').first
    code.wait_for(timeout=RUN_TIMEOUT_MS)
    link = code.inner_text().strip()
    assert link.startswith("http")
    assert urlsplit(link).path.endswith("/kernel-regression")
    query = dict(parse_qsl(urlsplit(link).query))
    assert query["kr_xq"].startswith("-3")
    assert not [k for k in query if k.startswith("q_")]
