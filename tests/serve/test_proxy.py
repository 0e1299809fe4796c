"""`make serve` end to end: 2 replicas behind HAProxy, driven through the proxy in Chromium.

The proxy adds ``X-Replica: <server name>`` to every response and pins a browser with the
``STREAMLIT_REPLICA`` cookie, so each test can say which replica served what. Order matters:
the two students of ``students`` are reused, the failover test kills a replica and the last test
stops ``deploy/serve.py`` and checks that nothing it started is left.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from deploy.serve import HAPROXY_CFG, servers_cfg
from lessons import PAGES
from tests.e2e.conftest import RUN_TIMEOUT_MS, assert_no_exception, show_answers, wait_for_app
from tests.serve.conftest import assert_stops_everything

pytestmark = pytest.mark.e2e

CHARTS = '[data-testid="stPlotlyChart"]'
COOKIE = "STREAMLIT_REPLICA"
#: HAProxy's `default-server ... inter 2s fall 2`: a dead replica is out after at most ~4 s.
CHECK_WINDOW_S = 6.0
#: The app's pages (url paths), in lesson order.
PAGE_PATHS = [p.url_path for p in PAGES]


# ---------------------------------------------------------------- the config, without a browser


def _sections(text: str) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current = None
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line:
            continue
        if not line[0].isspace():
            current = line.strip()
            sections[current] = []
        else:
            sections[current].append(" ".join(line.split()))
    return sections


def test_haproxy_config_is_valid_with_the_servers_file(haproxy, tmp_path):
    servers = tmp_path / "servers.cfg"
    servers.write_text(servers_cfg([18601, 18602]))
    check = subprocess.run(
        [haproxy, "-c", "-f", str(HAPROXY_CFG), "-f", str(servers)],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "HAPROXY_PORT": "18080"},
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert "WARNING" not in check.stdout + check.stderr
    # Without the servers file there is no backend: one config, the replicas' addresses elsewhere.
    alone = subprocess.run([haproxy, "-c", "-f", str(HAPROXY_CFG)], capture_output=True, timeout=30)
    assert alone.returncode != 0


def test_haproxy_config_says_what_serving_needs():
    sections = _sections(HAPROXY_CFG.read_text())
    defaults = sections["defaults"]
    for setting in (
        "mode http",
        "option forwardfor",
        "timeout tunnel 1h",
        "option redispatch",
        "balance leastconn",
        f"cookie {COOKIE} insert indirect nocache httponly dynamic",
        "option httpchk GET /_stcore/health",
        "http-check expect status 200",
        "default-server check inter 2s fall 2 rise 2",
    ):
        assert setting in defaults, setting
    frontend = sections["frontend web"]
    assert 'bind "${HAPROXY_ADDR-}:${HAPROXY_PORT-8080}"' in frontend
    assert "http-response set-header X-Replica %s" in frontend
    assert "default_backend streamlit" in frontend
    assert not any(name.startswith("backend") for name in sections)  # in the servers file
    assert _sections(servers_cfg([9001]))["backend streamlit"] == ["server app1 127.0.0.1:9001 cookie app1"]


# ---------------------------------------------------------------- through the proxy, in Chromium


@dataclass
class Student:
    """One browser context (its own cookies) with one page, and the replicas that answered it."""

    context: object
    page: object
    answered_by: list[str] = field(default_factory=list)

    def open(self, base: str, path: str, **params: str) -> str:
        """Load ``path`` through the proxy, wait for the app; the replica that served the page."""
        query = "&".join(f"{k}={v}" for k, v in {"lang": "en", **params}.items())
        response = self.page.goto(f"{base}/{path}?{query}", timeout=RUN_TIMEOUT_MS)
        wait_for_app(self.page)
        return response.headers["x-replica"]

    def cookie(self) -> str | None:
        return next((c["value"] for c in self.context.cookies() if c["name"] == COOKIE), None)

    @property
    def replica(self) -> str:
        return self.answered_by[-1]


def new_student(browser) -> Student:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(RUN_TIMEOUT_MS)
    student = Student(context, context.new_page())

    def on_response(response) -> None:
        if (name := response.headers.get("x-replica")) is not None:
            student.answered_by.append(name)

    context.on("response", on_response)
    return student


@pytest.fixture(scope="module")
def students(browser, served) -> Iterator[list[Student]]:
    """Two students, each opened the home page (A first, then B)."""
    pair = [new_student(browser), new_student(browser)]
    for s in pair:
        s.open(served.url, "home")
    yield pair
    for s in pair:
        s.context.close()


def wait_for_charts_drawn(page) -> int:
    """Wait until the page shows Plotly charts and every one has drawn its SVG; their number."""
    page.wait_for_function(
        f"""() => {{
            const charts = [...document.querySelectorAll('{CHARTS}')];
            return charts.length > 0 && charts.every(c => c.querySelector('.main-svg'));
        }}""",
        timeout=RUN_TIMEOUT_MS,
    )
    return page.locator(CHARTS).count()


def test_two_students_land_on_different_replicas_and_stay(students):
    a, b = students
    assert {a.replica, b.replica} == {"app1", "app2"}
    # The cookie the proxy set names the replica, and every response of a student came from it
    # (the page, its scripts, the websocket upgrade, the health pings).
    assert (a.cookie(), b.cookie()) == (a.replica, b.replica)
    assert set(a.answered_by) == {a.replica}
    assert set(b.answered_by) == {b.replica}


def test_every_page_loads_and_draws_through_the_proxy(students, served):
    a, b = students
    # Both students browse at once, each half of the lesson (both replicas render pages).
    for i in range(0, len(PAGE_PATHS), 2):
        pair = list(zip((a, b), PAGE_PATHS[i : i + 2], strict=False))
        for student, path in pair:
            student.page.goto(f"{served.url}/{path}?lang=en", wait_until="commit", timeout=RUN_TIMEOUT_MS)
        for student, path in pair:
            wait_for_app(student.page)
            assert student.page.locator("h1").first.inner_text().strip(), path
            if path != "home":  # the only page without charts
                # a page may hold every chart behind its first question (predict, then see)
                show_answers(student.page)
                assert wait_for_charts_drawn(student.page) >= 1, path
            assert_no_exception(student.page)
    assert set(a.answered_by) == {a.replica}
    assert set(b.answered_by) == {b.replica}


def _csv(rows: int) -> bytes:
    return ("x,y\n" + "\n".join(f"{i / 10},{(i % 7) / 7}" for i in range(rows))).encode()


def test_a_csv_upload_reaches_the_sessions_replica(students, served):
    # The upload is an HTTP PUT of its own, checked against the session and the XSRF cookie of the
    # replica that holds the session: it only works if the proxy sends it there.
    for student in students:
        student.open(served.url, "kernel-regression")
        student.page.locator('[data-testid="stSidebar"] input[type="file"]').set_input_files(
            files=[{"name": "mine.csv", "mimeType": "text/csv", "buffer": _csv(120)}]
        )
        student.page.get_by_text('Fitting your data: "mine.csv", 120 points').wait_for(timeout=RUN_TIMEOUT_MS)
        wait_for_app(student.page)
        wait_for_charts_drawn(student.page)
        assert student.page.locator('[data-testid="stAlertContentError"]').count() == 0
        assert_no_exception(student.page)
        assert set(student.answered_by) == {student.replica}


def _move_bandwidth(page) -> None:
    """Move the bandwidth slider to its largest value and wait for the fit to redraw."""
    title = f"document.querySelector('{CHARTS} .gtitle').textContent"
    before = page.evaluate(title)
    thumb = page.locator('[data-testid="stSlider"]').filter(has_text="Bandwidth").get_by_role("slider")
    thumb.focus()
    thumb.press("End")
    wait_for_app(page)
    page.wait_for_function(f"{title} !== {before!r}", timeout=RUN_TIMEOUT_MS)
    assert_no_exception(page)


def _replica_of_a_new_visitor(url: str) -> str:
    """Which replica a browser without cookie is sent to (a plain request, no session)."""
    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=10) as r:
        assert r.status == 200
        return r.headers["X-Replica"]


def test_failover_when_a_replica_dies(students, served, browser):
    a, b = students  # a's replica is killed, b's survives
    for s in (a, b):
        if "/kernel-regression" not in s.page.url:  # where the upload test left them, else open it
            s.open(served.url, "kernel-regression")
        wait_for_charts_drawn(s.page)
    dead, survivor = a.replica, b.replica
    os.kill(served.replica_pids()[dead][-1], signal.SIGKILL)
    killed_at = time.monotonic()

    # Right away (serve.py restarts it only after 8 s): a refused connection is redispatched, so a
    # new student lands on the survivor, and so does the dead replica's student when it reloads,
    # re-pinned there by a new cookie. `commit`: the page's response is in, the app still loading.
    c = new_student(browser)
    try:
        to_c = c.page.goto(f"{served.url}/home?lang=en", wait_until="commit")
        to_a = a.page.goto(f"{served.url}/kernel-regression?lang=en", wait_until="commit")
        got = [(r.status, r.headers.get("x-replica")) for r in (to_c, to_a)]
        assert got == [(200, survivor)] * 2, served.output()
        assert {_replica_of_a_new_visitor(served.url) for _ in range(4)} == {survivor}
        # Within the health-check window HAProxy marks the dead replica down.
        while "is DOWN" not in served.output():
            assert time.monotonic() - killed_at < CHECK_WINDOW_S, served.output()
            time.sleep(0.2)
        # Both pages work, served by the survivor alone.
        for s in (c, a):
            wait_for_app(s.page)
            assert_no_exception(s.page)
            assert s.cookie() == survivor
        wait_for_charts_drawn(a.page)
        _move_bandwidth(a.page)
        assert set(c.answered_by) == {survivor}
    finally:
        c.context.close()

    # The survivor's session goes on as if nothing happened: a slider still refits.
    _move_bandwidth(b.page)
    assert set(b.answered_by) == {survivor}

    # serve.py starts the dead replica again; once its health checks pass it is back in the
    # rotation, and with the fewest connections it gets the next visitor.
    deadline = time.monotonic() + 120
    while _replica_of_a_new_visitor(served.url) != dead:
        assert time.monotonic() < deadline, f"{dead} did not come back:\n{served.output()}"
        time.sleep(1)
    assert len(served.replica_pids()[dead]) == 2
    assert "is UP" in served.output()


def test_ctrl_c_stops_every_process_it_started(served):
    # serve.py, haproxy, two replicas (three after the failover test): SIGINT is Ctrl+C.
    assert_stops_everything(served, signal.SIGINT)
