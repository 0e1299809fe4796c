"""The classroom load generator through ``make serve`` (issue 9): 2 replicas behind HAProxy.

It proves the harness of ``python -m benchmarks serve``, not the speed. A student keeps its cookies
like a browser: the ``STREAMLIT_REPLICA`` cookie HAProxy sets on the page load goes with the
websocket and every later page load, so all of a student's sessions stay on one replica; and 2
Locust students for 8 s through the proxy finish every rerun they send, with no error.
"""

from __future__ import annotations

import json
import subprocess
import sys

from benchmarks.load.client import StreamlitSession
from tests.conftest import ROOT

COOKIE = "STREAMLIT_REPLICA"
PAGE = "multi-head"


def test_a_student_keeps_its_replica_by_cookie(served):
    jar: dict[str, str] = {}
    first = StreamlitSession(served.url, PAGE, cookies=jar)
    others: list[StreamlitSession] = []
    try:
        first.connect()
        assert first.open().ok
        assert jar.get(COOKIE), f"no {COOKIE} cookie from the proxy: {jar}"
        assert first.page_replica == first.replica == jar[COOKIE]
        # While the first websocket is open, HAProxy's leastconn would send a newcomer elsewhere;
        # the same student's reloads follow its cookie instead.
        for _ in range(2):
            again = StreamlitSession(served.url, PAGE, cookies=jar)
            others.append(again)
            again.connect()
            assert (again.page_replica, again.replica) == (first.replica, first.replica)
        stranger = StreamlitSession(served.url, PAGE)
        others.append(stranger)
        stranger.connect()
        assert stranger.replica != first.replica, "without the cookie the proxy spreads sessions"
        assert stranger.cookies[COOKIE] == stranger.replica
    finally:
        for s in [first, *others]:
            s.close()


def test_two_students_through_the_proxy(served, tmp_path):
    out = tmp_path / "load.json"
    subprocess.run(
        [
            sys.executable, "-m", "benchmarks", "load", "--users", "2", "--seconds", "8",
            "--host", served.url, "--seed", "0", "--cold", "--json", str(out),
        ],
        cwd=ROOT,
        check=True,
        timeout=240,
    )  # fmt: skip
    result = json.loads(out.read_text())
    assert result["errors"] == 0, result["error_messages"]
    assert result["sent"] == result["finished"], "a script run never got its script_finished"
    assert result["reruns"] >= 2
    assert sum(result["replicas"].values()) == result["opens"] >= 2, result["replicas"]
    assert set(result["replicas"]) <= {"app1", "app2"}
    assert result["affinity_misses"] == 0
