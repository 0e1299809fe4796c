"""The class answers together (issue 26) in AppTest: a teacher's session and students' sessions.

Each ``AppTest`` is one browser tab; they share the process's store (memory, or the Redis of
``REDIS_URL`` in the fault test), as the tabs of one ``make run`` do. The question used is kernel
regression's first one, "how many samples get more than 0.1% of the largest weight" (a number,
within 20%), whose right answer is computed here from ``core`` (not from the page).
"""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.data import make_data
from core.nadaraya_watson import nw_weights
from store import open_store
from store.limits import TokenBucket
from store.model import normalise_code, show_code
from tests.app.conftest import TIMEOUT, assert_clean, charts, open_page
from tests.conftest import ROOT
from tests.redis_server import RedisServer
from ui.i18n import load_catalogue

EN, ZH = load_catalogue("en"), load_catalogue("zh")
PAGE, QID = "kernel-regression", "kr_active"
ANSWER_KEY, CHECK_KEY = f"q_{QID}", f"q_{QID}_check"
PANEL_CHART = f"class_chart_{QID}"


def _active(at) -> int:
    """The right answer on the page's controls, from core: samples above 0.1% of the largest weight."""
    s = at.session_state
    d = make_data(n=int(s["kr_n"]), noise=float(s["kr_noise"]), seed=int(s["kr_seed"]), target=s["kr_target"])
    w = nw_weights(d.x, np.array([float(s["kr_xq"])]), kernel=s["kr_kernel"], bandwidth=float(s["kr_h"]))[0]
    return int(np.count_nonzero(w > 1e-3 * w.max()))


def _texts(at, kind: str) -> list[str]:
    return [e.value for e in at.get(kind)]


def _all_text(at) -> str:
    return "\n".join(
        _texts(at, "markdown") + _texts(at, "caption") + _texts(at, "success") + _texts(at, "info")
    )


def _teacher(**params: str):
    at = open_page(PAGE, folded=True, params=params)
    at.button(key="class_start").click().run()
    assert_clean(at)
    return at


def _link(browser: str | None = None, **params: str) -> AppTest:
    """A tab opening ``/kernel-regression?params`` directly, as a shared link does (one run).

    ``browser``: the browser id its cookie gives it (another tab of the same browser).
    """
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    if browser is not None:
        at.session_state["_class_browser"] = browser
    at.query_params.update({"lang": "en", **params})
    at.switch_page(f"pages/{PAGE}.py")
    at.run()
    assert_clean(at)
    return at


def _student(code: str, *, lang: str = "en", browser: str | None = None) -> AppTest:
    """A student's tab opening the student link."""
    return _link(browser, lang=lang, **{"class": show_code(code)})


def _answer(at, value) -> None:
    at.number_input(key=ANSWER_KEY).set_value(value).run()
    assert_clean(at)


def _counts(at) -> dict[str, int]:
    """The teacher panel's bars: {label: count}."""
    import json

    for chart in charts(at):
        if chart.proto.id and PANEL_CHART in chart.proto.id:
            counts: dict[str, int] = {}
            for bar in json.loads(chart.proto.spec)["data"]:  # after the reveal: right + wrong, stacked
                for label, n in zip(bar["x"], bar["y"], strict=True):
                    counts[label] = counts.get(label, 0) + n
            return {label: n for label, n in counts.items() if n}
    return {}


def _answered(at) -> str:
    return next(m for m in _texts(at, "markdown") if "answered" in m)


def test_outside_a_class_nothing_changes():
    at = open_page(PAGE, folded=True)
    assert_clean(at)
    assert at.button(key="class_start").label == EN["class.start"]
    assert "_class_code" not in at.session_state
    assert not [c for c in _texts(at, "caption") if "class" in c.lower()]
    _answer(at, 10)
    assert not at.button(key=CHECK_KEY).disabled  # Check works as before


def test_a_class_from_start_to_reveal_and_reset():
    teacher = _teacher()
    code = teacher.session_state["_class_code"]
    assert normalise_code(code) == code
    assert "class" not in teacher.query_params  # the projector's URL never names the class ...
    assert teacher.session_state["_class_teacher_key"] not in str(teacher.query_params)  # ... or the key
    shown = _all_text(teacher)
    assert EN["class.join_title"] in [h.value for h in teacher.subheader]
    links = [c.value for c in teacher.code]
    assert any(f"class={code}" in link for link in links)  # the student link
    assert any("teacher=" in link for link in links)  # the private teacher link, in its folded box
    (qr,) = teacher.get("image")  # the QR code, an SVG drawn here
    assert qr.value[0].startswith("data:image/svg+xml")
    assert f"**{EN['class.answered'].format(n=0, of=0)}**" in shown

    right = _active(teacher)
    a, b, c = _student(code), _student(code), _student(code)
    assert a.query_params["class"] == code  # a student's URL keeps the class (a reload stays in it)
    assert EN["class.not_yet"].format(code=show_code(code)) in _all_text(a)
    # Three predictions: two within 20% of the computed answer, one far off; b changes their mind.
    _answer(a, right)
    _answer(b, 2 * right + 30)
    _answer(c, round(right * 1.1))
    _answer(b, round(right * 0.9))
    assert EN["class.your_answer_in"].format(code=show_code(code)) in _all_text(a)
    assert a.button(key=CHECK_KEY).disabled  # keep it to yourself until the reveal
    teacher.run()
    assert_clean(teacher)
    assert _answered(teacher) == f":material/groups: **{EN['class.answered'].format(n=3, of=3)}**"
    counts = _counts(teacher)
    assert sum(counts.values()) == 3
    # A student never sees the class's answers before the reveal.
    a.run()
    assert _counts(a) == {}
    assert not _texts(a, "success")

    # Reveal: the computed answer and the share right (here: all three within 20%).
    teacher.button(key=f"class_reveal_{QID}").click().run()
    assert_clean(teacher)
    expected = EN["class.revealed"].format(answer=right, right=3, n=3, pct="100%")
    assert expected in _texts(teacher, "success")
    for student in (a, b, c):
        student.run()
        assert_clean(student)
        assert expected in _texts(student, "success")
        assert not student.button(key=CHECK_KEY).disabled
    assert _counts(a) == _counts(teacher)
    # After the reveal an answer is not taken any more.
    _answer(c, 1)
    teacher.run()
    assert EN["class.revealed"].format(answer=right, right=3, n=3, pct="100%") in _texts(teacher, "success")

    # Reset: answers and reveal cleared; the students' boxes are emptied for a new round.
    teacher.button(key=f"class_reset_{QID}").click().run()
    assert_clean(teacher)
    assert _answered(teacher).endswith(f"**{EN['class.answered'].format(n=0, of=3)}**")
    a.run()
    assert_clean(a)
    assert a.number_input(key=ANSWER_KEY).value is None
    assert a.button(key=CHECK_KEY).disabled
    _answer(a, right)
    teacher.run()
    assert _answered(teacher).endswith(f"**{EN['class.answered'].format(n=1, of=3)}**")


def test_one_browser_one_answer_and_answers_never_lost_to_the_rate_limit():
    teacher = _teacher()
    code = teacher.session_state["_class_code"]
    first = _student(code)
    _answer(first, 5)
    browser = first.session_state["_class_browser"]
    # A second tab of the same browser (the same cookie): its answer replaces the first.
    second = _student(code, browser=browser)
    _answer(second, 7)
    teacher.run()
    assert _answered(teacher).endswith(f"**{EN['class.answered'].format(n=1, of=1)}**")
    assert _counts(teacher) == {"7": 1}
    # Faster than the session's rate: told to slow down, the latest answer waits and then arrives.
    second.session_state["_class_bucket"] = TokenBucket(rate=1e-6, burst=1)
    _answer(second, 8)
    _answer(second, 9)
    assert any(EN["class.slow_down"] in c for c in _texts(second, "caption"))
    teacher.run()
    assert _counts(teacher) == {"8": 1}
    second.run()  # the next check-in sends what waited
    teacher.run()
    assert _counts(teacher) == {"9": 1}


def test_bad_codes_and_bad_answers_get_a_message_not_a_traceback():
    at = _link(**{"class": "ZZZZ-ZZZZ"})
    assert EN["class.code_unknown"].format(code="ZZZZ-ZZZZ") in _texts(at, "warning")
    assert "class" not in at.query_params
    assert "_class_code" not in at.session_state
    at = _link(**{"class": "<script>alert(1)</script>"})
    assert EN["class.code_invalid"] in _texts(at, "warning")


def _hook_script() -> None:
    """The questions' hook, run for a student of class ``code`` with ``response`` (session state)."""
    import streamlit as st

    from ui import class_answers

    st.session_state["_class_code"] = st.session_state["code"]
    class_answers.on_question(
        "kr_active", st.session_state["response"], answer=5, choices=st.session_state["choices"],
        labels=None, tolerance=0.2, relative=True, min_value=0, max_value=200, fmt=None,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("response", "choices"),
    [
        (float("nan"), None),
        (1e13, None),
        (-1, None),
        ("12", None),
        (True, None),
        ("maybe", {"yes": "k", "no": "k"}),
    ],
)
def test_an_answer_the_widget_would_never_send_is_refused_with_a_message(response, choices):
    # Streamlit's own widgets already keep a number in range and a choice among the options; the
    # store checks again, for a tampered websocket message or a widget that checks less.
    code = open_store().create_class().code
    at = AppTest.from_function(_hook_script, default_timeout=TIMEOUT)
    for name, value in {"code": code, "response": response, "choices": choices}.items():
        at.session_state[name] = value
    at.run()
    assert_clean(at)
    (error,) = _texts(at, "error")
    assert error.startswith(EN["class.invalid_answer"].split("{")[0])
    assert open_store().question(code, "kr_active").answered == 0


def test_teacher_link_gives_the_view_back_and_leaves_the_url():
    teacher = _teacher()
    code, key = teacher.session_state["_class_code"], teacher.session_state["_class_teacher_key"]
    again = _link(**{"class": code, "teacher": key})
    assert again.session_state["_class_teacher_key"] == key
    assert "teacher" not in again.query_params
    assert "class" not in again.query_params
    assert again.button(key=f"class_reveal_{QID}")
    bad = _link(**{"class": code, "teacher": key[:-2] + "xx"})
    assert EN["class.teacher_link_bad"] in _texts(bad, "error")
    assert "teacher" not in bad.query_params
    assert "_class_teacher_key" not in bad.session_state


def test_chinese():
    teacher = _teacher(lang="zh")
    code = teacher.session_state["_class_code"]
    assert ZH["class.join_title"] in [h.value for h in teacher.subheader]
    student = _student(code, lang="zh")
    assert ZH["class.not_yet"].format(code=show_code(code)) in _all_text(student)
    _answer(student, 3)
    assert ZH["class.your_answer_in"].format(code=show_code(code)) in _all_text(student)


@pytest.fixture
def redis_for_the_app(redis_exe, tmp_path, monkeypatch):
    """The app's store is a real Redis (REDIS_URL), which the test may stop and start again."""
    server = RedisServer(redis_exe, tmp_path).start()
    monkeypatch.setenv("REDIS_URL", server.url)
    try:
        yield server
    finally:
        server.stop()


def test_redis_down_pages_work_and_say_so_then_recover_without_losing_answers(redis_for_the_app):
    teacher = _teacher()
    code = teacher.session_state["_class_code"]
    assert open_store().join(code)  # the class is in Redis
    a, b = _student(code), _student(code)
    _answer(a, 40)
    redis_for_the_app.stop()
    # Redis is down: every page still works and says so; b's answer waits in b's session.
    _answer(b, 41)
    assert_clean(b)
    assert any(EN["class.unavailable_student"] in c for c in _texts(b, "caption"))
    assert charts(b)  # the lesson's charts are all there
    teacher.run()
    assert_clean(teacher)
    assert EN["class.unavailable"] in _texts(teacher, "warning")
    # Redis is back, empty (no persistence): the teacher's page restores the class, the students'
    # pages send their answers again; none is lost.
    redis_for_the_app.start()
    teacher.run()
    assert_clean(teacher)
    for student in (a, b):
        student.run()
        assert_clean(student)
        student.run()  # the check-in after the restore sends the answers
    teacher.run()
    assert _answered(teacher).endswith(f"**{EN['class.answered'].format(n=2, of=2)}**")
    assert _counts(teacher) == {"40": 1, "41": 1}


def _row_chart_shown(at) -> bool:
    return any(c.proto.id.endswith("-kr_fig_row") for c in charts(at))


def _show_button(at):
    return [b for b in at.button if b.key == f"q_{QID}_show"]


def test_a_student_cannot_peek_at_the_answer_before_the_reveal():
    """In a class a student's question holds back what answers it (no Show me, the weight row not
    drawn) until the teacher reveals; outside a class the same question offers Show me at once."""
    assert _show_button(open_page(PAGE, folded=True, answered=False))
    teacher = _teacher()
    student = _student(teacher.session_state["_class_code"])
    assert not _show_button(student)
    assert not _row_chart_shown(student)
    _answer(student, 10)
    assert not _row_chart_shown(student)  # answering alone does not show it: Check waits too
    teacher.button(key=f"class_reveal_{QID}").click().run()
    assert_clean(teacher)
    student.run()
    assert_clean(student)
    (show,) = _show_button(student)
    show.click().run()
    assert_clean(student)
    assert _row_chart_shown(student)
