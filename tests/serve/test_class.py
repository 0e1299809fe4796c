"""The class answers together, end to end: ``make serve`` with 2 replicas, Redis and Chromium (issue 26).

A teacher's browser context starts a class; students' contexts (each its own cookies, hence its
own anonymous browser id and its own ``STREAMLIT_REPLICA``) open the student link through HAProxy
and land on both replicas; every answer reaches the teacher's screen (its panel polls the shared
Redis); a second tab of one student's browser replaces that student's answer; the reveal reaches
every student. Then Redis is killed mid-class: every page keeps working and says so, an answer
given meanwhile waits in its page; ``deploy/serve.py`` starts Redis again on the same port, empty,
and the class comes back by itself with every answer. The right answer is computed from ``core``
on the page's default controls (an AppTest of the same page), not read from the page.
"""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from tests.app.conftest import open_page
from tests.app.test_class_answers import _active
from tests.e2e.conftest import RUN_TIMEOUT_MS, assert_no_exception, wait_for_app
from tests.serve.conftest import Served, start_serve
from tests.serve.test_proxy import Student, new_student

#: Five browser tabs on two replicas of a 2-core machine: pages take a while to draw.
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

PAGE, QID = "kernel-regression", "kr_active"
#: How long the teacher's panel (polling every 1 s) and a student's check-in (every 2 s, then a
#: rerun of the page) may take to show news on this busy machine.
NEWS_MS = 30_000
#: serve.py starts a Redis that exited again after this long: time to see the outage first.
REDIS_RESTART_DELAY_S = 20


@pytest.fixture(scope="module")
def served(haproxy: str, redis_exe: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """``deploy/serve.py``, 2 replicas and Redis; a Redis that exits comes back after 20 s."""
    s = start_serve(tmp_path_factory.mktemp("serve-class"), 2, "--restart-delay", str(REDIS_RESTART_DELAY_S))
    try:
        yield s
    finally:
        if s.proc.poll() is None:
            s.stop(signal.SIGTERM)


@pytest.fixture(scope="module")
def right_answer() -> int:
    """The computed answer on the default controls, from core (independent of the page's code)."""
    return _active(open_page(PAGE, folded=True))


def _answered(n: int, of: int) -> str:
    return f"{n} of {of} answered"


def _check_button(student: Student):
    return student.page.locator(f".st-key-q_{QID}_check button")


def _answer(student: Student, value: int) -> None:
    box = student.page.locator(f".st-key-q_{QID} input")
    box.fill(str(value))
    box.press("Enter")
    wait_for_app(student.page)


def _wait_cleared(student: Student) -> None:
    """After a Reset: the student's page learned it (its next check-in) and emptied the answer box."""
    expect(student.page.locator(f".st-key-q_{QID} input")).to_have_value("", timeout=NEWS_MS)


def _teacher_panel(teacher: Student):
    return teacher.page.locator(f".st-key-class_box_{QID}")


def _start_class(teacher: Student, base: str) -> str:
    """The teacher opens the page, starts a class; the student link the page shows."""
    teacher.open(base, PAGE)
    sidebar = teacher.page.locator('[data-testid="stSidebar"]')
    sidebar.locator('[data-testid="stExpander"] summary', has_text="Class answers").click()
    teacher.page.get_by_role("button", name="Start a class").click()
    teacher.page.locator(".st-key-class_code_panel").wait_for(timeout=RUN_TIMEOUT_MS)
    wait_for_app(teacher.page)
    link = teacher.page.locator('.st-key-class_code_panel [data-testid="stCode"]').first.inner_text().strip()
    assert re.fullmatch(rf"{re.escape(base)}/{PAGE}\?class=[0-9A-Z]{{8}}", link), link
    return link


def _join(student: Student, link: str) -> str:
    """A student opens the link; the replica that served the page."""
    response = student.page.goto(link + "&lang=en", timeout=RUN_TIMEOUT_MS)
    wait_for_app(student.page)
    student.page.get_by_text("Check opens once your teacher reveals the answer").first.wait_for()
    return response.headers["x-replica"]


@pytest.fixture(scope="module")
def teacher(browser) -> Iterator[Student]:
    t = new_student(browser)
    yield t
    t.context.close()


@pytest.fixture(scope="module")
def students(browser) -> Iterator[list[Student]]:
    group = [new_student(browser) for _ in range(3)]
    yield group
    for s in group:
        s.context.close()


def test_students_on_both_replicas_answer_and_see_the_reveal(served, teacher, students, right_answer):
    link = _start_class(teacher, served.url)
    replicas = [_join(s, link) for s in students]
    # HAProxy (leastconn, a cookie per browser) spread the students over both replicas, and each
    # stays on its replica: the class spans processes through Redis.
    assert set(replicas) == {"app1", "app2"}, replicas
    for s, replica in zip(students, replicas, strict=True):
        assert s.cookie() == replica
    a, b, c = students
    r = right_answer
    _answer(a, r)  # right
    _answer(b, 2 * r + 30)  # wrong (more than 20% off)
    _answer(c, round(1.1 * r))  # right (within 20%)
    for s in students:
        s.page.get_by_text("Your answer is in").first.wait_for(timeout=NEWS_MS)
        assert _check_button(s).is_disabled()  # until the reveal
    panel = _teacher_panel(teacher)
    panel.get_by_text(_answered(3, 3)).wait_for(timeout=NEWS_MS)  # nobody pressed anything there

    # A second tab of a's browser (same cookies: same browser id, same replica) changes a's answer.
    tab = a.context.new_page()
    tab.goto(link + "&lang=en", timeout=RUN_TIMEOUT_MS)
    wait_for_app(tab)
    second = Student(a.context, tab)
    _answer(second, 2 * r + 40)  # now wrong
    tab.get_by_text("Your answer is in").first.wait_for(timeout=NEWS_MS)
    time.sleep(2.5)  # a few of the teacher panel's polls: the count must not grow
    panel.get_by_text(_answered(3, 3)).wait_for(timeout=NEWS_MS)

    teacher.page.locator(f".st-key-class_reveal_{QID}").get_by_role("button", name="Reveal").click()
    verdict = f"The computation gives {r}. Right: 1 of 3 (33%)."
    panel.get_by_text(verdict).wait_for(timeout=NEWS_MS)
    for page in (a.page, b.page, c.page, tab):
        page.get_by_text(verdict).wait_for(timeout=NEWS_MS)  # the reveal reaches every student
        assert_no_exception(page)
    assert _check_button(b).is_enabled()
    tab.close()
    assert_no_exception(teacher.page)


def test_redis_down_mid_class_pages_work_and_the_class_recovers(served, teacher, students, right_answer):
    a, b, _c = students
    teacher.page.locator(f".st-key-class_reset_{QID}").get_by_role("button", name="Reset").click()
    panel = _teacher_panel(teacher)
    panel.get_by_text(_answered(0, 3)).wait_for(timeout=NEWS_MS)
    _wait_cleared(a)
    _wait_cleared(b)
    _answer(a, right_answer)
    panel.get_by_text(_answered(1, 3)).wait_for(timeout=NEWS_MS)

    (redis_pid,) = served.redis_pids()
    os.kill(redis_pid, signal.SIGKILL)  # Redis dies; it restarts empty after REDIS_RESTART_DELAY_S
    killed_at = time.monotonic()
    panel.get_by_text("Class results are unavailable right now").wait_for(timeout=NEWS_MS)
    # A student answers while Redis is down: the page works as usual and says the answer waits.
    _answer(b, 2 * right_answer + 30)
    b.page.get_by_text("Your answers are kept on this page").first.wait_for(timeout=NEWS_MS)
    assert b.page.locator('[data-testid="stPlotlyChart"]').count() > 0
    for s in (teacher, a, b):
        assert_no_exception(s.page)
    assert time.monotonic() - killed_at < REDIS_RESTART_DELAY_S, "the outage was over before it was seen"

    # serve.py starts Redis again on the same port, empty; the teacher's page restores the class,
    # the students' pages send their answers again: a's (given before) and b's (given during).
    deadline = time.monotonic() + REDIS_RESTART_DELAY_S + 30
    while len(served.redis_pids()) < 2:
        assert time.monotonic() < deadline, served.output()
        time.sleep(0.5)
    panel.get_by_text(re.compile(r"\b2 of 3 answered")).wait_for(timeout=NEWS_MS)
    b.page.get_by_text("Your answer is in").first.wait_for(timeout=NEWS_MS)
    teacher.page.locator(f".st-key-class_reveal_{QID}").get_by_role("button", name="Reveal").click()
    verdict = f"The computation gives {right_answer}. Right: 1 of 2 (50%)."
    panel.get_by_text(verdict).wait_for(timeout=NEWS_MS)
    b.page.get_by_text(verdict).wait_for(timeout=NEWS_MS)
    for s in (teacher, a, b):
        assert_no_exception(s.page)
